"""
Preference optimisation on the model's own trajectories (DPO), after SFT.

SFT learns only from right answers. A model that calls the weather tool for "给我讲个笑话" was never
shown that the call is wrong; it only saw other questions answered without one. The rejection-sampling round
(scripts/rejection_sample.py --pairs_out) samples k trajectories of each RL-split prompt, and wherever some
were right and some failed, writes pairs of a right and a failed one, as the token ids that were sampled.
DPO (Rafailov et al., 2023) then raises the right one's likelihood ratio against the failed one's, both
measured against a frozen reference (the starting weights):

    margin = (log pi(y_w) - log ref(y_w)) - (log pi(y_l) - log ref(y_l))
    loss   = -log sigmoid(beta * margin)  +  sft_weight * NLL(y_w) per token

log pi(y) sums the log-probs of the tokens the model wrote (mask 1): never the prompt, never a tool result,
and (--divergent_turn_only 1, the default) nothing after the model turn where the two sides first differ:
before it they are the same, and after it the failed side answers other tool results, so its later turns
may be right and should not take the blame.
The NLL term on the right trajectory (as in iterative RPO, Pang et al., 2024) keeps its likelihood from
falling while the margin grows. --rehearse_path adds, each step, the per-token NLL of a few conversations of
the SFT data itself (as in the pretraining mix of InstructGPT's PPO-ptx, Ouyang et al., 2022): the pairs speak
to a few decisions, and the rehearsal holds what they do not speak to where SFT left it.
A tenth of the prompts are held out: their pairs' accuracy (margin > 0) and margin are the validation
figures, per failure reason.

Run (after SFT; scripts/cold_start.py --dpo_round 1 runs both steps as its last stage):
    python scripts/rejection_sample.py --weight full_sft --out out/rs.jsonl --pairs_out out/dpo_pairs.jsonl
    python trainer/train_dpo.py --from_weight full_sft --data_path out/dpo_pairs.jsonl \
        --save_weight full_sft_dpo --rehearse_path dataset/sft_agent.jsonl   # with rehearsal
Resume a killed run:
    python trainer/train_dpo.py --from_weight full_sft --data_path out/dpo_pairs.jsonl \
        --save_weight full_sft_dpo --from_resume 1
"""
import argparse
import json
import math
import os
import random
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
import torch.nn.functional as F
from tqdm import tqdm

