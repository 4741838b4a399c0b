"""Hostile inputs: what a hostile model or user writes gets an answer in time, never a hang or a crash."""
import os
import signal
import subprocess
import sys
import time

import pytest

from trainer.train_agent import MAX_CALLS_PER_TURN, execute_tool, parse_tool_calls

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


# --- the parser: one linear scan ----------------------------------------------------------------------------

PARSER_INPUTS = [
    "<tool_call>" + " " * 10_000,  # cubic under a lazy regex: 235 s
    "<tool_call>" * 100_000,  # quadratic under findall: 3.9 s at 8,000
    ("<tool_call>" + " " * 1000) * 1000,
    "<tool_call>\n" + "{" * 100_000 + "\n</tool_call>",  # JSON nested past the recursion limit
    "<tool_call>" + "x" * 1_000_000 + "</tool_call>",
    "</tool_call>" * 100_000,
    "<tool_call>" + "</tool_call>" * 100_000,
]


@pytest.mark.parametrize("text", PARSER_INPUTS, ids=range(len(PARSER_INPUTS)))
def test_the_parser_is_linear_and_never_raises(text):
    calls, seconds = timed(parse_tool_calls, text)
    assert calls == [] and seconds < 0.1, seconds


def test_the_parser_agrees_with_the_tag_semantics():
    call = '<tool_call>\n{"name": "calculate_math", "arguments": {"expression": "1+1"}}\n</tool_call>'
    assert len(parse_tool_calls(call + "text" + call)) == 2
    assert parse_tool_calls("<tool_call> " + call) == []  # an unclosed tag swallows the next call's opening
    assert len(parse_tool_calls("</tool_call>" + call)) == 1


# --- the tools: every hostile argument answered with a dict, in time ----------------------------------------

HOSTILE_CALLS = [
    ("calculate_math", {"expression": "round(5, -10**7)"}),
    ("calculate_math", {"expression": "round(5, 10**7)"}),
    ("calculate_math", {"expression": "9**9**9"}),
    ("calculate_math", {"expression": "factorial(10**6)"}),
    ("calculate_math", {"expression": "(" * 5000 + "1" + ")" * 5000}),
    ("calculate_math", {"expression": "sqrt(4, 5)"}),
    ("calculate_math", {"expression": "__import__('os').system('id')"}),
    ("calculate_math", {"expression": "().__class__.__bases__[0]"}),
    ("calculate_math", {"expression": "10**10**10"}),
    ("calculate_math", {"expression": "2.0**99999"}),
    ("calculate_math", {"expression": "1e308*10"}),
    ("calculate_math", {"expression": "-" * 299 + "1"}),
    ("calculate_math", {"expression": "\ud800"}),
    ("calculate_math", {"expression": ""}),
    ("calculate_math", {"expression": None}),
    ("unit_converter", {"value": 1.5e308, "from_unit": "km", "to_unit": "miles"}),
    ("unit_converter", {"value": "1,5", "from_unit": "km", "to_unit": "miles"}),
    ("unit_converter", {"value": "nan", "from_unit": "km", "to_unit": "miles"}),
    ("unit_converter", {"value": "inf", "from_unit": "kg", "to_unit": "pounds"}),
    ("unit_converter", {"value": [1], "from_unit": "kg", "to_unit": "pounds"}),
    ("unit_converter", {"value": 1, "from_unit": "x" * 10_000, "to_unit": "pounds"}),
    ("get_exchange_rate", {"from_currency": "XYZ", "to_currency": "XYZ"}),
    ("get_exchange_rate", {"from_currency": "BTC", "to_currency": "BTC"}),
    ("get_exchange_rate", {"from_currency": "", "to_currency": ""}),
    ("get_current_time", {"timezone": ""}),
    ("get_current_time", {"timezone": "../../etc/passwd"}),
    ("get_current_weather", {"location": "\x00" * 1000}),
    ("translate_text", {"text": "x" * 100_000, "target_language": "english"}),
    ("no_such_tool", {}),
    ("calculate_math", []),
]


