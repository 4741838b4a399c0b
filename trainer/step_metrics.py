"""
What a step logs: every reward term, the behaviour (calls, parse errors, tool success, turns, solved share),
the update (loss, KL, ratios, gradient norm), where the signal came from (informative groups by category) and
which prompts were drawn. One JSON record per step in out/{save_weight}_{hidden}_metrics.jsonl, a short line
on the terminal; --debug_mode prints whole trajectories with their masks. Read it when you add a metric.
"""
import json

import torch
from tqdm import tqdm

from model.model_minimind import count_parameters, weight_path
from trainer.outcome import count_repeated_calls, final_answer, task_solved, tool_result_ok
from trainer.trainer_utils import every, open_log


def trajectory_stats(trajs) -> dict:
    calls = [c for t in trajs for c in t.tool_calls]
    n = max(1, len(trajs))
    seen_repeats = sum(count_repeated_calls(t.tool_calls) for t in trajs)
    return {
        "resp_len": sum(sum(t.response_mask) for t in trajs) / n,
        "tool_calls": len(calls) / n,
        "parse_errors": sum(t.parse_errors for t in trajs) / n,
        "tool_success": sum(tool_result_ok(c["result"]) for c in calls) / max(1, len(calls)),
        "repeat_calls": seen_repeats / max(1, len(calls)),
        "unfinished": sum(t.unfinished for t in trajs) / n,
        "turns": sum(len(t.turns) for t in trajs) / n,
    }


def step_record(state, epoch, groups, update, stepped, grad_norm,
                step_s) -> dict:
    """Phase 6: the step's full record for the metrics file: every reward term, the behaviour, the update,
    and the prompts drawn (dataset indices: with the seed, they replay the step)."""
    items, trajs, rewards = groups.items, groups.trajs, groups.rewards
    advantages, group_std = groups.advantages, groups.group_std
    expected = [len(it["expect_tools"]) if it["expect_tools"] is not None else len(it["gt"]) for it in items]
    solved = solved_share(items, trajs, len(trajs) // max(1, len(items)))
    ratio, kl = update.ratios, update.kls
    return {
        "step": state.step, "epoch": epoch, "reward": torch.tensor([r.total for r in rewards]).mean().item(),
        **{f"r_{k}": sum(getattr(r, k) for r in rewards) / len(rewards) for k in rewards[0].terms()},
        **trajectory_stats(trajs),
        "expected_calls": sum(expected) / len(items),
        "solved": solved,
        "kl": kl.mean().item() if kl.numel() else 0.0,
        "group_std": group_std.mean().item(),
        "zero_std_groups": (group_std < 1e-6).float().mean().item(),
        "trained_samples": round(update.trained),
        "adv_std": advantages.std().item() if advantages.numel() > 1 else 0.0,
        "loss": update.loss, "grad_norm": grad_norm, "stepped": stepped,
        "skipped_nonfinite": state.skipped_nonfinite,
        "ratio_mean": ratio.mean().item() if ratio.numel() else 1.0,
        "ratio_max": ratio.max().item() if ratio.numel() else 1.0,
        "lr": state.optimizer.param_groups[0]["lr"], "rollout_s": groups.rollout_s, "step_s": step_s,
        "prompts_drawn": len(groups.prompts), "informative_groups": groups.informative,
        "informative_share": groups.informative / max(1, len(groups.prompts)),
        "groups_by_category": groups_by_category(items, group_std),
        "prompts": list(groups.prompts),
    }


def solved_share(items, trajs, num_generations: int) -> float:
    """Share of the step's trajectories that solve their task as the evaluation counts it (GT in the final
    answer, finished, no call where none is needed): what the reward should raise. tool_success, unlike
    it, counts the correction task's failing first call, which the task asks for."""
    solved = 0
    for k, traj in enumerate(trajs):
        it = items[k // num_generations]
        expect = it["expect_tools"]
        needs_no_tool = expect == [] if expect is not None else not it["gt"]
        solved += task_solved(final_answer(traj.turns), it["gt"], bool(traj.tool_calls), traj.unfinished,
                              needs_no_tool)
    return solved / max(1, len(trajs))


def groups_by_category(items, group_std) -> dict:
    """{category: [groups, informative groups]} of this rank's prompts: where the step's signal came from
    (what --category_weights can aim at)."""
    out = {}
    for it, std in zip(items, group_std.tolist()):
        n = out.setdefault(it["category"], [0, 0])
        n[0], n[1] = n[0] + 1, n[1] + int(std >= 1e-6)
    return dict(sorted(out.items()))


TERMINAL_KEYS = ["reward", "r_gt_match", "solved", "tool_success", "kl", "informative_share", "loss",
                 "step_s"]


def log_step(state, record: dict, bar):
    """The record to the metrics file (every step); a compact line to the terminal every --log_interval."""
    if state.metrics_file is not None:
        state.metrics_file.write(json.dumps(record) + "\n")
        state.metrics_file.flush()
    bar.set_postfix(reward=f"{record['reward']:.3f}", kl=f"{record['kl']:.4f}")
    if state.dist.is_main and every(record["step"], state.args.log_interval):
        tqdm.write(f"step {record['step']} | " + " | ".join(f"{k} {record[k]:.4g}" for k in TERMINAL_KEYS))


def debug_print(state, trajs, rewards):
    tok = state.tokenizer
    for k, (traj, r) in enumerate(zip(trajs, rewards)):
        g = state.args.num_generations
        name = f"gen[{k // g}][{k % g}]"
        print(f"{'=' * 30} [DEBUG] {name} CONTEXT {'=' * 30}")
        print(tok.decode(traj.prompt_ids))
        print(f"[DEBUG] {name} prompt_len={len(traj.prompt_ids)}, seq_len={traj.length}, "
              f"thinking={traj.open_thinking}, unfinished={traj.unfinished}")
        spans, start = [], 0
        for j in range(1, len(traj.response_mask) + 1):
            if j == len(traj.response_mask) or traj.response_mask[j] != traj.response_mask[start]:
                spans.append((start, j, traj.response_mask[start]))
                start = j
        for s, e, m in spans:
            who = "MODEL (mask 1)" if m else "TOOL  (mask 0)"
            print(f"--- {who} [{len(traj.prompt_ids) + s}:{len(traj.prompt_ids) + e}] ---")
            print(tok.decode(traj.ids[s:e]))
        print(
            f"[DEBUG] {name} reward {r.total:+.2f} "
            + " ".join(f"{k}={v:+.2f}" for k, v in r.terms().items() if v)
        )


def open_metrics(state, dataset, n_batches: int):
    args = state.args
    path = weight_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe))
    state.metrics_file = open_log(path.replace(".pth", "_metrics.jsonl"),
                                  state.step if args.from_resume else None, args)
    print(f"model: {count_parameters(state.model) / 1e6:.2f}M parameters from '{args.from_weight}' | "
          f"device {args.device} | dtype {args.dtype} | {state.dist.world_size} process(es)")
    print(
        f"data: {len(dataset)} prompts ({dataset.stats}) | {n_batches} batches/epoch | "
        f"{state.total_steps} steps"
    )
    print("config: " + " ".join(f"{k}={v}" for k, v in vars(args).items()))
