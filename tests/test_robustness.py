"""Property-based tests: whatever text a model writes and whatever a data file holds, the training path never
raises, and every tool call returns in time."""
import json
import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dataset.lm_dataset import AgentRLDataset, DataError, SFTDataset
from scripts.eval_toolcall import load_cases
from trainer.train_agent import (
    MOCK_RESULTS, TOOLS, Trajectory, calculate_rewards, count_parse_errors, execute_tool, parse_tool_calls,
)
from trainer.trainer_utils import load_tokenizer

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
TOOL_NAMES = sorted(MOCK_RESULTS)

# JSON values of any shape, and JSON objects (what a model can put in "arguments")
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
ARG_KEYS = st.sampled_from(["expression", "value", "from_unit", "to_unit", "location", "timezone",
                            "from_currency", "to_currency", "text", "target_language", "x"])
ARGS = st.dictionaries(ARG_KEYS | st.text(max_size=8), JSON, max_size=5)
NAMES = st.sampled_from(TOOL_NAMES) | st.text(max_size=20)


@st.composite
def call_body(draw):
    """The inside of a <tool_call> block: a well-formed call, a near miss, or junk."""
    kind = draw(st.sampled_from(["call", "string_args", "any_json", "text"]))
    if kind == "call":
        return json.dumps({"name": draw(NAMES), "arguments": draw(ARGS)}, ensure_ascii=False)
    if kind == "string_args":
        return json.dumps({"name": draw(NAMES), "arguments": json.dumps(draw(JSON))})
    if kind == "any_json":
        return json.dumps(draw(JSON))
    return draw(st.text(max_size=60))


@st.composite
def model_text(draw):
    """What a model might write in one turn: text pieces, think tags, tool-call blocks (closed or not)."""
    pieces = draw(st.lists(st.one_of(
        st.text(max_size=30),
        st.sampled_from(["<tool_call>", "</tool_call>", "<think>", "</think>", "\n", "<tool_response>"]),
        call_body().map(lambda b: f"<tool_call>\n{b}\n</tool_call>"),
    ), max_size=8))
    return "".join(pieces)


@SETTINGS
@given(model_text())
def test_parse_tool_calls_never_raises(text):
    calls = parse_tool_calls(text)
    for call in calls:
        assert isinstance(call["name"], str) and call["name"] and isinstance(call["arguments"], dict)
    assert count_parse_errors(text, calls) >= 0
    assert count_parse_errors(text, calls) + len(calls) >= text.count("<tool_call>")


