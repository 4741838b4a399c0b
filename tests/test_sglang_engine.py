"""The SGLang rollout engine against the project's own server, which speaks SGLang's native protocol on loopback
(/generate, /update_weights_from_disk); and the Qwen3-layout export SGLang loads."""
import json
import threading
import time
import urllib.request

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from dataset.lm_dataset import encode, render
from model.model_minimind import (
    MiniMindConfig, MiniMindForCausalLM, load_model_dir, positions_from_mask, save_minimind, save_qwen3_dir,
)
from scripts import convert_model
from scripts.serve_openai_api import WeightsLock
from test_agent import read_metrics, tiny_setup, weather_prompt
from test_server import free_port, serve
from trainer import train_agent
from trainer.fast_engine import TorchRolloutEngine, compute_per_token_logps
from trainer.sglang_engine import SGLangError, SGLangRolloutEngine, post_json
from trainer.train_agent import TOOLS
from trainer.trainer_utils import load_tokenizer

EOS, PAD = 2, 0  # <|im_end|> and <|endoftext|> of the project's tokenizer (test_tokenizer.py checks them)
EOS_AT = 10  # the test model writes EOS as the token at this position (at once after a longer prompt)


class EosAtModel(MiniMindForCausalLM):
    """A tiny random MiniMind whose logits predicting position EOS_AT or later favour EOS by +50, so where a
    completion stops is known in advance while the tokens before it are sampled. Same weights as MiniMind."""

    def forward(self, input_ids, attention_mask=None, cache=None, logits_to_keep=0, **kwargs):
        past = cache.get_seq_length() if cache is not None else 0
        out = super().forward(input_ids, attention_mask=attention_mask, cache=cache,
                              logits_to_keep=logits_to_keep, **kwargs)
        pos = positions_from_mask(attention_mask, past, input_ids.shape[1], input_ids.device)  # (B or 1, T)
        pos = pos[:, pos.shape[1] - out.logits.shape[1]:]  # the positions whose logits were kept
        out.logits[..., EOS] += 50.0 * (pos + 1 >= EOS_AT).float()  # logits at t predict the token at t + 1
        return out


def eos_model(seed):
    torch.manual_seed(seed)
    return EosAtModel(MiniMindConfig(hidden_size=64, num_hidden_layers=2)).eval()


def plain_model(seed):
    torch.manual_seed(seed)
    return MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2)).eval()


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


@pytest.fixture(scope="module")
def served(tok):
    """The project's server on loopback with a tiny EosAtModel (fp32); yields (base_url, the served model)."""
    model = eos_model(seed=100)
    server, url = serve(model, tok)
    yield url[:-len("/v1")], model
    server.should_exit = True


def engine_for(model, base_url, tmp_path):
    return SGLangRolloutEngine(model, EOS, base_url, str(tmp_path / "policy"), dtype="float32", timeout=60,
                               retry_delays=())


def prompts_of(tok):
    chat = encode(tok, render(tok, weather_prompt(), TOOLS, add_generation_prompt=True))
    return [chat, [1, 50, 60, 70], [1, 5]]


# --- the rollout contract: ids through EOS, one sampling log-prob per id, finished flags, budgets ---------------

def test_rollout_ids_logps_and_eos(served, tok, tmp_path):
    base_url, _ = served
    model = eos_model(seed=0)
    engine = engine_for(model, base_url, tmp_path)
    prompts = prompts_of(tok)
    out = engine.rollout(prompts, max_new_tokens=12, temperature=0.8)
    # EOS is the token at position EOS_AT, or the first token after a prompt longer than that
    assert [len(ids) for ids in out.completion_ids] == [1, EOS_AT - 4 + 1, EOS_AT - 2 + 1]
    assert out.finished == [True, True, True]
    for p, ids, lps in zip(prompts, out.completion_ids, out.logps):
        assert len(ids) == len(lps) and ids[-1] == EOS and EOS not in ids[:-1]
        with torch.no_grad():
            ref = compute_per_token_logps(model, torch.tensor([p + ids]), len(ids), temperature=0.8)[0]
        assert torch.allclose(ref, torch.tensor(lps), atol=1e-4)  # log softmax(logits / T) of the sampled ids


def test_rollout_honours_max_new_tokens_and_max_length(served, tok, tmp_path):
    base_url, _ = served
    engine = engine_for(eos_model(seed=0), base_url, tmp_path)
    prompts = prompts_of(tok)
    out = engine.rollout(prompts, max_new_tokens=5, temperature=0.8)
    assert [len(ids) for ids in out.completion_ids] == [1, 5, 5]
    assert out.finished == [True, False, False]
    out = engine.rollout(prompts, max_new_tokens=5, temperature=0.8, max_length=6)
    assert [len(ids) for ids in out.completion_ids] == [0, 2, 4]  # the chat prompt alone is past max_length
    assert out.finished == [False, False, False]
    assert [len(lps) for lps in out.logps] == [0, 2, 4]


