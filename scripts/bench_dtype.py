"""
bf16 autocast against fp32 on this machine, side by side in one process: which dtype should the CPU train in?

Having bf16 instructions does not make bf16 faster: the model is small, and the work between its matmuls (norms,
casts, attention, the optimizer) is a large share of a step. On a 2-core Intel Xeon with AVX-512 BF16 and no AMX,
bf16 gave 0.79x fp32's tokens/s in pretraining, 0.59x in SFT and 0.87x in rollouts, so `--dtype` defaults to
fp32 there (trainer_utils.default_dtype). This measures the three kinds of work the README's commands spend their time on,
each in both dtypes, round after round in alternating order (so a busy spell of the machine hits both):

    pretrain   a train_pretrain.py step: --batch_size blocks of --max_seq_len tokens, forward, backward, AdamW
    sft        a train_full_sft.py step on the SFT conversations (bench_agent_rl.py's SFT step)
    rollout    the main job's rollout of --batch_prompts prompts x --num_generations (model-written tokens/s)

    python scripts/bench_dtype.py                        # about 4 minutes on 2 cores
    python scripts/bench_dtype.py --rounds 1 --quick     # a smoke run in seconds

Prints each kind's rate in both dtypes and the ratio bf16 / fp32 (above 1: bf16 is faster here).
"""
import argparse
import copy
import json
import os
import sys
import time
from types import SimpleNamespace

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch

from dataset.lm_dataset import AgentRLDataset
from scripts.bench_agent_rl import (
    batched_rollout, bench_sft, flop_model, load_average, pick_prompts, trainer_args,
)
from trainer import train_agent
from trainer.train_agent import MOCK_RESULTS
from trainer.trainer_utils import autocast, cpu_vendor, default_dtype, init_model

DTYPES = ("bfloat16", "float32")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="bf16 autocast against fp32 on this CPU, side by side")
    p.add_argument("--weight", default="full_sft", help="the model every measurement runs (out/{weight}_256.pth)")
    p.add_argument("--save_dir", default="out")
    p.add_argument("--hidden_size", type=int, default=256)
    p.add_argument("--num_hidden_layers", type=int, default=4)
    p.add_argument("--rounds", type=int, default=3, help="rounds; each measures every kind in both dtypes")
    p.add_argument("--steps", type=int, default=3, help="timed training steps per kind, dtype and round")
    p.add_argument("--batch_size", type=int, default=16, help="pretraining blocks a step (train_pretrain.py's)")
    p.add_argument("--max_seq_len", type=int, default=512)
    p.add_argument("--sft_batch_size", type=int, default=16, help="conversations a step (train_full_sft.py's)")
    p.add_argument("--sft_data_path", default=None, help="SFT conversations (default: dataset/sft_agent.jsonl "
                   "when it exists, else the RL prompts with their reference answers)")
    p.add_argument("--data_path", default="dataset/agent_rl.jsonl", help="RL prompts for the rollout")
    p.add_argument("--batch_prompts", type=int, default=16, help="prompts a rollout (the main job's batch)")
    p.add_argument("--num_generations", type=int, default=8)
    p.add_argument("--max_gen_len", type=int, default=None, help="new tokens a model turn (train_agent.py's)")
    p.add_argument("--quick", action="store_true", help="tiny settings: a smoke run")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", default=None, help="write the results as JSON here")
    args = p.parse_args(argv)
    if args.quick:
        args.steps, args.batch_size, args.max_seq_len, args.sft_batch_size = 1, 2, 64, 2
        args.batch_prompts, args.num_generations, args.max_gen_len = 2, 2, 8
    args.max_gen_len = args.max_gen_len or train_agent.parse_args([]).max_gen_len
    return args


def pretrain_rate(model, args, dtype: str) -> float:
    """Tokens a second over --steps pretraining steps, after one untimed step."""
    policy = copy.deepcopy(model).train()
    optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-4, weight_decay=0.1, betas=(0.9, 0.95))
    gen = torch.Generator().manual_seed(args.seed)
    vocab = policy.config.vocab_size
    seconds = 0.0
    for step in range(args.steps + 1):
        x = torch.randint(0, vocab, (args.batch_size, args.max_seq_len), generator=gen)
        t0 = time.perf_counter()
        with autocast("cpu", dtype):
            loss = policy(x, labels=x, return_logits=False).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step > 0:
            seconds += time.perf_counter() - t0
    return args.steps * args.batch_size * args.max_seq_len / seconds


