"""The calculator's request grammar (dataset/math_grammar.py, make_agent_data.py --math_grammar): every request
it writes is one the calculator answers, with the numbers the user typed, in both languages; at 0 it draws
nothing."""
import json
import random
import re

import cn2an
import pytest

import scripts.make_agent_data as data
from dataset import math_grammar as grammar
from dataset.agent_phrasings import MATH_WORD_Q
from trainer.calculator import evaluate_expression


def keep_any(make):
    return make()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_request_is_a_calculation_the_calculator_answers(lang):
    rng = random.Random(0)
    templates = {kind: MATH_WORD_Q[kind]["sft"][lang] for kind in MATH_WORD_Q}
    kinds = set()
    for _ in range(2000):
        if rng.random() < 0.3:
            req = grammar.word_problem(rng, keep_any, lang, templates)
        else:
            req = grammar.expression_request(rng, keep_any, lang)
        value = evaluate_expression(req.expression)  # raises ToolError on anything it cannot compute
        assert value == value, req
        assert req.numbers and all(isinstance(x, (int, float)) for x in req.numbers), req
        assert "{" not in req.text and "}" not in req.text, req
        kinds.add(req.whole)
        digits = [str(abs(x)) for x in req.numbers]
        if all(d in req.expression for d in digits):  # the call carries every number the user typed
            continue
        raise AssertionError(f"{req}: the expression lacks a typed number")
    assert kinds == {True, False}


def test_the_forms_people_write_all_occur():
    rng = random.Random(1)
    texts = {"zh": [], "en": []}
    for lang in texts:
        for _ in range(3000):
            texts[lang].append(grammar.expression_request(rng, keep_any, lang))
    zh, en = " ".join(r.text for r in texts["zh"]), " ".join(r.text for r in texts["en"])
    for form in ["÷", "×", "−", "^", "**", "%", "百分之", "次方", "平方", "立方", "一半", "倍", "√", "(", "负",
                 "三分之二", "上浮"]:
        assert form in zh, form
    for form in ["divided by", "times", "squared", "cubed", "to the power of", "percent", "half of", "twice",
                 "square root", "thousand", "two thirds of", "negative", "increased by"]:
        assert form in en, form
    expressions = [r.expression for lang in texts for r in texts[lang]]
    assert any(re.fullmatch(r"\(\d+[-+*/]\d+\)[-+*/]\(\d+[-+*/]\d+\)", e) for e in expressions)  # both pairs
    assert any(re.fullmatch(r"\d+\*\*\d[-+]\d+\*\*\d", e) for e in expressions)  # two powers combined
    digits = {len(str(x)) for r in texts["en"] for x in r.numbers if isinstance(x, int) and x > 0}
    assert set(range(1, 10)) <= digits  # operands of 1 to 9 digits
    operands = {len(r.numbers) for r in texts["en"]}
    assert {1, 2, 3, 4} <= operands
    assert any(isinstance(x, float) for r in texts["zh"] for x in r.numbers)


def test_spelled_numbers_read_back_as_the_number():
    rng = random.Random(2)
    for x in [7, 15, 108, 2500, 36000, 99999, 3.5, 12.75, -8]:
        text = grammar.chinese_numeral(rng, x)
        assert cn2an.cn2an(text, "smart") == x, (x, text)
    assert grammar.english_words(random.Random(0), 2500) in ("two thousand five hundred",)
    assert "," not in grammar.english_words(random.Random(3), 123456)


def test_the_grammar_feeds_train_requests_and_the_held_out_sets_never_change(tmp_path):
    """--math_grammar 0 draws nothing (the shipped data has 0.3); at 1 the
    SFT and RL calculator requests come from the grammar, and the held-out sets stay as they are."""
    out = tmp_path / "g"
    data.main(["--out_dir", str(out), "--math_grammar", "1", "--n_sft", "600", "--n_sft_val", "10",
               "--n_rl", "300", "--n_rl_pool", "40"])
    for name in ("eval_toolcall.jsonl", "eval_toolcall_seen.jsonl", "eval_toolcall_dev.jsonl"):
        assert (out / name).read_bytes() == open(f"dataset/{name}", "rb").read(), name
    calls = [c["function"]["arguments"] for line in open(out / "sft_agent.jsonl", encoding="utf-8")
             for turn in json.loads(line)["conversations"] for c in turn.get("tool_calls") or []
             if c["function"]["name"] == "calculate_math"]
    joined = " ".join(calls)
    forms = [form for form in ("**", "/100", "sqrt(", "/10\"", "(100-") if form in joined]
    assert len(forms) >= 3, (forms, joined[:500])
    rl = [json.loads(line)["conversations"][1]["content"]
          for line in open(out / "agent_rl.jsonl", encoding="utf-8")]
    assert any("%" in p or "percent" in p or "百分之" in p for p in rl)
