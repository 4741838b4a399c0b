"""
Periodic evaluation during a run (--eval_interval): the policy answers the held-out cases greedily, the
checkpoint is saved with its behaviour profile (completion by category, tool use, no-tool accuracy, a few
failed cases), the best one is kept as {save_weight}_best, and with --rollback_drop a run whose completion
falls too far below the best goes back to it. `evaluate(state, model=None)` is
trainer/train_agent.evaluate_policy. Read it when you pick checkpoints or watch a run's behaviour rather than
its reward.
"""
import json

import torch
from tqdm import tqdm

from model.model_minimind import save_minimind, weight_path
from trainer.agent_flags import SAVE_DTYPES
from trainer.trainer_utils import broadcast_flag, broadcast_weights


def behaviour_profile(rep: dict, step: int, n_bad: int = 5) -> dict:
    """What a checkpoint does (the field notes, section 5.1): completion overall and per category, tool
    success, turns, which tools it reaches for, no-tool accuracy, and a few cases it gets wrong."""
    summary = rep["summary"]
    bad = [c for c in rep["cases"] if not c["completed"]][:n_bad]
    return {
        "step": step,
        "task_completion": summary["task_completion"],
        "by_category": {cat: m["task_completion"] for cat, m in rep["by_category"].items()},
        "tool_success_rate": summary["tool_success_rate"],
        "avg_turns": summary["avg_turns"],
        "avg_tool_calls": summary["avg_tool_calls"],
        "expected_tool_calls": summary["expected_tool_calls"],
        "repeat_call_rate": summary["repeat_call_rate"],
        "no_tool_accuracy": summary["no_tool_accuracy"],
        "tool_usage": {name: m["calls"] for name, m in rep["by_tool"].items()},
        "bad_cases": [{"prompt": c["prompt"], "category": c["category"], "gt": c["gt"],
                       "called": c["called_tools"], "answer": c["final_answer"][:200]} for c in bad],
    }


def save_profiled(state, name: str, profile: dict):
    args = state.args
    path = weight_path(args.save_dir, name, args.hidden_size, bool(args.use_moe))
    save_minimind(state.model, path, dtype=SAVE_DTYPES[args.save_dtype])
    with open(path.replace(".pth", "_profile.json"), "w", encoding="utf-8") as f:
        json.dump(profile, f, ensure_ascii=False, indent=2)
    return path


def periodic_eval(state, evaluate):
    """Evaluate; save the checkpoint with its profile as {save_weight}_step{N}; keep {save_weight}_best by
    task completion; with --rollback_drop, go back to the best weights when completion falls too far
    below it."""
    args = state.args
    profile = behaviour_profile(evaluate(state), state.step)
    state.last_profile = (state.step, profile)
    completion = profile["task_completion"]
    path = save_profiled(state, f"{args.save_weight}_step{state.step}", profile)
    event = ""
    if completion > state.best_completion:
        state.best_completion, state.best_step = completion, state.step
        save_profiled(state, f"{args.save_weight}_best", profile)
        event = "new best"
    elif args.rollback_drop > 0 and completion < state.best_completion - args.rollback_drop:
        best = weight_path(args.save_dir, f"{args.save_weight}_best", args.hidden_size, bool(args.use_moe))
        weights = {k: v.float() for k, v in torch.load(best, map_location="cpu", weights_only=True).items()}
        weights.setdefault("lm_head.weight", weights["model.embed_tokens.weight"])  # tied embeddings
        state.model.load_state_dict(weights)
        state.optimizer.state.clear()  # the moments point the way that went wrong
        state.rollout_engine.update_policy(state.model)
        state.average.reset()  # the average restarts from the best weights
        state.rollbacks += 1
        event = f"rolled back to step {state.best_step}"
        with open(best.replace(".pth", "_profile.json"), encoding="utf-8") as f:
            state.last_profile = (state.step, json.load(f))  # what the weights now are
    cats = " ".join(f"{c} {v:.2f}" for c, v in profile["by_category"].items())
    tqdm.write(f"eval step {state.step} | task_completion {completion:.3f} | {cats} | "
               f"no_tool {profile['no_tool_accuracy']:.2f} | {event or 'saved'} {path}")
    if state.metrics_file is not None:
        record = {"step": state.step, "eval_task_completion": completion, "eval_event": event,
                  **{f"eval_{c}": v for c, v in profile["by_category"].items()},
                  "eval_tool_success": profile["tool_success_rate"],
                  "eval_no_tool_accuracy": profile["no_tool_accuracy"],
                  "eval_repeat_call_rate": profile["repeat_call_rate"], "rollbacks": state.rollbacks}
        state.metrics_file.write(json.dumps(record) + "\n")
        state.metrics_file.flush()
    return profile


def write_final_profile(state, evaluate):
    """The behaviour profile of the weights the run ends with, beside them ({weight}_{hidden}_profile.json):
    the latest periodic evaluation's when it saw these weights, else a new evaluation. With --average_last,
    the averaged weights are evaluated, and the last ones' profile goes beside {weight}_last."""
    args = state.args
    path = weight_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe))
    step, profile = state.last_profile or (None, None)
    if step != state.step:
        profile = behaviour_profile(evaluate(state), state.step)
    if state.average.count:
        last = weight_path(args.save_dir, f"{args.save_weight}_last", args.hidden_size, bool(args.use_moe))
        with open(last.replace(".pth", "_profile.json"), "w", encoding="utf-8") as f:
            json.dump(profile, f, ensure_ascii=False, indent=2)
        print(f"profile of the last weights: task completion {profile['task_completion']:.3f}")
        profile = behaviour_profile(evaluate(state, state.average.model(state.model)), state.step)
        profile["averaged_steps"] = [state.average.start, state.average.start + state.average.count - 1]
    with open(path.replace(".pth", "_profile.json"), "w", encoding="utf-8") as f:
        json.dump(profile, f, ensure_ascii=False, indent=2)
    print(f"profile: task completion {profile['task_completion']:.3f} on {args.eval_cases} at step "
          f"{state.step}, in {path.replace('.pth', '_profile.json')}")


def periodic_eval_on_rank0(state, evaluate):
    """periodic_eval on rank 0 alone; the other ranks wait for it, and follow when it rolls the weights
    back."""
    rollbacks = state.rollbacks
    if state.dist.is_main:
        periodic_eval(state, evaluate)
    rolled_back = broadcast_flag(state.rollbacks > rollbacks, state.dist)
    if rolled_back and state.dist.enabled:
        broadcast_weights(state.model, state.dist)  # rank 0 has reloaded the best weights
        if not state.dist.is_main:
            state.optimizer.state.clear()
            state.rollout_engine.update_policy(state.model)
            state.rollbacks += 1