def sft_rate(model, tok, args, dtype: str, flops) -> float:
    bench_args = SimpleNamespace(sft_data_path=args.sft_data_path, data_path=args.data_path, device="cpu",
                                 dtype=dtype, sft_batch_size=args.sft_batch_size, sft_steps=args.steps,
                                 seed=args.seed)
    return bench_sft(model, tok, bench_args, flops, peak=1.0)["real_tokens_per_s"]


def rollout_rate(model, tok, dataset, args, dtype: str, flops, round_: int) -> float:
    targs = trainer_args(SimpleNamespace(
        weight=args.weight, save_dir=args.save_dir, hidden_size=args.hidden_size,
        num_hidden_layers=args.num_hidden_layers, use_moe=0, device="cpu", dtype=dtype,
        max_gen_len=args.max_gen_len, max_turns=train_agent.parse_args([]).max_turns,
        max_total_len=2500, temperature=0.8, top_p=1.0, train_micro_batch=8, seed=args.seed,
    ), args.batch_prompts, args.num_generations)
    items = pick_prompts(dataset, args.batch_prompts, args.seed + round_)  # both dtypes: the same prompts
    torch.manual_seed(args.seed + round_)
    return batched_rollout(model, tok, items, args.num_generations, targs, flops).tokens_per_s


def load_model(args):
    """The model and tokenizer, loaded as train_agent.py loads them."""
    targs = train_agent.parse_args(["--from_weight", args.weight, "--save_dir", args.save_dir,
                                    "--hidden_size", str(args.hidden_size),
                                    "--num_hidden_layers", str(args.num_hidden_layers), "--device", "cpu"])
    return init_model(targs, targs.from_weight, targs.save_dir, "cpu")


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    load_start = load_average()
    if load_start > 0.5:
        print(f"warning: load average {load_start:.1f} before the start: other processes compete for the CPU")
    model, tok = load_model(args)
    flops = flop_model(model)
    dataset = AgentRLDataset(args.data_path, known_tools=set(MOCK_RESULTS))
    rates = {kind: {d: [] for d in DTYPES} for kind in ("pretrain", "sft", "rollout")}
    for r in range(-1, args.rounds):  # round -1 warms both dtypes up (kernels, memory), not kept
        order = DTYPES if r % 2 == 0 else DTYPES[::-1]
        for dtype in order:
            got = {"pretrain": pretrain_rate(model, args, dtype), "sft": sft_rate(model, tok, args, dtype, flops),
                   "rollout": rollout_rate(model, tok, dataset, args, dtype, flops, r)}
            if r >= 0:
                for kind, rate in got.items():
                    rates[kind][dtype].append(rate)
            print(f"round {r}: {dtype:8s} " + " | ".join(f"{k} {v:8.0f} tok/s" for k, v in got.items()), flush=True)
    res = {"machine": {"cpu_vendor": cpu_vendor(), "default_dtype": default_dtype("cpu"),
                       "threads": torch.get_num_threads(), "torch": torch.__version__,
                       "load_avg_start_end": [load_start, load_average()]},
           "config": vars(args), "kinds": {}}
    print(f"\nCPU vendor: {res['machine']['cpu_vendor'] or 'unknown'} | --dtype default here: "
          f"{res['machine']['default_dtype']} | {args.rounds} rounds, tokens/s (mean of rounds)")
    for kind, by_dtype in rates.items():
        mean = {d: sum(v) / len(v) for d, v in by_dtype.items()}
        ratios = [b / f for b, f in zip(by_dtype["bfloat16"], by_dtype["float32"])]
        res["kinds"][kind] = {"tokens_per_s": mean, "rounds": by_dtype, "bf16_over_fp32": ratios}
        print(f"  {kind:8s} bf16 {mean['bfloat16']:8.0f} | fp32 {mean['float32']:8.0f} | bf16 / fp32 "
              f"{mean['bfloat16'] / mean['float32']:.2f}x (rounds: {', '.join(f'{x:.2f}' for x in ratios)})")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
