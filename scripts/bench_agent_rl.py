"""
Benchmark of agent RL on one model and one set of prompts, in one run:

    1. rollout throughput: the trainer's rollout_batch (all trajectories of a step advance together, one KV
       cache per turn, token-in/token-out) against a sequential baseline in the upstream MiniMind style: one
       trajectory at a time, and every turn re-renders the whole conversation with the chat template,
       re-tokenizes it and calls transformers' model.generate. Both sample at the same temperature with the
       same max_new_tokens and run the same tools (parse_tool_calls / execute_tool). Headline: the ratio of
       model-written tokens per second, batched / sequential.
    2. one RL step, timed by phase: rollout, reward, reference log-probs, policy forward+backward, optimizer
       step (the trainer's own functions: rollout_batch, calculate_rewards, build_train_batch,
       compute_per_token_logps, policy_loss).
    3. training throughput: an SFT step (LM loss on a right-padded batch, as train_full_sft.py) and the RL
       update, in tokens/s and as a share of the machine's peak matmul FLOP/s, measured in the same run and
       dtype (best of several large square matmuls).
    4. peak resident memory (ru_maxrss) after each phase.

Training FLOPs follow the usual count (nanoGPT, PaLM): a forward costs 2 FLOPs per weight per token in the
transformer's linear layers, plus 2 * vocab * hidden per token that reaches the LM head, plus attention
4 * layers * (heads * head_dim) * T per token (QK^T and AV over the padded length T, causality not discounted);
a backward costs twice the forward. So an SFT step is 6 * N_body * tokens + 6 * V * d * head_tokens
+ 12 * L * d_attn * T * tokens, and the RL update adds the reference model's forward (a third of that).
Both counts use padded tokens: padding is work the machine does. The RL update counts a group's shared prompt
once per micro-batch (it runs once: TrainBatch.rows), the rows' own tokens once per row. The rollout engine's
forwards are counted the same way, each decoding step as one token per batch row (the LM head on one position).

Simplifications: no thinking prompts (open_thinking off for every trajectory), no reward model. Rollouts run
--rounds times per shape on different prompts, batched then sequential each round, after an untimed warm-up round
at that shape; the other measurements run once after a warm-up (sampling makes lengths vary: compare rates, not times).

Run (the shipped CPU model, full size; minutes):
    python scripts/bench_agent_rl.py --out bench.json
    python scripts/bench_agent_rl.py --shapes 2x4 --max_gen_len 64      # one shape, shorter turns
Smoke run (seconds):
    python scripts/bench_agent_rl.py --quick
Run it on a quiet machine: with other processes busy, multi-threaded kernels wait for descheduled threads
and every figure collapses (the load average is printed and saved; --threads 1 suffers least).
"""
import argparse
import copy
import json
import os
import random
import resource
import sys
import time
from dataclasses import asdict, dataclass, field

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch

from dataset.lm_dataset import (
    AgentRLDataset, LengthGroupedSampler, encode_sft_conversation, parse_conversation, read_jsonl, render,
    sft_collate,
)
from model.model_minimind import count_parameters
from trainer import train_agent
from trainer.fast_engine import compute_per_token_logps, create_rollout_engine
from trainer.rollout_engine import RolloutEngine
from trainer.train_agent import (
    MOCK_RESULTS, RewardGuards, build_train_batch, calculate_rewards, cap_tool_output, execute_tool,
    generation_prefill, group_advantages, parse_tool_calls, policy_loss, rollout_batch,
)
from trainer.trainer_utils import (
    DTYPES, CompileUnavailable, add_model_args, autocast, compile_for_training, default_dtype, init_model,
    resolve_device,
)

# settings that differ between the full benchmark and the smoke run; a flag given explicitly wins
MIN_TRAJECTORIES = 64  # per rollout shape, by default
FULL = {"shapes": "2x4,8x8,16x8", "max_gen_len": 256, "max_turns": 3, "peak_sizes": "2048,4096", "peak_repeats": 5,
        "rl_steps": 2, "sft_steps": 12, "sft_batch_size": 16, "sft_compile": 1, "rounds": 0}