from dataset.lm_dataset import PreferenceDataset, SFTDataset, sft_collate
from model.model_minimind import count_parameters, save_minimind, weight_path
from trainer.fast_engine import compute_per_token_logps
from trainer.train_agent import Trajectory, build_train_batch
from trainer.trainer_utils import (
    add_model_args, add_runtime_args, autocast, cosine_lr, every, exit_status, init_model, load_resume,
    lock_output, on_stop_signal, open_log, resolve_runtime, resume_path, save_resume, set_rng_state, set_seed,
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="DPO on the model's own right and failed trajectories")
    # --- data ---
    parser.add_argument("--data_path", default="out/dpo_pairs.jsonl",
                        help="preference pairs (scripts/rejection_sample.py --pairs_out)")
    parser.add_argument("--val_share", type=float, default=0.1, help="share of the prompts held out")
    parser.add_argument("--max_total_len", type=int, default=1024,
                        help="prompt + trajectory; longer ones lose their earliest middle turns")
    parser.add_argument("--skip_bad_lines", action="store_true", help="skip (and count) malformed data lines")
    # --- model ---
    add_model_args(parser)
    parser.add_argument("--from_weight", default="full_sft",
                        help="the starting weights, also the frozen reference: a name in save_dir, a .pth "
                             "file or a transformers directory")
    parser.add_argument("--save_weight", default="full_sft_dpo",
                        help="output name: out/{save_weight}_{hidden}.pth")
    parser.add_argument("--save_dir", default="out")
    # --- objective ---
    parser.add_argument("--beta", type=float, default=0.1, help="DPO temperature: how far from the reference")
    parser.add_argument("--divergent_turn_only", type=int, default=1, choices=[0, 1],
                        help="1: score each side only through the end of the model turn where the two first "
                             "differ (later turns follow different tool results; 0: whole trajectories)")
    parser.add_argument("--sft_weight", type=float, default=1.0,
                        help="weight of the per-token NLL of the right trajectory (0: plain DPO)")
    parser.add_argument("--rehearse_path", default="",
                        help="SFT conversations to keep learning beside the pairs (the start's own SFT data, "
                             "e.g. dataset/sft_agent.jsonl); empty: none")
    parser.add_argument("--rehearse_per_step", type=int, default=16,
                        help="with --rehearse_path: conversations drawn a step (seeded by the step)")
    parser.add_argument("--rehearse_weight", type=float, default=1.0,
                        help="with --rehearse_path: weight of their per-token NLL in the step's loss")
    # --- optimisation ---
    parser.add_argument("--epochs", type=int, default=2, help="passes over the training pairs")
    parser.add_argument("--batch_size", type=int, default=16, help="pairs per step")
    parser.add_argument("--micro_batch", type=int, default=8, help="pairs per forward (bounds the memory)")
    parser.add_argument("--learning_rate", type=float, default=5e-5, help="peak LR")
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--warmup_steps", type=int, default=10)
    parser.add_argument("--grad_clip", type=float, default=1.0)
    add_runtime_args(parser, log_interval=10, eval_interval=50, save_interval=50)
    args = resolve_runtime(parser.parse_args(argv))
    if not 0.0 <= args.val_share < 1.0:
        parser.error(f"--val_share must be in [0, 1), got {args.val_share}")
    if args.beta <= 0 or args.sft_weight < 0:
        parser.error(f"--beta must be positive and --sft_weight at least 0, "
                     f"got {args.beta} and {args.sft_weight}")
    if args.batch_size < 1 or args.micro_batch < 1:
        parser.error("--batch_size and --micro_batch must be at least 1")
    if args.rehearse_path and (args.rehearse_per_step < 1 or args.rehearse_weight < 0):
        parser.error(f"--rehearse_per_step must be at least 1 and --rehearse_weight at least 0, "
                     f"got {args.rehearse_per_step} and {args.rehearse_weight}")
    return args


# ----------------------------------------------------------------------------------------------------------
# sequence log-probs of a batch of pairs


@dataclass
class PairLogps:
    """Per pair: the summed log-prob of the model-written tokens of each side, and the chosen side's count."""
    chosen: torch.Tensor  # (B,)
    rejected: torch.Tensor  # (B,)
    chosen_tokens: torch.Tensor  # (B,)


def sequence_logps(model, pairs, args) -> PairLogps:
    """Rows chosen_0, rejected_0, chosen_1, ... through the model once; the same padding, truncation and
    column cut as the RL update (trainer/train_batch.py: build_train_batch, TrainBatch.rows)."""
    trajs = []
    for p in pairs:
        for ids, mask in ((p.chosen_ids, p.chosen_mask), (p.rejected_ids, p.rejected_mask)):
            trajs.append(Trajectory(prompt_ids=p.prompt_ids, messages=[], open_thinking=False, ids=ids,
                                    response_mask=mask, old_logps=[0.0] * len(ids)))
    batch = build_train_batch(trajs, torch.zeros(len(trajs)), args.pad_token_id, args.eos_token_id,
                              args.max_total_len).rows(slice(None))
    ids, mask = batch.input_ids.to(args.device), batch.completion_mask.to(args.device)
    with autocast(args.device, args.dtype):
        logps = compute_per_token_logps(model, ids, batch.n_keep, shared_prefix=batch.shared_prefix)
    sums = (logps * mask).sum(1)
    return PairLogps(sums[0::2], sums[1::2], mask[0::2].sum(1))


@torch.no_grad()
def reference_logps(model, pairs, args) -> torch.Tensor:
    """(N, 2): the frozen starting weights' log-probs of every pair's chosen and rejected side."""
    model.eval()
    out = []
    for s in tqdm(range(0, len(pairs), args.micro_batch), desc="reference log-probs", dynamic_ncols=True):
        lp = sequence_logps(model, pairs[s:s + args.micro_batch], args)
        out.append(torch.stack([lp.chosen, lp.rejected], 1).float().cpu())
    model.train()
    return torch.cat(out)


