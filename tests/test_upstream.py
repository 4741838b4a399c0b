"""Interop with upstream MiniMind: its tokenizer and chat template drive the rollout, token-exact, and its
tiny checkpoint trains and evaluates here. The test data (../shared/fixtures/upstream_minimind/) was made with
upstream's own code; these tests are skipped where it is absent."""
import json
import os

import pytest
import torch

from conftest import PerTrajectoryEngine, tool_call_text
from dataset.lm_dataset import encode, render
from trainer import train_agent
from trainer.train_agent import TOOLS, RolloutConfig, rollout_batch
from trainer.trainer_utils import load_tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UPSTREAM = os.path.join(os.path.dirname(ROOT), "shared", "fixtures", "upstream_minimind")
pytestmark = pytest.mark.skipif(not os.path.isdir(UPSTREAM), reason="no upstream MiniMind fixture")


@pytest.fixture(scope="module")
def up_tok():
    return load_tokenizer(UPSTREAM)


def test_upstreams_template_is_what_the_fixture_says(up_tok):
    ref = json.load(open(os.path.join(UPSTREAM, "chat_template_reference.json"), encoding="utf-8"))
    full = ref["full"]
    text = render(up_tok, full["messages"], full["tools"])
    assert text == full["text"] and encode(up_tok, text) == full["ids"]
    assert up_tok.convert_tokens_to_ids("<tool_call>") == ref["special_ids"]["<tool_call>"] == 21  # 3 here


def test_a_multi_turn_rollout_is_token_exact_under_upstreams_template(up_tok):
    """The training ids of a call-then-answer trajectory are the ids upstream's template renders for the same
    turns (upstream writes a tool result as a user turn wrapped in <tool_response>)."""
    messages = [{"role": "system", "content": "你是一个有用的AI助手。"}, {"role": "user", "content": "北京天气怎么样?"}]
    tools = TOOLS[2:3]
    call = tool_call_text("get_current_weather", {"location": "北京"})
    engine = PerTrajectoryEngine(up_tok, [[call, "北京现在28°C。"]])
    [traj] = rollout_batch(engine, up_tok, [messages], [tools], 1, RolloutConfig(max_gen_len=64))
    assert len(traj.turns) == 2 and traj.tool_calls[0]["result"]["city"] == "北京" and not traj.unfinished
    rendered = render(up_tok, traj.messages + [{"role": "assistant", "content": "北京现在28°C。"}], tools)
    assert traj.prompt_ids + traj.ids == encode(up_tok, rendered)[:len(traj.prompt_ids) + len(traj.ids)]
    tool_span = up_tok.decode([t for t, m in zip(traj.ids, traj.response_mask) if m == 0])
    assert "<|im_start|>user\n<tool_response>" in tool_span  # upstream's way, through its own template
    assert up_tok.eos_token_id in traj.ids


def test_two_rl_steps_and_an_eval_case_on_upstreams_tiny_model(tmp_path, up_tok):
    save_dir = tmp_path / "out"
    os.makedirs(save_dir)
    weights = os.path.join(UPSTREAM, "full_sft_64.pth")
    data = tmp_path / "rl.jsonl"
    with open(os.path.join(ROOT, "dataset", "agent_rl.jsonl"), encoding="utf-8") as f:
        data.write_text("".join(next(f) for _ in range(4)), encoding="utf-8")
    train_agent.main(["--from_weight", weights, "--tokenizer_path", UPSTREAM, "--data_path", str(data),
                      "--save_dir", str(save_dir), "--hidden_size", "64", "--num_hidden_layers", "2",
                      "--dtype", "float32", "--max_gen_len", "12", "--max_turns", "2", "--batch_size", "2",
                      "--num_generations", "2", "--max_steps", "2", "--skip_zero_std", "0",
                      "--eval_interval", "0", "--save_interval", "1"])
    records = [json.loads(line) for line in open(save_dir / "agent_64_metrics.jsonl", encoding="utf-8")]
    assert [r["step"] for r in records] == [1, 2]
    assert abs(records[0]["ratio_mean"] - 1) < 0.01 and records[0]["ratio_max"] < 1.01
    saved = torch.load(save_dir / "agent_64.pth", weights_only=True)
    upstream = torch.load(weights, weights_only=True)
    assert set(saved) == set(upstream)  # upstream's key set, lm_head.weight included
    from scripts import eval_toolcall
    out = tmp_path / "eval.json"
    eval_toolcall.main(["--load_from", str(save_dir / "agent_64.pth"), "--tokenizer_path", UPSTREAM,
                        "--cases", "design", "--max_gen_len", "8", "--out", str(out)])
    assert json.load(open(out, encoding="utf-8"))["summary"]["cases"] == 8
