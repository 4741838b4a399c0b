"""Agent RL v2: the reward without noise terms, token-level loss normalisation and dynamic sampling."""
import json
import os
import re
import shutil

import pytest
import torch

import trainer.train_agent as train_agent
from trainer import mock_world, prompt_pool
from trainer.step_metrics import groups_by_category
from conftest import ScriptedEngine, tool_call_text
from dataset.agent_phrasings import NO_TOOL_SPLITS
from dataset.lm_dataset import AgentRLDataset
from test_agent import ROOT, make_traj, read_metrics, tiny_setup
from trainer.train_agent import TOOLS, RewardGuards, calculate_rewards, execute_tool
from trainer.trainer_utils import DistInfo

WEATHER = ["get_current_weather", "get_current_weather"]


def weather_turns(places, answer):
    return [tool_call_text("get_current_weather", {"location": p}) for p in places] + [answer]


def test_a_correction_task_solved_directly_scores_like_the_failing_call_first():
    result = execute_tool("get_current_weather", {"location": "上海"})
    gt = [result["temperature"]]
    answer = f"浦东属于上海,上海现在{result['temperature']}。"
    failing_first = make_traj(weather_turns(["浦东", "上海"], answer))
    direct = make_traj(weather_turns(["上海"], answer))
    args = ([failing_first, direct], [gt, gt], [TOOLS, TOOLS], 1, None, [WEATHER, WEATHER])
    fixed = calculate_rewards(*args, guards=RewardGuards(), categories=["correction", "correction"])
    assert [r.total for r in fixed] == [3.0, 3.0]
    design = calculate_rewards(*args, guards=RewardGuards.design(), categories=["correction", "correction"])
    assert [r.total for r in design] == [3.0, 2.0]  # the design's count rule: one call short of two
    # the fix is for correction tasks only: a parallel task answered with one call of two stays short
    parallel = calculate_rewards(*args, guards=RewardGuards(), categories=["parallel", "parallel"])
    assert [r.total for r in parallel] == [3.0, 2.0]


def test_no_repetition_penalty_between_answers_that_hold_the_gt():
    calc = tool_call_text("calculate_math", {"expression": "256*37"})
    plain = make_traj([calc, "256*37 = 9472。"])
    repeated = make_traj([calc, "结果是 9472,结果是 9472,结果是 9472。"])
    wrong = make_traj([calc, "结果是 9742,结果是 9742,结果是 9742。"])
    batch = ([plain, repeated, wrong], [["9472"]] * 3, [TOOLS] * 3, 1, None, [["calculate_math"]] * 3)
    spared = calculate_rewards(*batch, guards=RewardGuards())
    assert spared[0].total == spared[1].total == 3.0
    assert spared[2].repetition < 0  # a wrong answer keeps the penalty
    design = calculate_rewards(*batch, guards=RewardGuards.design())
    assert design[1].repetition < 0 and design[1].total < design[0].total


def test_design_guards_reproduce_the_worked_examples_and_thinking_is_off_by_default():
    calc = '<tool_call>\n{"name": "calculate_math", "arguments": {"expression": "256*37"}}\n</tool_call>'
    traj = make_traj([calc, "256*37=9472"])
    assert calculate_rewards([traj], [["9472"]], [TOOLS], 1, guards=RewardGuards.design())[0].total == 3.0
    assert calculate_rewards([traj], [["9472"]], [TOOLS], 1)[0].total == 3.0  # guards=None: the design
    args = train_agent.parse_args([])
    assert args.thinking_ratio == 0.0  # the evaluation never thinks
    assert args.direct_correction == 1 and args.spare_correct_repetition == 1


LIVE_VALUE = re.compile(r"what time is it|the time\b|time right now|几点|现在.{0,4}时间|weather (in|like)|"
                        r"天气怎么样|rate (today|now)|汇率是多少", re.I)


def test_no_tool_questions_never_ask_for_a_live_value():
    """A no_tool label on a question that needs a tool ("Can you tell the time?") makes the needless-call
    guard punish the right call."""
    asked = [q for split in NO_TOOL_SPLITS.values() for kind in split.values() for pairs in kind.values()
             for q, *_ in pairs if LIVE_VALUE.search(q)]
    assert not asked, asked


