"""
Compare two evaluation reports case by case: which held-out cases a change won and lost, per category.

With 15 to 25 cases a category, one case moves a category by 4 to 7 points, so a table of completions alone
cannot tell a real change from a coin flip. This script lists the flips. Given sampled runs of the first
checkpoint (`eval_toolcall.py --temperature 0.8 --seed N`), it also marks each greedy pass as *fragile*
(solved by at most half of the samples) or *solid*, and counts the losses among each: a change that only
loses fragile cases lost coin flips, not skills.

Run:
    python scripts/compare_evals.py out/fw6_start_eval.json out/fw6_eval.json
    python scripts/compare_evals.py before.json after.json --samples before_t08_s1.json before_t08_s2.json
"""
import argparse
import json
from collections import Counter
from dataclasses import dataclass


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Compare two eval_toolcall.py reports case by case")
    parser.add_argument("before", help="an eval_toolcall.py --out report")
    parser.add_argument("after", help="a report on the same cases")
    parser.add_argument("--samples", nargs="*", default=[], help="sampled reports of the `before` checkpoint")
    return parser.parse_args(argv)


def load_cases(path) -> list:
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    if not isinstance(report, dict) or "cases" not in report:
        raise ValueError(f"{path}: not an eval_toolcall.py --out report (no 'cases' field)")
    return report["cases"]


def check_same_cases(reference, cases, path, reference_path):
    if len(cases) != len(reference):
        raise ValueError(f"{path}: {len(cases)} cases, but {reference_path} has {len(reference)}")
    for i, (a, b) in enumerate(zip(reference, cases)):
        if a["prompt"] != b["prompt"]:
            raise ValueError(f"{path}: case {i} is {b['prompt']!r}, but in {reference_path} it is {a['prompt']!r}")


@dataclass
class Flip:
    index: int
    category: str
    prompt: str
    won: bool  # False: lost
    sample_passes: int = -1  # how many samples of `before` solved it; -1 without samples
    calls_after: str = ""


@dataclass
class Comparison:
    by_category: dict  # category -> (cases, passed before, passed after)
    flips: list
    n_samples: int
    fragile: int = 0  # greedy passes of `before` solved by at most half of the samples
    solid: int = 0


def compare(before, after, samples=()) -> Comparison:
    table = {}
    for a, b in zip(before, after):
        n, pa, pb = table.get(a["category"], (0, 0, 0))
        table[a["category"]] = (n + 1, pa + a["completed"], pb + b["completed"])
    passes = [sum(s[i]["completed"] for s in samples) for i in range(len(before))] if samples else None
    flips = []
    for i, (a, b) in enumerate(zip(before, after)):
        if a["completed"] == b["completed"]:
            continue
        calls = ", ".join(f"{c['name']}({json.dumps(c['arguments'], ensure_ascii=False)})" for c in b["calls"])
        flips.append(Flip(i, a["category"], a["prompt"], bool(b["completed"]),
                          passes[i] if passes else -1, calls or "no call"))
    out = Comparison(dict(sorted(table.items())), flips, len(samples))
    if samples:
        greedy_passes = [i for i, a in enumerate(before) if a["completed"]]
        out.fragile = sum(passes[i] * 2 <= len(samples) for i in greedy_passes)
        out.solid = len(greedy_passes) - out.fragile
    return out


def print_comparison(cmp: Comparison, before_path, after_path):
    print(f"before: {before_path}\nafter:  {after_path}\n")
    print(f"{'category':<12}{'cases':>6}{'before':>8}{'after':>8}{'cases +/-':>11}{'points':>8}")
    for cat, (n, pa, pb) in cmp.by_category.items():
        print(f"{cat:<12}{n:>6}{pa:>8}{pb:>8}{pb - pa:>+11}{100 * (pb - pa) / n:>+8.1f}")
    n = sum(v[0] for v in cmp.by_category.values())
    pa = sum(v[1] for v in cmp.by_category.values())
    pb = sum(v[2] for v in cmp.by_category.values())
    print(f"{'all':<12}{n:>6}{pa:>8}{pb:>8}{pb - pa:>+11}{100 * (pb - pa) / n:>+8.1f}\n")
    for f in cmp.flips:
        mark = "+" if f.won else "-"
        seen = f"  [{f.sample_passes}/{cmp.n_samples} samples]" if cmp.n_samples else ""
        print(f"{mark} {f.category:<11}{f.prompt}{seen}\n      after: {f.calls_after[:140]}")
    if cmp.n_samples:
        lost = [f for f in cmp.flips if not f.won]
        lost_fragile = sum(f.sample_passes * 2 <= cmp.n_samples for f in lost)
        print(f"\ngreedy passes before: {cmp.fragile} fragile (at most half of {cmp.n_samples} samples solve them), "
              f"{cmp.solid} solid")
        print(f"lost: {lost_fragile} fragile ({lost_fragile}/{cmp.fragile}), "
              f"{len(lost) - lost_fragile} solid ({len(lost) - lost_fragile}/{cmp.solid})")


def main(argv=None):
    args = parse_args(argv)
    before, after = load_cases(args.before), load_cases(args.after)
    check_same_cases(before, after, args.after, args.before)
    samples = []
    for path in args.samples:
        cases = load_cases(path)
        check_same_cases(before, cases, path, args.before)
        samples.append(cases)
    cmp = compare(before, after, samples)
    print_comparison(cmp, args.before, args.after)
    return cmp


if __name__ == "__main__":
    main()
