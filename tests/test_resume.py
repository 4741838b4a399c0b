"""Training survives being killed: SIGKILL in the middle of a checkpoint save leaves the last complete checkpoint,
and a resumed run ends with the same weights as an uninterrupted one."""
import glob
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import torch

from model.model_minimind import MiniMindConfig, MiniMindForCausalLM, save_minimind

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Runs a trainer in a fresh process. With KILL_AT_SAVE=n, the n-th resume-checkpoint save writes half of its
# bytes and then the process SIGKILLs itself: a crash in the middle of a save.
RUNNER = textwrap.dedent("""
    import io, os, signal, sys
    import torch
    torch.set_num_threads(1)
    kill_at, saves = int(os.environ.get("KILL_AT_SAVE", "0")), []
    real_save = torch.save

    def save(obj, f, *args, **kwargs):
        if isinstance(obj, dict) and "optimizer" in obj:
            saves.append(1)
            if len(saves) == kill_at:
                buf = io.BytesIO()
                real_save(obj, buf)
                f.write(buf.getvalue()[: len(buf.getvalue()) // 2])
                f.flush()
                os.kill(os.getpid(), signal.SIGKILL)
        return real_save(obj, f, *args, **kwargs)

    torch.save = save
    trainer = sys.argv[1]
    if trainer == "sft":
        from trainer.train_full_sft import parse_args, train
        train(parse_args(sys.argv[2:]))
    else:
        from trainer.train_agent import main
        main(sys.argv[2:])
""")


def run(trainer, argv, kill_at=0):
    env = dict(os.environ, KILL_AT_SAVE=str(kill_at), PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-c", RUNNER, trainer, *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def tiny_start(save_dir):
    torch.manual_seed(0)
    model = MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2))
    save_minimind(model, os.path.join(save_dir, "start_64.pth"), dtype=torch.float32)


def sft_args(tmp_path, save_dir):
    """A tiny model trained on the RL pool's conversations (each ends with a reference answer)."""
    data = tmp_path / "sft.jsonl"
    if not data.exists():
        with open(os.path.join(ROOT, "dataset", "agent_rl.jsonl"), encoding="utf-8") as f:
            data.write_text("".join(next(f) for _ in range(24)), encoding="utf-8")
    return ["--data_path", str(data), "--val_path", str(data), "--save_dir", str(save_dir),
            "--from_weight", "start", "--hidden_size", "64", "--num_hidden_layers", "2", "--dtype", "float32",
            "--device", "cpu", "--batch_size", "4", "--epochs", "2", "--max_steps", "8", "--save_interval", "1",
            "--eval_interval", "4", "--log_interval", "1", "--warmup_steps", "2"]


def resume_state(save_dir, name):
    return torch.load(os.path.join(save_dir, f"{name}_64_resume.pth"), weights_only=True)


def assert_same_weights(a, b):
    assert a["step"] == b["step"]
    for k in a["model"]:
        assert torch.allclose(a["model"][k], b["model"][k], atol=1e-6, rtol=0), k
    for k, v in a["optimizer"]["state"].items():
        assert torch.allclose(v["exp_avg_sq"], b["optimizer"]["state"][k]["exp_avg_sq"], atol=1e-6, rtol=0), k


def test_sft_killed_mid_save_resumes_from_the_last_complete_checkpoint(tmp_path):
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    for d in (straight, killed):
        os.makedirs(d)
        tiny_start(str(d))
    done = run("sft", sft_args(tmp_path, straight))
    assert done.returncode == 0, done.stderr[-2000:]

    crashed = run("sft", sft_args(tmp_path, killed), kill_at=5)  # dies while writing the step-5 checkpoint
    assert crashed.returncode == -signal.SIGKILL
    assert glob.glob(str(killed / "full_sft_64_resume.pth.tmp.*")), "the half-written file is left behind"
    assert resume_state(killed, "full_sft")["step"] == 4  # the last complete checkpoint is intact

    resumed = run("sft", sft_args(tmp_path, killed) + ["--from_resume", "1"])
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "resumed from" in resumed.stdout and "at step 4" in resumed.stdout
    assert not glob.glob(str(killed / "*.tmp.*")), "the stale half-written file is cleaned up"
    assert_same_weights(resume_state(straight, "full_sft"), resume_state(killed, "full_sft"))