def test_token_level_loss_is_the_mean_over_all_model_tokens():
    class A:
        loss_type, beta, epsilon_high, loss_norm = "cispo", 0.0, 5.0, "token"
    logps = torch.log(torch.full((2, 4), 0.5))
    mask = torch.tensor([[1.0, 1, 1, 1], [1, 0, 0, 0]])
    adv = torch.tensor([1.0, -1.0])
    token_sum, _, _ = train_agent.policy_loss(logps, logps.detach(), logps, adv, mask, A)
    per_token = -adv[:, None] * logps  # ratio 1
    assert torch.allclose(token_sum / mask.sum(), (per_token * mask).sum() / 5)
    A.loss_norm = "sequence"
    seq_mean, _, _ = train_agent.policy_loss(logps, logps.detach(), logps, adv, mask, A)
    assert torch.allclose(seq_mean, ((per_token * mask).sum(1) / mask.sum(1)).mean())


def test_token_level_loss_does_not_depend_on_the_micro_batch(tmp_path, tok):
    weights = []
    for micro in ("1", "4"):
        run = tmp_path / micro
        # every prompt alike: the batch whose rounding the tolerance below was set on
        args = tiny_setup(run, tok) + ["--skip_zero_std", "0", "--loss_norm", "token", "--max_steps", "1",
                                       "--train_micro_batch", micro, "--category_weights", ""]
        train_agent.main(args)
        weights.append(torch.load(run / "out" / "agent_64.pth", weights_only=True))
        assert read_metrics(run / "out")[0]["stepped"]
    start = torch.load(tmp_path / "1" / "out" / "full_sft_64.pth", weights_only=True)
    assert any(not torch.equal(weights[0][k], start[k]) for k in start)  # the step moved the weights
    # a micro-batch of 4 runs each group's prompt once (shared_prefix), another order of float operations:
    # Adam's first step turns the rounding of near-zero gradients into a few 1e-6; 1e-5 is 1% of the step
    # (LR 1e-3), and a normalisation that depended on the micro-batch would move whole steps
    for k in weights[0]:
        assert torch.allclose(weights[0][k], weights[1][k], atol=1e-5), k


class FakeState:
    """What collect_groups reads from a TrainState."""

    def __init__(self, tok, scripts, argv):
        self.args = train_agent.parse_args(argv)
        self.tokenizer, self.rollout_engine = tok, ScriptedEngine(tok, scripts)
        self.reward_model, self.guards, self.dist = None, RewardGuards(), DistInfo()


def test_dynamic_sampling_draws_until_the_step_has_its_informative_groups(tok):
    dataset = AgentRLDataset(os.path.join(ROOT, "dataset", "agent_rl.jsonl"))
    batches = [[0, 1], [2, 3], [4, 5], [6, 7]]
    same, broken = "你好!", "<tool_call>"  # an unclosed tag scores -0.5 below the plain answer
    scripts = [[same] * 4,  # batch 0: both groups without signal
               [same, broken, same, same],  # batch 1: one informative group
               [broken, same, same, broken],  # batch 2: two
               [same, broken, same, broken]]
    argv = ["--max_turns", "1", "--batch_size", "2", "--num_generations", "2", "--max_draws"]
    for max_draws, chunks, informative in (("1", 1, 0), ("2", 2, 1), ("3", 3, 3), ("9", 3, 3)):
        state = FakeState(tok, scripts, argv + [max_draws])
        groups = train_agent.collect_groups(state, dataset, batches, 0, train_agent.score_groups)
        assert (groups.chunks, groups.informative) == (chunks, informative)
        assert groups.prompts == [i for batch in batches[:chunks] for i in batch]
        assert len(groups.trajs) == len(groups.rewards) == 2 * len(groups.items) == 4 * chunks
        assert (groups.group_std > 0).sum() == informative
        by_category = groups_by_category(groups.items, groups.group_std)
        assert sum(n for n, _ in by_category.values()) == 2 * chunks
        assert sum(k for _, k in by_category.values()) == informative
        for name, (n, k) in by_category.items():
            assert n == sum(it["category"] == name for it in groups.items) and 0 <= k <= n
    # the epoch's end stops the drawing
    state = FakeState(tok, scripts, argv + ["9"])
    assert train_agent.collect_groups(state, dataset, batches, 3, train_agent.score_groups).chunks == 1


