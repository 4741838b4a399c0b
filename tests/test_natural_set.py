"""The natural test set: hand-written requests, frozen, their answers the tool world's own, never generated."""
import hashlib
import json
import re
from collections import Counter

import pytest

import scripts.make_agent_data as data
from scripts import make_natural_set as natural
from trainer.evaluation import load_cases
from trainer.train_agent import TOOL_NAMES

# Frozen: a change to the file is a new test set, and every figure read on this one would be lost.
NATURAL_SHA256 = "12fc9dd8b5d292865aa8c51339f768c50e01fbdda3901274b2eca09b6c726c23"


def test_the_natural_set_is_frozen():
    with open(natural.NATURAL_PATH, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == NATURAL_SHA256


def test_every_answer_is_what_the_tool_world_gives():
    cases = natural.main(["--check", natural.NATURAL_PATH])
    assert len(cases) >= 400
    skills = Counter(c["skill"] for c in cases)
    assert min(skills[s] for s in ("math", "unit", "weather_time", "exchange_translate", "no_tool")) >= 50
    assert skills["parallel"] + skills["chained"] >= 50
    assert all(c["tools"] == TOOL_NAMES for c in cases)  # every tool offered, as in a chat
    assert len(load_cases(natural.NATURAL_PATH, TOOL_NAMES)) == len(cases)  # the evaluator reads it


def test_a_draft_row_gets_its_truth_from_the_tools(tmp_path):
    rows = [{"prompt": "I'm off to Shenzhen, how hot is it there in fahrenheit", "skill": "chained",
             "calls": [{"name": "get_current_weather", "arguments": {"location": "深圳"}},
                       {"name": "unit_converter",
                        "arguments": {"value": 30, "from_unit": "celsius", "to_unit": "fahrenheit"}}]},
            {"prompt": "is it raining in brooklyn", "skill": "weather_time", "correction": True,
             "calls": [{"name": "get_current_weather", "arguments": {"location": "New York"}}]}]
    draft = tmp_path / "draft.jsonl"
    draft.write_text("".join(json.dumps(r) + "\n" for r in rows))
    chained, corrected = natural.build(str(draft))
    assert chained["gt"] == ["86.0"] and chained["category"] == "chained"
    assert corrected["gt"] == ["8°C", "多云"] and corrected["category"] == "correction"
    assert corrected["expect_tools"] == ["get_current_weather"] * 2


@pytest.mark.parametrize("row, field", [
    ({"prompt": "7 divided by 0", "skill": "math",
      "calls": [{"name": "calculate_math", "arguments": {"expression": "7/0"}}]}, "calls[0]"),
    ({"prompt": "weather in Berlin", "skill": "weather_time",
      "calls": [{"name": "get_current_weather", "arguments": {"location": "Berlin"}}]}, "calls[0]"),
    ({"prompt": "hi", "skill": "chat", "calls": []}, "skill"),
    ({"prompt": "hi there", "skill": "no_tool",
      "calls": [{"name": "get_current_time", "arguments": {}}]}, "calls"),
])
def test_a_bad_draft_row_names_its_line_and_field(tmp_path, row, field):
    draft = tmp_path / "draft.jsonl"
    draft.write_text(json.dumps({"prompt": "hello", "skill": "no_tool", "calls": []}) + "\n" + json.dumps(row))
    with pytest.raises(natural.DataError, match=re.escape(f"draft.jsonl:2: field '{field}'")):
        natural.build(str(draft))


def test_the_generator_refuses_a_natural_request(tmp_path, monkeypatch):
    request = json.loads(open(natural.NATURAL_PATH, encoding="utf-8").readline())["prompt"]
    generated = data.Sample("no_tool", "en", request.upper() + " ?", [], "ok", "", [], [], [])
    monkeypatch.setattr(data, "build_split", lambda *a, **k: [(generated, {})])
    with pytest.raises(data.DataCheckError, match="natural test set"):
        data.main(["--out_dir", str(tmp_path), "--only", "agent_rl.jsonl"])
    assert not (tmp_path / "agent_rl.jsonl").exists()  # nothing written
