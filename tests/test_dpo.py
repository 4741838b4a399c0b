"""DPO on the model's own trajectories: rejection sampling pairs each failed trajectory with a right one of the
same prompt, exactly as sampled; the sequence log-prob covers only model-written tokens; the loss matches its
formula; training separates the pairs; a bad pairs file is refused with file, line and field; a resumed run
equals an uninterrupted one."""
import argparse
import json
import math

import pytest
import torch

from dataset.lm_dataset import (DataError, PreferenceDataset, encode_sft_conversation, sft_collate,
                                tokenizer_fingerprint)
from model.model_minimind import save_minimind
from scripts import rejection_sample as rs
from trainer import train_dpo
from conftest import PerTrajectoryEngine, tiny_model
from test_flywheel import BJ, CHAT, SCRIPTS, WEATHER, call, sample_args


def sampled_pairs(tok, max_pairs=4):
    args = sample_args(pairs_out="x", max_pairs_per_prompt=max_pairs)
    return rs.rejection_sample(PerTrajectoryEngine(tok, SCRIPTS), tok, [WEATHER, CHAT], args)


def test_each_failed_trajectory_is_paired_with_a_right_one_of_its_prompt(tok):
    result = sampled_pairs(tok)
    # WEATHER: 2 right, 2 failed (a missing GT value, a repeated call); CHAT: 2 right (equal), a needless
    # call and a broken call
    assert [(p["category"], p["reason"]) for p in result.pairs] == [
        ("parallel", "gt_missing"), ("parallel", "repeated_call"),
        ("no_tool", "needless_call"), ("no_tool", "malformed_call")]
    accepted = {tuple(t.ids) for t in result.trajectories}
    for pair in result.pairs:
        assert tuple(pair["chosen"]["ids"]) in accepted and tuple(pair["rejected"]["ids"]) not in accepted
        assert pair["tokenizer"] == tokenizer_fingerprint(tok)
        for side in ("chosen", "rejected"):
            assert len(pair[side]["mask"]) == len(pair[side]["ids"])
            assert pair[side]["text"] == tok.decode(pair[side]["ids"], skip_special_tokens=False)
    # the two WEATHER pairs take the two right trajectories in turn
    assert result.pairs[0]["chosen"]["ids"] != result.pairs[1]["chosen"]["ids"]
    # the needless call's tool result is in the ids with mask 0: the model did not write it
    needless = result.pairs[2]["rejected"]
    tool_part = [t for t, m in zip(needless["ids"], needless["mask"]) if m == 0]
    assert "<tool_response>" in tok.decode(tool_part, skip_special_tokens=False)
    assert [p["reason"] for p in sampled_pairs(tok, max_pairs=1).pairs] == ["gt_missing", "needless_call"]


def test_a_no_tool_prompt_the_model_always_fails_is_paired_with_its_reference_answer(tok):
    reference = {"role": "assistant", "content": "我是 MiniMind,一个会用工具的助手。"}
    chat = {**CHAT, "reference": reference}
    needless = [call("get_current_weather", {"location": "北京"}), "北京28°C。"]
    broken = ["<tool_call>\n{\"name\": \"get_current_weather\""]
    scripts = [needless, broken, needless, needless]  # never right
    args = sample_args(pairs_out="x", max_pairs_per_prompt=4)
    for use, want in ((0, []), (1, ["needless_call", "malformed_call"])):
        args.reference_chosen = use
        result = rs.rejection_sample(PerTrajectoryEngine(tok, scripts), tok, [chat], args)
        assert [p["reason"] for p in result.pairs] == want
    chosen = result.pairs[0]["chosen"]
    assert result.pairs[0]["chosen_source"] == "reference" and all(chosen["mask"])
    assert chosen["text"] == reference["content"] + "<|im_end|>"
    # the reference continues the sampled prompt exactly as SFT would write it
    ids, labels = encode_sft_conversation(tok, chat["messages"] + [reference], chat["tools"])
    assert result.pairs[0]["prompt_ids"] + chosen["ids"] == ids[:len(result.pairs[0]["prompt_ids"]) + len(chosen["ids"])]
    assert chosen["ids"] == [t for t in labels if t != -100]
    # a tool task has no reference trajectory (only its final answer): no pair without a right sample
    weather = {**WEATHER, "reference": {"role": "assistant", "content": "北京28°C,东京12°C。"}}
    result = rs.rejection_sample(PerTrajectoryEngine(tok, [[BJ, "北京28°C。"]] * 4), tok, [weather], args)
    assert result.pairs == []


