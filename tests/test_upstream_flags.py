"""Upstream MiniMind's command lines: each of its flags works here, or stops with what to use instead."""
import argparse
import json
import sys
import types

import pytest
import torch

import trainer.train_agent as train_agent
from conftest import tiny_model
from model.model_minimind import save_minimind
from scripts import eval_toolcall
from test_agent import read_metrics, tiny_setup
from trainer import train_full_sft, train_pretrain
from trainer.trainer_utils import model_source, open_log


def refused(parse, argv, capsys, *words):
    with pytest.raises(SystemExit) as e:
        parse(argv)
    assert e.value.code == 2
    message = capsys.readouterr().err
    assert all(w in message for w in words), message


def test_flags_that_are_not_offered_say_what_to_use_instead(capsys):
    refused(train_agent.parse_args, ["--max_seq_len", "1024"], capsys, "--max_seq_len", "--max_total_len",
            "--max_gen_len")
    refused(train_agent.parse_args, ["--use_compile", "1"], capsys, "--use_compile 1", "train_full_sft.py take it")
    for parse in (train_agent.parse_args, train_full_sft.parse_args, train_pretrain.parse_args):
        args = parse(["--use_compile", "0", "--num_workers", "8", "--wandb_project", "p"])
        assert args.use_compile == 0 and args.num_workers == 8 and not args.use_wandb
    for parse in (train_full_sft.parse_args, train_pretrain.parse_args):  # the trainers that compile
        assert parse(["--use_compile", "1"]).use_compile == 1
        with pytest.raises(SystemExit):
            parse(["--use_compile", "2"])
    assert train_full_sft.parse_args(["--max_seq_len", "512"]).max_seq_len == 512  # its own length


def test_evals_upstream_flags():
    args = eval_toolcall.parse_args(["--max_new_tokens", "64", "--stream", "1", "--show_speed", "1"])
    assert (args.max_gen_len, args.stream, args.show_speed) == (64, 1, 1)
    assert eval_toolcall.parse_args(["--stream"]).stream == 1
    assert eval_toolcall.parse_args([]).stream == 0


def test_load_from_a_tokenizer_folder_means_the_native_weights(tmp_path):
    args = argparse.Namespace(load_from="model", weight="full_sft", tokenizer_path=None)
    assert model_source(args) == "full_sft" and args.tokenizer_path == "model"  # upstream's reading
    (tmp_path / "agent_768.pth").write_bytes(b"")
    assert model_source(argparse.Namespace(load_from=str(tmp_path / "agent_768.pth"), weight="x")).endswith(".pth")
    (tmp_path / "config.json").write_text("{}")
    assert model_source(argparse.Namespace(load_from=str(tmp_path), weight="x")) == str(tmp_path)
    with pytest.raises(FileNotFoundError, match="--load_from ../model: no such directory"):
        model_source(argparse.Namespace(load_from="../model", weight="x"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="neither a model"):
        model_source(argparse.Namespace(load_from=str(empty), weight="x"))


def test_eval_with_upstreams_load_from_and_show_speed(tmp_path, capsys):
    save_minimind(tiny_model(), str(tmp_path / "full_sft_64.pth"), dtype=torch.float32)
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"prompt": "你好", "category": "no_tool", "gt": []}, ensure_ascii=False) + "\n",
                     encoding="utf-8")
    rep = eval_toolcall.main(["--load_from", "model", "--save_dir", str(tmp_path), "--hidden_size", "64",
                              "--num_hidden_layers", "2", "--cases", str(cases), "--max_new_tokens", "8",
                              "--show_speed", "1", "--device", "cpu"])
    out = capsys.readouterr().out
    assert rep["summary"]["cases"] == 1 and "model-written tokens in" in out and "tokens/s" in out
    assert str(tmp_path / "full_sft_64") in out  # the weights named by --weight were evaluated


class FakeWandb(types.ModuleType):
    """Stands in for wandb: records what a run is given."""

    def __init__(self):
        super().__init__("wandb")
        self.inits, self.logged, self.finished = [], [], 0

    def init(self, **kw):
        self.inits.append(kw)
        return self

    def log(self, numbers, step):
        self.logged.append((step, numbers))

    def finish(self):
        self.finished += 1


def test_use_wandb_logs_every_record_offline_or_says_how_to_get_it(tmp_path, tok, monkeypatch):
    args = tiny_setup(tmp_path, tok) + ["--max_steps", "2", "--use_wandb", "--wandb_project", "agent-test"]
    monkeypatch.setitem(sys.modules, "wandb", None)  # not installed
    with pytest.raises(SystemExit, match="pip install wandb.*agent_64_metrics.jsonl"):
        train_agent.main(args)
    fake = FakeWandb()
    monkeypatch.setitem(sys.modules, "wandb", fake)
    train_agent.main(args)
    [init] = fake.inits
    assert init["mode"] == "offline" and init["project"] == "agent-test"
    records = read_metrics(tmp_path / "out")
    assert [step for step, _ in fake.logged] == [r["step"] for r in records] == [1, 2]
    assert fake.logged[0][1]["reward"] == records[0]["reward"] and "prompts" not in fake.logged[0][1]
    assert fake.finished == 1


def test_a_tracked_log_keeps_the_file_and_the_resume_rule(tmp_path, monkeypatch):
    fake = FakeWandb()
    monkeypatch.setitem(sys.modules, "wandb", fake)
    path = str(tmp_path / "x_log.jsonl")
    args = argparse.Namespace(use_wandb=True, wandb_project="p")
    log = open_log(path, None, args)
    log.write(json.dumps({"step": 1, "loss": 2.5, "stepped": True}) + "\n")
    log.close()
    assert fake.logged == [(1, {"loss": 2.5})] and open(path).read().count("\n") == 1
