"""
Compare two checkpoints by their sampled evaluations: each case's completion averaged over n samples (for
example 4 runs at temperature 0.8), then the paired difference of those means over the cases, with its 95%
interval, overall and per category.

Greedy decoding shows one path per case; the mean of samples shows how often the policy solves it, which is
what RL changes first. The interval treats cases as independent draws: the standard error of the mean of the
per-case differences (each in [-1, 1]), times 1.96.

    for s in 1 2 3 4; do
      python scripts/eval_toolcall.py --weight agent --temperature 0.8 --seed $s --out out/agent_t08_s$s.json
    done
    python scripts/compare_sampled.py --before out/full_sft_t08_s*.json --after out/agent_t08_s*.json
"""
import argparse
import math
import os
import sys
from collections import defaultdict

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from scripts.compare_evals import check_same_cases, load_cases


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Paired comparison of sampled eval_toolcall.py reports")
    parser.add_argument("--before", nargs="+", required=True, help="sampled reports of the first checkpoint")
    parser.add_argument("--after", nargs="+", required=True, help="sampled reports of the second")
    return parser.parse_args(argv)


def case_means(paths) -> tuple:
    """(the cases of the first report, each case's mean completion over the reports)."""
    runs = [load_cases(p) for p in paths]
    for path, cases in zip(paths[1:], runs[1:]):
        check_same_cases(runs[0], cases, path, paths[0])
    means = [sum(bool(run[i]["completed"]) for run in runs) / len(runs) for i in range(len(runs[0]))]
    return runs[0], means


def paired(diffs) -> tuple:
    """(mean, half-width of the 95% interval) of a list of per-case differences."""
    n = len(diffs)
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
    return mean, 1.96 * math.sqrt(var / n)


def table(cases, before, after) -> list:
    groups = defaultdict(list)
    for case, b, a in zip(cases, before, after):
        groups[f"category:{case['category']}"].append((b, a))
        groups[f"skill:{case.get('skill') or case['category']}"].append((b, a))
    rows = [("all", list(zip(before, after)))] + sorted(groups.items())
    out = []
    for name, pairs in rows:
        mean, half = paired([a - b for b, a in pairs])
        out.append({"group": name, "cases": len(pairs), "before": sum(b for b, _ in pairs) / len(pairs),
                    "after": sum(a for _, a in pairs) / len(pairs), "diff": mean, "low": mean - half,
                    "high": mean + half})
    return out


def main(argv=None):
    args = parse_args(argv)
    cases, before = case_means(args.before)
    after_cases, after = case_means(args.after)
    check_same_cases(cases, after_cases, args.after[0], args.before[0])
    rows = table(cases, before, after)
    print(f"mean completion over {len(args.before)} sampled runs before, {len(args.after)} after\n")
    print(f"{'group':28} {'cases':>5} {'before':>7} {'after':>7} {'points':>7}  95% interval (points)")
    for r in rows:
        mark = "  *" if r["low"] > 0 or r["high"] < 0 else ""
        print(f"{r['group']:28} {r['cases']:5d} {r['before']:7.3f} {r['after']:7.3f} {100 * r['diff']:+7.1f}  "
              f"[{100 * r['low']:+.1f}, {100 * r['high']:+.1f}]{mark}")
    print("(* the interval excludes zero)")
    return rows


if __name__ == "__main__":
    main()