def test_skipped_call_pairs_mirror_the_needless_call_pairs(tmp_path, tok):
    args = sample_args(pairs_out="x", max_pairs_per_prompt=4, skipped_call_pairs=1, seed=0)
    result = rs.rejection_sample(PerTrajectoryEngine(tok, SCRIPTS), tok, [WEATHER, CHAT], args)
    # one needless-call pair (CHAT) -> one skipped-call pair, from the one tool prompt with a right sample
    assert [p["reason"] for p in result.pairs] == [
        "gt_missing", "repeated_call", "needless_call", "malformed_call", "skipped_call"]
    pair = result.pairs[-1]
    right = next(t for t in result.trajectories if t.prompt_ids == pair["prompt_ids"])
    assert pair["category"] == "parallel" and pair["chosen"]["ids"] == right.ids
    # the failed side is the right trajectory's own final answer, given at once, all of it model-written
    answer = "北京28°C,晴;东京12°C,多云。"
    assert pair["rejected"]["text"] == answer + "<|im_end|>" and all(pair["rejected"]["mask"])
    ids, labels = encode_sft_conversation(tok, WEATHER["messages"] + [{"role": "assistant", "content": answer}],
                                          WEATHER["tools"])
    assert pair["prompt_ids"] + pair["rejected"]["ids"] == ids[:len(pair["prompt_ids"]) + len(pair["rejected"]["ids"])]
    # scored only through the first turn: the call against the answer without it
    path = tmp_path / "pairs.jsonl"
    write_pairs(path, result.pairs)
    loaded = PreferenceDataset(str(path), tok).pairs[-1]
    cut = train_dpo.cut_after_divergent_turn(loaded)
    first_turn = right.response_mask.index(0)
    assert cut.chosen_mask == [1] * first_turn + [0] * (len(right.ids) - first_turn)
    assert cut.rejected_mask == pair["rejected"]["mask"]
    # off by default, and never more than the needless-call pairs
    args.skipped_call_pairs = 0
    assert "skipped_call" not in [p["reason"] for p in rs.rejection_sample(
        PerTrajectoryEngine(tok, SCRIPTS), tok, [WEATHER, CHAT], args).pairs]
    assert rs.balancing_pairs([("a", 1), ("b", 2)], [{"reason": "gt_missing"}], seed=0) == []


