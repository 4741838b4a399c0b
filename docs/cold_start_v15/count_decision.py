"""Is there a count? Read from evaluation reports: on each chained currency case (get_exchange_rate, then
calculate_math), whether the calculator's factors before the rate are the question's numbers, whatever
their order, split by cases with a plain amount and cases with a count of items at a price.

    python docs/cold_start_v15/count_decision.py out/ev/sft.json out/ev/sn42.json ...
"""
import json
import sys


def factors(expression: str) -> list:
    return sorted(expression.split("*")[:-1])  # the last factor is the rate the tool returned


for path in sys.argv[1:]:
    right = {"amount": 0, "count": 0}
    cases = {"amount": 0, "count": 0}
    for case in json.load(open(path, encoding="utf-8"))["cases"]:
        expected = case["expect_calls"]
        if case["skill"] != "chained" or expected[0]["name"] != "get_exchange_rate":
            continue
        want = factors(expected[1]["arguments"]["expression"])
        kind = "amount" if len(want) == 1 else "count"
        cases[kind] += 1
        got = [c for c in case["calls"] if c["name"] == "calculate_math"]
        right[kind] += bool(got) and factors(str(got[0]["arguments"].get("expression", ""))) == want
    print(f"{path}: amount {right['amount']}/{cases['amount']}, count {right['count']}/{cases['count']}")
