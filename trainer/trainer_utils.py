"""
Pieces every trainer shares: model/tokenizer loading, the learning-rate schedule, mixed precision,
seeding, atomic resume checkpoints, and multi-process (torchrun) training.
"""
import argparse
import contextlib
import copy
import fcntl
import glob
import inspect
import json
import math
import os
import pickle
import random
import shutil
import signal
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from model.model_minimind import (
    DEFAULT_HIDDEN_SIZE,
    DEFAULT_NUM_LAYERS,
    MiniMindConfig,
    MiniMindForCausalLM,
    state_bytes,
    write_atomically,
    load_minimind,
    load_model_dir,
    weight_path,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKENIZER_DIR = os.path.join(ROOT, "model")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def add_model_args(parser):
    """The model's shape, defaulting to the CPU preset (the shipped model). A checkpoint loads with the shape
    its state dict has; these flags shape a new model (--from_weight none) and name the files."""
    parser.add_argument("--hidden_size", type=int, default=DEFAULT_HIDDEN_SIZE, help="model width")
    parser.add_argument("--num_hidden_layers", type=int, default=DEFAULT_NUM_LAYERS,
                        help="transformer blocks")
    parser.add_argument("--use_moe", type=int, default=0, choices=[0, 1], help="mixture-of-experts MLP")
    parser.add_argument("--intermediate_size", type=int, default=None,
                        help="MLP width (default 64*ceil(hidden*8/3/64); upstream MiniMind's is "
                             "64*ceil(hidden*pi/64), 2432 at 768)")
    parser.add_argument("--num_experts", type=int, default=None, help="MoE: routed experts per layer (4)")
    parser.add_argument("--num_experts_per_tok", type=int, default=None, help="MoE: experts per token (1)")
    parser.add_argument("--n_shared_experts", type=int, default=None, help="MoE: always-on experts (0)")
    parser.add_argument("--inference_rope_scaling", type=int, default=None, choices=[0, 1],
                        help="YaRN as upstream MiniMind computes it (the 2,048 training context "
                             "stretched 16x; applies when --max_position_embeddings is above 2,048)")
    parser.add_argument("--max_position_embeddings", type=int, default=None,
                        help="the longest sequence the model is meant to see (4096)")
    parser.add_argument("--rope_theta", type=float, default=None,
                        help="RoPE base frequency of a new model (1e6, upstream MiniMind's). A .pth "
                             "saved with another base notes it beside itself ({stem}_config.json) and "
                             "loads with it")
    parser.add_argument("--tokenizer_path", default=None,
                        help="a tokenizer directory (default: the weights' directory when it has one, else "
                             "model/, the project's); its chat template renders every turn")


def add_runtime_args(parser, log_interval: int, eval_interval: int, save_interval: int = 200):
    """The flags every language-model trainer shares: device, precision, seed, the intervals, resume."""
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1 ...")
    parser.add_argument("--dtype", default=None, choices=["float32", "bfloat16", "float16"],
                        help="autocast dtype (default: bfloat16 where the CPU has bf16 kernels, "
                             "else float32)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--log_interval", type=int, default=log_interval,
                        help="steps between log lines (0: only at the end)")
    parser.add_argument("--eval_interval", type=int, default=eval_interval,
                        help="steps between validation passes (0: only at the end)")
    parser.add_argument("--save_interval", type=int, default=save_interval,
                        help="steps between resume checkpoints (0: only at the end)")
    parser.add_argument("--max_steps", type=int, default=-1, help="stop after this many optimizer steps")
    parser.add_argument("--from_resume", type=int, default=0, choices=[0, 1])


class _Refused(argparse.Action):
    """An upstream flag this project does not honour: parsing it stops with what to use instead."""

    def __init__(self, option_strings, dest, instead: str, allowed=(), **kwargs):
        super().__init__(option_strings, dest, **kwargs)
        self.instead, self.allowed = instead, allowed

    def __call__(self, parser, namespace, values, option_string=None):
        if values in self.allowed:
            return setattr(namespace, self.dest, values)
        parser.error(f"{option_string} {values} is not offered here: {self.instead}")


def add_upstream_args(parser, max_seq_len_instead: str | None = None, compiles: bool = False):
    """Flags upstream MiniMind's trainers take, so its command lines run here: each works, or stops with a
    message that says what to use instead. max_seq_len_instead: that message for --max_seq_len, in a
    trainer without such a length (None: the trainer defines --max_seq_len itself). compiles: the trainer
    honours --use_compile 1 (compile_for_training); elsewhere it stops with the reason."""
    group = parser.add_argument_group("upstream MiniMind's flags")
    group.add_argument("--use_wandb", action="store_true",
                       help="also log every metric record to wandb, offline (needs `pip install wandb`)")
    group.add_argument("--wandb_project", default="MiniMind", help="the wandb project name")
    if compiles:
        group.add_argument("--use_compile", type=int, default=0, choices=[0, 1],
                           help="1: the training forward and backward through torch.compile (inductor): "
                                "about 1.2x faster steps on a CPU after a one-off compile of about half a "
                                "minute; needs a C++ compiler (docs/speed.md)")
    else:
        group.add_argument("--use_compile", type=int, default=0, action=_Refused, allowed=(0,),
                           instead="this trainer's fast paths on CPU are the rollout engine's packed bf16 "
                                   "decode and the bf16 autocast update (docs/speed.md); train_pretrain.py "
                                   "and train_full_sft.py take it",
                           help="torch.compile: not offered here (1 stops with the reason)")
    group.add_argument("--num_workers", type=int, default=0,
                       help="accepted; the data is read once into memory, so no loader workers are used")
    if max_seq_len_instead is not None:
        group.add_argument("--max_seq_len", type=int, default=None, action=_Refused,
                           instead=max_seq_len_instead, help="not used: " + max_seq_len_instead)


class TrackedLog:
    """A metrics log that also sends each JSON record to a wandb run (--use_wandb), in offline mode: nothing
    leaves the machine, and `wandb sync` uploads the run later. The JSONL file stays the record."""

    def __init__(self, file, args, path: str):
        try:
            import wandb
        except ImportError:
            file.close()
            raise SystemExit("--use_wandb: wandb is not installed (pip install wandb), or drop the flag; "
                             f"every metric is in {path} either way") from None
        self.file = file
        self.run = wandb.init(project=args.wandb_project, config=vars(args), mode="offline",
                              dir=os.path.dirname(path) or ".",
                              name=os.path.splitext(os.path.basename(path))[0])

    def write(self, text: str):
        self.file.write(text)
        for line in text.splitlines():
            record = json.loads(line)
            numbers = {k: v for k, v in record.items()
                       if isinstance(v, (int, float)) and not isinstance(v, bool) and k != "step"}
            self.run.log(numbers, step=int(record.get("step", 0)))

    def flush(self):
        self.file.flush()

    def close(self):
        self.file.close()
        self.run.finish()


def resolve_runtime(args):
    """--device auto -> cuda or cpu; --dtype default -> the device's autocast dtype."""
    args.device = resolve_device(args.device)
    args.dtype = args.dtype or default_dtype(args.device)
    return args


def resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"--device {device} asked for, but CUDA is not available")
    return device