def test_operator_pairs_mirror_the_pairs_that_take_an_operator_away(tmp_path, tok):
    power = {**item_for("2的10次方是多少?", ["1024"]), "category": "math"}
    times = {**item_for("跑了3次,每次4米,一共多少米?", ["12"]), "category": "chained"}
    calc = lambda e: call("calculate_math", {"expression": e})  # noqa: E731
    scripts = [[calc("2**10"), "结果是1024。"], [calc("2**10"), "2的10次方是1024。"],  # power: solved twice
               [calc("3*4"), "一共12米。"], [calc("3**4"), "一共81米。"]]  # N times: 3**4 is a failure
    args = sample_args(k=2, pairs_out="x", max_pairs_per_prompt=4, operator_pairs=1, seed=0)
    result = rs.rejection_sample(PerTrajectoryEngine(tok, scripts), tok, [power, times], args)
    assert [p["reason"] for p in result.pairs] == ["gt_missing", "operator_mirror"]
    assert rs.operator_swap(result.pairs[0]) == ("**", "*")
    mirror = result.pairs[1]
    assert mirror["category"] == "math" and mirror["prompt_ids"] == result.trajectories[0].prompt_ids
    assert mirror["chosen"]["ids"] == result.trajectories[0].ids  # a sampled right trajectory
    # the failed side is its first turn with the operator swapped, nothing else changed
    assert mirror["rejected"]["text"] == calc("2*10") + "<|im_end|>" and all(mirror["rejected"]["mask"])
    assert mirror["chosen"]["text"].startswith(calc("2**10") + "<|im_end|>")
    assert rs.operator_swap({"chosen": mirror["rejected"], "rejected": mirror["chosen"]}) == ("**", "*")
    path = tmp_path / "pairs.jsonl"
    write_pairs(path, result.pairs)
    cut = train_dpo.cut_after_divergent_turn(PreferenceDataset(str(path), tok).pairs[-1])
    assert sum(cut.chosen_mask) == len(encode_first_turn(tok, calc("2**10")))
    # off by default; a pair that changes more than one operator asks for no mirror
    args.operator_pairs = 0
    assert [p["reason"] for p in rs.rejection_sample(
        PerTrajectoryEngine(tok, scripts), tok, [power, times], args).pairs] == ["gt_missing"]
    assert rs.operator_swap({"chosen": {"text": calc("3*4+1")}, "rejected": {"text": calc("3**4-1")}}) is None


def item_for(prompt, gt):
    from test_flywheel import item
    return item(prompt, gt, ["calculate_math"], "math", ["calculate_math"])


def encode_first_turn(tok, text):
    return tok(text + "<|im_end|>", add_special_tokens=False)["input_ids"]


def write_pairs(path, pairs):
    with open(path, "w", encoding="utf-8") as f:
        for p in pairs:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")


def test_a_bad_pairs_file_names_the_line_and_the_field(tmp_path, tok):
    pairs = sampled_pairs(tok).pairs
    cases = [
        (lambda p: p.update(tokenizer="0123456789abcdef"), "tokenizer"),
        (lambda p: p["chosen"]["mask"].pop(), "chosen.mask"),
        (lambda p: p["rejected"].update(ids=[1, -5]), "rejected.ids"),
        (lambda p: p["rejected"].update(mask=[0] * len(p["rejected"]["ids"])), "rejected.mask"),
        (lambda p: p.update(rejected=p["chosen"]), "rejected.ids"),
        (lambda p: p.pop("prompt_ids"), "prompt_ids"),
    ]
    for spoil, field in cases:
        bad = json.loads(json.dumps(pairs))
        spoil(bad[2])
        path = tmp_path / "pairs.jsonl"
        write_pairs(path, bad)
        with pytest.raises(DataError, match=rf"pairs.jsonl:3: field '{field}'"):
            PreferenceDataset(str(path), tok)
        assert len(PreferenceDataset(str(path), tok, skip_bad_lines=True)) == 3


def runtime(**kw):
    base = dict(device="cpu", dtype="float32", max_total_len=1024, micro_batch=8, pad_token_id=0,
                eos_token_id=2)
    base.update(kw)
    return argparse.Namespace(**base)


