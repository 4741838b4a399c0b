"""
Cold-start SFT: teach a MiniMind model the chat format and the <tool_call> protocol from the generated
conversations, before agent RL.

The loss covers only what the assistant writes: every assistant turn through its closing <|im_end|> (so the
model learns to stop), never the system prompt, the user, or the tool responses. Batches group sequences of
similar length, matmuls run in bf16 autocast on CPU, and the validation loss is measured every --eval_interval
steps; the weights with the best validation loss are saved to out/{save_weight}_{hidden}[_moe].pth.

Run (scripts/cold_start.py runs it after pretraining, with --from_weight pretrain):
    python trainer/train_full_sft.py
The shipped out/full_sft_256.pth predates the pretraining stage: it was trained from random weights for 8
epochs on the 6,000 conversations of the first data generator (docs/experiments_v1.md).
Resume a killed run:
    python trainer/train_full_sft.py --from_resume 1
Incremental SFT (the data flywheel): start from a checkpoint, learn new conversations, rehearse old ones:
    python trainer/train_full_sft.py --from_weight agent_best --data_path dataset/rs_agent.jsonl \
        --mix_path dataset/sft_agent.jsonl --mix_ratio 0.5 --save_weight flywheel_sft \
        --epochs 2 --learning_rate 2e-4
About 1.2x faster steps on a CPU, after a one-off compile of about half a minute (needs a C++ compiler):
    python trainer/train_full_sft.py --use_compile 1
Several processes (DistributedDataParallel; each takes its slice of every batch of --batch_size):
    torchrun --nproc_per_node 2 trainer/train_full_sft.py
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
from tqdm import tqdm

from dataset.lm_dataset import LengthGroupedSampler, SFTDataset, decision_weights, mix_in, sft_collate
from model.model_minimind import count_parameters, save_minimind, weight_path
from trainer.trainer_utils import (
    add_model_args, add_runtime_args, add_upstream_args, all_ranks_any, all_ranks_sum, autocast, barrier,
    close_distributed, compile_for_training, cosine_lr, every, exit_status, grad_sync, init_distributed,
    init_model, load_resume, lock_output, on_stop_signal, open_log, resolve_runtime, resume_path, save_resume,
    set_rank_seed, set_rng_state, set_seed, split_batch, WeightEMA, wrap_ddp,
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Cold-start SFT on tool-use conversations")
    # --- data ---
    parser.add_argument(
        "--data_path", default="dataset/sft_agent.jsonl", help="training conversations (JSONL)"
    )
    parser.add_argument("--val_path", default="dataset/sft_agent_val.jsonl", help="validation conversations")
    parser.add_argument("--max_seq_len", type=int, default=1024, help="longer conversations are cut")
    parser.add_argument("--skip_bad_lines", action="store_true", help="skip (and count) malformed data lines")
    parser.add_argument(
        "--mix_path",
        default=None,
        help="incremental SFT: also rehearse conversations from this "
        "file (e.g. the original dataset/sft_agent.jsonl)",
    )
    parser.add_argument(
        "--mix_ratio",
        type=float,
        default=0.5,
        help="with --mix_path: the share of rehearsed conversations in the training set",
    )
    # --- model ---
    add_model_args(parser)
    parser.add_argument(
        "--from_weight",
        default="none",
        help="'none' (random init), a weight name in save_dir, "
        "a .pth file or a transformers model directory",
    )
    parser.add_argument(
        "--save_weight", default="full_sft", help="output name: out/{save_weight}_{hidden}.pth"
    )
    parser.add_argument("--save_dir", default="out")
    parser.add_argument(
        "--save_best",
        type=int,
        default=1,
        choices=[0, 1],
        help="1: keep the weights with the best validation loss; 0: the final weights (incremental "
        "SFT, whose new data the validation set does not cover)",
    )
    # --- optimisation ---
    parser.add_argument(
        "--epochs", type=int, default=2, help="passes over the (48,000 distinct) conversations"
    )
    parser.add_argument("--batch_size", type=int, default=16, help="conversations per step, all processes")
    parser.add_argument("--accumulation_steps", type=int, default=1)
    parser.add_argument(
        "--learning_rate", type=float, default=2e-3, help="peak LR (a small model from scratch)"
    )
    parser.add_argument("--weight_decay", type=float, default=0.1)
    parser.add_argument("--warmup_steps", type=int, default=50)
    parser.add_argument("--grad_clip", type=float, default=1.0)
    parser.add_argument(
        "--decision_weight",
        type=float,
        default=1.0,
        help="loss weight of the decision tokens: each answer's first token after its think block and "
        "every <tool_call> (call a tool or write text); 1: the plain mean over label tokens",
    )
    parser.add_argument(
        "--ema_decay",
        type=float,
        default=0.0,
        help="also keep an exponential moving average of the weights with this decay (e.g. 0.998), "
        "validated beside the weights and saved to out/{save_weight}_ema_{hidden}.pth; 0: off",
    )
    add_runtime_args(parser, log_interval=25, eval_interval=250)
    add_upstream_args(parser, compiles=True)
    args = resolve_runtime(parser.parse_args(argv))
    if args.decision_weight <= 0:
        parser.error(f"--decision_weight {args.decision_weight}: must be > 0 (1 is the plain mean)")
    if not 0.0 <= args.ema_decay < 1.0:
        parser.error(f"--ema_decay {args.ema_decay}: must be in [0, 1) (0 turns it off)")
    return args


@torch.no_grad()
def evaluate(model, dataset, args, batch_size=32):
    """Token-weighted mean loss over the whole validation set."""
    model.eval()
    total, count = 0.0, 0
    order = sorted(range(len(dataset)), key=lambda i: len(dataset[i][0]))
    for b in range(0, len(order), batch_size):
        input_ids, labels = sft_collate([dataset[i] for i in order[b:b + batch_size]])
        input_ids, labels = input_ids.to(args.device), labels.to(args.device)
        with autocast(args.device, args.dtype):
            loss = model(input_ids, labels=labels, return_logits=False).loss
        n = int((labels[:, 1:] != -100).sum())
        total += loss.item() * n
        count += n
    model.train()
    return total / max(1, count)


def count_labels(samples) -> int:
    """Label tokens the loss averages over (position 0 predicts nothing)."""
    return sum(sum(1 for t in labels[1:] if t != -100) for _, labels in samples)


def ensure_data(args):
    """The SFT files are generated (deterministically, in about a minute) rather than shipped: make them on
    first use, by running the generator (a script, so the trainer imports nothing from scripts/)."""
    missing = [p for p in (args.data_path, args.val_path, args.mix_path) if p and not os.path.exists(p)]
    if not missing:
        return
    defaults = {os.path.normpath(p) for p in ("dataset/sft_agent.jsonl", "dataset/sft_agent_val.jsonl")}
    if any(os.path.normpath(p) not in defaults for p in missing):
        raise FileNotFoundError(f"no data at {missing}")
    print("dataset/sft_agent*.jsonl missing: generating them with scripts/make_agent_data.py")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run([sys.executable, os.path.join(root, "scripts", "make_agent_data.py")], check=True)


@dataclass
class SFTRun:
    """What the SFT loop reads and updates, passed explicitly."""
    args: argparse.Namespace
    dist: object
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    train_set: SFTDataset
    val_set: SFTDataset
    sampler: LengthGroupedSampler
    total_steps: int
    out_path: str
    resume_path: str
    train_model: torch.nn.Module = None  # what the loss's forward goes through: DDP(model) or model
    tokenizer: object = None  # finds the decision tokens (--decision_weight)
    step: int = 0
    start_epoch: int = 0
    skip_batches: int = 0
    best_val: float = float("inf")
    skipped_nonfinite: int = 0
    tokens_seen: float = 0.0
    loss_sum: float = 0.0
    loss_n: int = 0
    log_file: object = None
    stop_signal: int | None = None
    ema: WeightEMA | None = None  # with --ema_decay
    ema_path: str = ""
    best_ema_val: float = float("inf")

    def restore(self, ckpt: dict):
        self.model.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        set_rng_state(ckpt["rng"])
        self.step = ckpt["step"]
        extra = ckpt["extra"]
        self.start_epoch, self.skip_batches, self.best_val = (
            extra["epoch"],
            extra["batches_done"],
            extra["best_val"],
        )
        if self.ema is not None:
            self.ema.restore(extra.get("ema"))
            self.best_ema_val = extra["best_ema_val"]

    def resume_extra(self, epoch: int, batches, batches_done: int) -> dict:
        return {"epoch": epoch, "batches_done": batches_done, "best_val": self.best_val,
                "samples_done": sum(len(batch) for batch in batches[:batches_done]),
                "world_size": self.dist.world_size,
                **({"ema": self.ema.state(), "best_ema_val": self.best_ema_val} if self.ema else {})}


def load_sets(args, tokenizer):
    train_set = SFTDataset(args.data_path, tokenizer, args.max_seq_len, args.skip_bad_lines)
    val_set = SFTDataset(args.val_path, tokenizer, args.max_seq_len, args.skip_bad_lines)
    if args.mix_path:
        replay = SFTDataset(args.mix_path, tokenizer, args.max_seq_len, args.skip_bad_lines)
        mix = mix_in(train_set, replay, args.mix_ratio, args.seed)
        print(f"mix: {mix['new']} new + {mix['replay']} rehearsed from {args.mix_path} "
              f"({mix['replay_share']:.1%} rehearsed)")
    return train_set, val_set


def setup(args) -> SFTRun:
    dist_info = init_distributed(args.device)  # rank 0 of 1 unless started by torchrun
    args.device = dist_info.device
    if args.batch_size < dist_info.world_size:
        raise ValueError(
            f"--batch_size {args.batch_size} is smaller than the {dist_info.world_size} processes"
        )
    if dist_info.is_main:
        ensure_data(args)
    barrier(dist_info)  # the others wait while rank 0 writes the data
    set_seed(args.seed)  # the same on every rank: identical starting weights
    model, tokenizer = init_model(args, args.from_weight, args.save_dir, args.device)
    train_set, val_set = load_sets(args, tokenizer)
    sampler = LengthGroupedSampler(train_set.lengths(), args.batch_size, seed=args.seed)
    total_steps = len(sampler) // args.accumulation_steps * args.epochs
    if args.max_steps > 0:
        total_steps = min(total_steps, args.max_steps)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay,
                                  betas=(0.9, 0.95))
    shape = (args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe))
    run = SFTRun(
        args,
        dist_info,
        model,
        optimizer,
        train_set,
        val_set,
        sampler,
        total_steps,
        weight_path(*shape),
        resume_path(*shape),
    )
    run.tokenizer = tokenizer
    if args.ema_decay > 0:
        run.ema = WeightEMA(model, args.ema_decay)
        run.ema_path = weight_path(args.save_dir, args.save_weight + "_ema", *shape[2:])
    if args.from_resume:
        ckpt = load_resume(run.resume_path)
        run.restore(ckpt)
        if dist_info.is_main:
            print(f"resumed from {run.resume_path} at step {run.step} (epoch {run.start_epoch}, batch "
                  f"{run.skip_batches}, saved by {ckpt['extra'].get('world_size', 1)} process(es))")
    # the forward that carries the loss goes through DDP, so that backward all-reduces the gradients
    run.train_model = wrap_ddp(model, dist_info, find_unused_parameters=bool(args.use_moe))
    run.train_model = compile_for_training(run.train_model, args.use_compile, args.device)
    set_rank_seed(args.seed, dist_info, run.step)  # dropout masks differ per rank
    if dist_info.is_main:
        print(f"model: {count_parameters(model) / 1e6:.2f}M parameters | device {args.device} | "
              f"dtype {args.dtype} | {dist_info.world_size} process(es)")
        print(
            f"data: {len(train_set)} train conversations ({sum(train_set.lengths())} tokens, "
            f"{train_set.stats}), {len(val_set)} val | "
            f"{len(sampler) // args.accumulation_steps} steps/epoch, "
            f"{total_steps} steps"
        )
        print("config: " + " ".join(f"{k}={v}" for k, v in vars(args).items()))
    return run


def backward_batch(run: SFTRun, batch_idx, sync: bool):
    """Forward and backward of this rank's slice of one global batch; returns the (scaled) loss tensor."""
    args, dist = run.args, run.dist
    rank_share = split_batch(batch_idx, dist)  # this rank's slice of the global batch
    samples = [run.train_set[i] for i in rank_share.indices]
    input_ids, labels = sft_collate(samples)
    input_ids, labels = input_ids.to(args.device), labels.to(args.device)
    weights = None
    if args.decision_weight != 1.0:
        weights = decision_weights(input_ids, labels, run.tokenizer, args.decision_weight)
    with grad_sync(run.train_model, sync):
        with autocast(args.device, args.dtype):
            loss = run.train_model(input_ids, labels=labels, return_logits=False,
                                   label_weights=weights).loss
        if dist.enabled:
            # the model's loss is the mean over this rank's label tokens; the global batch's mean weighs
            # them by (this rank's tokens / all ranks' tokens), times W because DDP averages over ranks
            global_labels = count_labels([run.train_set[i] for i in batch_idx])
            loss = loss * rank_share.weight * dist.world_size * count_labels(samples) / global_labels
        loss = loss / args.accumulation_steps
        loss.backward()
    run.tokens_seen += input_ids.numel() * rank_share.weight
    return loss