QUICK = {"shapes": "2x4", "max_gen_len": 16, "max_turns": 2, "peak_sizes": "256", "peak_repeats": 2,
         "rl_steps": 1, "sft_steps": 1, "sft_batch_size": 4, "sft_compile": 0, "rounds": 1}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Benchmark rollout, RL step and training throughput")
    # --- model and data ---
    parser.add_argument("--weight", default="full_sft", help="weights, loaded as train_agent --from_weight")
    parser.add_argument("--save_dir", default="out")
    add_model_args(parser)
    parser.add_argument("--data_path", default="dataset/agent_rl.jsonl", help="RL prompts")
    parser.add_argument("--sft_data_path", default=None, help="SFT conversations (default: "
                        "dataset/sft_agent.jsonl when it exists, else the RL prompts with their reference answers)")
    # --- what to measure (defaults: FULL, or QUICK with --quick) ---
    parser.add_argument("--quick", action="store_true", help="tiny settings: a smoke run in seconds")
    parser.add_argument("--shapes", default=None, help="rollout shapes, batch_size x num_generations: 2x4,8x8")
    parser.add_argument("--max_gen_len", type=int, default=None, help="new tokens per model turn")
    parser.add_argument("--max_turns", type=int, default=None, help="model turns per trajectory")
    parser.add_argument("--max_total_len", type=int, default=2500, help="tokens per trajectory, all turns")
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--top_p", type=float, default=1.0)
    parser.add_argument("--skip_sequential", action="store_true", help="leave out the sequential baseline")
    parser.add_argument("--skip_generate", action="store_true", help="leave out the batched-generate baseline")
    parser.add_argument("--rounds", type=int, default=None, help="rollout rounds per shape, each on other prompts "
                        "(batched, then sequential); the rates are over all rounds. 0: at least 3, and enough for "
                        f"{MIN_TRAJECTORIES} trajectories (2x4: 8 rounds; fewer and one round's prompts sway it)")
    parser.add_argument("--breakdown", type=int, default=1, help="1: one more rollout per shape under torch.profiler: "
                        "the share of attention, matmuls, cache moves, other operators and Python")
    parser.add_argument("--rl_shape", default=None, help="shape of the timed RL step (default: the last shape)")
    parser.add_argument("--rl_steps", type=int, default=None, help="timed RL steps (after one warm-up step)")
    parser.add_argument("--train_micro_batch", type=int, default=8, help="sequences per RL forward/backward")
    parser.add_argument("--sft_steps", type=int, default=None, help="timed SFT steps (after an untimed pass over "
                        "the same batches)")
    parser.add_argument("--sft_compile", type=int, default=None, choices=[0, 1],
                        help="1: time the SFT step through torch.compile too (train_full_sft.py --use_compile 1; "
                             "skipped, with the reason, where it cannot compile)")
    parser.add_argument("--sft_batch_size", type=int, default=None)
    parser.add_argument("--peak_sizes", default=None, help="sizes of the square matmuls that measure the peak")
    parser.add_argument("--peak_repeats", type=int, default=None, help="matmuls per size; the best counts")
    # --- runtime ---
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default=None, choices=list(DTYPES), help="autocast dtype (bf16 where the CPU has it)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)
    for key, value in (QUICK if args.quick else FULL).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.device = resolve_device(args.device)
    args.dtype = args.dtype or default_dtype(args.device)
    return args