def test_sequence_log_prob_sums_only_the_tokens_the_model_wrote(tmp_path, tok):
    path = tmp_path / "pairs.jsonl"
    write_pairs(path, sampled_pairs(tok).pairs)
    pairs = PreferenceDataset(str(path), tok).pairs
    model = tiny_model()
    args = runtime(pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    with torch.no_grad():
        got = train_dpo.sequence_logps(model, pairs, args)
        for i, p in enumerate(pairs):
            for ids, mask, value in ((p.chosen_ids, p.chosen_mask, got.chosen[i]),
                                     (p.rejected_ids, p.rejected_mask, got.rejected[i])):
                full = torch.tensor([p.prompt_ids + ids])
                logps = model(full).logits[0, :-1].float().log_softmax(-1)
                start = len(p.prompt_ids)
                want = sum(logps[start + j - 1, t].item() for j, (t, m) in enumerate(zip(ids, mask)) if m)
                assert value.item() == pytest.approx(want, abs=1e-3)
            assert got.chosen_tokens[i].item() == sum(p.chosen_mask)


def test_the_loss_is_dpo_plus_the_chosen_nll():
    policy = train_dpo.PairLogps(torch.tensor([-10.0, -4.0]), torch.tensor([-12.0, -3.0]), torch.tensor([5.0, 2.0]))
    ref = torch.tensor([[-11.0, -11.0], [-4.0, -4.0]])
    out = train_dpo.dpo_loss(policy, ref, beta=0.5, sft_weight=0.1)
    # pair 0: margin 0.5 * ((-10 + 11) - (-12 + 11)) = 1; pair 1: 0.5 * (0 - 1) = -0.5
    assert out.margin.tolist() == pytest.approx([1.0, -0.5])
    assert out.loss.tolist() == pytest.approx([math.log1p(math.exp(-1.0)) + 0.1 * 2.0,
                                               math.log1p(math.exp(0.5)) + 0.1 * 2.0])
    same = train_dpo.dpo_loss(policy, torch.stack([policy.chosen, policy.rejected], 1), beta=0.1, sft_weight=0.0)
    assert same.loss.tolist() == pytest.approx([math.log(2)] * 2)  # the reference itself: log 2


def dpo_argv(tmp_path, data, save_dir, *extra):
    return ["--data_path", str(data), "--from_weight", "start", "--save_dir", str(save_dir),
            "--hidden_size", "64", "--num_hidden_layers", "2", "--dtype", "float32", "--val_share", "0",
            "--batch_size", "2", "--micro_batch", "1", "--warmup_steps", "0", "--log_interval", "1",
            "--eval_interval", "0", *extra]


def write_sft(path, n=5):
    """n small conversations of different lengths, in the SFT format."""
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            conv = [{"role": "user", "content": "hello " * (i + 1)},
                    {"role": "assistant", "content": f"answer {i} " + "ok " * (2 * i + 1)}]
            f.write(json.dumps({"conversations": conv}) + "\n")


@pytest.mark.parametrize("rehearse", [False, True])
def test_training_separates_the_pairs_and_a_resumed_run_equals_an_uninterrupted_one(tmp_path, tok,
                                                                                       monkeypatch, rehearse):
    data = tmp_path / "pairs.jsonl"
    write_pairs(data, sampled_pairs(tok).pairs)
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        save_minimind(tiny_model(), str(tmp_path / d / "start_64.pth"))
    common = ["--epochs", "3", "--learning_rate", "5e-3", "--sft_weight", "0", "--save_interval", "2"]
    if rehearse:  # a resumed run must draw the same rehearsed conversations at each step
        write_sft(tmp_path / "sft.jsonl")
        common += ["--rehearse_path", str(tmp_path / "sft.jsonl"), "--rehearse_per_step", "2"]
    assert train_dpo.train(train_dpo.parse_args(dpo_argv(tmp_path, data, tmp_path / "a", *common)))
    log = [json.loads(line) for line in open(tmp_path / "a" / "full_sft_dpo_64_log.jsonl", encoding="utf-8")]
    steps = [r for r in log if "accuracy" in r]
    assert len(steps) == 6 and steps[-1]["accuracy"] == 1.0 and steps[-1]["margin"] > steps[0]["margin"]
    assert all(("rehearse_nll" in r) == rehearse for r in steps)
    if rehearse:
        assert steps[-1]["rehearse_nll"] < steps[0]["rehearse_nll"]

    class Killed(Exception):
        pass

    save = train_dpo.save_resume

    def save_then_die(path, model, optimizer, step, extra=None):  # killed right after the step-2 save
        save(path, model, optimizer, step, extra)
        if step == 2:
            raise Killed

    monkeypatch.setattr(train_dpo, "save_resume", save_then_die)
    with pytest.raises(Killed):
        train_dpo.train(train_dpo.parse_args(dpo_argv(tmp_path, data, tmp_path / "b", *common)))
    monkeypatch.setattr(train_dpo, "save_resume", save)
    assert not (tmp_path / "b" / "full_sft_dpo_64.pth").exists()
    assert train_dpo.train(train_dpo.parse_args(dpo_argv(tmp_path, data, tmp_path / "b", *common,
                                                         "--from_resume", "1")))
    a = torch.load(tmp_path / "a" / "full_sft_dpo_64.pth")
    b = torch.load(tmp_path / "b" / "full_sft_dpo_64.pth")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_rehearsal_adds_the_mean_token_nll_of_the_steps_conversations(tmp_path, tok):
    """Micro-batches of different lengths add up to the gradient of one mean over all the step's label
    tokens, times the weight; the draw depends on the step alone."""
    data, sft = tmp_path / "pairs.jsonl", tmp_path / "sft.jsonl"
    write_pairs(data, sampled_pairs(tok).pairs)
    write_sft(sft)
    save_minimind(tiny_model(), str(tmp_path / "start_64.pth"))
    args = train_dpo.parse_args(dpo_argv(tmp_path, data, tmp_path, "--rehearse_path", str(sft),
                                         "--rehearse_per_step", "3", "--rehearse_weight", "0.5"))
    run = train_dpo.setup(args)
    run.step = 4
    drawn = train_dpo.rehearsal_batch(run)
    assert len(set(drawn)) == 3 and drawn == train_dpo.rehearsal_batch(run)
    run.step = 5
    assert train_dpo.rehearsal_batch(run) != drawn or len(run.rehearse) == 3
    run.step = 4
    train_dpo.rehearse_step(run)  # micro_batch 1: three backward passes
    got = {n: p.grad.clone() for n, p in run.model.named_parameters() if p.grad is not None}
    run.model.zero_grad(set_to_none=True)
    input_ids, labels = sft_collate([run.rehearse[i] for i in drawn], tok.pad_token_id)
    (0.5 * run.model(input_ids, labels=labels).loss).backward()
    want = {n: p.grad for n, p in run.model.named_parameters() if p.grad is not None}
    assert got.keys() == want.keys()
    for n in want:
        torch.testing.assert_close(got[n], want[n], rtol=1e-4, atol=1e-6)
    assert run.window["rehearse_nll"] == pytest.approx(run.model(input_ids, labels=labels).loss.item(), rel=1e-4)


def test_validation_holds_out_whole_prompts():
    pairs = [argparse.Namespace(prompt=f"q{i // 3}") for i in range(30)]
    train, val = train_dpo.split_pairs(pairs, 0.2, seed=0)
    assert sorted(train + val) == list(range(30)) and len(val) == 6
    assert not {pairs[i].prompt for i in train} & {pairs[i].prompt for i in val}


def test_only_the_turn_where_the_sides_first_differ_is_scored():
    from dataset.lm_dataset import PreferencePair
    # turn 1 (mask 1) is the same, tool result (mask 0), turn 2 differs at its second token, tool result, turn 3
    chosen_ids, chosen_mask = [5, 6, 2, 9, 9, 7, 8, 2, 9, 4, 2], [1, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1]
    rejected_ids, rejected_mask = [5, 6, 2, 9, 9, 7, 3, 3, 2, 9, 9, 4, 2], [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1]
    pair = PreferencePair("q", "chained", "gt_missing", [1], chosen_ids, chosen_mask, rejected_ids, rejected_mask)
    cut = train_dpo.cut_after_divergent_turn(pair)
    assert cut.chosen_mask == [1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0]
    assert cut.rejected_mask == [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0]
    assert cut.chosen_ids == chosen_ids and cut.rejected_ids == rejected_ids
    # one side a prefix of the other (the right one stops, the failed one calls again): the extra turn is scored
    stop = PreferencePair("q", "no_tool", "needless_call", [1], [5, 2], [1, 1], [5, 2, 9, 8, 2], [1, 1, 0, 1, 1])
    cut = train_dpo.cut_after_divergent_turn(stop)
    assert cut.chosen_mask == [1, 1] and cut.rejected_mask == [1, 1, 0, 1, 1]
