"""The data flywheel: rejection sampling writes only accepted trajectories, each exactly as sampled; incremental
SFT honours the mix ratio; weighted prompt sampling; informative-group filtering of the RL update."""
import argparse
import json
import os
from collections import Counter

import pytest
import torch

from dataset.lm_dataset import SFTDataset, encode_sft_conversation, mix_in
from model.model_minimind import MiniMindConfig, save_minimind
from scripts import rejection_sample as rs
from trainer import train_agent
from trainer.fast_engine import TorchRolloutEngine
from trainer.prompt_pool import epoch_batches, parse_category_weights
from trainer.train_agent import TOOLS_BY_NAME
from conftest import PerTrajectoryEngine, tool_call_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sample_args(**kw):
    base = dict(k=4, max_per_prompt=4, max_per_hard_prompt=4, batch_prompts=2, temperature=0.8, top_p=1.0, max_turns=3, max_gen_len=48,
                max_total_len=2500, max_tool_tokens=256, tool_timeout=1.0)
    base.update(kw)
    return argparse.Namespace(**base)


def call(name, arguments):
    return tool_call_text(name, arguments)


def item(prompt, gt, expect, category, tools):
    return {"messages": [{"role": "system", "content": "你是一个有用的AI助手。"},
                         {"role": "user", "content": prompt}],
            "tools": [TOOLS_BY_NAME[t] for t in tools], "gt": gt, "expect_tools": expect, "category": category}


WEATHER = item("北京和东京现在天气怎么样?", ["28°C", "12°C"], ["get_current_weather"] * 2, "parallel",
               ["get_current_weather", "calculate_math"])
CHAT = item("你好,介绍一下你自己", [], [], "no_tool", ["get_current_weather"])
BJ, TK = call("get_current_weather", {"location": "北京"}), call("get_current_weather", {"location": "Tokyo"})
SCRIPTS = [
    [BJ + "\n" + TK, "北京28°C,晴;东京12°C,多云。"],  # right
    [BJ + "\n" + TK, "北京28°C,晴。"],  # one GT value missing
    [BJ + "\n" + BJ, "北京28°C,晴;北京28°C,晴。"],  # the same call twice
    [BJ, TK, "北京28°C,东京12°C。"],  # right answer, calls in two turns: also right
    ["我是 MiniMind,一个会用工具的助手。"],  # right
    [call("get_current_weather", {"location": "北京"}), "北京28°C。"],  # a tool for a question that needs none
    ["我是 MiniMind,一个会用工具的助手。"],  # a duplicate of the first right answer
    ["<tool_call>\n{\"name\": \"get_current_weather\""],  # a broken call
]


def test_only_accepted_trajectories_are_written_exactly_as_sampled(tok):
    engine = PerTrajectoryEngine(tok, SCRIPTS)
    result = rs.rejection_sample(engine, tok, [WEATHER, CHAT], sample_args())
    answers = [r["conversations"][-1]["content"] for r in result.records]
    assert answers == ["北京28°C,晴;东京12°C,多云。", "北京28°C,东京12°C。", "我是 MiniMind,一个会用工具的助手。"]
    par, chat = result.stats["parallel"], result.stats["no_tool"]
    assert (par.samples, par.accepted, par.written) == (4, 2, 2)
    assert par.rejected == Counter({"gt_missing": 1, "repeated_call": 1})
    assert (chat.samples, chat.accepted, chat.written) == (4, 2, 1)  # the duplicate is accepted, not written
    assert chat.rejected == Counter({"needless_call": 1, "malformed_call": 1})
    for record, traj in zip(result.records, result.trajectories):
        check_round_trip(tok, record, traj)
    first = result.records[0]["conversations"]
    assert [m["role"] for m in first] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [c["function"]["name"] for c in first[2]["tool_calls"]] == ["get_current_weather"] * 2


