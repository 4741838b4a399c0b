"""The pretraining stage: held-out-clean text, packed blocks, and a resumed run equal to an uninterrupted one."""
import json
import re
import shutil
import signal

import pytest
import torch

from dataset.lm_dataset import DataError, PretrainDataset
from scripts import make_pretrain_data as mp
from scripts.make_agent_data import TEMPLATE_TABLES, is_eval_number
from trainer.trainer_utils import load_tokenizer


@pytest.fixture(scope="module")
def docs():
    return [d for d in mp.build(400, seed=3) if d]


def test_pretraining_text_has_no_eval_number_or_phrasing(docs):
    kinds_seen = sum(1 for d in docs if "{\"expression\"" in d or "Expression:" in d or "算式" in d)
    assert kinds_seen > 0 and len(docs) > 350
    mp.check_docs(docs)  # the builder's own check
    numbers = [x for d in docs for x in mp.text_numbers(d)]
    assert len(numbers) > 1000 and not any(is_eval_number(x) for x in numbers)
    fragments = mp.eval_fragments()
    assert any("眼下" in f for f in fragments)  # the eval phrasings' own words are guarded
    assert not any(mp.held_out_problem(d, fragments) for d in docs)


def test_the_guard_refuses_eval_numbers_and_phrasings():
    eval_number = next(x for x in range(1000, 2000) if is_eval_number(x))
    train_number = next(x for x in range(1000, 2000) if not is_eval_number(x))
    with pytest.raises(mp.HeldOutError, match="evaluation numbers"):
        mp.check_docs([f"ok {train_number}", f"价格是 {eval_number:,} 元"])
    phrasing = TEMPLATE_TABLES["weather"]["eval"]["en"][2].format(city="Paris")
    assert phrasing.startswith("Could you tell me the current weather")
    with pytest.raises(mp.HeldOutError, match="document 1 has evaluation phrasing"):
        mp.check_docs([phrasing])
    # a piece the SFT phrasings share ("exchange rate") or a short one ("for me") is not held out
    mp.check_docs([f"The exchange rate is {train_number}, says the table for me."])


def expression_factors(line: str, next_line: str) -> list:
    """The factors of the first expression on a drill's line, or on the line after it (the JSON form)."""
    expr = re.search(r"(?:算式 |expression\": \"|expression is )([\d.*]+)", line + next_line)
    return expr.group(1).rstrip(".").split("*")


def test_quantity_drills_say_which_numbers_the_expression_multiplies():
    """The quantity drills (off by default) are held-out clean like the rest, state an amount or a count and a
    price, and the expression beside them multiplies exactly the numbers stated (and a rate); a weight of 0
    leaves every other document as it was."""
    assert mp.build(60, seed=3) == mp.build(60, seed=3, quantity_weight=0.0)
    docs = [d for d in mp.build(300, seed=5, quantity_weight=300.0) if d]  # about three in four are drills
    mp.check_docs(docs)
    lines = [line for d in docs for line in d.split("\n")]
    said = 0
    for i, line in enumerate(lines):
        m = re.search(r"(?:金额 |the amount )(\d+)", line)
        if m:  # an amount: the expression is that amount times the rate, no count
            factors = expression_factors(line, lines[i + 1] if i + 1 < len(lines) else "")
            assert factors[0] == m.group(1) and len(factors) == 2, line
            said += 1
        m = re.search(r"(?:单价 |the price )(\d+)(?:,数量 | and the count )(\d+)", line)
        if m:  # a price and a count: both, then the rate
            factors = expression_factors(line, lines[i + 1] if i + 1 < len(lines) else "")
            assert factors[:2] == [m.group(1), m.group(2)] and len(factors) == 3, line
            said += 1
    assert said > 100
    with pytest.raises(SystemExit, match="--quantity_weight"):
        mp.main(["--quantity_weight", "-1", "--n_docs", "1"])


