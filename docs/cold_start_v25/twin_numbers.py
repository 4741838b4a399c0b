"""The held-out set's calculator cases asked again with train numbers: is a miss about the number or the
phrasing? Every math and chained case of v2 whose expected expression holds all of the prompt's numbers above
10 gets a twin: the same prompt with each such number replaced by a train-pool number (counts of 11-40 by
another count of 11-40, which is the SFT data's range; larger numbers by one of the same number of digits),
and the expected expression with the same replacement.

    python docs/cold_start_v25/twin_numbers.py build            # out/twin_eval.jsonl, out/twin_train.jsonl
    python scripts/eval_toolcall.py --weight full_sft --cases out/twin_eval.jsonl --out out/tw_e_sft.json
    python scripts/eval_toolcall.py --weight full_sft --cases out/twin_train.jsonl --out out/tw_t_sft.json
    python docs/cold_start_v25/twin_numbers.py read out/tw_e_sft.json out/tw_t_sft.json

A case counts as right when one of its calculator calls evaluates to the expected expression's value (the
calculator of trainer/calculator.py, so the operands may come in any order).
"""
import json
import random
import re
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from scripts.make_agent_data import is_eval_number  # noqa: E402
from trainer.calculator import evaluate_expression  # noqa: E402
from trainer.tool_runner import ToolError  # noqa: E402

NUM = re.compile(r"(?<![\d.])\d+(?![\d.])")  # whole integers, not the parts of a decimal
HELD_OUT_COUNTS = {"33", "35", "36", "38", "39", "41", "59"}  # the eval pool's numbers up to 59


def build(cases_path="dataset/eval_toolcall.jsonl", seed=1):
    rng = random.Random(seed)
    pairs = []
    for line in open(cases_path, encoding="utf-8"):
        case = json.loads(line)
        want = [c for c in case.get("expect_calls", []) if c["name"] == "calculate_math"]
        if case.get("skill") not in ("math", "chained") or not want or re.search(r"\d,\d", case["prompt"]):
            continue
        expr = want[-1]["arguments"]["expression"]
        numbers = sorted(set(NUM.findall(case["prompt"])))
        mapping, used = {}, set(numbers)
        for n in numbers:
            if int(n) <= 10:
                continue
            lo, hi = (11, 40) if int(n) <= 40 else (max(41, 10 ** (len(n) - 1)), 10 ** len(n) - 1)
            while True:
                m = str(rng.randint(lo, hi))
                if not is_eval_number(int(m)) and m not in used:
                    break
            mapping[n] = m
            used.add(m)
        if not mapping or any(n not in NUM.findall(expr) for n in mapping):
            continue
        sub = lambda s: NUM.sub(lambda k: mapping.get(k.group(0), k.group(0)), s)  # noqa: E731
        held = bool(HELD_OUT_COUNTS & set(expr.split("*"))) and case["skill"] == "chained"
        twin = {**case, "prompt": sub(case["prompt"]), "expect_calls": [], "gt": []}
        pairs.append(({**case, "probe": {"expr": expr, "count": held}},
                      {**twin, "probe": {"expr": sub(expr), "count": held}}))
    for name, side in (("eval", 0), ("train", 1)):
        with open(f"out/twin_{name}.jsonl", "w", encoding="utf-8") as f:
            for pair in pairs:
                f.write(json.dumps(pair[side], ensure_ascii=False) + "\n")
    print(f"{len(pairs)} pairs: out/twin_eval.jsonl, out/twin_train.jsonl")


def value(expression):
    try:
        return evaluate_expression(expression) if isinstance(expression, str) else None
    except ToolError:
        return None


def right(case, result) -> bool:
    want = value(case["probe"]["expr"])
    return any(c["name"] == "calculate_math" and value(c["arguments"].get("expression")) == want
               for c in result["calls"])


def read(eval_report, train_report):
    rows = {}
    for name, path in (("eval", eval_report), ("train", train_report)):
        cases = [json.loads(line) for line in open(f"out/twin_{name}.jsonl", encoding="utf-8")]
        results = json.load(open(path, encoding="utf-8"))["cases"]
        if [c["prompt"] for c in cases] != [r["prompt"] for r in results]:
            sys.exit(f"{path}: not a report on out/twin_{name}.jsonl")
        rows[name] = [(c["skill"], c["probe"]["count"], right(c, r)) for c, r in zip(cases, results)]
    for label, keep in (("math", lambda s, h: s == "math"), ("chained", lambda s, h: s == "chained"),
                        ("  with a held-out count", lambda s, h: h)):
        e = [ok for s, h, ok in rows["eval"] if keep(s, h)]
        t = [ok for s, h, ok in rows["train"] if keep(s, h)]
        only_e = sum(a and not b for a, b in zip(e, t))
        only_t = sum(b and not a for a, b in zip(e, t))
        print(f"{label:24s} eval numbers {sum(e):3d}/{len(e)}  train numbers {sum(t):3d}/{len(t)}  "
              f"right only with eval numbers {only_e}, only with train numbers {only_t}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["build"]:
        build()
    elif sys.argv[1:2] == ["read"] and len(sys.argv) == 4:
        read(*sys.argv[2:])
    else:
        sys.exit(__doc__)