def default_dtype(device: str) -> str:
    """bf16 autocast wherever the hardware runs this model faster in it, else fp32. AMX runs bf16 matmuls
    several times faster than fp32. Without bf16 instructions oneDNN emulates them: on AVX-512 alone an SFT
    step ran 3.3x slower in bf16 than in fp32 (1,882 against 6,175 tokens/s, Intel Xeon, 2 cores), and on AVX2
    alone a bf16 matmul ran at 0.9 GFLOP/s against 125 for fp32. An Intel Xeon with AVX-512 BF16 and no AMX
    was slower in bf16 too, side by side (scripts/bench_dtype.py): pretraining 0.79x, SFT 0.59x, rollouts
    0.87x fp32's tokens/s."""
    if device.startswith("cuda"):
        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    return "bfloat16" if cpu_has_fast_bf16() else "float32"


def cpu_has_fast_bf16() -> bool:
    """Whether bf16 beats fp32 on this CPU: x86 with AMX, or with AVX-512 BF16 unless it is Intel's (measured
    slower there; AMD's is not measured side by side), Arm with BF16."""
    x86 = getattr(torch.cpu, "_is_avx512_bf16_supported", None)
    if x86 is not None and getattr(torch.cpu, "_is_avx2_supported", lambda: False)():
        amx = getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
        return bool(amx() or (x86() and cpu_vendor() != "GenuineIntel"))
    check = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    if not torch.backends.mkldnn.is_available() or check is None:
        return False
    try:
        return bool(check())
    except RuntimeError:
        return False