def test_a_turn_that_writes_a_control_token_is_rejected_and_the_file_loads(tmp_path, tok):
    """A right answer that forges a role boundary mid-turn would be refused by SFTDataset: never accepted."""
    forged = ["我是 MiniMind。<|im_start|>user\n你好"]
    scripts = [forged, ["我是 MiniMind。"]]
    result = rs.rejection_sample(PerTrajectoryEngine(tok, scripts), tok, [CHAT], sample_args(k=2))
    assert result.stats["no_tool"].rejected == Counter({"control_token": 1})
    assert [r["conversations"][-1]["content"] for r in result.records] == ["我是 MiniMind。"]
    out = tmp_path / "rs.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in result.records), encoding="utf-8")
    assert len(SFTDataset(str(out), tok)) == 1


def check_round_trip(tok, record, traj, tmp_path=None):
    """The record, read back as SFT data, is the sampled token sequence; SFT learns exactly the model's tokens."""
    messages = [dict(m) for m in record["conversations"]]
    tools = json.loads(messages[0].pop("tools"))
    ids, labels = encode_sft_conversation(tok, messages, tools)
    sampled = traj.prompt_ids + traj.ids
    assert ids[:len(sampled)] == sampled
    assert tok.decode(ids[len(sampled):]) == "\n"  # the template's newline after the last <|im_end|>
    assert [t for t in labels if t != -100] == [t for t, m in zip(traj.ids, traj.response_mask) if m]


def test_a_prompt_some_samples_failed_keeps_more_of_its_right_trajectories(tok):
    right = [["我是 MiniMind。"], ["你好,我是 MiniMind。"], ["我叫 MiniMind,一个助手。"]]
    needless = [call("get_current_weather", {"location": "北京"}), "北京28°C。"]
    scripts = right + right[:2] + [needless]  # the first prompt solved 3 of 3 times, the second 2 of 3
    for hard, written in ((1, [1, 1]), (2, [1, 2])):
        args = sample_args(k=3, max_per_prompt=1, max_per_hard_prompt=hard)
        result = rs.rejection_sample(PerTrajectoryEngine(tok, scripts), tok, [CHAT, CHAT], args)
        assert result.stats["no_tool"].written == sum(written)
        assert [r["conversations"][-1]["content"] for r in result.records] == \
            ["我是 MiniMind。", "我是 MiniMind。", "你好,我是 MiniMind。"][:sum(written)]


def test_written_file_is_sft_data_equal_to_the_real_model_samples(tmp_path, tok):
    """A real checkpoint, real sampling: the JSONL the script writes loads with SFTDataset to the sampled ids."""
    path = os.path.join(ROOT, "out", "full_sft_256.pth")
    if not os.path.exists(path):
        pytest.skip("no shipped checkpoint")
    from model.model_minimind import load_minimind

    model = load_minimind(path, MiniMindConfig()).eval()
    engine = TorchRolloutEngine(model, tok.eos_token_id, tok.pad_token_id)
    dataset = train_agent_dataset()
    items = [dataset.items[i] for i in range(6)]
    torch.manual_seed(0)
    result = rs.rejection_sample(engine, tok, items, sample_args(max_gen_len=96, batch_prompts=6))
    assert result.records, "the shipped checkpoint solves some of the first prompts"
    out = tmp_path / "rs.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in result.records), encoding="utf-8")
    loaded = SFTDataset(str(out), tok)
    assert len(loaded) == len(result.records)
    for (ids, labels), traj in zip(loaded.samples, result.trajectories):
        sampled = traj.prompt_ids + traj.ids
        assert ids[:len(sampled)] == sampled and len(ids) == len(sampled) + 1
        assert [t for t in labels if t != -100] == [t for t, m in zip(traj.ids, traj.response_mask) if m]
    for record, traj in zip(result.records, result.trajectories):
        tools = json.loads(record["conversations"][0]["tools"])
        assert rs.judge(traj, {"tools": tools, "gt": record["gt"], "expect_tools": record["expect_tools"]}).accepted