@SETTINGS
@given(model_text(), st.integers(min_value=1, max_value=4))
def test_parse_tool_calls_is_linear(text, scale):
    """Any text repeated until it is ~100 KB parses within 2 s (up to 0.7 s seen on a slow 2-core CPU): no
    backtracking blow-up, whose time grows with the square of the length or worse."""
    if not text:
        return
    big = text * (scale * 25_000 // len(text) + 1)
    start = time.perf_counter()
    calls = parse_tool_calls(big)
    assert time.perf_counter() - start < 2.0
    assert len(calls) <= big.count("<tool_call>")


@st.composite
def int_expression(draw, depth=0):
    """An integer arithmetic expression (+ - * // %, parentheses, unary minus) Python can evaluate."""
    if depth >= 3 or draw(st.booleans()):
        return str(draw(st.integers(min_value=-10**6, max_value=10**6)))
    op = draw(st.sampled_from(["+", "-", "*", "//", "%"]))
    left, right = draw(int_expression(depth + 1)), draw(int_expression(depth + 1))
    if op in ("//", "%") and eval(right) == 0:  # noqa: S307 (a generated integer expression)
        right = "7"
    return f"({left} {op} ({right}))" if draw(st.booleans()) else f"(-({left}) {op} ({right}))"


@SETTINGS
@given(int_expression())
def test_calculate_math_agrees_with_python_on_integers(expression):
    assert execute_tool("calculate_math", {"expression": expression}) == {"result": str(eval(expression))}


@SETTINGS
@given(st.text(alphabet="0123456789+-*/%().,^² eπsqrtlogfacrund", max_size=60) | st.text(max_size=60))
def test_calculate_math_never_raises_and_answers_in_time(expression):
    start = time.perf_counter()
    result = execute_tool("calculate_math", {"expression": expression})
    assert time.perf_counter() - start < 1.5
    assert set(result) <= {"result", "error", "hint"} and ("result" in result) != ("error" in result)


@SETTINGS
@given(NAMES, ARGS | JSON)
def test_execute_tool_always_returns_a_dict_in_time(name, args):
    start = time.perf_counter()
    result = execute_tool(name, args, timeout=1.0)
    assert time.perf_counter() - start < 1.5
    assert isinstance(result, dict)
    json.dumps(result)  # what the model reads must be JSON


@SETTINGS
@given(st.lists(model_text(), min_size=0, max_size=3), st.lists(st.text(max_size=12), max_size=3),
       st.booleans(), st.booleans(), st.none() | st.lists(st.sampled_from(TOOL_NAMES), max_size=3))
def test_calculate_rewards_never_raises_and_stays_clipped(turns, gt, unfinished, thinking, expect):
    traj = Trajectory(prompt_ids=[], messages=[], open_thinking=thinking, turns=turns, unfinished=unfinished)
    [reward] = calculate_rewards([traj], [gt], [TOOLS], 1, expect_tools_batch=[expect])
    assert -3.0 <= reward.total <= 3.0
    for name, value in reward.terms().items():
        assert value == value and abs(value) < 100, name  # finite


# --- data loaders: a bad line is a DataError (a ValueError) naming file and line, never anything else ------

FUNCTION = JSON | st.fixed_dictionaries({}, optional={"name": NAMES | JSON, "arguments": ARGS | JSON | st.text()})
SCHEMAS = st.lists(st.fixed_dictionaries({"type": st.just("function"), "function": FUNCTION}) | JSON, max_size=3)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool"]) | JSON},
    optional={"content": JSON, "tools": SCHEMAS | SCHEMAS.map(json.dumps) | JSON | st.text(max_size=20),
              "tool_calls": st.lists(st.fixed_dictionaries({"function": FUNCTION}) | FUNCTION, max_size=3) | JSON,
              "reasoning_content": JSON},
)
RECORD = st.fixed_dictionaries({}, optional={
    "conversations": st.lists(MESSAGE, max_size=4) | JSON, "gt": JSON, "expect_tools": JSON, "category": JSON,
    "prompt": JSON | st.text(max_size=20), "tools": JSON,
})
LINE = st.one_of(RECORD.map(lambda r: json.dumps(r, ensure_ascii=False)), JSON.map(json.dumps),
                 st.text(max_size=40).filter(lambda t: "\n" not in t and "\r" not in t))


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


def write_lines(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("data") / "d.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@SETTINGS
@given(st.lists(LINE, min_size=1, max_size=4))
def test_data_loaders_raise_only_data_errors(tmp_path_factory, tok, lines):
    path = write_lines(tmp_path_factory, lines)
    for load in (lambda p: AgentRLDataset(p, known_tools=set(MOCK_RESULTS)),
                 lambda p: SFTDataset(p, tok, max_length=256), load_cases):
        try:
            load(path)
        except DataError as e:
            assert str(e).startswith(f"{path}:") and "<unknown>" not in str(e)


@SETTINGS
@given(st.lists(LINE, min_size=1, max_size=4))
def test_skip_bad_lines_counts_what_it_skips(tmp_path_factory, tok, lines):
    path = write_lines(tmp_path_factory, lines)
    n_lines = sum(1 for line in lines if line.strip())
    try:
        rl = AgentRLDataset(path, known_tools=set(MOCK_RESULTS), skip_bad_lines=True)
        assert len(rl) > 0 and len(rl) + rl.stats["skipped"] == n_lines
    except DataError as e:  # nothing left: an error, not a run of 0 steps
        assert str(e).startswith(f"{path}: no RL prompts")
    try:
        sft = SFTDataset(path, tok, max_length=256, skip_bad_lines=True)
        assert len(sft) > 0 and len(sft) + sft.stats["skipped"] + sft.stats.get("no_labels", 0) == n_lines
    except DataError as e:
        assert str(e).startswith(f"{path}: no conversation to learn from")
    stats = {}
    cases = load_cases(path, skip_bad_lines=True, stats=stats)
    assert len(cases) + stats.get("skipped", 0) == n_lines


def test_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"prompt": "ok"}\n{"prompt": "\xff\xfe"}\n')
    with pytest.raises(DataError, match=f"{path}:2: not UTF-8"):
        load_cases(str(path))
    assert os.path.exists(path)
