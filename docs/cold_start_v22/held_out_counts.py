"""Chained calculator cases of a v2 report, split by whether the expression holds a held-out count
(33, 35, 36, 38, 39, 41, 59: the eval pool's numbers up to 59), and how many of each the model got right.

    python docs/cold_start_v22/held_out_counts.py out/ev_a.json out/ev_b.json
"""
import json
import sys
from collections import Counter

HELD_OUT = {"33", "35", "36", "38", "39", "41", "59"}

for path in sys.argv[1:]:
    report, tally = json.load(open(path, encoding="utf-8")), Counter()
    for case in report["cases"]:
        want = [c for c in case["expect_calls"] if c["name"] == "calculate_math"]
        if case["skill"] != "chained" or not want:
            continue
        kind = "count" if HELD_OUT & set(want[-1]["arguments"]["expression"].split("*")) else "other"
        target = want[-1]["result"]["result"]
        tally[kind, any(c["name"] == "calculate_math" and isinstance(c["result"], dict)
                        and c["result"].get("result") == target for c in case["calls"])] += 1
    print(f"{path}: with a held-out count {tally['count', True]}/{tally['count', True] + tally['count', False]}, "
          f"others {tally['other', True]}/{tally['other', True] + tally['other', False]}")
