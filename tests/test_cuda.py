"""The rollout guarantees on a CUDA device: the sampled token's log-prob, greedy tokens as
on the CPU, the first update's ratio of 1. The KV cache and the kept cache: tests/test_model.py and
tests/test_agent.py, run on each device. Skipped where torch sees no GPU (CI runs on CPU)."""
import os

import pytest
import torch

from dataset.lm_dataset import encode, render
from model.model_minimind import MiniMindConfig, load_minimind
from trainer import train_agent
from trainer.fast_engine import TorchRolloutEngine, compute_per_token_logps
from trainer.train_agent import TOOLS
from trainer.trainer_utils import autocast
from conftest import tiny_model
from test_agent import ROOT, read_metrics, tiny_setup, weather_prompt

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
CUDA = "cuda"


def shipped_model():
    path = os.path.join(ROOT, "out", "full_sft_256.pth")
    if not os.path.exists(path):
        pytest.skip("no shipped checkpoint")
    return load_minimind(path, MiniMindConfig()).to(CUDA).eval()


@pytest.mark.parametrize("dtype,atol", [("float32", 1e-4), ("bfloat16", 0.05)])
def test_sampled_logps_match_a_training_forward_on_cuda(tok, dtype, atol):
    """fp32: the same numbers. bf16: one-token decode steps and a whole-sequence forward round differently,
    so they agree to bf16's precision, not bit for bit (the trainer recomputes old log-probs under the same
    autocast only where it must)."""
    model = shipped_model()
    engine = TorchRolloutEngine(model, tok.eos_token_id, tok.pad_token_id, device=CUDA, dtype=dtype)
    prompts = [encode(tok, render(tok, weather_prompt(), TOOLS, add_generation_prompt=True))] * 3
    prompts.append(encode(tok, render(tok, [{"role": "user", "content": "帮我算一下 123 乘以 45"}], TOOLS,
                                      add_generation_prompt=True)))
    torch.manual_seed(1)
    out = engine.rollout(prompts, max_new_tokens=48, temperature=0.8)
    for p, ids, lps in zip(prompts, out.completion_ids, out.logps):
        assert len(ids) == len(lps) > 0
        seq = torch.tensor([p + ids], device=CUDA)
        with torch.no_grad(), autocast(CUDA, dtype):
            ref = compute_per_token_logps(model, seq, len(ids), temperature=0.8)[0].float().cpu()
        assert torch.allclose(ref, torch.tensor(lps), atol=atol), (ref - torch.tensor(lps)).abs().max()


def test_greedy_rollouts_on_cuda_equal_those_on_cpu(tok):
    model = tiny_model(seed=3)
    prompts = [encode(tok, render(tok, weather_prompt(), TOOLS, add_generation_prompt=True)), [1, 50, 60, 70]]
    outs = []
    for device in ("cpu", CUDA):
        engine = TorchRolloutEngine(model.to(device), tok.eos_token_id, tok.pad_token_id, device=device)
        outs.append(engine.rollout(prompts, max_new_tokens=16, temperature=0))
    assert outs[0].completion_ids == outs[1].completion_ids
    for x, y in zip(outs[0].logps, outs[1].logps):
        assert torch.allclose(torch.tensor(x), torch.tensor(y), atol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_first_update_importance_ratio_is_one_on_cuda(tmp_path, tok, dtype):
    args = tiny_setup(tmp_path, tok)
    args[args.index("--device") + 1], args[args.index("--dtype") + 1] = CUDA, dtype
    train_agent.main(args + ["--max_steps", "1", "--skip_zero_std", "0"])
    first = read_metrics(tmp_path / "out")[0]
    assert first["trained_samples"] == 4 and first["stepped"]
    assert abs(first["ratio_mean"] - 1) < 0.01 and first["ratio_max"] < 1.02