def rounds_for(args, batch_size: int, num_generations: int) -> int:
    if args.rounds > 0:
        return args.rounds
    return max(3, -(-MIN_TRAJECTORIES // (batch_size * num_generations)))


def parse_shape(text: str):
    try:
        batch_size, num_generations = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"a shape is batch_size x num_generations, like 2x4; got {text!r}") from None
    return batch_size, num_generations


def trainer_args(args, batch_size: int, num_generations: int):
    """The trainer's own configuration (its defaults for the loss, the tools, the budgets), at this shape."""
    return train_agent.parse_args([
        "--from_weight", args.weight, "--save_dir", args.save_dir, "--hidden_size", str(args.hidden_size),
        "--num_hidden_layers", str(args.num_hidden_layers), "--use_moe", str(args.use_moe),
        "--device", args.device, "--dtype", args.dtype, "--max_gen_len", str(args.max_gen_len),
        "--max_turns", str(args.max_turns), "--max_total_len", str(args.max_total_len),
        "--temperature", str(args.temperature), "--top_p", str(args.top_p), "--batch_size", str(batch_size),
        "--num_generations", str(num_generations), "--train_micro_batch", str(args.train_micro_batch),
        "--thinking_ratio", "0", "--eval_interval", "0", "--seed", str(args.seed),
    ])


# --- timing and memory ------------------------------------------------------------------------------------------

def sync(device: str):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def load_average() -> float:
    """1-minute load average (0 where the OS does not say). Other busy processes slow every figure here, and
    multi-threaded kernels far more than single-threaded ones: on a busy machine, try --threads 1."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (ru_maxrss is in KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2 ** 20 if sys.platform == "darwin" else peak / 2 ** 10


def peak_matmul_flops(device: str, dtype: str, sizes, repeats: int) -> dict:
    """Best FLOP/s of square matmuls (2 n^3 FLOPs each) in the dtype the training autocasts to."""
    torch_dtype = DTYPES[dtype]
    best = {"flops_per_s": 0.0, "size": 0, "seconds": 0.0}
    for n in sizes:
        a = torch.randn(n, n, device=device).to(torch_dtype)
        b = torch.randn(n, n, device=device).to(torch_dtype)
        a @ b  # warm-up
        for _ in range(repeats):
            sync(device)
            t0 = time.perf_counter()
            a @ b
            sync(device)
            seconds = time.perf_counter() - t0
            if 2 * n ** 3 / seconds > best["flops_per_s"]:
                best = {"flops_per_s": 2 * n ** 3 / seconds, "size": n, "seconds": seconds}
    return best


@dataclass
class FlopModel:
    """What the FLOP count needs to know about the model (see the docstring for the formula)."""
    body_params: int  # weights of the linear layers and norms, embedding excluded
    head_params: int  # vocab * hidden: the LM head (tied to the embedding)
    layers: int
    attn_width: int  # query heads * head_dim

    def forward(self, tokens: int, head_tokens: int, seq_len: int) -> float:
        return (2 * self.body_params * tokens + 2 * self.head_params * head_tokens
                + 4 * self.layers * self.attn_width * seq_len * tokens)


def flop_model(model) -> FlopModel:
    config = model.config
    head = config.vocab_size * config.hidden_size
    return FlopModel(count_parameters(model) - head, head, config.num_hidden_layers,
                     config.num_attention_heads * config.head_dim)


# --- 1. rollout throughput --------------------------------------------------------------------------------------

@dataclass
class RolloutRun:
    """One way of rolling out the same prompts, timed."""
    seconds: float
    trajectories: int
    tokens: int  # tokens the model wrote (response_mask 1), all turns
    turns: int
    tokens_per_s: float = 0.0
    trajectories_per_s: float = 0.0
    profile: dict = field(default_factory=dict)

    def __post_init__(self):
        self.tokens_per_s = self.tokens / self.seconds
        self.trajectories_per_s = self.trajectories / self.seconds


class TimedEngine(RolloutEngine):
    """Wraps a rollout engine: how much of a rollout is spent inside the engine (prefill, decoding, sampling)
    rather than around it (chat template, tokenizer, tools, bookkeeping)."""

    def __init__(self, engine):
        self.engine = engine
        self.seconds, self.calls = 0.0, 0

    def rollout(self, prompt_ids, max_new_tokens, temperature=1.0, top_p=1.0, max_length=None):
        t0 = time.perf_counter()
        out = self.engine.rollout(prompt_ids, max_new_tokens, temperature, top_p, max_length)
        self.seconds += time.perf_counter() - t0
        self.calls += 1
        return out

    def update_policy(self, model):
        self.engine.update_policy(model)

    def profile(self, total_seconds: float) -> dict:
        return {"engine_calls": self.calls, "engine_s": self.seconds, "outside_engine_s": total_seconds - self.seconds}


FORWARD_KEYS = ("prefill_s", "prefill_flops", "prefill_tokens", "prefill_real_tokens", "prefill_forwards",
                "decode_s", "decode_flops", "decode_rows", "decode_real_rows", "decode_forwards")


def forward_profile(forwards, flops: FlopModel) -> dict:
    """Totals of the engine's prefill and decoding forwards (ForwardRecord): seconds, model FLOPs (padded
    positions counted: the machine does that work; the LM head on one position per row), positions."""
    out = dict.fromkeys(FORWARD_KEYS, 0)
    for f in forwards:
        kind = f.kind
        out[f"{kind}_s"] += f.seconds
        out[f"{kind}_flops"] += flops.forward(f.rows * f.new_tokens, f.rows, f.kv_len)
        out[f"{kind}_forwards"] += 1
        if kind == "prefill":
            out["prefill_tokens"] += f.rows * f.new_tokens
            out["prefill_real_tokens"] += f.real_tokens
        else:
            out["decode_rows"] += f.rows
            out["decode_real_rows"] += f.real_tokens
    return out


def batched_rollout(model, tok, items, num_generations, targs, flops: FlopModel) -> RolloutRun:
    engine = TimedEngine(create_rollout_engine("torch", model, tok.eos_token_id, tok.pad_token_id, targs.device,
                                               targs.dtype))
    engine.engine.forwards = []
    messages = [it["messages"] for it in items]
    tools = [it["tools"] for it in items]
    sync(targs.device)
    t0 = time.perf_counter()
    trajs = rollout_batch(engine, tok, messages, tools, num_generations, targs)
    sync(targs.device)
    seconds = time.perf_counter() - t0
    profile = {**engine.profile(seconds), **forward_profile(engine.engine.forwards, flops)}
    return RolloutRun(seconds, len(trajs), sum(sum(t.response_mask) for t in trajs),
                      sum(len(t.turns) for t in trajs), profile=profile)


def sequential_trajectory(model, tok, messages, tools, targs):
    """The upstream MiniMind loop for one trajectory: render the whole conversation, tokenize it, generate,
    decode, run the tools, append their results as messages, render everything again. Returns
    (tokens written, turns)."""
    messages = copy.deepcopy(messages)
    written, turns = 0, 0
    for turn in range(targs.max_turns):
        text = render(tok, messages, tools, add_generation_prompt=True)
        enc = tok(text, add_special_tokens=False, return_tensors="pt")
        input_ids = enc["input_ids"].to(targs.device)
        budget = min(targs.max_gen_len, targs.max_total_len - input_ids.shape[1])
        if budget <= 0:
            break
        sampling = {"do_sample": True, "temperature": targs.temperature, "top_p": targs.top_p, "top_k": 0} \
            if targs.temperature > 0 else {"do_sample": False}
        with torch.no_grad(), autocast(targs.device, targs.dtype):
            out = model.generate(input_ids, attention_mask=enc["attention_mask"].to(targs.device),
                                 max_new_tokens=budget, eos_token_id=tok.eos_token_id,
                                 pad_token_id=tok.pad_token_id, **sampling)
        new = out[0, input_ids.shape[1]:].tolist()
        written += len(new)
        turns += 1
        stopped = bool(new) and new[-1] == tok.eos_token_id
        reply = tok.decode(new[:-1] if stopped else new, skip_special_tokens=False)
        calls = parse_tool_calls(reply)
        if not stopped or not calls or turn == targs.max_turns - 1:
            break
        messages.append({"role": "assistant", "content": generation_prefill(False) + reply})
        for call in calls:
            result = execute_tool(call["name"], call["arguments"], timeout=targs.tool_timeout)
            content = cap_tool_output(tok, json.dumps(result, ensure_ascii=False), targs.max_tool_tokens)
            messages.append({"role": "tool", "content": content})
    return written, turns


def generate_rollout(model, tok, items, num_generations, targs) -> RolloutRun:
    """What a user would pick without this engine (TRL's GRPOTrainer without vLLM does this): every turn,
    all trajectories still running are rendered with the chat template, tokenized as one left-padded batch
    and continued by one transformers model.generate call; then the same parse_tool_calls / execute_tool."""
    was_training = model.training
    model.eval()
    convs = [copy.deepcopy(it["messages"]) for it in items for _ in range(num_generations)]
    tools = [it["tools"] for it in items for _ in range(num_generations)]
    sampling = {"do_sample": True, "temperature": targs.temperature, "top_p": targs.top_p, "top_k": 0} \
        if targs.temperature > 0 else {"do_sample": False}
    sync(targs.device)
    t0 = time.perf_counter()
    written, turns, active = 0, 0, list(range(len(convs)))
    for turn in range(targs.max_turns):
        texts = [render(tok, convs[i], tools[i], add_generation_prompt=True) for i in active]
        enc = tok(texts, add_special_tokens=False, return_tensors="pt", padding=True, padding_side="left")
        budget = min(targs.max_gen_len, targs.max_total_len - enc["input_ids"].shape[1])
        if budget <= 0:
            break
        with torch.no_grad(), autocast(targs.device, targs.dtype):
            out = model.generate(enc["input_ids"].to(targs.device),
                                 attention_mask=enc["attention_mask"].to(targs.device), max_new_tokens=budget,
                                 eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, **sampling)
        still = []
        for row, i in enumerate(active):
            new = out[row, enc["input_ids"].shape[1]:].tolist()
            stopped = tok.eos_token_id in new
            new = new[:new.index(tok.eos_token_id) + 1] if stopped else new
            written, turns = written + len(new), turns + 1
            reply = tok.decode(new[:-1] if stopped else new, skip_special_tokens=False)
            calls = parse_tool_calls(reply)
            if not stopped or not calls or turn == targs.max_turns - 1:
                continue
            convs[i].append({"role": "assistant", "content": generation_prefill(False) + reply})
            for call in calls:
                result = execute_tool(call["name"], call["arguments"], timeout=targs.tool_timeout)
                content = cap_tool_output(tok, json.dumps(result, ensure_ascii=False), targs.max_tool_tokens)
                convs[i].append({"role": "tool", "content": content})
            still.append(i)
        active = still
        if not active:
            break
    sync(targs.device)
    model.train(was_training)
    return RolloutRun(time.perf_counter() - t0, len(convs), written, turns)


def sequential_rollout(model, tok, items, num_generations, targs) -> RolloutRun:
    was_training = model.training
    model.eval()
    sync(targs.device)
    t0 = time.perf_counter()
    written, turns = 0, 0
    for it in items:
        for _ in range(num_generations):
            w, t = sequential_trajectory(model, tok, it["messages"], it["tools"], targs)
            written += w
            turns += t
    sync(targs.device)
    model.train(was_training)
    return RolloutRun(time.perf_counter() - t0, len(items) * num_generations, written, turns)


def combine(runs) -> RolloutRun:
    """Rounds of one way of rolling out, as one run: totals, and rates over the total time."""
    profile = {}
    for key in ("engine_calls", "engine_s", "outside_engine_s") + FORWARD_KEYS:
        if all(key in r.profile for r in runs):
            profile[key] = sum(r.profile[key] for r in runs)
    return RolloutRun(sum(r.seconds for r in runs), sum(r.trajectories for r in runs),
                      sum(r.tokens for r in runs), sum(r.turns for r in runs), profile=profile)


def model_rates(profile: dict, peak: float) -> dict:
    """The engine's prefill and decoding forwards as model FLOP/s and as a share of the measured peak."""
    out = {}
    for kind in ("prefill", "decode"):
        seconds = profile.get(f"{kind}_s", 0.0)
        if seconds > 0:
            out[f"{kind}_flops_per_s"] = profile[f"{kind}_flops"] / seconds
            out[f"{kind}_share_of_peak"] = profile[f"{kind}_flops"] / seconds / peak
    if profile.get("decode_forwards"):
        out["decode_rows_mean"] = profile["decode_rows"] / profile["decode_forwards"]
        out["decode_running_share"] = profile["decode_real_rows"] / max(1, profile["decode_rows"])
        out["decode_ms_per_forward"] = 1e3 * profile["decode_s"] / profile["decode_forwards"]
    if profile.get("prefill_tokens"):
        out["prefill_real_share"] = profile["prefill_real_tokens"] / profile["prefill_tokens"]
    if profile.get("engine_s"):  # the rest of the engine's time: sampling, bookkeeping, cache moves
        out["outside_forwards_share"] = 1 - (profile.get("prefill_s", 0) + profile.get("decode_s", 0)) \
            / profile["engine_s"]
    return out


OP_KINDS = {"attention": ("scaled_dot_product",), "matmuls": ("linear", "aten::mm", "aten::addmm", "aten::bmm"),
            "cache moves": ("aten::index_select", "aten::index", "aten::cat")}


def rollout_breakdown(model, tok, items, num_generations, targs, flops: FlopModel) -> dict:
    """Where one batched rollout's time goes, by torch.profiler's self time of each operator: the attention
    kernels, the matmuls, cache moves (row selection, concatenation), every other operator, and the time
    outside any operator (Python: the sampling loop, the rollout's bookkeeping, the tools). One untimed
    rollout; the profiler's own overhead inflates the last share a little."""
    from torch.profiler import profile

    with profile() as prof:
        t0 = time.perf_counter()
        batched_rollout(model, tok, items, num_generations, targs, flops)
        wall = time.perf_counter() - t0
    share = dict.fromkeys(list(OP_KINDS) + ["other operators"], 0.0)
    for event in prof.key_averages():
        kind = next((k for k, names in OP_KINDS.items() if any(n in event.key for n in names)),
                    "other operators")
        share[kind] += event.self_cpu_time_total / 1e6
    share["outside operators"] = max(0.0, wall - sum(share.values()))
    return {"seconds": wall, "share": {k: v / wall for k, v in share.items()}}


def bench_rollout(model, tok, dataset, args, batch_size: int, num_generations: int, flops: FlopModel,
                  peak: float) -> dict:
    """Batched and sequential rollouts of the same prompts, round after round (each round on other prompts), so
    a busy spell of the machine hits both."""
    targs = trainer_args(args, batch_size, num_generations)
    rounds = rounds_for(args, batch_size, num_generations)
    result = {"batch_size": batch_size, "num_generations": num_generations, "rounds": rounds}
    batched, generated, sequential = [], [], []
    for r in range(-1, rounds):  # round -1 warms every path up at this shape (kernels, memory), not timed
        items = pick_prompts(dataset, batch_size, args.seed + r)
        torch.manual_seed(args.seed + r)
        batched.append(batched_rollout(model, tok, items, num_generations, targs, flops))
        if not args.skip_generate:
            torch.manual_seed(args.seed + r)
            generated.append(generate_rollout(model, tok, items, num_generations, targs))
        if not args.skip_sequential:
            torch.manual_seed(args.seed + r)
            sequential.append(sequential_rollout(model, tok, items, num_generations, targs))
    batched, generated, sequential = batched[1:], generated[1:], sequential[1:]
    result["batched"] = asdict(combine(batched))
    result["engine_forwards"] = model_rates(result["batched"]["profile"], peak)
    if args.breakdown:
        torch.manual_seed(args.seed)
        items = pick_prompts(dataset, batch_size, args.seed)
        result["breakdown"] = rollout_breakdown(model, tok, items, num_generations, targs, flops)
    if generated:
        result["generate"] = asdict(combine(generated))
        result["speedup_vs_generate"] = result["batched"]["tokens_per_s"] / result["generate"]["tokens_per_s"]
    if sequential:
        result["sequential"] = asdict(combine(sequential))
        result["speedup"] = result["batched"]["tokens_per_s"] / result["sequential"]["tokens_per_s"]
    result["peak_rss_mb"] = peak_rss_mb()
    return result


def pick_prompts(dataset, n: int, seed: int):
    """The same n prompts for every measurement of a shape (a seeded sample of the pool)."""
    return [dataset[i] for i in random.Random(seed).sample(range(len(dataset)), n)]


# --- 2. one RL step, by phase -----------------------------------------------------------------------------------

def timed(device: str, fn, *fn_args):
    sync(device)
    t0 = time.perf_counter()
    out = fn(*fn_args)
    sync(device)
    return out, time.perf_counter() - t0


def update_phases(model, ref_model, batch, targs, cut: bool = True):
    """Phase 4 on a padded batch: the reference log-probs, then the policy's forward and backward, micro-batch
    by micro-batch, each cut to its model-written tokens and its shared prompt run once, as the trainer does
    (cut=False: every row at the whole padded width, as before). Returns (seconds of each, the micro-batches)."""
    N, device = batch.input_ids.shape[0], targs.device
    starts = range(0, N, targs.train_micro_batch)
    micro = [batch.rows(slice(s, s + targs.train_micro_batch), cut=cut) for s in starts]

    def reference():
        with torch.no_grad(), autocast(device, targs.dtype):
            return [compute_per_token_logps(ref_model, m.input_ids.to(device), m.n_keep,
                                            temperature=targs.temperature, shared_prefix=m.shared_prefix)
                    for m in micro]

    def policy():
        for m, ref in zip(micro, ref_logps):
            ids, mask = m.input_ids.to(device), m.completion_mask.to(device)
            with autocast(device, targs.dtype):
                logps = compute_per_token_logps(model, ids, m.n_keep, temperature=targs.temperature,
                                                shared_prefix=m.shared_prefix)
            loss, _, _ = policy_loss(logps, m.old_logps.to(device), ref, m.advantages.to(device), mask, targs)
            (loss * ids.shape[0] / N).backward()

    ref_logps, ref_s = timed(device, reference)
    _, policy_s = timed(device, policy)
    return {"ref_logps": ref_s, "policy_fwd_bwd": policy_s}, micro


def rl_step(model, ref_model, optimizer, tok, items, targs, every_group: bool = False) -> dict:
    """The trainer's step (rl_train_epoch, phases 1-5) with a clock around each phase. As the trainer does by
    default (--skip_zero_std 1), groups whose rewards are all equal are left out of the update, and each
    micro-batch is cut to its model-written tokens as --cut_update says (TrainBatch.rows; by default on the
    CPU, not on a GPU); every_group: all of them are trained (the cost of a step where every group is
    informative), and the update is timed a second time the other way, on the same batch (its gradient
    thrown away)."""
    G, device = targs.num_generations, targs.device
    engine = create_rollout_engine("torch", model, tok.eos_token_id, tok.pad_token_id, device, targs.dtype)
    messages, tools = [it["messages"] for it in items], [it["tools"] for it in items]
    seconds, memory = {}, {}
    with torch.no_grad():
        trajs, seconds["rollout"] = timed(device, rollout_batch, engine, tok, messages, tools, G, targs)
    memory["rollout"] = peak_rss_mb()

    def reward():
        rewards = calculate_rewards(trajs, [it["gt"] for it in items], tools, G, None,
                                    [it["expect_tools"] for it in items], RewardGuards())
        advantages, std = group_advantages(torch.tensor([r.total for r in rewards]), G, targs.adv_clip)
        keep = [k for k in range(len(trajs)) if every_group or std[k // G] >= 1e-6] or [0]
        return build_train_batch([trajs[k] for k in keep], advantages[keep], tok.pad_token_id,
                                 tok.eos_token_id, targs.max_total_len)

    batch, seconds["reward"] = timed(device, reward)  # rewards, advantages and the padded batch
    memory["reward"] = peak_rss_mb()
    update, micro = update_phases(model, ref_model, batch, targs, cut=bool(targs.cut_update))
    seconds.update(update)
    memory["ref_logps"] = memory["policy_fwd_bwd"] = peak_rss_mb()
    other = {}  # the update the other way (--cut_update flipped), on the same batch
    if every_group:
        grads = [None if p.grad is None else p.grad.clone() for p in model.parameters()]
        other, _ = update_phases(model, ref_model, batch, targs, cut=not targs.cut_update)
        for p, g in zip(model.parameters(), grads):
            p.grad = g

    def step():
        torch.nn.utils.clip_grad_norm_(model.parameters(), targs.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    _, seconds["optimizer"] = timed(device, step)
    memory["optimizer"] = peak_rss_mb()
    N = batch.input_ids.shape[0]
    # the work the update did: a shared prompt runs once per micro-batch, the rows' own tokens once per row
    computed = sum(m.shared_prefix + m.input_ids.shape[0] * (m.input_ids.shape[1] - m.shared_prefix)
                   for m in micro)
    return {"seconds": seconds, "peak_rss_mb": memory, "sequences": N, "other_update_s": other,
            "padded_tokens": sum(m.input_ids.numel() for m in micro), "computed_tokens": computed,
            "tokens": int(sum((m.input_ids != tok.pad_token_id).sum() for m in micro)),
            "seq_len": sum(m.input_ids.numel() for m in micro) / N,
            "head_tokens": sum(m.input_ids.shape[0] * m.n_keep for m in micro),
            "written_tokens": sum(sum(t.response_mask) for t in trajs), "trajectories": len(trajs)}


def summarise_steps(steps, flops: FlopModel, peak: float) -> dict:
    phases = {k: sum(s["seconds"][k] for s in steps) / len(steps) for k in steps[0]["seconds"]}
    update_s = phases["ref_logps"] + phases["policy_fwd_bwd"] + phases["optimizer"]
    update_flops = sum(4 * flops.forward(s["computed_tokens"], s["head_tokens"], s["seq_len"]) for s in steps)
    padded = sum(s["padded_tokens"] for s in steps)
    return {
        "steps": len(steps), "phases_s": phases, "step_s": sum(phases.values()),
        "phase_share": {k: v / sum(phases.values()) for k, v in phases.items()},
        "trained_sequences": sum(s["sequences"] for s in steps) / len(steps),
        "trajectories": steps[0]["trajectories"],
        "update_s": update_s,
        "update_tokens_per_s": padded / len(steps) / update_s,
        "update_real_tokens_per_s": sum(s["tokens"] for s in steps) / len(steps) / update_s,
        "update_flops_per_s": update_flops / len(steps) / update_s,
        "update_mfu": update_flops / len(steps) / update_s / peak,
        "mean_seq_len": sum(s["seq_len"] for s in steps) / len(steps),
        "written_tokens": sum(s["written_tokens"] for s in steps) / len(steps),
        "peak_rss_mb": steps[-1]["peak_rss_mb"],
    }


def bench_rl_step(model, tok, dataset, args, flops: FlopModel, peak: float) -> dict:
    """--rl_steps steps as the trainer runs them (informative groups only), then one that trains every group."""
    batch_size, num_generations = parse_shape(args.rl_shape or args.shapes.split(",")[-1])
    targs = trainer_args(args, batch_size, num_generations)
    policy = copy.deepcopy(model).train()
    ref_model = copy.deepcopy(model).eval().requires_grad_(False)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=targs.learning_rate, weight_decay=0.0)
    items = pick_prompts(dataset, batch_size, args.seed)
    torch.manual_seed(args.seed)
    rl_step(policy, ref_model, optimizer, tok, items, targs, every_group=True)  # warm-up
    steps = [rl_step(policy, ref_model, optimizer, tok, items, targs) for _ in range(args.rl_steps)]
    every = rl_step(policy, ref_model, optimizer, tok, items, targs, every_group=True)
    every_group = summarise_steps([every], flops, peak)
    own_s = every["seconds"]["ref_logps"] + every["seconds"]["policy_fwd_bwd"]
    other_s = sum(every["other_update_s"].values())
    cut_s, uncut_s = (own_s, other_s) if targs.cut_update else (other_s, own_s)
    every_group.update(cut_update=targs.cut_update, other_update_s=every["other_update_s"],
                       cut_speedup=uncut_s / cut_s)
    return {"batch_size": batch_size, "num_generations": num_generations,
            **summarise_steps(steps, flops, peak), "every_group": every_group}


# --- 3. SFT training throughput ---------------------------------------------------------------------------------

def sft_samples(path: str, tok, n: int, seed: int, max_length: int = 1024):
    """n conversations drawn from the file, encoded as train_full_sft.py's SFTDataset does (labels on the
    assistant turns), without tokenizing the whole file."""
    records = [(lineno, record) for lineno, record in read_jsonl(path)]
    samples = []
    for lineno, record in random.Random(seed).sample(records, min(n, len(records))):
        messages, tools = parse_conversation(record, path, lineno)
        ids, labels = encode_sft_conversation(tok, messages, tools)
        samples.append((ids[:max_length], labels[:max_length]))
    return samples


def bench_sft(model, tok, args, flops: FlopModel, peak: float, use_compile: int = 0) -> dict:
    """fwd+bwd+AdamW on batches like train_full_sft.py's: length-grouped, right-padded, loss on the assistant
    turns. The batches are run once untimed (with use_compile: the compile, and the recompiles new lengths
    bring), then timed."""
    path = args.sft_data_path or ("dataset/sft_agent.jsonl" if os.path.exists("dataset/sft_agent.jsonl")
                                  else args.data_path)
    policy = copy.deepcopy(model).train()
    forward = compile_for_training(policy, use_compile, args.device)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-4, weight_decay=0.1, betas=(0.9, 0.95))
    data = sft_samples(path, tok, 8 * args.sft_batch_size * (args.sft_steps + 1), args.seed)
    batches = LengthGroupedSampler([len(ids) for ids, _ in data], args.sft_batch_size, seed=args.seed).batches()
    runs = []
    for b in list(range(args.sft_steps)) * 2:  # the first pass is the warm-up
        input_ids, labels = sft_collate([data[i] for i in batches[b % len(batches)]])
        input_ids, labels = input_ids.to(args.device), labels.to(args.device)
        sync(args.device)
        t0 = time.perf_counter()
        with autocast(args.device, args.dtype):
            loss = forward(input_ids, labels=labels, return_logits=False).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        sync(args.device)
        seconds = time.perf_counter() - t0
        head_tokens = int((labels[:, 1:] != -100).sum())  # the LM head runs on labelled positions only
        runs.append({"seconds": seconds, "padded_tokens": input_ids.numel(), "seq_len": input_ids.shape[1],
                     "tokens": sum(len(data[i][0]) for i in batches[b % len(batches)]),
                     "flops": 3 * flops.forward(input_ids.numel(), head_tokens, input_ids.shape[1])})
    warm_up, timed_runs = runs[:args.sft_steps], runs[args.sft_steps:]
    seconds = sum(r["seconds"] for r in timed_runs)
    return {
        "data_path": path, "batch_size": args.sft_batch_size, "steps": len(timed_runs), "use_compile": use_compile,
        "warm_up_s": sum(r["seconds"] for r in warm_up),
        "step_s": seconds / len(timed_runs),
        "mean_seq_len": sum(r["seq_len"] for r in timed_runs) / len(timed_runs),
        "tokens_per_s": sum(r["padded_tokens"] for r in timed_runs) / seconds,
        "real_tokens_per_s": sum(r["tokens"] for r in timed_runs) / seconds,
        "flops_per_s": sum(r["flops"] for r in timed_runs) / seconds,
        "mfu": sum(r["flops"] for r in timed_runs) / seconds / peak,
        "peak_rss_mb": peak_rss_mb(),
    }


# --- report -----------------------------------------------------------------------------------------------------

def print_report(res: dict):
    m = res["machine"]
    print(f"\nmodel {res['model']['params'] / 1e6:.2f}M params | {m['device']} {m['dtype']} | {m['threads']} threads"
          f" | peak matmul {m['peak_flops_per_s'] / 1e9:.1f} GFLOP/s (n={m['peak_matmul_size']}) | load average "
          f"{m['load_avg_start']:.1f} -> {m['load_avg_end']:.1f} on {m['cpu_count']} CPUs")
    print("\nrollout (model-written tokens/s; x = the engine's ratio to that baseline)")
    print(f"{'shape':>6} | {'engine tok/s':>12} | {'generate tok/s':>14} | {'x':>6} | {'sequential tok/s':>16} | "
          f"{'x':>6} | {'tokens':>7} | {'in engine':>9}")
    for r in res["rollout"]:
        b, g, s = r["batched"], r.get("generate"), r.get("sequential")
        gen = f"{g['tokens_per_s']:>14.1f} | {r['speedup_vs_generate']:>5.2f}x" if g else f"{'-':>14} | {'-':>6}"
        seq = f"{s['tokens_per_s']:>16.1f} | {r['speedup']:>5.2f}x" if s else f"{'-':>16} | {'-':>6}"
        in_engine = b["profile"].get("engine_s", float("nan")) / b["seconds"]
        print(f"{r['batch_size']}x{r['num_generations']:<4} | {b['tokens_per_s']:>12.1f} | {gen} | {seq} | "
              f"{b['tokens']:>7} | {in_engine:>9.0%}")
    print("\nthe engine's forwards (model FLOP/s, padded positions counted; share of the measured peak)")
    print(f"{'shape':>6} | {'prefill GFLOP/s':>15} | {'of peak':>7} | {'real':>5} | {'decode GFLOP/s':>14} | "
          f"{'of peak':>7} | {'rows':>5} | {'running':>7} | {'ms/step':>7} | {'outside':>7}")
    for r in res["rollout"]:
        e = r["engine_forwards"]
        print(f"{r['batch_size']}x{r['num_generations']:<4} | {e.get('prefill_flops_per_s', 0) / 1e9:>15.1f} | "
              f"{e.get('prefill_share_of_peak', 0):>7.1%} | {e.get('prefill_real_share', 0):>5.0%} | "
              f"{e.get('decode_flops_per_s', 0) / 1e9:>14.1f} | {e.get('decode_share_of_peak', 0):>7.1%} | "
              f"{e.get('decode_rows_mean', 0):>5.1f} | {e.get('decode_running_share', 0):>7.0%} | "
              f"{e.get('decode_ms_per_forward', 0):>7.2f} | {e.get('outside_forwards_share', 0):>7.0%}")
    print("\nwhere a rollout's time goes (torch.profiler, self time by operator)")
    for r in res["rollout"]:
        if "breakdown" in r:
            parts = " | ".join(f"{k} {v:.0%}" for k, v in r["breakdown"]["share"].items())
            print(f"{r['batch_size']}x{r['num_generations']:<4} | {parts}")
    rl = res["rl_step"]
    every = rl["every_group"]
    print(f"\nRL step at {rl['batch_size']}x{rl['num_generations']}: {rl['step_s']:.2f} s as the trainer runs it "
          f"(mean of {rl['steps']}; {rl['trained_sequences']:.0f} of {rl['trajectories']} trajectories in "
          f"informative groups), {every['step_s']:.2f} s when every group is trained")
    for phase, seconds in rl["phases_s"].items():
        other = every["other_update_s"].get(phase)
        way = "uncut" if every["cut_update"] else "cut"
        print(f"  {phase:<15} {seconds:8.3f} s  {rl['phase_share'][phase]:6.1%}   every group "
              f"{every['phases_s'][phase]:8.3f} s" + (f" ({way}: {other:.3f} s)" if other else ""))
    print(f"  the update (reference + policy) cut to the model's tokens, each prompt run once: "
          f"{every['cut_speedup']:.2f}x faster than uncut, on the same batch (--cut_update "
          f"{every['cut_update']} timed first)")
    sft = res["sft_step"]
    print("\ntraining throughput (padded tokens/s; MFU = achieved / peak matmul FLOP/s)")
    print(f"  SFT step   {sft['tokens_per_s']:10.0f} tok/s | {sft['flops_per_s'] / 1e9:7.2f} GFLOP/s | "
          f"MFU {sft['mfu']:.1%} | seq {sft['mean_seq_len']:.0f} x {sft['batch_size']}")
    compiled = res.get("sft_step_compiled")
    if compiled and "skipped" in compiled:
        print(f"  SFT step, torch.compile: skipped ({compiled['skipped']})")
    elif compiled:
        print(f"  SFT step, torch.compile {compiled['tokens_per_s']:10.0f} tok/s | "
              f"{compiled['flops_per_s'] / 1e9:7.2f} GFLOP/s | MFU {compiled['mfu']:.1%} | "
              f"{compiled['tokens_per_s'] / sft['tokens_per_s']:.2f}x the eager step (compile and warm-up "
              f"{compiled['warm_up_s']:.0f} s)")
    print(f"  RL update  {every['update_tokens_per_s']:10.0f} tok/s | {every['update_flops_per_s'] / 1e9:7.2f} "
          f"GFLOP/s | MFU {every['update_mfu']:.1%} | seq {every['mean_seq_len']:.0f} (every group)")
    print(f"\npeak resident memory {res['peak_rss_mb']:.0f} MB")


def rescale_shares(res, factor: float):
    """Multiply every share of the peak in the results (keys ending in mfu or share_of_peak) by factor."""
    if isinstance(res, dict):
        for key, value in res.items():
            if isinstance(value, float) and (key.endswith("mfu") or key.endswith("share_of_peak")):
                res[key] = value * factor
            else:
                rescale_shares(value, factor)
    elif isinstance(res, list):
        for value in res:
            rescale_shares(value, factor)


def main(argv=None):
    args = parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    print("config: " + " ".join(f"{k}={v}" for k, v in vars(args).items()))
    load_start = load_average()
    if load_start > 0.5:
        print(f"warning: load average {load_start:.1f} before the start: other processes compete for the CPU")
    shapes = [parse_shape(s) for s in args.shapes.split(",")]
    targs = trainer_args(args, *shapes[0])
    model, tok = init_model(targs, targs.from_weight, targs.save_dir, args.device)  # as train_agent.py loads it
    dataset = AgentRLDataset(args.data_path, known_tools=set(MOCK_RESULTS))
    flops = flop_model(model)
    peak = peak_matmul_flops(args.device, args.dtype, [int(n) for n in args.peak_sizes.split(",")],
                             args.peak_repeats)
    res = {
        "config": vars(args),
        "machine": {"device": args.device, "dtype": args.dtype, "threads": torch.get_num_threads(),
                    "torch": torch.__version__, "peak_flops_per_s": peak["flops_per_s"],
                    "peak_matmul_size": peak["size"], "cpu_count": os.cpu_count(), "load_avg_start": load_start},
        "model": {"params": count_parameters(model), **asdict(flops)},
        "flops_formula": "train = 3 * forward; forward = 2 * body_params * tokens + 2 * head_params * head_tokens"
                         " + 4 * layers * attn_width * seq_len * tokens (padded tokens); RL update = policy "
                         "train + reference forward, a shared prompt counted once per micro-batch",
    }
    res["rollout"] = [bench_rollout(model, tok, dataset, args, b, g, flops, peak["flops_per_s"]) for b, g in shapes]
    res["rl_step"] = bench_rl_step(model, tok, dataset, args, flops, peak["flops_per_s"])
    res["sft_step"] = bench_sft(model, tok, args, flops, peak["flops_per_s"])
    if args.sft_compile:
        try:
            res["sft_step_compiled"] = bench_sft(model, tok, args, flops, peak["flops_per_s"], use_compile=1)
        except CompileUnavailable as e:
            res["sft_step_compiled"] = {"skipped": str(e)}
    res["peak_rss_mb"] = peak_rss_mb()
    res["machine"]["load_avg_end"] = load_average()
    # the machine's peak moves during a run (other tenants, clocks): measured again, the higher one counts
    again = peak_matmul_flops(args.device, args.dtype, [int(n) for n in args.peak_sizes.split(",")], args.peak_repeats)
    res["machine"]["peak_flops_per_s_start_end"] = [peak["flops_per_s"], again["flops_per_s"]]
    if again["flops_per_s"] > peak["flops_per_s"]:
        rescale_shares(res, peak["flops_per_s"] / again["flops_per_s"])
        res["machine"].update(peak_flops_per_s=again["flops_per_s"], peak_matmul_size=again["size"])
    print_report(res)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(res, f, indent=2)
        print(f"wrote {args.out}")
    return res


if __name__ == "__main__":
    main()