def test_sft_weight_average_resumes_and_leaves_the_training_alone(tmp_path):
    """--ema_decay: a killed and resumed run ends with the same average as an uninterrupted one, and the
    weights themselves are those of a run without the average."""
    straight, killed, plain = tmp_path / "straight", tmp_path / "killed", tmp_path / "plain"
    for d in (straight, killed, plain):
        os.makedirs(d)
        tiny_start(str(d))
    ema = ["--ema_decay", "0.7"]
    done = run("sft", sft_args(tmp_path, straight) + ema)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "averaged weights: val_loss" in done.stdout
    assert run("sft", sft_args(tmp_path, plain)).returncode == 0
    assert_same_weights(resume_state(straight, "full_sft"), resume_state(plain, "full_sft"))

    assert run("sft", sft_args(tmp_path, killed) + ema, kill_at=6).returncode == -signal.SIGKILL
    wrong = run("sft", sft_args(tmp_path, killed) + ["--ema_decay", "0.8", "--from_resume", "1"])
    assert wrong.returncode != 0 and "--ema_decay 0.8" in wrong.stderr and "decay 0.7" in wrong.stderr
    resumed = run("sft", sft_args(tmp_path, killed) + ema + ["--from_resume", "1"])
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    a, b = resume_state(straight, "full_sft"), resume_state(killed, "full_sft")
    assert a["extra"]["ema"]["updates"] == b["extra"]["ema"]["updates"] == 8
    for k, v in a["extra"]["ema"]["shadow"].items():
        assert torch.allclose(v, b["extra"]["ema"]["shadow"][k], atol=1e-6, rtol=0), k
    saved = [torch.load(d / "full_sft_ema_64.pth", weights_only=True) for d in (straight, killed)]
    assert all(torch.equal(saved[0][k], saved[1][k]) for k in saved[0])


def test_weight_average_is_the_bias_corrected_moving_average():
    from trainer.trainer_utils import WeightEMA

    model = torch.nn.Linear(3, 2)
    ema, d = WeightEMA(model, 0.6), 0.6
    seen = []
    for step in range(4):
        with torch.no_grad():
            model.weight.copy_(torch.full((2, 3), float(step + 1) ** 2))
        seen.append(model.weight.detach().clone())
        ema.update(model)
    n = len(seen)
    weights = [(1 - d) * d ** (n - 1 - k) for k in range(n)]
    expected = sum(w * x for w, x in zip(weights, seen)) / sum(weights)
    assert torch.allclose(ema.averaged().weight, expected, atol=1e-6)
    assert not torch.allclose(ema.averaged().weight, model.weight)  # an average, not the last weights


def rl_args(save_dir):
    shutil.copy(os.path.join(save_dir, "start_64.pth"), os.path.join(save_dir, "full_sft_64.pth"))
    return ["--save_dir", str(save_dir), "--hidden_size", "64", "--num_hidden_layers", "2", "--dtype",
            "float32", "--device", "cpu", "--max_gen_len", "12", "--max_turns", "2", "--batch_size", "2",
            "--num_generations", "2", "--learning_rate", "1e-3", "--thinking_ratio", "0.5", "--save_interval",
            "1", "--max_steps", "4", "--eval_interval", "0"]


def test_rl_killed_mid_save_resumes_and_matches_an_uninterrupted_run(tmp_path):
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    for d in (straight, killed):
        os.makedirs(d)
        tiny_start(str(d))
    done = run("rl", rl_args(straight))
    assert done.returncode == 0, done.stderr[-2000:]
    crashed = run("rl", rl_args(killed), kill_at=3)  # dies while writing the step-3 checkpoint
    assert crashed.returncode == -signal.SIGKILL
    assert resume_state(killed, "agent")["step"] == 2
    resumed = run("rl", rl_args(killed) + ["--from_resume", "1"])
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "at step 2" in resumed.stdout
    assert_same_weights(resume_state(straight, "agent"), resume_state(killed, "agent"))


def test_sigterm_saves_a_resume_checkpoint(tmp_path):
    """SIGTERM: the run finishes its step, writes a resume checkpoint and exits with the status a shell gives a
    process SIGTERM killed, so `train_full_sft.py ... && next` does not go on from an unfinished run."""
    save_dir = tmp_path / "out"
    os.makedirs(save_dir)
    tiny_start(str(save_dir))
    argv = sft_args(tmp_path, save_dir)
    argv[argv.index("--max_steps") + 1] = "100000"
    argv[argv.index("--epochs") + 1] = "1000"
    argv[argv.index("--save_interval") + 1] = "100000"
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-u", "trainer/train_full_sft.py", *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout:  # wait until it is training
        if line.startswith("step 4 | val_loss"):
            break
    proc.send_signal(signal.SIGTERM)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == 128 + signal.SIGTERM, out[-2000:]
    state = resume_state(save_dir, "full_sft")
    assert state["step"] >= 4
