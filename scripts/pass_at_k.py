"""
How much a checkpoint could gain from RL: pass@k per category from n sampled evaluation runs.

RL mostly sharpens what a policy already samples: it turns "solved by some samples" into "solved greedily".
pass@k, the chance that at least one of k samples solves a case, shows how much there is to sharpen. A
completion target above pass@k for the k a run can afford (the group size, the number of rollouts a prompt
gets) asks RL for skills the model does not sample yet. The estimate is the unbiased one of Chen et al. (2021),
1 - C(n - c, k) / C(n, k) for a case solved by c of n samples, summed over the cases.

Make the samples with eval_toolcall.py, then read them:
    for s in 1 2 3 4 5 6 7 8; do
      python scripts/eval_toolcall.py --weight full_sft --cases dataset/eval_toolcall.jsonl \\
          --temperature 0.8 --seed $s --out out/full_sft_t08_s$s.json
    done
    python scripts/pass_at_k.py out/full_sft_t08_s*.json --greedy r.json
"""
import argparse
import os
import sys
from dataclasses import dataclass
from math import comb

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from scripts.compare_evals import check_same_cases, load_cases


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="pass@k per category from sampled eval_toolcall.py reports")
    parser.add_argument("samples", nargs="+", help="eval_toolcall.py --out reports of sampled runs, same cases")
    parser.add_argument("--greedy", default=None, help="the greedy report of the same checkpoint, for reference")
    return parser.parse_args(argv)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that k of n samples, drawn without replacement, include at least one of the c that solve."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    return 1.0 - comb(n - c, k) / comb(n, k)


@dataclass
class Row:
    category: str
    cases: int
    greedy: int  # -1 without a greedy report
    never: int  # cases no sample solved
    pass_k: dict  # k -> expected number of cases solved


def ks_for(n: int) -> list:
    ks, k = [], 1
    while k < n:
        ks.append(k)
        k *= 2
    return ks + [n]


def table(samples, greedy=None) -> list:
    n = len(samples)
    solved = [sum(bool(s[i]["completed"]) for s in samples) for i in range(len(samples[0]))]
    categories = sorted({c["category"] for c in samples[0]})
    rows = []
    for cat in categories + ["all"]:
        idx = [i for i, c in enumerate(samples[0]) if cat in ("all", c["category"])]
        rows.append(Row(cat, len(idx), sum(bool(greedy[i]["completed"]) for i in idx) if greedy else -1,
                        sum(solved[i] == 0 for i in idx),
                        {k: sum(pass_at_k(n, solved[i], k) for i in idx) for k in ks_for(n)}))
    return rows


def print_table(rows, n_samples):
    ks = list(rows[0].pass_k)
    head = f"{'category':<12}{'cases':>6}{'greedy':>8}" + "".join(f"{f'pass@{k}':>9}" for k in ks)
    print(f"{n_samples} samples a case; pass@k in cases (expected)\n{head}{'never':>7}")
    for r in rows:
        greedy = str(r.greedy) if r.greedy >= 0 else "-"
        print(f"{r.category:<12}{r.cases:>6}{greedy:>8}" + "".join(f"{r.pass_k[k]:>9.1f}" for k in ks)
              + f"{r.never:>7}")
    total = rows[-1]
    print(f"{'rate':<12}{'':>6}{total.greedy / total.cases if total.greedy >= 0 else float('nan'):>8.3f}"
          + "".join(f"{total.pass_k[k] / total.cases:>9.3f}" for k in ks))


def main(argv=None):
    args = parse_args(argv)
    samples = [load_cases(p) for p in args.samples]
    for path, cases in zip(args.samples[1:], samples[1:]):
        check_same_cases(samples[0], cases, path, args.samples[0])
    greedy = None
    if args.greedy:
        greedy = load_cases(args.greedy)
        check_same_cases(samples[0], greedy, args.greedy, args.samples[0])
    rows = table(samples, greedy)
    print_table(rows, len(samples))
    return rows


if __name__ == "__main__":
    main()
