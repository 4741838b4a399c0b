"""The benchmark script runs end to end on a tiny model and writes every figure it promises (no timing checks)."""
import json
import os

import pytest
import torch

from model.model_minimind import MiniMindConfig, MiniMindForCausalLM, save_minimind
from scripts import bench_agent_rl, bench_dtype
from trainer import trainer_utils

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tiny_model_and_prompts(tmp_path):
    """A random 64-wide model as out/full_sft_64.pth in tmp_path, and 16 RL prompts; returns the prompts' path."""
    torch.manual_seed(0)
    model = MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2))
    save_minimind(model, str(tmp_path / "full_sft_64.pth"), dtype=torch.float32)
    data = tmp_path / "rl.jsonl"
    with open(os.path.join(ROOT, "dataset", "agent_rl.jsonl"), encoding="utf-8") as f:
        data.write_text("".join(next(f) for _ in range(16)), encoding="utf-8")
    return data


def test_quick_benchmark_writes_all_fields(tmp_path, monkeypatch):
    data = tiny_model_and_prompts(tmp_path)
    out = tmp_path / "bench.json"
    # no C++ compiler: the compiled SFT step is skipped with the reason, the rest runs
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setattr(trainer_utils.shutil, "which", lambda name: None)
    bench_agent_rl.main(["--quick", "--save_dir", str(tmp_path), "--hidden_size", "64", "--num_hidden_layers", "2",
                         "--data_path", str(data), "--device", "cpu", "--shapes", "2x2", "--max_gen_len", "6",
                         "--temperature", "0", "--dtype", "float32", "--sft_compile", "1", "--out", str(out)])
    res = json.loads(out.read_text(encoding="utf-8"))
    assert res["machine"]["peak_flops_per_s"] > 0 and res["model"]["params"] > 0
    rollout = res["rollout"][0]
    assert (rollout["batch_size"], rollout["num_generations"]) == (2, 2)
    for engine in ("batched", "generate", "sequential"):
        run = rollout[engine]
        assert run["trajectories"] == 4 and run["tokens"] > 0
        assert {"seconds", "tokens_per_s", "trajectories_per_s", "turns"} <= set(run)
    # greedy: the three ways write the same tokens, so their rates compare the same work
    assert rollout["batched"]["tokens"] == rollout["generate"]["tokens"] == rollout["sequential"]["tokens"]
    assert rollout["batched"]["turns"] == rollout["generate"]["turns"] == rollout["sequential"]["turns"]
    assert rollout["speedup"] > 0 and rollout["speedup_vs_generate"] > 0
    profile = rollout["batched"]["profile"]
    assert {"engine_calls", "engine_s", "outside_engine_s"} <= set(profile)
    # every forward of the engine is counted: one prefill per engine call, the rest decoding steps
    assert profile["prefill_forwards"] == profile["engine_calls"] and profile["decode_forwards"] > 0
    assert profile["prefill_real_tokens"] <= profile["prefill_tokens"]
    assert profile["decode_real_rows"] <= profile["decode_rows"]
    assert profile["prefill_s"] + profile["decode_s"] <= profile["engine_s"]
    rates = rollout["engine_forwards"]
    assert rates["decode_flops_per_s"] > 0 and 0 < rates["decode_share_of_peak"]
    assert rates["prefill_flops_per_s"] > 0 and 0 < rates["prefill_real_share"] <= 1
    shares = rollout["breakdown"]["share"]
    assert set(shares) == {"attention", "matmuls", "cache moves", "other operators", "outside operators"}
    assert shares["attention"] > 0 and shares["matmuls"] > 0 and abs(sum(shares.values()) - 1) < 0.05
    rl = res["rl_step"]
    assert set(rl["phases_s"]) == {"rollout", "reward", "ref_logps", "policy_fwd_bwd", "optimizer"}
    assert rl["update_tokens_per_s"] > 0 and rl["update_mfu"] > 0
    assert rl["every_group"]["trained_sequences"] == rl["trajectories"] == 4  # the step that trains them all
    assert rl["trained_sequences"] >= 1
    assert set(rl["peak_rss_mb"]) == set(rl["phases_s"])
    sft = res["sft_step"]
    assert sft["tokens_per_s"] > 0 and sft["mfu"] > 0 and sft["steps"] == 1 and sft["use_compile"] == 0
    assert "C++ compiler" in res["sft_step_compiled"]["skipped"]
    assert res["peak_rss_mb"] > 0


def test_shares_of_the_peak_are_rescaled_everywhere():
    res = {"rl_step": {"update_mfu": 0.4, "every_group": {"update_mfu": 0.2}, "step_s": 3.0},
           "rollout": [{"engine_forwards": {"decode_share_of_peak": 0.1, "decode_flops_per_s": 5.0}}]}
    bench_agent_rl.rescale_shares(res, 0.5)
    assert res["rl_step"] == {"update_mfu": 0.2, "every_group": {"update_mfu": 0.1}, "step_s": 3.0}
    assert res["rollout"][0]["engine_forwards"] == {"decode_share_of_peak": 0.05, "decode_flops_per_s": 5.0}


def test_the_trl_peer_says_what_it_needs_without_trl():
    """The peer benchmark is the only file that imports TRL, which the project does not install: without it,
    it stops with the requirements file to install instead of a traceback."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("trl") is not None:
        pytest.skip("TRL is installed here")
    out = subprocess.run([sys.executable, "scripts/bench_trl_grpo.py", "--help"], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode != 0 and "requirements-peer.txt" in out.stderr


def test_dtype_benchmark_measures_both_dtypes_on_every_kind(tmp_path):
    data = tiny_model_and_prompts(tmp_path)
    out = tmp_path / "dtype.json"
    bench_dtype.main(["--quick", "--rounds", "1", "--save_dir", str(tmp_path), "--hidden_size", "64",
                      "--num_hidden_layers", "2", "--data_path", str(data), "--out", str(out)])
    res = json.loads(out.read_text(encoding="utf-8"))
    assert res["machine"]["default_dtype"] in ("bfloat16", "float32")
    assert set(res["kinds"]) == {"pretrain", "sft", "rollout"}
    for kind in res["kinds"].values():
        assert all(len(kind["rounds"][d]) == 1 and kind["rounds"][d][0] > 0 for d in ("bfloat16", "float32"))
        bf16, fp32 = kind["rounds"]["bfloat16"][0], kind["rounds"]["float32"][0]
        assert kind["bf16_over_fp32"][0] == pytest.approx(bf16 / fp32)