def test_greedy_rollout_equals_the_torch_engine(served, tok, tmp_path):
    base_url, _ = served
    model = eos_model(seed=0)
    prompts = prompts_of(tok)
    remote = engine_for(model, base_url, tmp_path).rollout(prompts, max_new_tokens=12, temperature=0)
    local = TorchRolloutEngine(model, EOS, PAD).rollout(prompts, max_new_tokens=12, temperature=0)
    assert remote.completion_ids == local.completion_ids and remote.finished == local.finished
    for a, b in zip(remote.logps, local.logps):
        assert torch.allclose(torch.tensor(a), torch.tensor(b), atol=1e-5)


# --- weight updates: the server samples from the weights it was last given --------------------------------------

def test_update_policy_changes_the_served_weights(served, tok, tmp_path):
    base_url, served_model = served
    a, b = eos_model(seed=0), eos_model(seed=1)
    engine = engine_for(a, base_url, tmp_path)
    prompts = prompts_of(tok)
    before = engine.rollout(prompts, max_new_tokens=8, temperature=0)  # first rollout: syncs a
    version = int(get_json(f"{base_url}/get_model_info")["weight_version"])
    engine.update_policy(b)
    info = get_json(f"{base_url}/get_model_info")
    assert info["model_path"] == str(tmp_path / "policy") and int(info["weight_version"]) == version + 1
    for name, value in b.state_dict().items():
        assert torch.equal(served_model.state_dict()[name], value), name  # fp32 on disk: an exact copy
    after = engine.rollout(prompts, max_new_tokens=8, temperature=0)
    local = TorchRolloutEngine(b, EOS, PAD).rollout(prompts, max_new_tokens=8, temperature=0)
    assert after.completion_ids == local.completion_ids
    # (tiny random models greedily repeat their last token, so the ids alone may not change; the log-probs do)
    new, old, expected = (torch.tensor(sum(r.logps, [])) for r in (after, before, local))
    assert torch.allclose(new, expected, atol=1e-5) and not torch.allclose(new, old, atol=1e-3)