@pytest.mark.parametrize("name,args", HOSTILE_CALLS, ids=range(len(HOSTILE_CALLS)))
def test_hostile_tool_calls_get_a_dict_in_time(name, args):
    result, seconds = timed(execute_tool, name, args)
    assert isinstance(result, dict) and seconds < 1.0, (result, seconds)


def test_tool_answers_that_were_wrong():
    calc = lambda e: execute_tool("calculate_math", {"expression": e})  # noqa: E731
    assert calc("10²") == {"result": "100"} and calc("2³") == {"result": "8"}  # not 102 and 23
    assert calc("10⁻²") == {"result": "0.01"}
    assert calc("12345678901 + 0.5") == {"result": "12345678901.5"}  # all the integer digits
    assert calc("1/3") == {"result": "0.3333333333"}  # 10 significant digits below 1e10, as before
    assert calc("sqrt(4, 5)")["error"] == "sqrt takes one argument"
    assert calc("round(2.675, 2)") == {"result": "2.67"} and calc("log(8, 2)") == {"result": "3"}
    assert "error" in calc("round(5, -10**7)")
    unit = execute_tool("unit_converter", {"value": 1.5e308, "from_unit": "km", "to_unit": "miles"})
    assert "error" in unit  # not Infinity
    assert "hint" in execute_tool("unit_converter", {"value": "1,5", "from_unit": "km", "to_unit": "miles"})
    assert execute_tool("unit_converter", {"value": "1,250", "from_unit": "km", "to_unit": "km"})["result"] == 1250
    for code in ("XYZ", "BTC"):
        assert "error" in execute_tool("get_exchange_rate", {"from_currency": code, "to_currency": code})
    assert execute_tool("get_exchange_rate", {"from_currency": "USD", "to_currency": "USD"})["rate"] == 1.0
    error = execute_tool("get_current_time", {"timezone": 5})["error"]
    assert error.endswith("takes only the optional timezone")  # not "needs " and nothing


def test_a_turn_with_many_slow_calls_runs_only_the_first_few(tok):
    from types import SimpleNamespace

    from trainer.train_agent import TOOLS, apply_turn, start_trajectory
    from dataset.lm_dataset import encode
    slow = '<tool_call>\n{"name": "calculate_math", "arguments": {"expression": "round(5, -10**6)"}}\n</tool_call>'
    text = "\n".join([slow] * 20)
    traj = start_trajectory(tok, [{"role": "user", "content": "hi"}], TOOLS, False)
    args = SimpleNamespace(tool_timeout=1.0, max_tool_tokens=64, max_total_len=100_000)
    _, seconds = timed(apply_turn, traj, tok, TOOLS, encode(tok, text) + [tok.eos_token_id], [0.0] * 10_000,
                       True, False, args)
    assert len(traj.tool_calls) == 20 and seconds < 2.0
    refused = [c for c in traj.tool_calls if c["result"].get("error") == "too many tool calls in one turn"]
    assert len(refused) == 20 - MAX_CALLS_PER_TURN


# --- processes: no tool worker outlives a killed trainer ----------------------------------------------------

KILLED = """
import os, sys
sys.path.insert(0, {root!r})
import threading
from trainer.train_agent import TOOL_RUNNER, execute_tool
threads = [threading.Thread(target=execute_tool, args=("calculate_math", {{"expression": "1+1"}}))
           for _ in range(3)]
[t.start() for t in threads]; [t.join() for t in threads]
execute_tool("calculate_math", {{"expression": "2+2"}})
print(" ".join(str(proc.pid) for proc, _ in TOOL_RUNNER.idle), flush=True)
os.kill(os.getpid(), 9)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its reaper is dead
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_no_tool_worker_outlives_a_trainer_killed_with_sigkill():
    out = subprocess.run([sys.executable, "-c", KILLED.format(root=ROOT)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == -signal.SIGKILL
    pids = [int(p) for p in out.stdout.split()]
    assert pids  # the runner kept its workers for reuse
    deadline = time.time() + 10
    while time.time() < deadline and any(alive(p) for p in pids):
        time.sleep(0.1)
    assert not [p for p in pids if alive(p)]