def test_dynamic_sampling_resume_equals_uninterrupted(tmp_path, tok, monkeypatch):
    args = tiny_setup(tmp_path, tok, n_prompts=16) + ["--max_draws", "3", "--skip_zero_std", "0"]
    snapshot = tmp_path / "resumed" / "agent_64_resume.pth"
    os.makedirs(snapshot.parent)
    shutil.copy(tmp_path / "out" / "full_sft_64.pth", snapshot.parent / "full_sft_64.pth")
    save = train_agent.save_checkpoints

    def save_and_keep_step_2(state, epoch, batches_done):
        save(state, epoch, batches_done)
        if state.step == 2:
            shutil.copy(tmp_path / "out" / "agent_64_resume.pth", snapshot)

    monkeypatch.setattr(train_agent, "save_checkpoints", save_and_keep_step_2)
    train_agent.main(args + ["--max_steps", "3"])
    monkeypatch.setattr(train_agent, "save_checkpoints", save)
    args[args.index("--save_dir") + 1] = str(snapshot.parent)
    train_agent.main(args + ["--max_steps", "3", "--from_resume", "1"])
    straight, resumed = read_metrics(tmp_path / "out"), read_metrics(snapshot.parent)
    assert [m["step"] for m in straight] == [1, 2, 3] and [m["step"] for m in resumed] == [3]
    assert resumed[0]["prompts"] == straight[2]["prompts"]
    for m in straight:
        assert m["prompts_drawn"] == len(m["prompts"]) and m["prompts_drawn"] % 2 == 0
        assert 0 <= m["informative_share"] <= 1
    a = torch.load(tmp_path / "out" / "agent_64.pth", weights_only=True)
    b = torch.load(snapshot.parent / "agent_64.pth", weights_only=True)
    for k in a:
        assert torch.allclose(a[k], b[k], atol=1e-6), k
    assert json.dumps(straight[2]["prompts"]) == json.dumps(resumed[0]["prompts"])


def test_a_time_budget_stops_the_run_after_the_step_that_spends_it_and_saves(tmp_path, tok):
    args = tiny_setup(tmp_path, tok, n_prompts=16) + ["--max_steps", "6", "--max_minutes", "1e-6"]
    state = train_agent.main(args)
    assert state.step == 1  # stopped by the budget, not by --max_steps
    assert [m["step"] for m in read_metrics(tmp_path / "out")] == [1]
    assert os.path.exists(tmp_path / "out" / "agent_64.pth")
    assert os.path.exists(tmp_path / "out" / "agent_64_resume.pth")


def test_resuming_with_other_category_weights_is_refused(tmp_path, tok):
    args = tiny_setup(tmp_path, tok) + ["--max_steps", "1"]
    train_agent.main(args)
    with pytest.raises(ValueError, match="category_weights 'no_tool=3,parallel=3,chained=3'"):
        train_agent.main(args + ["--max_steps", "2", "--from_resume", "1", "--category_weights", ""])


def test_weight_average_is_the_mean_of_the_weights_after_the_averaged_steps():
    from trainer.trainer_utils import WeightAverage

    model = torch.nn.Linear(3, 2)
    average = WeightAverage(start=2)
    seen = []
    for step in range(1, 5):
        with torch.no_grad():
            model.weight.fill_(float(step * step))
        seen.append(model.weight.clone())
        average.update(model, step)
    assert average.count == 3  # steps 2, 3 and 4
    assert torch.allclose(average.params["weight"], torch.stack(seen[1:]).mean(0))
    averaged = average.model(model)
    assert averaged is not model and torch.allclose(averaged.weight, torch.full((2, 3), 29 / 3))
    assert torch.equal(model.weight, seen[-1])  # the live model keeps its own weights
    with pytest.raises(ValueError, match="from step 2"):
        WeightAverage(start=3).load(average.state(), "ckpt.pth")