def optimizer_step(run: SFTRun, loss):
    """Cosine LR, clip, AdamW step; a non-finite loss or gradient is dropped. Returns (stepped, lr, norm)."""
    args = run.args
    step_loss = all_ranks_sum(loss.item(), run.dist) / run.dist.world_size  # the global batch's
    lr = cosine_lr(run.step, run.total_steps, args.learning_rate, args.warmup_steps)
    for group in run.optimizer.param_groups:
        group["lr"] = lr
    grad_norm = torch.nn.utils.clip_grad_norm_(run.model.parameters(), args.grad_clip).item()
    finite = math.isfinite(step_loss) and math.isfinite(grad_norm)
    if finite:
        run.optimizer.step()
        if run.ema is not None:
            run.ema.update(run.model)
        run.step += 1
        run.loss_sum += step_loss * args.accumulation_steps
        run.loss_n += 1
    else:
        run.skipped_nonfinite += 1  # never write a non-finite update into the weights
    run.optimizer.zero_grad(set_to_none=True)
    return finite, lr, grad_norm


def log_and_validate(run: SFTRun, epoch: int, lr: float, grad_norm: float, t0: float, bar):
    args, step = run.args, run.step
    if every(step, args.log_interval) or step == run.total_steps:
        elapsed = time.time() - t0
        tokens_all = all_ranks_sum(run.tokens_seen, run.dist)
        record = {"step": step, "epoch": epoch, "loss": round(run.loss_sum / run.loss_n, 4), "lr": lr,
                  "grad_norm": round(grad_norm, 3), "tok_per_s": round(tokens_all / elapsed),
                  "elapsed_s": round(elapsed), "skipped_nonfinite": run.skipped_nonfinite}
        bar.set_postfix(loss=record["loss"], lr=f"{lr:.2e}")
        if run.dist.is_main:
            tqdm.write(" | ".join(f"{k} {v}" for k, v in record.items()))
            run.log_file.write(json.dumps(record) + "\n")
            run.log_file.flush()
        run.loss_sum, run.loss_n = 0.0, 0
    if (every(step, args.eval_interval) or step == run.total_steps) and run.dist.is_main:
        val_loss = evaluate(run.model, run.val_set, args)
        improved = val_loss < run.best_val
        run.best_val = min(run.best_val, val_loss)
        if improved and args.save_best:
            save_minimind(run.model, run.out_path)
        tqdm.write(f"step {step} | val_loss {val_loss:.4f} | best {run.best_val:.4f}"
                   + (f" | saved {run.out_path}" if improved and args.save_best else ""))
        record = {"step": step, "val_loss": round(val_loss, 4)}
        if run.ema is not None:
            record["ema_val_loss"] = round(validate_ema(run), 4)
        run.log_file.write(json.dumps(record) + "\n")
        run.log_file.flush()
    if step == run.total_steps and not args.save_best and run.dist.is_main:
        save_minimind(run.model, run.out_path)  # the final weights, whatever the validation loss says
        if run.ema is not None:
            save_minimind(run.ema.averaged(), run.ema_path)