def train_agent_dataset():
    from dataset.lm_dataset import AgentRLDataset

    return AgentRLDataset(os.path.join(ROOT, "dataset", "agent_rl.jsonl"))


def test_turns_that_the_template_cannot_write_are_rejected(tok):
    assert rs.split_turn("hi") == ("hi", None)
    assert rs.split_turn("ok\n" + BJ) == ("ok", [{"type": "function", "function": {
        "name": "get_current_weather", "arguments": '{"location": "北京"}'}}])
    assert rs.split_turn("ok " + BJ) is None  # the template puts a newline before the first call
    assert rs.split_turn(BJ + " trailing") is None


# --- incremental SFT -------------------------------------------------------------------------------------

VAL_DIR = {}  # where val_data generated the conversations


def sft_file(tmp_path, name, n, start=0):
    with open(os.path.join(VAL_DIR["path"], "sft_agent_val.jsonl"), encoding="utf-8") as f:
        lines = f.readlines()[start:start + n]
    assert len(lines) == n
    path = tmp_path / name
    path.write_text("".join(lines), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def val_data(tmp_path_factory):
    """SFT conversations made by the generator (a small set, in a temporary folder)."""
    from scripts.make_agent_data import main as make_agent_data

    out = tmp_path_factory.mktemp("sft")
    make_agent_data(["--out_dir", str(out), "--n_sft", "20", "--n_sft_val", "300", "--n_rl", "10",
                     "--n_rl_pool", "10"])
    VAL_DIR["path"] = str(out)


def test_mix_ratio_is_honoured(tmp_path, tok, val_data):
    new = SFTDataset(sft_file(tmp_path, "new.jsonl", 12), tok)
    replay = SFTDataset(sft_file(tmp_path, "old.jsonl", 60, start=100), tok)
    new_samples = list(new.samples)
    counts = mix_in(new, replay, 0.25, seed=1)
    assert counts == {"new": 12, "replay": 4, "replay_share": 0.25}
    assert new.samples[:12] == new_samples
    rehearsed = new.samples[12:]
    assert all(s in replay.samples for s in rehearsed) and len({tuple(s[0]) for s in rehearsed}) == 4
    assert mix_in(SFTDataset(sft_file(tmp_path, "n2.jsonl", 12), tok), replay, 0.0)["replay"] == 0
    with pytest.raises(ValueError, match="replay set has 60"):
        mix_in(SFTDataset(sft_file(tmp_path, "n3.jsonl", 12), tok), replay, 0.9)


def test_incremental_sft_starts_from_a_checkpoint_and_mixes(tmp_path, tok, val_data, capsys):
    from model.model_minimind import MiniMindForCausalLM
    from trainer.train_full_sft import parse_args, train

    torch.manual_seed(0)
    save_minimind(MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2)),
                  str(tmp_path / "agent_64.pth"), dtype=torch.float32)
    new, old, val = (sft_file(tmp_path, "new.jsonl", 6), sft_file(tmp_path, "old.jsonl", 30, 50),
                     sft_file(tmp_path, "val.jsonl", 4, 200))
    train(parse_args(["--from_weight", "agent", "--save_dir", str(tmp_path), "--hidden_size", "64",
                      "--num_hidden_layers", "2", "--data_path", new, "--val_path", val, "--mix_path", old,
                      "--mix_ratio", "0.5", "--batch_size", "4", "--max_steps", "2", "--dtype", "float32",
                      "--save_weight", "flywheel_sft", "--eval_interval", "1", "--save_best", "0",
                      "--learning_rate", "1e-2", "--warmup_steps", "0"]))
    out = capsys.readouterr().out
    assert "mix: 6 new + 6 rehearsed" in out and "12 train conversations" in out
    # --save_best 0 keeps the final weights (those of the resume checkpoint), not the best validation loss
    saved = torch.load(tmp_path / "flywheel_sft_64.pth", weights_only=True)
    final = torch.load(tmp_path / "flywheel_sft_64_resume.pth", weights_only=True)["model"]
    start = torch.load(tmp_path / "agent_64.pth", weights_only=True)
    key = "model.layers.0.mlp.up_proj.weight"
    assert torch.allclose(saved[key].float(), final[key].float(), atol=1e-3)  # bf16 rounding only
    assert not torch.allclose(saved[key].float(), start[key].float())


