"""
Stage 1, pretraining: next-token prediction on plain text (dataset/pretrain.jsonl, made on this machine by
scripts/make_pretrain_data.py: copy and reformat drills plus general text), before the tool-use SFT.

Documents are packed into blocks of --max_seq_len tokens with no padding; the loss covers every token. A
slice of the blocks (--val_blocks) is held out for the validation loss. The final weights go to
out/{save_weight}_{hidden}.pth, which train_full_sft.py starts from with --from_weight pretrain.

Run:
    python scripts/make_pretrain_data.py          # the text, ~2 minutes
    python trainer/train_pretrain.py
Resume a killed run:
    python trainer/train_pretrain.py --from_resume 1
Faster steps on a CPU through torch.compile, after a one-off compile (needs a C++ compiler):
    python trainer/train_pretrain.py --use_compile 1
"""
import argparse
import json
import math
import os
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
from tqdm import tqdm

from dataset.lm_dataset import PretrainDataset
from model.model_minimind import count_parameters, save_minimind, weight_path
from trainer.trainer_utils import (
    add_model_args, add_runtime_args, add_upstream_args, autocast, compile_for_training, cosine_lr, every,
    exit_status, init_model, load_resume, lock_output, on_stop_signal, open_log, resolve_runtime, resume_path,
    save_resume, set_rng_state, set_seed,
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Pretraining on plain text (stage 1)")
    parser.add_argument("--data_path", default="dataset/pretrain.jsonl", help="{\"text\": ...} lines")
    parser.add_argument("--max_seq_len", type=int, default=512, help="tokens per packed block")
    parser.add_argument("--val_blocks", type=int, default=64, help="blocks held out for the validation loss")
    parser.add_argument("--skip_bad_lines", action="store_true", help="skip (and count) malformed data lines")
    add_model_args(parser)
    parser.add_argument("--from_weight", default="none", help="'none' (random init) or a weight to continue")
    parser.add_argument(
        "--save_weight", default="pretrain", help="output name: out/{save_weight}_{hidden}.pth"
    )
    parser.add_argument("--save_dir", default="out")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=16, help="blocks per step")
    parser.add_argument("--learning_rate", type=float, default=2e-3, help="peak LR")
    parser.add_argument("--weight_decay", type=float, default=0.1)
    parser.add_argument("--warmup_steps", type=int, default=100)
    parser.add_argument("--grad_clip", type=float, default=1.0)
    add_runtime_args(parser, log_interval=50, eval_interval=500)
    add_upstream_args(parser, compiles=True)
    return resolve_runtime(parser.parse_args(argv))


@torch.no_grad()
def evaluate(model, blocks, args, batch_size=16) -> float:
    model.eval()
    losses = []
    for b in range(0, len(blocks), batch_size):
        x = blocks[b:b + batch_size].to(args.device)
        with autocast(args.device, args.dtype):
            losses.append(model(x, labels=x, return_logits=False).loss.item())
    model.train()
    return sum(losses) / max(1, len(losses))


def epoch_order(n: int, seed: int, epoch: int) -> list:
    """The block order of one epoch: a permutation fixed by the seed and the epoch (so a resume can skip)."""
    g = torch.Generator().manual_seed(seed * 1000 + epoch)
    return torch.randperm(n, generator=g).tolist()


def train_step(model, optimizer, x, lr: float, args, forward=None) -> tuple:
    """One step of next-token prediction on the blocks x; a non-finite loss or gradient is not applied.
    forward: the module the forward goes through (the model compiled, with --use_compile 1)."""
    with autocast(args.device, args.dtype):
        loss = (model if forward is None else forward)(x, labels=x, return_logits=False).loss
    loss.backward()
    for group in optimizer.param_groups:
        group["lr"] = lr
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip).item()
    if math.isfinite(loss.item()) and math.isfinite(grad_norm):  # never write a non-finite update
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item(), grad_norm


def write_log(log_file, record: dict):
    log_file.write(json.dumps(record) + "\n")
    log_file.flush()