def cpu_vendor() -> str:
    """The x86 vendor string from /proc/cpuinfo ('GenuineIntel', 'AuthenticAMD'); '' where there is none."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def autocast(device: str, dtype: str):
    """Mixed precision context: fp32 master weights, matmuls in `dtype`. A no-op for float32."""
    if dtype == "float32":
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.split(":")[0], dtype=DTYPES[dtype])


class CompileUnavailable(RuntimeError):
    """--use_compile 1 on a machine where torch.compile cannot build its kernels."""


def compile_for_training(model, use_compile: int, device: str):
    """The module the training forward goes through: the model itself, or with use_compile its
    torch.compile (inductor, dynamic shapes, so that batches of every length share a few compiled graphs).
    Inductor fuses the element-wise work between the matmuls (RMSNorm with its casts, RoPE, SwiGLU, the
    residuals, the loss). Compile only the training forward: evaluation and saving use the model itself,
    whose parameters the compiled module shares."""
    if not use_compile:
        return model
    if resolve_device(device) == "cpu":
        compilers = [os.environ.get("CXX"), "g++", "c++", "clang++"]
        if not any(c and shutil.which(c) for c in compilers):
            raise CompileUnavailable("--use_compile 1: torch.compile builds its CPU kernels with a C++ "
                                     "compiler and none was found (g++, c++, clang++ or $CXX); install one "
                                     "or drop the flag")
    return torch.compile(model, dynamic=True)


def set_seed(seed: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def every(step: int, interval: int) -> bool:
    """True on every interval-th step; an interval of 0 (or less) turns the action off."""
    return interval > 0 and step % interval == 0


def cosine_lr(step: int, total_steps: int, lr: float, warmup: int = 0, min_ratio: float = 0.1) -> float:
    """Linear warmup, then cosine decay from lr to min_ratio * lr at total_steps."""
    if warmup > 0 and step < warmup:
        return lr * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total_steps - warmup))
    return lr * (min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))


@dataclass
class WeightAverage:
    """The running mean of a model's weights after each optimizer step from `start` on (weight averaging
    over the end of a run, as in stochastic weight averaging): one fp32 copy, updated in place.
    start <= 0: off."""
    start: int = 0
    count: int = 0
    params: dict | None = None

    def update(self, model, step: int):
        """Fold in the weights after optimizer step `step` (1-based) when it is one of the averaged steps."""
        if self.start <= 0 or step < self.start:
            return
        self.count += 1
        weights = model.state_dict()
        if self.params is None:
            self.params = {k: v.detach().float().clone() for k, v in weights.items()}
            return
        for k, v in weights.items():
            if v.is_floating_point():
                self.params[k].lerp_(v.detach().float(), 1.0 / self.count)  # mean += (w - mean) / count

    def reset(self):
        self.count, self.params = 0, None

    def model(self, model):
        """A copy of `model` holding the averaged weights (the model itself when nothing is averaged yet)."""
        if not self.count:
            return model
        averaged = copy.deepcopy(model)
        dtypes = {k: v.dtype for k, v in averaged.state_dict().items()}
        averaged.load_state_dict({k: v.to(dtypes[k]) for k, v in self.params.items()})
        return averaged.eval()

    def state(self) -> dict:
        return {"start": self.start, "count": self.count, "params": self.params}

    def load(self, saved: dict, path: str):
        if saved.get("start", 0) != self.start:
            raise ValueError(f"{path} averages the weights from step {saved.get('start', 0)}; resuming "
                             f"with averaging from step {self.start} would average other steps")
        self.count, self.params = saved.get("count", 0), saved.get("params")


class WeightEMA:
    """An exponential moving average of the weights (Polyak averaging), updated after every optimizer step
    (train_full_sft.py --ema_decay; WeightAverage above is the uniform mean of a run's last steps):
    shadow <- decay * shadow + (1 - decay) * weights. The shadow starts at zero and is read divided by
    1 - decay^updates (Adam's bias correction), so the starting weights carry no more than their share:
    after n updates the average weighs update k by (1 - decay) * decay^(n - k), over the last
    1 / (1 - decay) updates or so (500 at 0.998). The training never reads it; it is validated and saved
    beside the weights."""

    def __init__(self, model, decay: float):
        self.decay = decay
        self.updates = 0
        self.shadow = {k: torch.zeros_like(v, dtype=torch.float32) for k, v in model.state_dict().items()}
        self.model = copy.deepcopy(model)  # holds the average for validation and saving

    @torch.no_grad()
    def update(self, model):
        for k, v in model.state_dict().items():
            self.shadow[k].lerp_(v.detach().float(), 1.0 - self.decay)
        self.updates += 1

    @torch.no_grad()
    def averaged(self):
        """A model holding the bias-corrected average of the weights so far."""
        correction = 1.0 - self.decay ** self.updates
        self.model.load_state_dict({k: v / correction for k, v in self.shadow.items()})
        return self.model

    def state(self) -> dict:
        return {"decay": self.decay, "updates": self.updates, "shadow": self.shadow}

    def restore(self, state: dict):
        if state is None or state["decay"] != self.decay:
            saved = None if state is None else state["decay"]
            raise ValueError(f"--ema_decay {self.decay} but the resume checkpoint's average has decay "
                             f"{saved}: resume with the flag it was started with")
        self.updates = state["updates"]
        self.shadow = {k: v.float() for k, v in state["shadow"].items()}


def load_tokenizer(path: str = TOKENIZER_DIR):
    from transformers import AutoTokenizer

    if not os.path.exists(os.path.join(path, "tokenizer.json")):
        raise FileNotFoundError(f"no tokenizer at {path}: run python trainer/train_tokenizer.py")
    return AutoTokenizer.from_pretrained(path)


SHAPE_FLAGS = ("intermediate_size", "num_experts", "num_experts_per_tok", "n_shared_experts",
               "inference_rope_scaling", "max_position_embeddings", "rope_theta")


def model_config(args, **overrides) -> MiniMindConfig:
    given = {k: getattr(args, k) for k in SHAPE_FLAGS if getattr(args, k, None) is not None}
    if "inference_rope_scaling" in given:
        given["inference_rope_scaling"] = bool(given["inference_rope_scaling"])
    return MiniMindConfig(
        hidden_size=args.hidden_size, num_hidden_layers=args.num_hidden_layers, use_moe=bool(args.use_moe),
        **{**given, **overrides},
    )


def model_source(args) -> str:
    """What init_model should load for a script with --weight and --load_from: the --load_from .pth file or
    transformers directory (it has config.json), else --weight. Upstream MiniMind's
    `--load_from model` names a folder of tokenizer and code, meaning "the .pth weights of --weight, with
    this tokenizer"; that reading is kept (the folder's tokenizer, unless --tokenizer_path is given)."""
    path = getattr(args, "load_from", None)
    if not path:
        return args.weight
    if path.endswith(".pth") and os.path.isfile(path):
        return path  # a state dict named by its path
    if not os.path.isdir(path):
        raise FileNotFoundError(f"--load_from {path}: no such directory (paths are relative to "
                                f"{os.getcwd()}; the project's tokenizer folder is model/)")
    if os.path.isfile(os.path.join(path, "config.json")):
        return path
    if not os.path.isfile(os.path.join(path, "tokenizer.json")):
        raise FileNotFoundError(f"--load_from {path}: neither a model (config.json) nor a tokenizer "
                                "(tokenizer.json) is there")
    args.tokenizer_path = getattr(args, "tokenizer_path", None) or path
    return args.weight


def init_model(args, from_weight: str, save_dir: str, device: str = "cpu", **config_overrides):
    """Tokenizer + model: random init for from_weight 'none', else
    {save_dir}/{from_weight}_{hidden}[_moe].pth, a .pth file when from_weight is a path ending in .pth, or a
    transformers directory (MiniMind's own layout or the Qwen3 layout of scripts/convert_model.py). The
    tokenizer travels with the model: --tokenizer_path, else the directory's own, else the project's."""
    own = from_weight != "none" and os.path.isfile(os.path.join(from_weight, "tokenizer.json"))
    tokenizer_dir = getattr(args, "tokenizer_path", None) or (from_weight if own else TOKENIZER_DIR)
    tokenizer = load_tokenizer(tokenizer_dir)
    if from_weight != "none" and os.path.isdir(from_weight):
        model = load_model_dir(from_weight)
    elif from_weight != "none":
        config = model_config(args, **config_overrides)
        path = from_weight if from_weight.endswith(".pth") else \
            weight_path(save_dir, from_weight, config.hidden_size, config.use_moe)
        model = load_minimind(path, config)
    else:
        model = MiniMindForCausalLM(model_config(args, **config_overrides))
    return model.to(device), tokenizer


_STOP = {"signum": None}  # the signal that asked this process to stop, if one did


def on_stop_signal(callback):
    """SIGINT and SIGTERM call callback(signum) instead of killing the process: the trainer finishes its
    current step, writes a resume checkpoint and exits (with exit_status's code)."""
    def handler(signum, frame):
        _STOP["signum"] = signum
        callback(signum)
        print(f"\nsignal {signum}: saving a resume checkpoint after this step")

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def exit_status(finished: bool) -> int:
    """0, unless a signal stopped the run before it finished: then 128 + the signal's number, the status a
    shell gives a process that signal killed, so `train ... && next ...` stops at an unfinished run."""
    return 0 if finished or _STOP["signum"] is None else 128 + _STOP["signum"]


# --- resume checkpoints -------------------------------------------------------------------------------------

def rng_state() -> dict:
    """Every RNG's state in plain types and tensors, so a resume file loads with weights_only=True."""
    name, keys, pos, has_gauss, cached = np.random.get_state()
    state = {"python": random.getstate(), "numpy": (name, keys.tolist(), pos, has_gauss, cached),
             "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict):
    random.setstate(state["python"])
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


class RunLocked(RuntimeError):
    """Another run is writing the same checkpoint."""


_HELD_LOCKS = {}  # path -> open lock file, held until the process ends


def lock_output(path: str):
    """Hold {path}.lock for the rest of the process, so that a second run writing the same checkpoint stops
    at once, naming the first run's pid, instead of the two overwriting each other's files. The lock is the
    system's (flock): a run that is killed leaves no stale lock behind."""
    key = os.path.realpath(path)
    if key in _HELD_LOCKS:  # this process already holds it (a run started again in the same process)
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    f = open(path + ".lock", "a+", encoding="utf-8")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "unknown"
        f.close()
        raise RunLocked(f"{path}: another run (pid {holder}) is writing this checkpoint; wait for it to end, "
                        "or give this run another --save_dir or --save_weight") from None
    f.seek(0)
    f.truncate()
    f.write(f"{os.getpid()}\n")
    f.flush()
    _HELD_LOCKS[key] = f


def atomic_save(obj, path: str):
    """torch.save through write_atomically."""
    for stale in glob.glob(glob.escape(path) + ".tmp.*"):  # left by a run killed mid-save
        os.remove(stale)
    write_atomically(path, lambda f: torch.save(obj, f), state_bytes(obj))


def open_log(path: str, resume_step: int | None = None, args=None):
    """A JSONL log to append records to (also sent to wandb with --use_wandb in args). Resuming at step N
    first drops the records of the steps after N (written by a run killed after its last save; the resumed
    run writes them again) and a last line cut by the kill, so the log reads 1, 2, 3, ... once each. Without
    resume_step the log starts empty."""
    file = _open_log(path, resume_step)
    return TrackedLog(file, args, path) if getattr(args, "use_wandb", False) else file


def _open_log(path: str, resume_step: int | None):
    if resume_step is None or not os.path.exists(path):
        return open(path, "w" if resume_step is None else "a", encoding="utf-8")
    kept = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            step = record.get("step", 0) if isinstance(record, dict) else 0
            if not isinstance(step, (int, float)) or step <= resume_step:
                kept.append(line.rstrip("\n") + "\n")
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.writelines(kept)
    os.replace(tmp, path)
    return open(path, "a", encoding="utf-8")


def resume_path(save_dir: str, weight: str, hidden_size: int, use_moe: bool) -> str:
    return weight_path(save_dir, weight, hidden_size, use_moe).replace(".pth", "_resume.pth")


def save_resume(path: str, model, optimizer, step: int, extra: dict | None = None):
    """Everything needed to continue exactly: fp32 weights, optimizer, step, RNG states, and `extra`
    (epoch, data position, the trainer's own state)."""
    atomic_save({
        "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "optimizer": optimizer.state_dict(),
        "step": step,
        "rng": rng_state(),
        "extra": extra or {},
    }, path)


def load_resume(path: str):
    """A resume checkpoint, loaded with weights_only=True: tensors and plain data only, so a crafted file
    cannot run code (a pickle can)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"--from_resume 1 but there is no resume checkpoint at {path}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        first_line = str(e).splitlines()[0][:200]
        raise ValueError(f"{path}: not a resume checkpoint of this trainer (it holds objects other than "
                         f"tensors and plain data, which are not loaded): {first_line}") from None


# --- multi-process training (torchrun) ---------------------------------------------------------------
# `torchrun --nproc_per_node N script.py ...` starts N copies of a trainer with RANK / WORLD_SIZE /
# LOCAL_RANK set. Each rank trains on its share of every global batch; DistributedDataParallel averages
# the gradients.
# Run as a plain script, none of this does anything.


@dataclass
class DistInfo:
    """Where this process sits in a torchrun job: rank 0 of 1 when run as a plain script."""
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: str = "cpu"  # the device this rank computes on (cuda:{local_rank} under torchrun on GPUs)

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0  # the rank that logs, evaluates and saves


def init_distributed(device: str) -> DistInfo:
    """Join the torchrun job when RANK/WORLD_SIZE say there is one (gloo on CPU, NCCL on CUDA)."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if "RANK" not in os.environ or world_size <= 1:
        return DistInfo(device=device)
    rank, local_rank = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    if device.startswith("cuda"):
        device = f"cuda:{local_rank}"
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if device.startswith("cuda") else "gloo")
    return DistInfo(rank, world_size, local_rank, device)


def barrier(info: DistInfo):
    """Wait until every rank gets here."""
    if info.enabled:
        dist.barrier()


def close_distributed(info: DistInfo):
    if info.enabled and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def set_rank_seed(seed: int, info: DistInfo, step: int = 0):
    """Give each rank its own random stream (sampling, dropout), after the weights were made with the common
    seed. The step makes a resumed run draw fresh numbers instead of replaying the start."""
    if info.enabled:
        set_seed((seed + 1000 * info.rank + 7919 * step) % 2 ** 32)


def wrap_ddp(model, info: DistInfo, find_unused_parameters: bool = False):
    """The module the training forward goes through: DDP around `model` under torchrun, else `model` itself.
    DDP copies rank 0's weights to every rank here. No buffer sync in forward: ranks may run different numbers
    of forwards per step (uneven micro-batches), and a collective inside forward would then hang."""
    if not info.enabled:
        return model
    device_ids = [info.local_rank] if info.device.startswith("cuda") else None
    if "forward_sync_buffers" in inspect.signature(DistributedDataParallel).parameters:
        no_buffer_sync = {"forward_sync_buffers": False}  # the newer name of the option
    else:
        no_buffer_sync = {"broadcast_buffers": False}
    return DistributedDataParallel(model, device_ids=device_ids,
                                   find_unused_parameters=find_unused_parameters, **no_buffer_sync)


def grad_sync(train_model, sync: bool):
    """Context for one micro-step's forward+backward: all-reduce the gradients only when `sync` (the last
    micro-step before an optimizer step); the others accumulate locally (DDP no_sync)."""
    train_model = getattr(train_model, "_orig_mod", train_model)  # DDP under torch.compile (--use_compile 1)
    if sync or not isinstance(train_model, DistributedDataParallel):
        return contextlib.nullcontext()
    return train_model.no_sync()


@dataclass
class RankShare:
    """This rank's part of one global batch."""
    indices: list  # what this rank trains on
    n_global: int  # the size of the global batch: losses are averaged over all of it
    filler: bool = False  # no item was left for this rank: it trains on `indices` with weight 0

    @property
    def weight(self) -> float:
        return 0.0 if self.filler else 1.0


def split_batch(indices, info: DistInfo) -> RankShare:
    """Contiguous, deterministic slices of a global batch, one per rank. A batch shorter than the world (the
    last of an epoch) leaves some ranks empty: they take the first item with weight 0, so every rank still
    runs a forward/backward and joins the gradient all-reduce."""
    n, r, w = len(indices), info.rank, info.world_size
    start, end = -(-r * n // w), -(-(r + 1) * n // w)  # ceil: rank 0 is never the one left empty
    mine = list(indices[start:end])
    if not mine:
        return RankShare(list(indices[:1]), n, filler=True)
    return RankShare(mine, n)


def loss_share(n_rows: int, weight: float, world_size: int, n_global: float) -> float:
    """The factor of a micro-batch's mean loss that makes the loss the mean over the global batch's sequences
    (all ranks together): DDP averages gradients over the ranks, so a rank weighs its rows world_size /
    n_global (weight is 0 on a rank's zero-weight pass, 1 otherwise, or its share of a split group)."""
    return n_rows * weight * world_size / max(n_global, 1.0)


def all_ranks_any(flag: bool, info: DistInfo) -> bool:
    """True on every rank when it is True on any (e.g. a stop signal that reached one rank first)."""
    if not info.enabled:
        return flag
    t = torch.tensor([float(flag)], device=info.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item())


def all_ranks_sum(value: float, info: DistInfo) -> float:
    if not info.enabled:
        return value
    t = torch.tensor([float(value)], dtype=torch.float64, device=info.device)
    dist.all_reduce(t)
    return t.item()


def average_record(record: dict, weight: float, info: DistInfo) -> dict:
    """A log record with its float values averaged over the ranks, weighted by `weight` (e.g. the trajectories
    each rank trained on); keys ending in `_max` take the maximum. Other values are rank 0's."""
    if not info.enabled:
        return record
    gathered = [None] * info.world_size
    dist.all_gather_object(gathered, (weight, record))
    total = sum(w for w, _ in gathered) or 1.0
    out = dict(record)
    for key, value in record.items():
        if not isinstance(value, float):
            continue
        values = [r[key] for _, r in gathered]
        if key.endswith("_max"):
            out[key] = max(values)
        else:
            out[key] = sum(w * v for (w, _), v in zip(gathered, values)) / total
    return out


def broadcast_flag(flag: bool, info: DistInfo) -> bool:
    """Rank 0's flag on every rank (the others wait here until rank 0 gets to it)."""
    if not info.enabled:
        return flag
    box = [flag]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def broadcast_weights(model, info: DistInfo):
    """Copy rank 0's weights to every rank (after rank 0 changed them outside the training step)."""
    if not info.enabled:
        return
    with torch.no_grad():
        for tensor in model.state_dict().values():
            dist.broadcast(tensor, src=0)
