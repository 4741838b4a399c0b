"""The robustness suite's changes: each makes the change a person makes and never touches what the answer
depends on (numbers, the text to translate, the names the tools are called with)."""
import random
import re
import unicodedata

from scripts import robustness
from scripts.robustness import CHANGES, changed_cases, kept_table
from trainer.evaluation import load_cases
from trainer.train_agent import TOOL_NAMES

CASES = load_cases("dataset/eval_toolcall.jsonl", TOOL_NAMES)


def numbers(text):
    return re.findall(r"\d+(?:[.,]\d+)*", unicodedata.normalize("NFKC", text))


def test_every_change_keeps_the_numbers_and_the_protected_words():
    for name in CHANGES:
        changed = changed_cases(CASES, name, seed=42)
        assert len(changed) > 150, name  # each change reaches a good part of the set
        for i, case in changed:
            before, after = CASES[i]["prompt"], case["prompt"]
            assert numbers(after) == numbers(before), (name, before, after)
            if name not in ("lower_case", "code_switch"):  # these two change letters' case or words by design
                for word in robustness.protected_words(CASES[i]):
                    whole = rf"(?<![A-Za-z]){word}(?![A-Za-z])"  # as a word before, still there after
                    assert len(re.findall(word, after, re.I)) >= len(re.findall(whole, before, re.I)), \
                        (name, word, before, after)


def test_the_changes_do_what_they_say():
    case = {"prompt": "Could you convert 1,250.5 km into miles? Thanks.", "gt": ["777.0"],
            "expect_calls": [{"name": "unit_converter",
                              "arguments": {"value": 1250.5, "from_unit": "km", "to_unit": "miles"},
                              "result": {"result": 777.0}}]}
    rng = random.Random(0)
    assert CHANGES["lower_case"](case["prompt"], case, rng) == case["prompt"].lower()
    assert CHANGES["no_punctuation"](case["prompt"], case, rng) == "Could you convert 1,250.5 km into miles Thanks"
    typo = CHANGES["one_typo"](case["prompt"], case, rng)
    diff = [(a, b) for a, b in zip(typo, case["prompt"]) if a != b]
    assert len(typo) == len(case["prompt"]) and len(diff) == 2 and diff[0] == diff[1][::-1]
    assert "miles" in typo  # a name the tool is called with keeps its letters
    assert CHANGES["full_width"]("3.5公里?", case, rng) == "３．５公里？"
    assert CHANGES["thank_you"]("北京天气?", case, rng)[:5] == "北京天气?" and len(CHANGES["thank_you"](
        "北京天气?", case, rng)) > 5
    assert CHANGES["code_switch"]("北京今天天气怎么样", {"gt": [], "expect_calls": []}, rng) != "北京今天天气怎么样"


def test_kept_counts_only_what_was_solved_as_written():
    solved = [True, True, False, True]
    table = kept_table(solved, {"lower_case": {0: True, 1: False, 2: True}, "lead_in": {3: True}})
    assert table["lower_case"] == {"changed": 3, "solved_before": 2, "still_solved": 1, "kept": 0.5,
                                   "solved_after_changed_only": 2 / 3}
    assert table["lead_in"]["kept"] == 1.0