@dataclass
class PairLoss:
    loss: torch.Tensor  # (B,) per pair, DPO + sft_weight * NLL
    margin: torch.Tensor  # (B,) the implicit reward margin, beta * margin
    chosen_reward: torch.Tensor  # (B,) beta * (log pi - log ref) of the chosen side
    rejected_reward: torch.Tensor  # (B,)
    nll: torch.Tensor  # (B,) per-token NLL of the chosen side


def dpo_loss(policy: PairLogps, ref: torch.Tensor, beta: float, sft_weight: float) -> PairLoss:
    chosen = beta * (policy.chosen - ref[:, 0])
    rejected = beta * (policy.rejected - ref[:, 1])
    margin = chosen - rejected
    nll = -policy.chosen / policy.chosen_tokens.clamp(min=1)
    return PairLoss(-F.logsigmoid(margin) + sft_weight * nll, margin, chosen, rejected, nll)


def cut_after_divergent_turn(pair):
    """The pair with both masks ending at the model turn where the sides first differ. What comes before
    that turn is the same in both (it cancels in the margin); what comes after it answers different tool
    results, so a right later turn of the failed side would be blamed for the first turn's mistake."""
    a, b = pair.chosen_ids, pair.rejected_ids
    first = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))

    def cut(mask):
        end = first
        while end < len(mask) and not mask[end]:  # to the model turn that holds (or follows) the difference
            end += 1
        while end < len(mask) and mask[end]:  # through that turn's <|im_end|>
            end += 1
        return [m if k < end else 0 for k, m in enumerate(mask)]

    return replace(pair, chosen_mask=cut(pair.chosen_mask), rejected_mask=cut(pair.rejected_mask))


# ----------------------------------------------------------------------------------------------------------
# data split and the run's state


def split_pairs(pairs, val_share: float, seed: int):
    """Hold out whole prompts (all their pairs): no validation pair shares its prompt with a trained one."""
    prompts = sorted({p.prompt for p in pairs})
    random.Random(seed).shuffle(prompts)
    held = set(prompts[:round(len(prompts) * val_share)])
    train = [i for i, p in enumerate(pairs) if p.prompt not in held]
    val = [i for i, p in enumerate(pairs) if p.prompt in held]
    return train, val


@dataclass
class DPORun:
    args: argparse.Namespace
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    pairs: list
    ref: torch.Tensor  # (N, 2) reference log-probs
    train_idx: list
    val_idx: list
    total_steps: int
    out_path: str
    resume_path: str
    step: int = 0
    start_epoch: int = 0
    skip_batches: int = 0
    log_file: object = None
    stop_signal: int | None = None
    rehearse: SFTDataset | None = None  # --rehearse_path
    window: dict = field(default_factory=lambda: defaultdict(float))  # sums since the last log line

    def batches(self, epoch: int) -> list:
        order = list(self.train_idx)
        random.Random(self.args.seed * 1000 + epoch).shuffle(order)
        bs = self.args.batch_size
        return [order[s:s + bs] for s in range(0, len(order), bs)]


def setup(args) -> DPORun:
    set_seed(args.seed)
    model, tokenizer = init_model(args, args.from_weight, args.save_dir, args.device)
    args.pad_token_id, args.eos_token_id = tokenizer.pad_token_id, tokenizer.eos_token_id
    data = PreferenceDataset(args.data_path, tokenizer, args.skip_bad_lines)
    pairs = [cut_after_divergent_turn(p) for p in data.pairs] if args.divergent_turn_only else data.pairs
    train_idx, val_idx = split_pairs(pairs, args.val_share, args.seed)
    if not train_idx:
        raise ValueError(f"{args.data_path}: no training pairs after holding out {args.val_share:.0%} "
                         "of the prompts")
    ref = reference_logps(model, pairs, args)  # the starting weights: computed before any resume restores
    steps_per_epoch = math.ceil(len(train_idx) / args.batch_size)
    total_steps = steps_per_epoch * args.epochs
    if args.max_steps > 0:
        total_steps = min(total_steps, args.max_steps)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay,
                                  betas=(0.9, 0.95))
    shape = (args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe))
    run = DPORun(args, model, optimizer, pairs, ref, train_idx, val_idx, total_steps, weight_path(*shape),
                 resume_path(*shape))
    if args.rehearse_path:
        run.rehearse = SFTDataset(args.rehearse_path, tokenizer, args.max_total_len, args.skip_bad_lines)
        print(f"rehearsal: {args.rehearse_per_step} of {len(run.rehearse)} conversations a step from "
              f"{args.rehearse_path}, weight {args.rehearse_weight}")
    if args.from_resume:
        ckpt = load_resume(run.resume_path)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        set_rng_state(ckpt["rng"])
        run.step = ckpt["step"]
        run.start_epoch, run.skip_batches = ckpt["extra"]["epoch"], ckpt["extra"]["batches_done"]
        print(f"resumed from {run.resume_path} at step {run.step}")
    reasons = defaultdict(int)
    for p in pairs:
        reasons[p.reason] += 1
    print(f"model: {count_parameters(model) / 1e6:.2f}M parameters | device {args.device} | "
          f"dtype {args.dtype}")
    print(f"data: {len(pairs)} pairs ({dict(reasons)}, {data.stats}) | {len(train_idx)} train, "
          f"{len(val_idx)} val | {steps_per_epoch} steps/epoch, {total_steps} steps")
    print("config: " + " ".join(f"{k}={v}" for k, v in vars(args).items()))
    return run


