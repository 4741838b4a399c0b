"""
Compare two evaluation reports case by case: which held-out cases a change won and lost, per category and per
skill, and the paired difference in task completion with its 95% interval.

With 15 to 25 cases a category, one case moves a category by 4 to 7 points, so a table of completions alone
cannot tell a real change from a coin flip. This script lists the flips. Given sampled runs of the first
checkpoint (`eval_toolcall.py --temperature 0.8 --seed N`), it also marks each greedy pass as *fragile*
(solved by at most half of the samples) or *solid*, and counts the losses among each: a change that only
loses fragile cases lost coin flips, not skills.

The interval is paired: both reports score the same cases, so only the cases that flipped carry information.
It is the Agresti-Min interval (a Wald interval on the difference of paired proportions after adding half a
case to each of the four win/loss cells), which keeps its coverage when few cases flip. A change is read as
real when the interval excludes zero.

Run:
    python scripts/compare_evals.py out/fw6_start_eval.json out/fw6_eval.json
    python scripts/compare_evals.py before.json after.json --samples before_t08_s1.json before_t08_s2.json
"""
import argparse
import json
import math
from dataclasses import dataclass, field


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
class PairedDifference:
    cases: int
    before: int  # cases passed before
    after: int
    won: int  # passed after only
    lost: int  # passed before only
    diff: float  # (after - before) / cases
    ci95: tuple  # Agresti-Min interval of diff


def paired_difference(before: list, after: list, z: float = 1.96) -> PairedDifference:
    """The paired change in pass rate between two lists of booleans over the same cases."""
    n = len(before)
    if n != len(after):
        raise ValueError(f"paired lists differ in length: {n} and {len(after)}")
    won = sum(1 for a, b in zip(before, after) if b and not a)
    lost = sum(1 for a, b in zip(before, after) if a and not b)
    if n == 0:
        return PairedDifference(0, 0, 0, 0, 0, float("nan"), (float("nan"), float("nan")))
    w, l, m = won + 0.5, lost + 0.5, n + 2  # half a case added to each of the 4 cells
    centre = (w - l) / m
    half = z * math.sqrt(max(0.0, (w + l) - (w - l) ** 2 / m)) / m
    return PairedDifference(n, sum(map(bool, before)), sum(map(bool, after)), won, lost, (won - lost) / n,
                            (max(-1.0, centre - half), min(1.0, centre + half)))


@dataclass
class Comparison:
    by_category: dict  # category -> (cases, passed before, passed after)
    flips: list
    n_samples: int
    fragile: int = 0  # greedy passes of `before` solved by at most half of the samples
    solid: int = 0
    paired: dict = field(default_factory=dict)  # "all", "category:<c>", "skill:<s>" -> PairedDifference


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
    groups = {"all": list(range(len(before)))}
    for key in ("category", "skill"):
        for i, a in enumerate(before):
            if key in a:
                groups.setdefault(f"{key}:{a[key]}", []).append(i)
    for name, idx in groups.items():
        out.paired[name] = paired_difference([bool(before[i]["completed"]) for i in idx],
                                             [bool(after[i]["completed"]) for i in idx])
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
    print(f"{'paired difference':<30}{'cases':>6}{'won':>5}{'lost':>5}{'points':>8}  95% interval (points)")
    for name, d in cmp.paired.items():
        mark = "  *" if d.ci95[0] > 0 or d.ci95[1] < 0 else ""
        print(f"{name:<30}{d.cases:>6}{d.won:>5}{d.lost:>5}{100 * d.diff:>+8.1f}  "
              f"[{100 * d.ci95[0]:+.1f}, {100 * d.ci95[1]:+.1f}]{mark}")
    print("(* the interval excludes zero)\n")
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
