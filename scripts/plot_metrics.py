"""
Draw the agent-RL training curves from a metrics file to a PNG.

    python scripts/plot_metrics.py out/agent_256_metrics.jsonl            # -> out/agent_256_metrics.png
    python scripts/plot_metrics.py out/agent_256_metrics.jsonl --smooth 20 --out curves.png

Panels: reward (mean and each term), tasks solved and tool-call success, tool calls per trajectory,
repeated and unfinished ratios, response length, KL, group reward std and the share of zero-std groups. Two
panels that should rise together, reward and the share of tasks solved (as the evaluation counts them), share
the first row: reward rising while they fall is the sign of reward hacking. Periodic evaluations written by
the trainer (records with "eval_task_completion") are drawn as points.
"""
import argparse
import json
import os
import sys

PANELS = [  # (title, [metric keys])
    ("reward", ["reward"]),
    ("solved / tool-call success", ["solved", "tool_success"]),
    ("reward terms", None),  # every r_* key
    ("tool calls / trajectory", ["tool_calls", "expected_calls"]),
    ("repeated / unfinished / parse errors", ["repeat_calls", "unfinished", "parse_errors"]),
    ("response length (model tokens)", ["resp_len"]),
    ("KL to the reference", ["kl"]),
    ("group reward std / zero-std groups", ["group_std", "zero_std_groups"]),
    ("informative groups (share of the prompts drawn)", ["informative_share"]),
    ("held-out task completion", ["eval_task_completion"]),
]


def read_metrics(path):
    records = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: invalid JSON: {e.msg}") from None
    if not records:
        raise ValueError(f"{path}: no metrics records")
    return records


def smooth(values, window):
    """Trailing moving average over the last `window` values (None entries skipped)."""
    out, buf = [], []
    for v in values:
        if v is not None:
            buf.append(v)
            buf = buf[-window:]
        out.append(sum(buf) / len(buf) if buf else None)
    return out


def series(records, key):
    steps = [r["step"] for r in records if isinstance(r.get(key), (int, float))]
    values = [float(r[key]) for r in records if isinstance(r.get(key), (int, float))]
    return steps, values


def plot(records, out_path, window=10, title=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    reward_terms = sorted({k for r in records for k in r if k.startswith("r_")})
    fig, axes = plt.subplots(2, 5, figsize=(24, 8.5))
    for ax, (name, keys) in zip(axes.flat, PANELS):
        keys = reward_terms if keys is None else keys
        drawn = False
        for key in keys:
            steps, values = series(records, key)
            if not steps:
                continue
            if key.startswith("eval_"):
                ax.plot(steps, values, "o-", label=key)
            else:
                ax.plot(steps, values, alpha=0.2, lw=0.8)
                ax.plot(steps, smooth(values, window), lw=1.6, label=key, color=ax.lines[-1].get_color())
            drawn = True
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("step", fontsize=8)
        ax.grid(alpha=0.3)
        if drawn:
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "not logged", ha="center", va="center", transform=ax.transAxes, color="gray")
    fig.suptitle(title or os.path.basename(out_path), fontsize=12)
    fig.tight_layout()
    fig.savefig(out_path, dpi=100)
    plt.close(fig)
    return out_path


def main(argv=None):
    parser = argparse.ArgumentParser(description="Plot agent-RL metrics (JSONL) to a PNG")
    parser.add_argument("metrics", help="the trainer's metrics file, e.g. out/agent_256_metrics.jsonl")
    parser.add_argument("--out", default=None, help="PNG path (default: beside the metrics file)")
    parser.add_argument("--smooth", type=int, default=10, help="moving-average window in steps")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    records = read_metrics(args.metrics)
    out = args.out or os.path.splitext(args.metrics)[0] + ".png"
    plot(records, out, args.smooth, args.title)
    print(f"wrote {out} ({len(records)} records)")


if __name__ == "__main__":
    if __package__ in (None, ""):
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