def write_docs(tmp_path, docs):
    path = tmp_path / "pt.jsonl"
    path.write_text("".join(json.dumps({"text": d}, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    return str(path)


def test_blocks_pack_documents_with_end_of_text(tmp_path, docs):
    tok = load_tokenizer()
    ds = PretrainDataset(write_docs(tmp_path, docs[:50]), tok, block_size=64)
    eot = tok.convert_tokens_to_ids("<|endoftext|>")
    stream = []
    for d in docs[:50]:
        stream += tok(d, add_special_tokens=False)["input_ids"] + [eot]
    assert ds.blocks.shape == (len(stream) // 64, 64)
    assert ds.blocks.flatten().tolist() == stream[:ds.blocks.numel()]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"txt": "oops"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.jsonl:2: field 'text'"):
        PretrainDataset(str(bad), tok, block_size=8)


class Killed(Exception):
    pass


def test_a_resumed_pretraining_run_equals_an_uninterrupted_one(tmp_path, docs, monkeypatch):
    import trainer.train_pretrain as tp

    data = write_docs(tmp_path, docs)
    common = ["--data_path", data, "--hidden_size", "64", "--num_hidden_layers", "1", "--max_seq_len", "64",
              "--batch_size", "4", "--val_blocks", "4", "--log_interval", "1", "--eval_interval", "100",
              "--warmup_steps", "2", "--dtype", "float32", "--max_steps", "6", "--save_interval", "3"]
    tp.train(tp.parse_args(common + ["--save_dir", str(tmp_path / "a")]))

    save = tp.save_resume

    def save_then_die(path, model, optimizer, step, extra=None):  # the process is killed right after step 3
        save(path, model, optimizer, step, extra)
        if step == 3:
            raise Killed

    monkeypatch.setattr(tp, "save_resume", save_then_die)
    with pytest.raises(Killed):
        tp.train(tp.parse_args(common + ["--save_dir", str(tmp_path / "b")]))
    monkeypatch.setattr(tp, "save_resume", save)
    assert not (tmp_path / "b" / "pretrain_64.pth").exists()
    tp.train(tp.parse_args(common + ["--save_dir", str(tmp_path / "b"), "--from_resume", "1"]))
    a = torch.load(tmp_path / "a" / "pretrain_64.pth")
    b = torch.load(tmp_path / "b" / "pretrain_64.pth")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_cold_start_marks_a_stage_done_only_when_it_finished(tmp_path, monkeypatch):
    """A signal in the middle of a stage: the stage is not marked done, the command exits with 128 + the
    signal's number (so `cold_start.py && train_agent.py` stops there), and --from_resume 1 goes on."""
    from scripts import cold_start
    from trainer import trainer_utils
    calls = []

    def runner(name, finished):
        def run(args, resume):
            calls.append((name, resume))
            if not finished[name]:  # what a trainer does: its handler records the signal, the loop stops
                trainer_utils.on_stop_signal(lambda signum: None)
                signal.raise_signal(signal.SIGTERM)
            return finished[name]
        return run

    monkeypatch.setattr(trainer_utils, "_STOP", {"signum": None})
    keep = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}  # pytest's, restored below
    finished = {"data": True, "pretrain": False, "sft": True, "rft": True}  # a signal stops pretraining
    monkeypatch.setattr(cold_start, "RUNNERS", {s: runner(s, finished) for s in cold_start.STAGES})
    try:
        status = cold_start.main(["--save_dir", str(tmp_path), "--rft_round", "1"])
    finally:
        for s, h in keep.items():
            signal.signal(s, h)
    assert status == 128 + signal.SIGTERM
    state = json.load(open(tmp_path / "cold_start.json", encoding="utf-8"))
    assert state["done"] == ["data"] and [c[0] for c in calls] == ["data", "pretrain"]  # sft never started
    finished["pretrain"] = True
    calls.clear()
    assert cold_start.main(["--save_dir", str(tmp_path), "--from_resume", "1", "--rft_round", "1"]) == 0
    state = json.load(open(tmp_path / "cold_start.json", encoding="utf-8"))
    assert state["done"] == ["data", "pretrain", "sft", "rft"]
    assert [c[0] for c in calls] == ["pretrain", "sft", "rft"]


def test_cold_start_round_reads_the_sft_checkpoint_and_writes_full_sft(tmp_path, monkeypatch):
    """Stage 3 writes full_sft_r0 and the round turns it into full_sft; without a round stage 3 writes full_sft.
    A resumed round keeps its finished sample file and resumes its SFT only when that SFT left a checkpoint."""
    from scripts import cold_start, rejection_sample
    from trainer import train_full_sft
    sampled, trained = [], []

    def fake_sample(argv):
        sampled.append(argv)
        out = argv[argv.index("--out") + 1]
        open(out, "w").close()

    def fake_train(args):
        trained.append(args)

    monkeypatch.setattr(rejection_sample, "main", fake_sample)
    monkeypatch.setattr(train_full_sft, "train", fake_train)
    for stage in ("data", "pretrain"):
        monkeypatch.setitem(cold_start.RUNNERS, stage, lambda args, resume: True)
    cold_start.main(["--save_dir", str(tmp_path), "--prefix", "t_", "--rft_round", "1"])
    sft, rft = trained
    assert (sft.from_weight, sft.save_weight) == ("t_pretrain", "t_full_sft_r0")
    assert (rft.from_weight, rft.save_weight) == ("t_full_sft_r0", "t_full_sft")
    assert rft.data_path == str(tmp_path / "t_rft_samples.jsonl") and rft.mix_ratio == 0.5
    assert sampled[0][sampled[0].index("--weight") + 1] == "t_full_sft_r0"

    sampled.clear(), trained.clear()  # the round again, resumed: the samples are kept, no SFT checkpoint
    cold_start.main(["--save_dir", str(tmp_path), "--prefix", "t_", "--stages", "rft", "--from_resume", "1",
                     "--rft_round", "1"])
    state = json.load(open(tmp_path / "t_cold_start.json", encoding="utf-8"))
    assert state["done"] == ["data", "pretrain", "sft", "rft"]  # done already: nothing ran
    assert not sampled and not trained
    (tmp_path / "t_cold_start.json").unlink()
    cold_start.main(["--save_dir", str(tmp_path), "--prefix", "t_", "--stages", "rft", "--from_resume", "1",
                     "--rft_round", "1"])
    assert not sampled and len(trained) == 1 and trained[0].from_resume == 0

    trained.clear()
    cold_start.main(["--save_dir", str(tmp_path / "b")])  # the default: no round
    assert [(a.from_weight, a.save_weight) for a in trained] == [("pretrain", "full_sft")]


def test_cold_start_dpo_round_reads_the_last_checkpoint_and_writes_full_sft(tmp_path, monkeypatch):
    """Stage 5 samples pairs from the stage before it and trains DPO into full_sft; the stages in between
    get names of their own. A resumed DPO round keeps its pairs file."""
    from scripts import cold_start, rejection_sample
    from trainer import train_dpo, train_full_sft
    sampled, trained = [], []

    def fake_sample(argv):
        sampled.append(argv)
        for flag in ("--out", "--pairs_out"):
            if flag in argv:
                open(argv[argv.index(flag) + 1], "w").close()

    monkeypatch.setattr(rejection_sample, "main", fake_sample)
    monkeypatch.setattr(train_full_sft, "train", lambda args: trained.append(("sft", args)))
    monkeypatch.setattr(train_dpo, "train", lambda args: trained.append(("dpo", args)))
    for stage in ("data", "pretrain"):
        monkeypatch.setitem(cold_start.RUNNERS, stage, lambda args, resume: True)
    cold_start.main(["--save_dir", str(tmp_path), "--rft_round", "1", "--dpo_round", "1"])
    assert [(kind, a.from_weight, a.save_weight) for kind, a in trained] == [
        ("sft", "pretrain", "full_sft_r0"), ("sft", "full_sft_r0", "full_sft_rft"), ("dpo", "full_sft_rft", "full_sft")]
    pairs = sampled[1][sampled[1].index("--pairs_out") + 1]
    assert sampled[1][sampled[1].index("--weight") + 1] == "full_sft_rft"
    assert trained[2][1].data_path == pairs == str(tmp_path / "dpo_pairs.jsonl")
    assert trained[2][1].rehearse_path == ""  # no rehearsal unless asked
    assert sampled[1][sampled[1].index("--operator_pairs") + 1] == "0"  # nor mirror pairs

    trained.clear()  # --dpo_rehearse 1: the round also learns the SFT data the data stage wrote
    cold_start.main(["--save_dir", str(tmp_path / "r"), "--dpo_round", "1", "--dpo_rehearse", "1"])
    assert trained[-1][0] == "dpo" and trained[-1][1].rehearse_path == "dataset/sft_agent.jsonl"
    trained.clear()  # --dpo_rehearse 2: the round's own right trajectories, the file its sampling wrote
    cold_start.main(["--save_dir", str(tmp_path / "a"), "--dpo_round", "1", "--dpo_rehearse", "2"])
    accepted = sampled[-1][sampled[-1].index("--out") + 1]
    assert trained[-1][1].rehearse_path == accepted == str(tmp_path / "a" / "dpo_accepted.jsonl")
    sampled.clear()
    cold_start.main(["--save_dir", str(tmp_path / "o"), "--dpo_round", "1", "--dpo_operator_pairs", "1"])
    argv = sampled[-1]
    assert argv[argv.index("--operator_pairs") + 1] == "1" and "--pairs_out" in argv

    sampled.clear(), trained.clear()  # DPO only, resumed after its sampling: the pairs are kept
    cold_start.main(["--save_dir", str(tmp_path / "b"), "--dpo_round", "1"])
    assert [(kind, a.from_weight, a.save_weight) for kind, a in trained] == [
        ("sft", "pretrain", "full_sft_r0"), ("dpo", "full_sft_r0", "full_sft")]
    (tmp_path / "b" / "cold_start.json").unlink()
    sampled.clear(), trained.clear()
    cold_start.main(["--save_dir", str(tmp_path / "b"), "--dpo_round", "1", "--stages", "dpo", "--from_resume", "1"])
    assert not sampled and [(kind, a.from_resume) for kind, a in trained] == [("dpo", 0)]


def test_cold_start_rejects_an_unknown_stage(capsys):
    from scripts import cold_start
    with pytest.raises(SystemExit):
        cold_start.parse_args(["--stages", "sft,rlhf"])
    assert "rlhf" in capsys.readouterr().err


@pytest.mark.skipif(not any(shutil.which(c) for c in ("g++", "c++", "clang++")), reason="no C++ compiler")
def test_use_compile_trains_the_same_model_as_eager(tmp_path, docs):
    """--use_compile 1 runs the training forward and backward through torch.compile. One training step gives
    the eager step's loss and update, up to the fused kernels' rounding: compared after a plain SGD step,
    where each weight moves by lr * its gradient, so the tolerance scales with the step itself (AdamW would
    turn rounding noise in a near-zero gradient into a full-size update, and how much noise depends on the
    CPU's kernels). The run through the command line saves the model's own keys, no compile wrapper."""
    import copy
    from types import SimpleNamespace

    import trainer.train_pretrain as tp
    from trainer.trainer_utils import compile_for_training, init_model

    data = write_docs(tmp_path, docs[:120])
    common = ["--data_path", data, "--hidden_size", "64", "--num_hidden_layers", "1", "--max_seq_len", "32",
              "--batch_size", "4", "--val_blocks", "4", "--log_interval", "1", "--eval_interval", "100",
              "--warmup_steps", "1", "--dtype", "float32", "--max_steps", "2"]
    args = tp.parse_args(common + ["--save_dir", str(tmp_path / "eager")])
    tp.train(args)
    tp.train(tp.parse_args(common + ["--save_dir", str(tmp_path / "compiled"), "--use_compile", "1"]))
    a = torch.load(tmp_path / "eager" / "pretrain_64.pth")
    b = torch.load(tmp_path / "compiled" / "pretrain_64.pth")
    assert a.keys() == b.keys() and not any("_orig_mod" in k for k in b)
    first = [json.loads(open(tmp_path / d / "pretrain_64_log.jsonl").readline())["loss"]
             for d in ("eager", "compiled")]
    assert first[0] == pytest.approx(first[1], rel=1e-4)  # step 1: the same weights, the same loss

    torch.manual_seed(0)
    eager, _ = init_model(args, "none", args.save_dir)
    compiled = copy.deepcopy(eager)
    start = {k: v.clone() for k, v in eager.state_dict().items()}
    x = torch.randint(0, eager.config.vocab_size, (4, 32))
    step = SimpleNamespace(device="cpu", dtype="float32", grad_clip=1.0)
    lr = 0.1
    loss_e, norm_e = tp.train_step(eager, torch.optim.SGD(eager.parameters(), lr=lr), x, lr, step)
    loss_c, norm_c = tp.train_step(compiled, torch.optim.SGD(compiled.parameters(), lr=lr), x, lr, step,
                                   compile_for_training(compiled, 1, "cpu"))
    assert loss_c == pytest.approx(loss_e, rel=1e-4) and norm_c == pytest.approx(norm_e, rel=1e-3)
    moved = 0
    for k, w0 in start.items():
        update_e, update_c = eager.state_dict()[k] - w0, compiled.state_dict()[k] - w0
        scale = update_e.abs().max().item()
        moved += scale > 0
        assert (update_e - update_c).abs().max().item() <= 1e-3 * scale + 1e-9, k
    assert moved > len(start) // 2  # the step moved the weights: the comparison compares something


def test_use_compile_without_a_compiler_says_so(monkeypatch):
    from trainer import trainer_utils

    model = torch.nn.Linear(2, 2)
    assert trainer_utils.compile_for_training(model, 0, "cpu") is model  # off: the model itself
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setattr(trainer_utils.shutil, "which", lambda name: None)
    with pytest.raises(trainer_utils.CompileUnavailable, match="--use_compile 1: .* C\\+\\+ compiler"):
        trainer_utils.compile_for_training(model, 1, "cpu")


def test_cold_start_passes_the_generator_flags_and_the_seeds(tmp_path, monkeypatch):
    """Stage 1 hands --state_numbers and --max_count to make_agent_data.py (the defaults: the shipped data);
    --seed seeds the data and the pretraining, --sft_seed (default --seed) SFT and the rounds after it."""
    from scripts import cold_start, make_agent_data, make_pretrain_data, rejection_sample
    from trainer import train_dpo, train_full_sft, train_pretrain
    made, trained = [], []

    def fake_sample(argv):
        trained.append(("sample", int(argv[argv.index("--seed") + 1])))
        for flag in ("--out", "--pairs_out"):
            open(argv[argv.index(flag) + 1], "w").close()

    monkeypatch.setattr(make_agent_data, "main", lambda argv: made.append(argv))
    monkeypatch.setattr(make_pretrain_data, "main", lambda argv: None)
    monkeypatch.setattr(rejection_sample, "main", fake_sample)
    for module, name in ((train_pretrain, "pretrain"), (train_full_sft, "sft"), (train_dpo, "dpo")):
        monkeypatch.setattr(module, "train", lambda args, name=name: trained.append((name, args.seed)))
    cold_start.main(["--save_dir", str(tmp_path / "d"), "--state_numbers", "2", "--max_count", "99"])
    cold_start.main(["--save_dir", str(tmp_path / "e")])
    wide, default = (make_agent_data.parse_args(argv) for argv in made)
    assert (wide.state_numbers, wide.max_count) == (2, 99)
    assert (default.state_numbers, default.max_count, default.seed) == (0, make_agent_data.MAX_COUNT, 42)

    made.clear(), trained.clear()
    cold_start.main(["--save_dir", str(tmp_path / "f"), "--sft_seed", "7", "--dpo_round", "1"])
    assert make_agent_data.parse_args(made[0]).seed == 42
    assert trained == [("pretrain", 42), ("sft", 7), ("sample", 7), ("dpo", 7)]