def test_average_last_saves_the_mean_and_the_last_weights_and_resumes_exactly(tmp_path, tok, monkeypatch):
    args = tiny_setup(tmp_path, tok, n_prompts=8) + ["--average_last", "0.5", "--skip_zero_std", "0"]
    snapshot = tmp_path / "resumed" / "agent_64_resume.pth"
    os.makedirs(snapshot.parent)
    shutil.copy(tmp_path / "out" / "full_sft_64.pth", snapshot.parent / "full_sft_64.pth")
    save, step = train_agent.save_checkpoints, train_agent.optimizer_step
    after = {}

    def save_and_keep_step_3(state, epoch, batches_done):
        save(state, epoch, batches_done)
        if state.step == 3:
            shutil.copy(tmp_path / "out" / "agent_64_resume.pth", snapshot)

    def step_and_record(state, loss):
        out = step(state, loss)
        after[state.step] = {k: v.detach().clone() for k, v in state.model.state_dict().items()}
        return out

    monkeypatch.setattr(train_agent, "save_checkpoints", save_and_keep_step_3)
    monkeypatch.setattr(train_agent, "optimizer_step", step_and_record)
    state = train_agent.main(args + ["--max_steps", "4"])
    assert state.average.start == 3 and state.average.count == 2  # the last half of 4 steps
    saved = torch.load(tmp_path / "out" / "agent_64.pth", weights_only=True)
    last = torch.load(tmp_path / "out" / "agent_last_64.pth", weights_only=True)
    for k in saved:
        assert torch.allclose(saved[k], (after[3][k] + after[4][k]) / 2, atol=1e-6), k
        assert torch.equal(last[k], after[4][k]), k
    assert not torch.equal(after[3]["model.embed_tokens.weight"], after[4]["model.embed_tokens.weight"])
    monkeypatch.setattr(train_agent, "save_checkpoints", save)
    args[args.index("--save_dir") + 1] = str(snapshot.parent)
    train_agent.main(args + ["--max_steps", "4", "--from_resume", "1"])
    resumed = torch.load(snapshot.parent / "agent_64.pth", weights_only=True)
    for k in saved:
        assert torch.allclose(saved[k], resumed[k], atol=1e-6), k


def test_the_default_pool_is_regenerated_when_its_sources_change(tmp_path, monkeypatch):
    """The default pool is made on first use, kept while its sources are unchanged, and made again when the
    phrasing tables, the generator or the tool world change, or when the pool file was rewritten since; a pool
    the user names is never touched."""
    monkeypatch.chdir(tmp_path)
    os.makedirs("dataset")
    runs = []

    def fake_generator(cmd, check):
        runs.append(cmd)
        with open(os.path.join(cmd[cmd.index("--out_dir") + 1], "agent_rl_pool.jsonl"), "w") as f:
            f.write(f"pool {len(runs)}\n")

    monkeypatch.setattr(prompt_pool.subprocess, "run", fake_generator)
    pool = prompt_pool.DEFAULT_POOL
    prompt_pool.ensure_pool(pool, TOOLS)
    prompt_pool.ensure_pool(pool, TOOLS)
    assert len(runs) == 1
    assert open(pool + ".sources").read().split() == [prompt_pool.pool_fingerprint(TOOLS),
                                                        prompt_pool.file_sha256(pool)]
    monkeypatch.setitem(mock_world.EXCHANGE_RATES, ("USD", "CNY"), 9.99)  # the tool world changes
    prompt_pool.ensure_pool(pool, TOOLS)
    assert len(runs) == 2 and open(pool).read() == "pool 2\n"
    os.remove(pool + ".sources")  # a pool from before the fingerprint: made again once
    prompt_pool.ensure_pool(pool, TOOLS)
    prompt_pool.ensure_pool(pool, TOOLS)
    assert len(runs) == 3
    with open(pool, "w") as f:  # rewritten by the generator run by hand on other tables: made again once
        f.write("a pool of other phrasings\n")
    prompt_pool.ensure_pool(pool, TOOLS)
    prompt_pool.ensure_pool(pool, TOOLS)
    assert len(runs) == 4 and open(pool).read() == "pool 4\n"
    prompt_pool.ensure_pool("mine.jsonl", TOOLS)
    assert len(runs) == 4 and not os.path.exists("mine.jsonl")