def load_blocks(args, tokenizer) -> PretrainDataset:
    if not os.path.exists(args.data_path):
        raise FileNotFoundError(f"no pretraining text at {args.data_path}: "
                                "run python scripts/make_pretrain_data.py")
    data = PretrainDataset(args.data_path, tokenizer, args.max_seq_len, args.skip_bad_lines)
    if len(data) <= args.val_blocks:
        raise ValueError(f"{args.data_path}: {len(data)} blocks, not more than --val_blocks "
                         f"{args.val_blocks}")
    return data


def train(args):
    set_seed(args.seed)
    model, tokenizer = init_model(args, args.from_weight, args.save_dir, args.device)
    forward = compile_for_training(model, args.use_compile, args.device)
    data = load_blocks(args, tokenizer)
    val_blocks = data.blocks[-args.val_blocks:]
    n_train = len(data) - args.val_blocks
    steps_per_epoch = n_train // args.batch_size
    total_steps = steps_per_epoch * args.epochs
    if args.max_steps > 0:
        total_steps = min(total_steps, args.max_steps)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay,
                                  betas=(0.9, 0.95))
    out_path = weight_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe))
    ckpt_path = resume_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe))
    log_path = out_path.replace(".pth", "_log.jsonl")

    step = 0
    if args.from_resume:
        ckpt = load_resume(ckpt_path)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        set_rng_state(ckpt["rng"])
        step = ckpt["step"]
        print(f"resumed from {ckpt_path} at step {step}")
    print(f"model: {count_parameters(model) / 1e6:.2f}M parameters | device {args.device} | "
          f"dtype {args.dtype} | data: {data.stats['documents']} documents, {n_train} blocks of "
          f"{args.max_seq_len} tokens "
          f"({n_train * args.max_seq_len / 1e6:.1f}M), {args.val_blocks} val | {total_steps} steps")
    stop = {"signal": None}

    on_stop_signal(lambda signum: stop.update(signal=signum))
    os.makedirs(args.save_dir, exist_ok=True)
    lock_output(out_path)  # one run per checkpoint: a second one stops here
    log_file = open_log(log_path, step if args.from_resume else None, args)
    bar = tqdm(total=total_steps, initial=step, desc="pretrain", dynamic_ncols=True)
    model.train()
    t0, tokens, loss_sum, loss_n = time.time(), 0, 0.0, 0
    while step < total_steps:
        epoch, in_epoch = divmod(step, steps_per_epoch)
        order = epoch_order(n_train, args.seed, epoch)
        x = data.blocks[order[in_epoch * args.batch_size:(in_epoch + 1) * args.batch_size]].to(args.device)
        lr = cosine_lr(step, total_steps, args.learning_rate, args.warmup_steps)
        loss, grad_norm = train_step(model, optimizer, x, lr, args, forward)
        step += 1
        tokens += x.numel()
        loss_sum, loss_n = loss_sum + loss, loss_n + 1
        bar.update(1)

        if every(step, args.log_interval) or step == total_steps:
            elapsed = time.time() - t0
            bar.set_postfix(loss=round(loss_sum / loss_n, 4), lr=f"{lr:.2e}")
            write_log(log_file, {"step": step, "epoch": epoch, "loss": round(loss_sum / loss_n, 4), "lr": lr,
                                 "grad_norm": round(grad_norm, 3), "tok_per_s": round(tokens / elapsed),
                                 "elapsed_s": round(elapsed)})
            loss_sum, loss_n = 0.0, 0
        if every(step, args.eval_interval) or step == total_steps:
            val_loss = evaluate(model, val_blocks, args)
            tqdm.write(f"step {step} | val_loss {val_loss:.4f}")
            write_log(log_file, {"step": step, "val_loss": round(val_loss, 4)})
        if every(step, args.save_interval) or step == total_steps or stop["signal"] is not None:
            save_resume(ckpt_path, model, optimizer, step, {"epoch": epoch})
        if stop["signal"] is not None:
            break
    bar.close()
    log_file.close()
    if step == total_steps:
        save_minimind(model, out_path)
        print(f"done: {step} steps in {time.time() - t0:.0f}s | weights {out_path}")
    return step == total_steps  # False: stopped by a signal, with a resume checkpoint


if __name__ == "__main__":
    sys.exit(exit_status(train(parse_args())))
