"""The benchmark script runs end to end on a tiny model and writes every figure it promises (no timing checks)."""
import json
import os

import torch

from model.model_minimind import MiniMindConfig, MiniMindForCausalLM, save_minimind
from scripts import bench_agent_rl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_quick_benchmark_writes_all_fields(tmp_path):
    torch.manual_seed(0)
    model = MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2))
    save_minimind(model, str(tmp_path / "full_sft_64.pth"), dtype=torch.float32)
    data = tmp_path / "rl.jsonl"
    with open(os.path.join(ROOT, "dataset", "agent_rl.jsonl"), encoding="utf-8") as f:
        data.write_text("".join(next(f) for _ in range(16)), encoding="utf-8")
    out = tmp_path / "bench.json"
    bench_agent_rl.main(["--quick", "--save_dir", str(tmp_path), "--hidden_size", "64", "--num_hidden_layers", "2",
                         "--data_path", str(data), "--device", "cpu", "--shapes", "2x2", "--max_gen_len", "6",
                         "--temperature", "0", "--dtype", "float32", "--out", str(out)])
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
    assert {"engine_calls", "engine_s", "outside_engine_s"} <= set(rollout["batched"]["profile"])
    rl = res["rl_step"]
    assert set(rl["phases_s"]) == {"rollout", "reward", "ref_logps", "policy_fwd_bwd", "optimizer"}
    assert rl["update_tokens_per_s"] > 0 and rl["update_mfu"] > 0
    assert set(rl["peak_rss_mb"]) == set(rl["phases_s"])
    sft = res["sft_step"]
    assert sft["tokens_per_s"] > 0 and sft["mfu"] > 0 and sft["steps"] == 1
    assert res["peak_rss_mb"] > 0