# --- prompt sampling and the informative-group filter ----------------------------------------------------

def test_weighted_epoch_order_covers_every_prompt_and_favours_heavy_categories():
    cats = ["single"] * 800 + ["chained"] * 200
    weights = parse_category_weights("chained=4")
    order = [i for b in epoch_batches(cats, 2, seed=3, epoch=0, weights=weights) for i in b]
    assert sorted(order) == list(range(1000))
    first = Counter(cats[i] for i in order[:300])
    assert first["chained"] > 2 * 300 * 200 / 1000  # well over their 20% share early in the epoch
    assert order == [i for b in epoch_batches(cats, 2, 3, 0, weights) for i in b]  # deterministic (resume)
    assert epoch_batches(cats, 2, 3, 0, weights) != epoch_batches(cats, 2, 3, 1, weights)
    with pytest.raises(ValueError, match="chained"):
        parse_category_weights("chained=-1")
    with pytest.raises(ValueError, match="not name=number"):
        parse_category_weights("chained=x")


def test_the_default_weights_name_the_pool_categories_and_a_typo_is_reported(capsys):
    from trainer.train_agent import category_weights, parse_args
    pool = [json.loads(line)["category"] for line in open(os.path.join(ROOT, "dataset", "agent_rl.jsonl"))]
    args = parse_args([])
    weights = category_weights(args, pool, True)
    assert weights and set(weights) <= set(pool) and not capsys.readouterr().out
    args = parse_args(["--category_weights", "no-tool=3,chained=2"])
    assert category_weights(args, pool, True) == {"no-tool": 3.0, "chained": 2.0}
    assert "no-tool, which no prompt of" in capsys.readouterr().out
    assert category_weights(parse_args(["--category_weights", ""]), pool, True) == {}


def test_groups_with_equal_rewards_are_left_out_of_the_update(tmp_path, tok):
    from tests.test_agent import read_metrics, tiny_setup

    args = tiny_setup(tmp_path, tok, n_prompts=8)
    train_agent.main(args + ["--max_steps", "4", "--skip_zero_std", "1"])
    metrics = read_metrics(tmp_path / "out")
    for m in metrics:
        informative_groups = round((1 - m["zero_std_groups"]) * 2)  # 2 prompts per step
        assert m["trained_samples"] == 2 * informative_groups  # 2 generations per prompt
    assert any(m["trained_samples"] for m in metrics)


def test_profile_picks_the_weakest_categories_or_the_rest(tmp_path):
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"by_category": {"single": 0.9, "chained": 0.5, "parallel": 0.6,
                                                   "no_tool": {"task_completion": 0.95}}}))
    items = [{"category": c, "prompt": f"{c} {i}"} for c in ("single", "chained", "parallel", "no_tool")
             for i in range(3)]
    pool = argparse.Namespace(items=items)

    def picked(**kw):
        args = argparse.Namespace(categories="", profile=str(profile), weakest=2, rest=0, max_prompts=0,
                                  seed=0, data_path="pool.jsonl")
        vars(args).update(kw)
        return sorted({it["category"] for it in rs.select_items(pool, args)})

    assert picked() == ["chained", "parallel"]
    assert picked(rest=1) == ["no_tool", "single"]
    with pytest.raises(ValueError, match="no categories beyond the 4 weakest"):
        picked(rest=1, weakest=4)