# ----------------------------------------------------------------------------------------------------------
# training


def train_step(run: DPORun, batch_idx: list) -> float:
    """Forward and backward of one batch of pairs in micro-batches, then the optimizer step. Returns the
    gradient norm (non-finite: the step was dropped)."""
    args = run.args
    for s in range(0, len(batch_idx), args.micro_batch):
        idx = batch_idx[s:s + args.micro_batch]
        policy = sequence_logps(run.model, [run.pairs[i] for i in idx], args)
        out = dpo_loss(policy, run.ref[idx].to(args.device), args.beta, args.sft_weight)
        (out.loss.sum() / len(batch_idx)).backward()
        w = run.window
        w["pairs"] += len(idx)
        w["loss"] += out.loss.sum().item()
        w["accuracy"] += (out.margin > 0).sum().item()
        w["margin"] += out.margin.sum().item()
        w["chosen_reward"] += out.chosen_reward.sum().item()
        w["rejected_reward"] += out.rejected_reward.sum().item()
        w["nll"] += out.nll.sum().item()
    if run.rehearse is not None:
        rehearse_step(run)
    lr = cosine_lr(run.step, run.total_steps, args.learning_rate, args.warmup_steps)
    for group in run.optimizer.param_groups:
        group["lr"] = lr
    grad_norm = torch.nn.utils.clip_grad_norm_(run.model.parameters(), args.grad_clip).item()
    if math.isfinite(grad_norm):
        run.optimizer.step()
    else:
        run.window["skipped_nonfinite"] += 1  # never write a non-finite update into the weights
    run.optimizer.zero_grad(set_to_none=True)
    run.step += 1
    run.window["lr"] = lr
    return grad_norm


def rehearsal_batch(run: DPORun) -> list:
    """The step's rehearsed conversations: drawn from the step number alone, so a resumed run draws the
    same ones."""
    rng = random.Random(run.args.seed * 1_000_003 + run.step)
    k = min(run.args.rehearse_per_step, len(run.rehearse))
    return rng.sample(range(len(run.rehearse)), k)


def rehearse_step(run: DPORun):
    """Backward of rehearse_weight * the mean per-token NLL of the step's rehearsed SFT conversations: the
    pairs move a few decisions, and this keeps the rest of what SFT taught where it was."""
    args = run.args
    samples = [run.rehearse[i] for i in rehearsal_batch(run)]
    n_labels = sum(sum(label != -100 for label in labels[1:]) for _, labels in samples)
    for s in range(0, len(samples), args.micro_batch):
        part = samples[s:s + args.micro_batch]
        input_ids, labels = (t.to(args.device) for t in sft_collate(part, args.pad_token_id))
        with autocast(args.device, args.dtype):
            nll = run.model(input_ids, labels=labels, return_logits=False).loss  # mean over part's labels
        share = (labels[:, 1:] != -100).sum().item() / max(1, n_labels)
        (args.rehearse_weight * nll * share).backward()
        run.window["rehearse_nll"] += nll.item() * share
    run.window["rehearse_steps"] += 1


