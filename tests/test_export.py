"""Exported transformers directories: MiniMind's own layout loads with the Auto classes in a fresh process
that has never imported this project, and the Qwen3 layout keeps YaRN."""
import json
import os
import subprocess
import sys

import torch
from transformers import AutoModelForCausalLM

from conftest import tiny_model
from model.model_minimind import YARN, load_model_dir, save_minimind
from scripts import convert_model

FRESH_PROCESS = """
import importlib.util, json, sys
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
assert importlib.util.find_spec("model") is None, "the project is importable here"
path, ids = sys.argv[1], json.loads(sys.argv[2])
model = AutoModelForCausalLM.from_pretrained(path, trust_remote_code=True, dtype=torch.float32).eval()
tok = AutoTokenizer.from_pretrained(path, trust_remote_code=True)
with torch.no_grad():
    logits = model(torch.tensor([ids])).logits
print(json.dumps({"class": type(model).__name__, "logits": logits[0, -1].tolist(),
                  "encoded": tok.encode("北京天气 12.5"), "template": bool(tok.chat_template),
                  "eos": tok.eos_token_id}))
"""


def test_the_minimind_layout_loads_with_the_auto_classes_in_a_fresh_process(tmp_path, tok):
    model = tiny_model(seed=3, use_moe=True)  # a shape Qwen3 cannot hold
    save_minimind(model, str(tmp_path / "full_sft_64_moe.pth"), dtype=torch.float32)
    out_dir = tmp_path / "hf"
    convert_model.main(["--weight", "full_sft", "--save_dir", str(tmp_path), "--hidden_size", "64",
                        "--num_hidden_layers", "2", "--use_moe", "1", "--format", "minimind",
                        "--out_dir", str(out_dir)])
    config = json.loads((out_dir / "config.json").read_text())
    assert config["auto_map"]["AutoModelForCausalLM"] == "model_minimind.MiniMindForCausalLM"
    assert (out_dir / "model_minimind.py").exists() and "auto_map" not in model.config.to_dict()
    ids = [5, 17, 300, 42, 9]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-c", FRESH_PROCESS, str(out_dir), json.dumps(ids)], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    with torch.no_grad():
        ref = model(torch.tensor([ids])).logits[0, -1]
    assert got["class"] == "MiniMindForCausalLM"
    assert torch.allclose(torch.tensor(got["logits"]), ref, atol=1e-5)
    assert got["encoded"] == tok.encode("北京天气 12.5") and got["template"] and got["eos"] == tok.eos_token_id
    # ... and in this process too, beside the registered project class, and through load_model_dir
    here = AutoModelForCausalLM.from_pretrained(out_dir, trust_remote_code=True, dtype=torch.float32).eval()
    with torch.no_grad():
        assert torch.allclose(here(torch.tensor([ids])).logits[0, -1], ref, atol=1e-5)
        assert torch.allclose(load_model_dir(str(out_dir))(torch.tensor([ids])).logits[0, -1], ref, atol=1e-5)


def test_the_qwen3_export_keeps_yarn(tmp_path):
    model = tiny_model(seed=4, inference_rope_scaling=True, max_position_embeddings=32768)
    plain = tiny_model(seed=4)
    ids = torch.randint(3, 6400, (1, 40))
    with torch.no_grad():
        ref = model(ids).logits
        assert not torch.allclose(ref, plain(ids).logits, atol=1e-4)  # the scaling changes the logits
    save_minimind(model, str(tmp_path / "full_sft_64.pth"), dtype=torch.float32)
    out_dir = tmp_path / "qwen3"
    convert_model.main(["--weight", "full_sft", "--save_dir", str(tmp_path), "--hidden_size", "64",
                        "--num_hidden_layers", "2", "--inference_rope_scaling", "1",
                        "--max_position_embeddings", "32768", "--out_dir", str(out_dir)])
    rope = json.loads((out_dir / "config.json").read_text())["rope_parameters"]
    assert rope["rope_type"] == "yarn" and all(rope[k] == v for k, v in YARN.items())
    qwen3 = AutoModelForCausalLM.from_pretrained(out_dir, dtype=torch.float32).eval()
    back = load_model_dir(str(out_dir))
    assert type(qwen3).__name__ == "Qwen3ForCausalLM" and back.config.inference_rope_scaling
    with torch.no_grad():
        assert torch.allclose(qwen3(ids).logits, ref, atol=1e-5)  # transformers' YaRN is the same function
        assert torch.allclose(back(ids).logits, ref, atol=1e-6)
