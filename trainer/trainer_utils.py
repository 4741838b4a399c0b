"""
Pieces every trainer shares: model/tokenizer loading, the learning-rate schedule, mixed precision,
seeding, and atomic resume checkpoints.
"""
import contextlib
import glob
import math
import os
import random

import numpy as np
import torch

from model.model_minimind import (
    DEFAULT_HIDDEN_SIZE,
    DEFAULT_NUM_LAYERS,
    MiniMindConfig,
    MiniMindForCausalLM,
    load_minimind,
    load_model_dir,
    weight_path,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKENIZER_DIR = os.path.join(ROOT, "model")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def add_model_args(parser):
    """--hidden_size / --num_hidden_layers / --use_moe, defaulting to the CPU preset (the shipped model)."""
    parser.add_argument("--hidden_size", type=int, default=DEFAULT_HIDDEN_SIZE, help="model width")
    parser.add_argument("--num_hidden_layers", type=int, default=DEFAULT_NUM_LAYERS, help="transformer blocks")
    parser.add_argument("--use_moe", type=int, default=0, choices=[0, 1], help="mixture-of-experts MLP")


def resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"--device {device} asked for, but CUDA is not available")
    return device


def default_dtype(device: str) -> str:
    """bf16 autocast wherever the hardware has it (CPUs with AMX/AVX512-BF16 run it several times faster)."""
    if device.startswith("cuda"):
        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    return "bfloat16"


def autocast(device: str, dtype: str):
    """Mixed precision context: fp32 master weights, matmuls in `dtype`. A no-op for float32."""
    if dtype == "float32":
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.split(":")[0], dtype=DTYPES[dtype])


def set_seed(seed: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def cosine_lr(step: int, total_steps: int, lr: float, warmup: int = 0, min_ratio: float = 0.1) -> float:
    """Linear warmup, then cosine decay from lr to min_ratio * lr at total_steps."""
    if warmup > 0 and step < warmup:
        return lr * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total_steps - warmup))
    return lr * (min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))


def load_tokenizer(path: str = TOKENIZER_DIR):
    from transformers import AutoTokenizer

    if not os.path.exists(os.path.join(path, "tokenizer.json")):
        raise FileNotFoundError(f"no tokenizer at {path}: run python trainer/train_tokenizer.py")
    return AutoTokenizer.from_pretrained(path)


def model_config(args, **overrides) -> MiniMindConfig:
    return MiniMindConfig(
        hidden_size=args.hidden_size, num_hidden_layers=args.num_hidden_layers, use_moe=bool(args.use_moe),
        **overrides,
    )


def init_model(args, from_weight: str, save_dir: str, device: str = "cpu", **config_overrides):
    """Tokenizer + model: random init for from_weight 'none', else {save_dir}/{from_weight}_{hidden}[_moe].pth,
    a .pth file when from_weight is a path ending in .pth, or a transformers directory (MiniMind's own layout or
    the Qwen3 layout of scripts/convert_model.py)."""
    tokenizer = load_tokenizer()
    if from_weight != "none" and os.path.isdir(from_weight):
        model = load_model_dir(from_weight)
    elif from_weight != "none":
        config = model_config(args, **config_overrides)
        path = from_weight if from_weight.endswith(".pth") else weight_path(save_dir, from_weight,
                                                                             config.hidden_size, config.use_moe)
        model = load_minimind(path, config)
    else:
        model = MiniMindForCausalLM(model_config(args, **config_overrides))
    return model.to(device), tokenizer


# --- resume checkpoints --------------------------------------------------------------------------------------

def rng_state() -> dict:
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict):
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def atomic_save(obj, path: str):
    """torch.save to a temporary file in the same folder, fsync, then rename: a reader (or a resumed run)
    only ever sees a complete file, even if the process is killed mid-save."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    for stale in glob.glob(glob.escape(path) + ".tmp.*"):  # left by a run killed mid-save
        os.remove(stale)
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


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
    if not os.path.exists(path):
        raise FileNotFoundError(f"--from_resume 1 but there is no resume checkpoint at {path}")
    return torch.load(path, map_location="cpu", weights_only=False)