@torch.no_grad()
def validate(run: DPORun) -> dict:
    """Accuracy (margin > 0) and mean margin of the held-out pairs, overall and per failure reason."""
    if not run.val_idx:
        return {}
    run.model.eval()
    by_reason = defaultdict(lambda: [0, 0])
    loss, correct, margin = 0.0, 0, 0.0
    for s in range(0, len(run.val_idx), run.args.micro_batch):
        idx = run.val_idx[s:s + run.args.micro_batch]
        pairs = [run.pairs[i] for i in idx]
        out = dpo_loss(sequence_logps(run.model, pairs, run.args), run.ref[idx].to(run.args.device),
                       run.args.beta, run.args.sft_weight)
        loss += out.loss.sum().item()
        margin += out.margin.sum().item()
        for p, m in zip(pairs, out.margin.tolist()):
            correct += m > 0
            by_reason[p.reason][0] += m > 0
            by_reason[p.reason][1] += 1
    run.model.train()
    n = len(run.val_idx)
    return {"val_loss": round(loss / n, 4), "val_accuracy": round(correct / n, 4),
            "val_margin": round(margin / n, 4),
            "val_accuracy_by_reason": {r: round(c / t, 3) for r, (c, t) in sorted(by_reason.items())}}


def log(run: DPORun, record: dict):
    tqdm.write(" | ".join(f"{k} {v}" for k, v in record.items()))
    run.log_file.write(json.dumps(record) + "\n")
    run.log_file.flush()


def window_record(run: DPORun, grad_norm: float, t0: float) -> dict:
    w, n = run.window, max(1.0, run.window["pairs"])
    record = {"step": run.step, "loss": round(w["loss"] / n, 4), "accuracy": round(w["accuracy"] / n, 3),
              "margin": round(w["margin"] / n, 4), "chosen_reward": round(w["chosen_reward"] / n, 4),
              "rejected_reward": round(w["rejected_reward"] / n, 4), "chosen_nll": round(w["nll"] / n, 4),
              "lr": w["lr"], "grad_norm": round(grad_norm, 3), "elapsed_s": round(time.time() - t0),
              "skipped_nonfinite": int(w["skipped_nonfinite"])}
    if w["rehearse_steps"]:
        record["rehearse_nll"] = round(w["rehearse_nll"] / w["rehearse_steps"], 4)
    run.window = defaultdict(float)
    return record


def train(args) -> bool:
    run = setup(args)

    on_stop_signal(lambda signum: setattr(run, "stop_signal", signum))
    os.makedirs(args.save_dir, exist_ok=True)
    lock_output(run.out_path)  # one run per checkpoint: a second one stops here
    log_path = run.out_path.replace(".pth", "_log.jsonl")
    run.log_file = open_log(log_path, run.step if args.from_resume else None, args)
    if run.step == 0:
        log(run, {"step": 0, **validate(run)})  # the reference itself: margins are 0 up to bf16 rounding
    run.model.train()
    bar = tqdm(total=run.total_steps, initial=run.step, desc="dpo", dynamic_ncols=True)
    t0 = time.time()
    for epoch in range(run.start_epoch, args.epochs):
        if run.step >= run.total_steps or run.stop_signal is not None:
            break
        batches = run.batches(epoch)
        for b, batch_idx in enumerate(batches):
            if epoch == run.start_epoch and b < run.skip_batches:
                continue
            grad_norm = train_step(run, batch_idx)
            bar.update(1)
            last = run.step >= run.total_steps
            if every(run.step, args.log_interval) or last:
                log(run, window_record(run, grad_norm, t0))
            if every(run.step, args.eval_interval) or last:
                log(run, {"step": run.step, **validate(run)})
            if every(run.step, args.save_interval) or last or run.stop_signal is not None:
                save_resume(run.resume_path, run.model, run.optimizer, run.step,
                            {"epoch": epoch, "batches_done": b + 1})
            if last or run.stop_signal is not None:
                break
        run.skip_batches = 0
    bar.close()
    run.log_file.close()
    finished = run.step >= run.total_steps
    if finished:
        save_minimind(run.model, run.out_path)
        print(f"done: {run.step} steps in {time.time() - t0:.0f}s | weights {run.out_path}")
    return finished  # False: stopped by a signal, with a resume checkpoint


if __name__ == "__main__":
    sys.exit(exit_status(train(parse_args())))
