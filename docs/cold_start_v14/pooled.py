"""Paired differences pooled over several (before, after) report pairs, overall and per category.

    python docs/cold_start_v14/pooled.py out/ev/sft.json out/ev/e42ema.json out/ev/b7.json out/ev/e7ema.json ...
"""
import json
import sys

sys.path.insert(0, ".")
from scripts.compare_evals import load_cases, paired_difference  # noqa: E402

paths = sys.argv[1:]
pairs = [(load_cases(a), load_cases(b)) for a, b in zip(paths[::2], paths[1::2])]
cats = sorted({c["category"] for before, _ in pairs for c in before})
for name in ["all"] + cats:
    before, after = [], []
    for b, a in pairs:
        keep = [i for i, c in enumerate(b) if name == "all" or c["category"] == name]
        before += [bool(b[i]["completed"]) for i in keep]
        after += [bool(a[i]["completed"]) for i in keep]
    d = paired_difference(before, after)
    print(f"{name:12s} {d.cases:5d} cases  won {d.won:3d} lost {d.lost:3d}  {100 * d.diff:+5.1f} points "
          f"[{100 * d.ci95[0]:+.1f}, {100 * d.ci95[1]:+.1f}]")
