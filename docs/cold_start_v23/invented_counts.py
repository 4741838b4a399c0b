"""Chained money cases of a v2 report (an amount times a rate: one number in the question) whose calculator
turn lists two numbers before the rate, i.e. writes a count the question does not have.

    python docs/cold_start_v23/invented_counts.py out/ev_a.json out/ev_b.json
"""
import json
import re
import sys

for path in sys.argv[1:]:
    report, money, invented = json.load(open(path, encoding="utf-8")), 0, 0
    for case in report["cases"]:
        want = [c for c in case["expect_calls"] if c["name"] == "calculate_math"]
        rate = any(c["name"] == "get_exchange_rate" for c in case["expect_calls"])
        if case["skill"] != "chained" or not want or not rate or want[-1]["arguments"]["expression"].count("*") != 1:
            continue
        money += 1
        listed = [t.split("\n")[0] for t in case["turns"] if t.startswith(("题中的数", "Numbers in the question"))]
        if listed and len(re.findall(r"\d+(?:\.\d+)?", listed[-1].split(";")[0])) > 1:
            invented += 1
    print(f"{path}: {invented} of {money} money cases list a count")