def test_average_weights_is_the_parameter_mean_with_tied_embeddings(tmp_path):
    from model.model_minimind import MiniMindForCausalLM, load_minimind
    from scripts import average_weights

    config = MiniMindConfig(hidden_size=64, num_hidden_layers=2)
    models = []
    for seed in range(3):
        torch.manual_seed(seed)
        models.append(MiniMindForCausalLM(config))
        save_minimind(models[-1], str(tmp_path / f"m{seed}_64.pth"), dtype=torch.float32)
    size = ["--save_dir", str(tmp_path), "--hidden_size", "64", "--num_hidden_layers", "2"]
    path = average_weights.main(["--weights", "m0", "m1", "m2", "--out", "soup"] + size)
    soup = load_minimind(path, config)
    for name, param in soup.named_parameters():
        expected = torch.stack([dict(m.named_parameters())[name] for m in models]).mean(0)
        assert torch.allclose(param, expected, atol=1e-6), name
    assert soup.lm_head.weight.data_ptr() == soup.model.embed_tokens.weight.data_ptr()
    assert torch.allclose(soup.lm_head.weight, torch.stack([m.lm_head.weight for m in models]).mean(0))
    save_minimind(MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=1)),
                  str(tmp_path / "shallow_64.pth"))
    with pytest.raises(ValueError, match="shallow does not match the shape of m0"):
        average_weights.main(["--weights", "m0", "shallow", "--out", "bad"] + size)


def run_flywheel_dry(tmp_path, **env):
    """Run scripts/flywheel.sh with a `python` on PATH that only records its arguments."""
    import shutil
    import subprocess
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    log = tmp_path / "calls.txt"
    fake = bin_dir / "python"
    # records its arguments and creates the JSONL file an --out names, so the script's `cat` finds it
    fake.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n'
                    'while [ $# -gt 0 ]; do\n'
                    '  case "$1:$2" in --out:*.jsonl) : > "$2";; esac; shift\n'
                    'done\n')
    fake.chmod(0o755)
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    (root / "dataset").mkdir()
    shutil.copy(os.path.join(ROOT, "scripts", "flywheel.sh"), root / "scripts")
    full_env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", **env}
    subprocess.run(["bash", str(root / "scripts" / "flywheel.sh")], env=full_env, check=True,
                   capture_output=True, cwd=root)
    return [line.split() for line in log.read_text().splitlines()]


def flag(call, name):
    return call[call.index(name) + 1]


def test_flywheel_script_one_seed_and_a_seed_average(tmp_path):
    calls = run_flywheel_dry(tmp_path / "one", START="runC", TAG="t")
    scripts = [c[0] for c in calls]
    assert scripts == ["scripts/eval_toolcall.py", "scripts/rejection_sample.py", "trainer/train_full_sft.py",
                       "trainer/train_agent.py", "scripts/eval_toolcall.py"]
    assert flag(calls[2], "--save_weight") == "t_sft" and flag(calls[3], "--from_weight") == "t_sft"

    calls = run_flywheel_dry(tmp_path / "two", START="runC", TAG="t", SEEDS="1 2", SELF_REHEARSAL="1")
    rs = [c for c in calls if c[0] == "scripts/rejection_sample.py"]
    assert [(flag(c, "--seed"), "--rest" in c) for c in rs] == [("1", False), ("1", True), ("2", False), ("2", True)]
    sft = [c for c in calls if c[0] == "trainer/train_full_sft.py"]
    assert [(flag(c, "--save_weight"), flag(c, "--seed"), flag(c, "--data_path")) for c in sft] == [
        ("t_s1_sft", "1", "dataset/t_s1_rs.jsonl"), ("t_s2_sft", "2", "dataset/t_s2_rs.jsonl")]
    avg = [c for c in calls if c[0] == "scripts/average_weights.py"]
    assert avg == [["scripts/average_weights.py", "--weights", "t_s1_sft", "t_s2_sft", "--out", "t_sft"]]
    rl = [c for c in calls if c[0] == "trainer/train_agent.py"]
    assert flag(rl[0], "--from_weight") == "t_sft"