def test_a_bad_weights_directory_is_refused_and_changes_nothing(served, tmp_path):
    base_url, served_model = served
    kept = {k: v.clone() for k, v in served_model.state_dict().items()}
    missing = str(tmp_path / "nowhere")
    with pytest.raises(SGLangError, match=r"HTTP 400.*nowhere"):
        post_json(f"{base_url}/update_weights_from_disk", {"model_path": missing}, timeout=10, retry_delays=())
    small = MiniMindForCausalLM(MiniMindConfig(hidden_size=32, num_hidden_layers=2))
    save_qwen3_dir(small, str(tmp_path / "small"), dtype="float32")
    with pytest.raises(SGLangError, match=r"HTTP 400.*shape"):
        post_json(f"{base_url}/update_weights_from_disk", {"model_path": str(tmp_path / "small")}, timeout=10,
                  retry_delays=())
    (tmp_path / "small" / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(SGLangError, match=r"HTTP 400.*small"):
        post_json(f"{base_url}/update_weights_from_disk", {"model_path": str(tmp_path / "small")}, timeout=10,
                  retry_delays=())
    for name, value in served_model.state_dict().items():
        assert torch.equal(kept[name], value), name


def test_weight_updates_wait_for_generations_in_flight():
    lock, order = WeightsLock(), []

    def update():
        with lock.write():
            order.append("update")

    def generate():
        with lock.read():
            order.append("new generation")

    with lock.read():  # a generation in flight
        writer = threading.Thread(target=update)
        writer.start()
        while lock.writers_waiting == 0:
            time.sleep(0.01)
        late = threading.Thread(target=generate)
        late.start()
        time.sleep(0.1)
        assert order == []  # the update waits for the generation, and holds the new one back
        order.append("generation done")
    writer.join(5)
    late.join(5)
    assert order == ["generation done", "update", "new generation"]


# --- errors name the URL, the status and the server's message ----------------------------------------------------

def test_unreachable_server_and_bad_url_give_clear_errors(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    engine = SGLangRolloutEngine(plain_model(0), EOS, url, str(tmp_path / "policy"), timeout=5,
                                 retry_delays=(0.01, 0.01))
    with pytest.raises(SGLangError, match=rf"POST {url}/update_weights_from_disk: cannot reach the server "
                                          r"after 3 tries"):
        engine.rollout([[1, 5]], max_new_tokens=4)
    with pytest.raises(ValueError, match="must start with http"):
        SGLangRolloutEngine(plain_model(0), EOS, "127.0.0.1:30000", str(tmp_path / "policy"))


def test_generate_rejects_bad_input_naming_the_field(served):
    base_url, _ = served
    url = f"{base_url}/generate"
    cases = [
        ({"input_ids": [[1, 99999]]}, r"input_ids\[0\]\[1\]"),
        ({"input_ids": [1, 2], "sampling_params": {"temperature": -1}}, r"sampling_params\.temperature"),
        ({"input_ids": [[1, 2], [1, 3]], "sampling_params": [{}]}, r"sampling_params: 1 entries for 2 prompts"),
        ({"input_ids": [[1, 2]], "sampling_params": {"top_p": 0}}, r"sampling_params\.top_p"),
        ({"sampling_params": {}}, r"input_ids or text"),
        ({"input_ids": []}, r"input_ids"),
    ]
    for payload, message in cases:
        with pytest.raises(SGLangError, match=rf"HTTP 400: {message}"):
            post_json(url, payload, timeout=10, retry_delays=())


def test_generate_answers_in_sglang_shape(served, tok):
    base_url, _ = served
    out = post_json(f"{base_url}/generate", {"input_ids": [1, 50, 60, 70], "return_logprob": True,
                                             "sampling_params": {"max_new_tokens": 12, "temperature": 0}},
                    timeout=10)
    assert isinstance(out, dict)  # a single prompt gets a single output, a batch a list
    meta = out["meta_info"]
    assert meta["finish_reason"] == {"type": "stop", "matched": EOS}
    assert meta["prompt_tokens"] == 4 and meta["completion_tokens"] == len(out["output_ids"]) == EOS_AT - 4 + 1
    assert [entry[1] for entry in meta["output_token_logprobs"]] == out["output_ids"]
    assert out["text"] == tok.decode(out["output_ids"][:-1], skip_special_tokens=True)  # stop token trimmed
    batch = post_json(f"{base_url}/generate", {"text": ["你好", "北京"], "sampling_params": {"max_new_tokens": 2}},
                      timeout=10)
    assert [o["meta_info"]["finish_reason"]["type"] for o in batch] == ["length", "length"]
    assert "output_token_logprobs" not in batch[0]["meta_info"]  # only when return_logprob is set


# --- the Qwen3-layout export SGLang loads ------------------------------------------------------------------------

def test_convert_model_writes_a_qwen3_directory(tmp_path, tok):
    model = plain_model(3)
    with torch.no_grad():  # norms away from 1, so a misplaced norm weight would show
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(0.1 * torch.randn_like(p))
    save_minimind(model, str(tmp_path / "full_sft_64.pth"), dtype=torch.float32)
    out_dir = tmp_path / "hf"
    convert_model.main(["--weight", "full_sft", "--save_dir", str(tmp_path), "--hidden_size", "64",
                        "--num_hidden_layers", "2", "--out_dir", str(out_dir)])
    config = json.loads((out_dir / "config.json").read_text())
    assert config["architectures"] == ["Qwen3ForCausalLM"] and config["torch_dtype"] == "bfloat16"
    qwen3 = AutoModelForCausalLM.from_pretrained(out_dir, dtype=torch.float32).eval()
    assert type(qwen3).__name__ == "Qwen3ForCausalLM"
    ids = torch.randint(3, 6400, (2, 16))
    with torch.no_grad():
        ref = model(ids).logits
        assert torch.allclose(qwen3(ids).logits, ref, atol=1e-5)  # transformers' Qwen3 is the same function
        assert torch.allclose(load_model_dir(str(out_dir))(ids).logits, ref, atol=1e-6)  # and back to MiniMind
    hf_tok = AutoTokenizer.from_pretrained(out_dir)
    assert hf_tok.encode("北京天气 12.5") == tok.encode("北京天气 12.5") and hf_tok.chat_template
    assert hf_tok.eos_token_id == EOS


# --- two RL steps of train_agent.py with --rollout_engine sglang -------------------------------------------------

def test_two_rl_steps_with_the_sglang_engine(tmp_path, tok):
    served_model = plain_model(seed=7)  # not the trainer's weights: the first rollout must sync them
    server, url = serve(served_model, tok)
    base_url = url[:-len("/v1")]
    try:
        args = tiny_setup(tmp_path, tok)
        train_agent.main(args + ["--rollout_engine", "sglang", "--sglang_base_url", base_url, "--max_steps", "2"])
        version = int(get_json(f"{base_url}/get_model_info")["weight_version"])
    finally:
        server.should_exit = True
    steps = [m for m in read_metrics(tmp_path / "out") if "ratio_mean" in m]
    assert [m["step"] for m in steps] == [1, 2] and all(m["stepped"] for m in steps)
    assert abs(steps[0]["ratio_mean"] - 1) < 0.01 and steps[0]["ratio_max"] < 1.01
    assert abs(steps[1]["ratio_mean"] - 1) < 0.01  # the weights of step 1 reached the server before step 2
    assert version == 3  # the starting weights, then one update per optimizer step
    final = torch.load(tmp_path / "out" / "agent_64.pth", weights_only=True)  # fp32, --save_dtype default
    for name, value in final.items():
        assert torch.equal(served_model.state_dict()[name], value), name
    assert (tmp_path / "out" / "sglang_policy" / "config.json").exists()
