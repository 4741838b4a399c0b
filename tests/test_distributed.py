"""Multi-process training (torchrun, gloo on CPU): the ranks stay identical, two ranks compute what one process
computes on the combined batch, and a run resumes with a different number of processes at the right place."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
import torch

from model.model_minimind import MiniMindConfig, MiniMindForCausalLM, save_minimind
from trainer.trainer_utils import DistInfo, average_record, split_batch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Runs a trainer, under torchrun or alone. After an RL run each rank writes its own weights to
# {save_dir}/rank{RANK}_weights.pt, so the test can compare the ranks.
RUNNER = textwrap.dedent("""
    import os, sys
    import torch
    torch.set_num_threads(1)
    trainer, argv = sys.argv[1], sys.argv[2:]
    if trainer == "sft":
        from trainer.train_full_sft import parse_args, train
        train(parse_args(argv))
    else:
        from trainer.train_agent import main
        state = main(argv)
        save_dir = argv[argv.index("--save_dir") + 1]
        rank = os.environ.get("RANK", "0")
        torch.save(state.model.state_dict(), os.path.join(save_dir, f"rank{rank}_weights.pt"))
""")


def run(tmp_path, trainer, argv, nproc=1):
    runner = tmp_path / "runner.py"
    runner.write_text(RUNNER, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    if nproc > 1:
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc)]
    else:
        cmd = [sys.executable]
    done = subprocess.run(cmd + [str(runner), trainer, *argv], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


def tiny_start(path):
    torch.manual_seed(0)
    model = MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2))
    save_minimind(model, str(path), dtype=torch.float32)


def first_lines(src, dst, n):
    with open(os.path.join(ROOT, "dataset", src), encoding="utf-8") as f:
        dst.write_text("".join(next(f) for _ in range(n)), encoding="utf-8")
    return str(dst)


def resume_state(save_dir, name):
    return torch.load(os.path.join(save_dir, f"{name}_64_resume.pth"), weights_only=True)


# --- the split of a global batch ------------------------------------------------------------------------------

def test_split_batch_is_contiguous_and_rank_0_is_never_empty():
    two = [DistInfo(rank=r, world_size=2) for r in range(2)]
    assert [split_batch([5, 6, 7], d).indices for d in two] == [[5, 6], [7]]
    assert [split_batch([5, 6, 7, 8], d).indices for d in two] == [[5, 6], [7, 8]]
    short = [split_batch([5], d) for d in two]  # a last batch shorter than the world
    assert [s.indices for s in short] == [[5], [5]] and [s.weight for s in short] == [1.0, 0.0]
    assert all(s.n_global == 1 for s in short)
    alone = split_batch([5, 6, 7], DistInfo())
    assert alone.indices == [5, 6, 7] and alone.weight == 1.0
    record = {"step": 3, "reward": 0.5}
    assert average_record(record, 4, DistInfo()) is record  # one process: untouched


# --- SFT: two ranks == one process on the combined batch --------------------------------------------------------

def test_two_rank_sft_equals_one_process_on_the_combined_batch(tmp_path):
    """4 conversations, batches of 3 and 1, two batches per optimizer step: the ranks split the first batch 2/1
    and the second 1/0 (rank 1 then joins the gradient all-reduce with weight 0). Two steps, fp32."""
    data = first_lines("agent_rl.jsonl", tmp_path / "sft.jsonl", 4)
    weights = {}
    for nproc in (1, 2):
        save_dir = tmp_path / f"world{nproc}"
        os.makedirs(save_dir)
        tiny_start(save_dir / "start_64.pth")
        run(tmp_path, "sft", [
            "--data_path", data, "--val_path", data, "--save_dir", str(save_dir), "--from_weight", "start",
            "--hidden_size", "64", "--num_hidden_layers", "2", "--dtype", "float32", "--device", "cpu",
            "--batch_size", "3", "--accumulation_steps", "2", "--epochs", "2", "--max_steps", "2",
            "--warmup_steps", "0", "--eval_interval", "1", "--log_interval", "1", "--save_interval", "1"],
            nproc=nproc)
        weights[nproc] = resume_state(save_dir, "full_sft")
    one, two = weights[1], weights[2]
    assert one["step"] == two["step"] == 2 and two["extra"]["world_size"] == 2
    start = torch.load(tmp_path / "world1" / "start_64.pth", weights_only=True)
    assert any(not torch.equal(one["model"][k], start[k]) for k in start)  # it trained
    diff = max((one["model"][k] - two["model"][k]).abs().max().item() for k in one["model"])
    print(f"max abs weight difference, 2 ranks vs 1 process: {diff:.2e}")
    assert diff < 1e-5, diff


# --- agent RL at world size 2 ------------------------------------------------------------------------------------

RL_ARGS = ["--hidden_size", "64", "--num_hidden_layers", "2", "--dtype", "float32", "--device", "cpu",
           "--max_gen_len", "12", "--max_turns", "2", "--batch_size", "2", "--num_generations", "2",
           "--learning_rate", "1e-3", "--thinking_ratio", "0.5", "--save_interval", "1", "--eval_interval", "0",
           "--train_micro_batch", "1"]  # two micro-batches per rank: the first accumulates without a sync


@pytest.fixture(scope="module")
def rl_two_ranks(tmp_path_factory):
    """2 RL steps at world size 2 (each rank rolls out 1 prompt x 2 generations per step)."""
    tmp_path = tmp_path_factory.mktemp("rl")
    save_dir = tmp_path / "out"
    os.makedirs(save_dir)
    tiny_start(save_dir / "full_sft_64.pth")
    data = first_lines("agent_rl.jsonl", tmp_path / "rl.jsonl", 10)
    argv = ["--data_path", data, "--save_dir", str(save_dir), *RL_ARGS]
    stdout = run(tmp_path, "rl", argv + ["--max_steps", "2"], nproc=2)
    return tmp_path, argv, stdout


def test_rl_ranks_hold_identical_weights_that_changed(rl_two_ranks):
    tmp_path, _, stdout = rl_two_ranks
    out = tmp_path / "out"
    rank0 = torch.load(out / "rank0_weights.pt", weights_only=True)
    rank1 = torch.load(out / "rank1_weights.pt", weights_only=True)
    start = torch.load(out / "full_sft_64.pth", weights_only=True)
    assert all(torch.equal(rank0[k], rank1[k]) for k in rank0)
    assert any(not torch.equal(rank0[k], start[k]) for k in start)
    saved = resume_state(out, "agent")  # rank 0 saved the unwrapped model: plain parameter names
    assert saved["step"] == 2 and all(torch.equal(saved["model"][k], rank0[k]) for k in rank0)
    assert stdout.count("saved ") == 1  # only rank 0 reports


def test_rl_resumes_across_world_sizes_at_the_right_data_position(rl_two_ranks):
    """Saved at world size 2 after step 2, resumed alone for step 3, then at world size 2 again for step 4."""
    tmp_path, argv, _ = rl_two_ranks
    save_dir = tmp_path / "resumed"
    shutil.copytree(tmp_path / "out", save_dir)
    argv = [str(save_dir) if a == str(tmp_path / "out") else a for a in argv] + ["--from_resume", "1"]
    saved = resume_state(save_dir, "agent")["extra"]
    assert (saved["batches_done"], saved["prompts_done"], saved["samples_done"]) == (2, 4, 8)

    stdout = run(tmp_path, "rl", argv + ["--max_steps", "3"], nproc=1)
    assert "at step 2 (epoch 0, batch 2, saved by 2 process(es))" in stdout
    state = resume_state(save_dir, "agent")
    assert state["step"] == 3 and state["extra"]["world_size"] == 1
    assert (state["extra"]["batches_done"], state["extra"]["prompts_done"]) == (3, 6)

    stdout = run(tmp_path, "rl", argv + ["--max_steps", "4"], nproc=2)
    assert "at step 3 (epoch 0, batch 3, saved by 1 process(es))" in stdout
    state = resume_state(save_dir, "agent")
    assert state["step"] == 4 and state["extra"]["world_size"] == 2
    assert (state["extra"]["batches_done"], state["extra"]["prompts_done"]) == (4, 8)
    metrics = [json.loads(line) for line in (save_dir / "agent_64_metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2, 3, 4]  # one record per step, written by rank 0 alone


# --- the RL update's shared prompt under DDP ---------------------------------------------------------------------

def shared_prompt_rows(rank: int):
    """Two rows of one prompt (20 shared tokens) and their own 6 tokens, different on each rank."""
    g = torch.Generator().manual_seed(100 + rank)
    prompt = torch.randint(0, 6400, (1, 20), generator=g).expand(2, -1)
    return torch.cat([prompt, torch.randint(0, 6400, (2, 6), generator=g)], dim=1)


def ddp_shared_prompt_grads(rank: int, init_file: str, out_dir: str):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    from trainer.fast_engine import compute_per_token_logps

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    torch.manual_seed(0)
    model = MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2))
    ddp = DDP(model)
    logps = compute_per_token_logps(ddp, shared_prompt_rows(rank), 6, shared_prefix=19, prefix_model=model)
    logps.sum().backward()  # DDP averages the two ranks' gradients
    torch.save({n: p.grad for n, p in model.named_parameters()}, os.path.join(out_dir, f"grads{rank}.pt"))
    dist.barrier()  # as close_distributed does: a rank that tears down alone can leave the other waiting
    dist.destroy_process_group()


def test_ddp_runs_the_shared_prompt_once_and_all_reduces_its_gradient(tmp_path):
    """The policy's prompt goes through the plain model, the rows through DDP: one DDP forward per backward,
    and every parameter's gradient, the prompt's part included, is the mean of the ranks' full-row gradients."""
    from trainer.fast_engine import compute_per_token_logps

    ranks = torch.multiprocessing.spawn(ddp_shared_prompt_grads, args=(str(tmp_path / "init"), str(tmp_path)),
                                        nprocs=2, join=False)
    deadline = time.monotonic() + 300
    while not ranks.join(timeout=5):  # raises if a rank failed
        if time.monotonic() > deadline:
            for process in ranks.processes:
                process.kill()
            pytest.fail("the two gloo ranks did not finish within 300 s")
    torch.manual_seed(0)
    model = MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2))
    for rank in range(2):  # every row whole, no shared prefix, no DDP
        (compute_per_token_logps(model, shared_prompt_rows(rank), 6).sum() / 2).backward()
    want = {n: p.grad for n, p in model.named_parameters()}
    for rank in range(2):
        got = torch.load(tmp_path / f"grads{rank}.pt", weights_only=True)
        assert set(got) == set(want)
        worst = max(float((got[n] - want[n]).abs().max()) for n in want)
        assert worst < 1e-5, (rank, worst)
    assert float(want["model.embed_tokens.weight"].abs().sum()) > 0