def validate_ema(run: SFTRun) -> float:
    """The averaged weights' validation loss; with --save_best they are saved when it improves (as the
    weights are), else the final average is saved at the end."""
    val_loss = evaluate(run.ema.averaged(), run.val_set, run.args)
    improved = val_loss < run.best_ema_val
    run.best_ema_val = min(run.best_ema_val, val_loss)
    if improved and run.args.save_best:
        save_minimind(run.ema.model, run.ema_path)
    tqdm.write(f"step {run.step} | averaged weights: val_loss {val_loss:.4f} | best {run.best_ema_val:.4f}"
               + (f" | saved {run.ema_path}" if improved and run.args.save_best else ""))
    return val_loss


def run_epoch(run: SFTRun, epoch: int, t0: float, bar) -> bool:
    """One pass over the epoch's batches (from the resume position); returns True when training is over."""
    args = run.args
    run.sampler.set_epoch(epoch)
    batches = run.sampler.batches()
    micro = 0
    for b_idx, batch_idx in enumerate(batches):
        if epoch == run.start_epoch and b_idx < run.skip_batches:
            continue
        loss = backward_batch(run, batch_idx, sync=(micro + 1) % args.accumulation_steps == 0)
        micro += 1
        if micro % args.accumulation_steps != 0:
            continue
        stepped, lr, grad_norm = optimizer_step(run, loss)
        if not stepped:
            continue
        bar.update(1)
        stopping = all_ranks_any(run.stop_signal is not None, run.dist)  # a signal may reach one rank first
        log_and_validate(run, epoch, lr, grad_norm, t0, bar)
        if (
            every(run.step, args.save_interval) or run.step == run.total_steps or stopping
        ) and run.dist.is_main:
            # the unwrapped model: the checkpoint fits any number of processes
            save_resume(run.resume_path, run.model, run.optimizer, run.step,
                        run.resume_extra(epoch, batches, b_idx + 1))
        if run.step >= run.total_steps or stopping:
            return True
    return False


def train(args):
    run = setup(args)

    on_stop_signal(lambda signum: setattr(run, "stop_signal", signum))
    run.train_model.train()
    os.makedirs(args.save_dir, exist_ok=True)
    log_path = run.out_path.replace(".pth", "_log.jsonl")
    if run.dist.is_main:
        lock_output(run.out_path)  # one run per checkpoint: a second one stops here
        run.log_file = open_log(log_path, run.step if args.from_resume else None, args)
    bar = tqdm(total=run.total_steps, initial=run.step, desc="sft", dynamic_ncols=True,
               disable=not run.dist.is_main)
    t0 = time.time()
    done = run.step >= run.total_steps
    for epoch in range(run.start_epoch, args.epochs):
        if done:
            break
        done = run_epoch(run, epoch, t0, bar)
    bar.close()
    if run.dist.is_main:
        run.log_file.close()
        print(f"done: {run.step} steps in {time.time() - t0:.0f}s | best val_loss {run.best_val:.4f} | "
              f"weights {run.out_path}")
    close_distributed(run.dist)
    return run.step >= run.total_steps  # False: stopped by a signal, with a resume checkpoint


if __name__ == "__main__":
    sys.exit(exit_status(train(parse_args())))
