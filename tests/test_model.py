"""The model: KV-cache decoding, left padding, save/load in both formats, MoE, generate()."""
import os

import pytest
import torch
from transformers import AutoModelForCausalLM

from model.model_minimind import (
    MiniMindConfig, MiniMindForCausalLM, build_attention_mask, load_minimind, save_minimind, weight_path,
)


def tiny(**kw):
    torch.manual_seed(0)
    cfg = MiniMindConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, **kw)
    return MiniMindForCausalLM(cfg).eval()


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device"))])
def test_kv_cache_matches_full_forward(device):
    model = tiny().to(device)
    ids = torch.randint(3, 6400, (2, 24), device=device)
    with torch.no_grad():
        full = model(ids).logits
        out = model(ids[:, :9], use_cache=True)
        cache, pieces = out.cache, [out.logits]  # (transformers 5.24+ also name it past_key_values)
        for t in range(9, 24):
            out = model(ids[:, t:t + 1], cache=cache, use_cache=True)
            pieces.append(out.logits)
    assert torch.allclose(torch.cat(pieces, 1), full, atol=1e-4)


def test_left_padded_rows_equal_rows_alone():
    model = tiny()
    a, b = torch.randint(3, 6400, (1, 13)), torch.randint(3, 6400, (1, 6))
    pad = 13 - 6
    batch = torch.cat([a, torch.cat([torch.zeros(1, pad, dtype=torch.long), b], 1)])
    mask = torch.ones_like(batch)
    mask[1, :pad] = 0
    with torch.no_grad():
        both = model(batch, attention_mask=mask).logits
        assert torch.allclose(both[0], model(a).logits[0], atol=1e-4)
        assert torch.allclose(both[1, pad:], model(b).logits[0], atol=1e-4)
        # and with a cache: prefill the padded batch, then decode one token per row
        out = model(batch, attention_mask=mask, use_cache=True)
        nxt = torch.tensor([[7], [9]])
        step = model(nxt, attention_mask=torch.cat([mask, torch.ones(2, 1, dtype=torch.long)], 1),
                     past_key_values=out.past_key_values, use_cache=True).logits
        assert torch.allclose(step[1, -1], model(torch.cat([b, nxt[1:]], 1)).logits[0, -1], atol=1e-4)
    assert torch.isfinite(both).all()


def test_padding_uses_a_boolean_sdpa_mask_not_a_fallback():
    mask = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1]])
    m = build_attention_mask(mask, past_len=0, q_len=4, device="cpu")
    assert m.dtype == torch.bool and m.shape == (2, 1, 4, 4)
    assert m[0, 0, 3].tolist() == [False, False, True, True]
    assert build_attention_mask(torch.ones(2, 4, dtype=torch.long), 0, 4, "cpu") is None  # plain causal path


def test_generate_greedy_and_sampling_with_left_padding():
    model = tiny()
    b = torch.randint(3, 6400, (1, 5))
    batch = torch.cat([torch.randint(3, 6400, (1, 8)), torch.cat([torch.zeros(1, 3, dtype=torch.long), b], 1)])
    mask = torch.ones_like(batch)
    mask[1, :3] = 0
    greedy = model.generate(batch, attention_mask=mask, max_new_tokens=6, do_sample=False, eos_token_id=None,
                            pad_token_id=0)
    alone = model.generate(b, max_new_tokens=6, do_sample=False, eos_token_id=None, pad_token_id=0)
    assert greedy[1, -6:].tolist() == alone[0, -6:].tolist()
    # greedy generate() equals argmax over full forwards
    seq = b
    for _ in range(6):
        seq = torch.cat([seq, model(seq).logits[:, -1:].argmax(-1)], 1)
    assert seq[0, -6:].tolist() == alone[0, -6:].tolist()
    sampled = model.generate(batch, attention_mask=mask, max_new_tokens=6, do_sample=True, top_p=0.9,
                             temperature=0.8, eos_token_id=None, pad_token_id=0)
    assert sampled.shape == (2, 14)


def test_save_load_roundtrip_both_formats(tmp_path):
    model = tiny()
    ids = torch.randint(3, 6400, (1, 10))
    ref = model(ids).logits
    model.save_pretrained(tmp_path / "hf")
    hf = AutoModelForCausalLM.from_pretrained(tmp_path / "hf")
    assert type(hf) is MiniMindForCausalLM
    assert torch.allclose(hf(ids).logits, ref, atol=1e-5)
    assert hf.lm_head.weight.data_ptr() == hf.model.embed_tokens.weight.data_ptr()  # still tied
    path = weight_path(str(tmp_path), "full_sft", 64, False)
    assert path.endswith("full_sft_64.pth")
    save_minimind(model, path, dtype=torch.float32)
    loaded = load_minimind(path, model.config)
    assert torch.allclose(loaded(ids).logits, ref, atol=1e-6)
    save_minimind(model, path)  # default: bf16 on disk, like upstream's half-precision weights
    assert torch.allclose(load_minimind(path, model.config)(ids).logits, ref, atol=0.1)


def test_moe_forward_backward_and_aux_loss():
    model = tiny(use_moe=True, num_experts=4, num_experts_per_tok=2).train()
    ids = torch.randint(3, 6400, (2, 12))
    out = model(ids, labels=ids)
    assert out.aux_loss is not None and out.aux_loss.item() > 0
    out.loss.backward()
    gate = model.model.layers[0].mlp.gate.weight
    assert gate.grad is not None and gate.grad.abs().sum() > 0  # the router learns through the aux loss
    expert_grads = [e.up_proj.weight.grad for e in model.model.layers[0].mlp.experts]
    assert any(g is not None and g.abs().sum() > 0 for g in expert_grads)
    # and the MoE model decodes with a cache like the dense one
    model.eval()
    with torch.no_grad():
        full = model(ids).logits
        out = model(ids[:, :6], use_cache=True)
        step = model(ids[:, 6:7], past_key_values=out.past_key_values, use_cache=True).logits
    assert torch.allclose(step[:, -1], full[:, 6], atol=1e-4)


def test_a_checkpoint_loads_with_its_own_shape(tmp_path):
    from model.model_minimind import load_minimind, save_minimind

    for kwargs in ({"num_hidden_layers": 3, "intermediate_size": 96},
                   {"num_hidden_layers": 2, "use_moe": True, "num_experts": 3, "n_shared_experts": 0}):
        saved = MiniMindForCausalLM(MiniMindConfig(hidden_size=64, **kwargs)).eval()
        path = str(tmp_path / "m.pth")
        save_minimind(saved, path, dtype=torch.float32)
        loaded = load_minimind(path, MiniMindConfig(hidden_size=64, num_hidden_layers=8)).eval()
        for key, value in kwargs.items():
            assert getattr(loaded.config, key) == value
        x = torch.randint(3, 6400, (1, 9))
        assert torch.equal(saved(x).logits, loaded(x).logits)


def test_rope_theta_flag_shapes_a_new_model_and_its_checkpoint_loads_with_it(tmp_path):
    """--rope_theta reaches the config through every script's model flags. The state dict cannot show the
    base, so a .pth saved with another base than upstream's gets a note beside it that load_minimind reads:
    the weights load with their own base without the flag, and asking for a third base is an error."""
    import argparse

    from trainer.trainer_utils import add_model_args, model_config

    parser = argparse.ArgumentParser()
    add_model_args(parser)
    args = parser.parse_args(["--hidden_size", "64", "--num_hidden_layers", "2", "--rope_theta", "10000"])
    default = model_config(parser.parse_args(["--hidden_size", "64"]))
    assert model_config(args).rope_theta == 10000.0 and default.rope_theta == 1e6  # upstream's default
    torch.manual_seed(0)
    saved = MiniMindForCausalLM(model_config(args)).eval()
    path = str(tmp_path / "m.pth")
    save_minimind(saved, path, dtype=torch.float32)
    note = tmp_path / "m_config.json"
    assert note.exists()
    x = torch.randint(3, 6400, (1, 40))
    for config in (model_config(args), default):  # with the flag or without it
        loaded = load_minimind(path, config).eval()
        assert loaded.config.rope_theta == 10000.0
        assert torch.equal(saved(x).logits, loaded(x).logits)
    with pytest.raises(ValueError, match="rope_theta 10000"):
        load_minimind(path, model_config(args, rope_theta=500.0))
    note.unlink()  # without the note the base is what the caller says, and other bases read positions otherwise
    assert not torch.allclose(saved(x).logits, load_minimind(path, default).eval()(x).logits, atol=1e-3)
    note.write_text("{not json")
    with pytest.raises(ValueError, match="m_config.json"):
        load_minimind(path, default)
    save_minimind(MiniMindForCausalLM(default).eval(), path, dtype=torch.float32)
    assert not note.exists()  # weights saved at the default base drop an older run's note


# --- upstream MiniMind's checkpoints (test data made with upstream's own code; skipped when absent) --------

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UPSTREAM = os.path.join(os.path.dirname(ROOT), "shared", "fixtures", "upstream_minimind")


@pytest.mark.skipif(not os.path.isdir(UPSTREAM), reason="no upstream MiniMind fixture")
@pytest.mark.parametrize("weights,reference", [("full_sft_64.pth", "reference_logits_dense.pt"),
                                               ("full_sft_64_moe.pth", "reference_logits_moe.pt")])
def test_upstream_checkpoints_load_strictly_with_upstream_logits(weights, reference):
    from model.model_minimind import load_minimind
    model = load_minimind(os.path.join(UPSTREAM, weights), MiniMindConfig()).eval()  # shape from the file
    ref = torch.load(os.path.join(UPSTREAM, reference), weights_only=True)
    with torch.no_grad():
        logits = model(ref["input_ids"]).logits
    assert (logits - ref["logits"]).abs().max().item() < 1e-4


@pytest.mark.skipif(not os.path.isdir(UPSTREAM), reason="no upstream MiniMind fixture")
@pytest.mark.parametrize("name", ["dense", "moe"])
def test_a_saved_checkpoint_has_upstreams_names_and_shapes(tmp_path, name):
    import json
    models = json.load(open(os.path.join(UPSTREAM, "fixture.json"), encoding="utf-8"))["models"]
    entry = models[name]
    config = MiniMindConfig(**entry["config"], **{k: v for k, v in entry["resolved"].items()
                                                  if k in MiniMindConfig().to_dict()})
    path = str(tmp_path / "m.pth")
    save_minimind(MiniMindForCausalLM(config), path, dtype=torch.float16)
    saved = torch.load(path, weights_only=True)
    assert {k: list(v.shape) for k, v in saved.items()} == entry["state_dict"]
    load_minimind(path, MiniMindConfig())  # and it loads back here


@pytest.mark.skipif(not os.path.isdir(UPSTREAM), reason="no upstream MiniMind fixture")
@pytest.mark.parametrize("name", ["minimind3_768x8", "minimind3_512x8", "minimind3_moe_768x8"])
def test_upstreams_real_sizes_build_from_their_names_and_shapes(name):
    import json

    from model.model_minimind import count_parameters, shape_from_state
    entry = json.load(open(os.path.join(UPSTREAM, "fixture.json"), encoding="utf-8"))["models"][name]
    state = {k: torch.empty(v, device="meta") for k, v in entry["state_dict"].items()}
    with torch.device("meta"):
        model = MiniMindForCausalLM(MiniMindConfig(**shape_from_state(state)))
    assert {k: list(v.shape) for k, v in model.state_dict().items()} == entry["state_dict"]
    assert count_parameters(model) == entry["params"]  # 63.9M at 768 x 8


def test_yarn_scales_the_slow_dimensions_as_upstream_computes_it():
    from model.model_minimind import YARN, rope_frequencies
    plain, yarn = rope_frequencies(32, 1e6), rope_frequencies(32, 1e6, YARN, 4096)
    # head_dim 32, theta 1e6, a 2,048 context: pairs 0-2 turn more than 32 times and keep their frequency,
    # pairs 7-15 turn less than once and are slowed 16 times; in between a linear ramp
    expected = [1, 1, 1, 0.8125, 0.625, 0.4375, 0.25] + [1 / 16] * 9
    assert torch.allclose(yarn / plain, torch.tensor(expected), atol=1e-6)
    assert torch.equal(rope_frequencies(32, 1e6, YARN, 2048), plain)  # no longer than the original: off
    ids = torch.randint(3, 6400, (1, 40))
    with torch.no_grad():
        a = tiny()(ids).logits
        b = tiny(inference_rope_scaling=True)(ids).logits
    assert not torch.allclose(a, b)  # the flag changes the model (it did nothing before)


def cpu_flags():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            line = next(line for line in f if line.startswith("flags"))
    except (OSError, StopIteration):
        return None
    return set(line.split(":", 1)[1].split())


@pytest.mark.skipif(cpu_flags() is None or "sse2" not in (cpu_flags() or ()), reason="needs x86 /proc/cpuinfo")
def test_default_dtype_is_bf16_only_where_bf16_is_faster():
    """Without AVX-512 BF16 or AMX, oneDNN emulates bf16 (3.3x slower than fp32 on AVX-512 alone, ~100x on
    AVX2 alone), and Intel's AVX-512 BF16 without AMX measured slower than fp32 too: fp32 there."""
    from trainer.trainer_utils import cpu_has_fast_bf16, cpu_vendor, default_dtype

    intel = cpu_vendor() == "GenuineIntel"
    native = "amx_bf16" in cpu_flags() or ("avx512_bf16" in cpu_flags() and not intel)
    assert cpu_has_fast_bf16() == native
    assert default_dtype("cpu") == ("bfloat16" if native else "float32")


def test_label_weights_scale_each_label_tokens_loss_over_the_label_count():
    torch.manual_seed(0)
    model = MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2, vocab_size=97))
    ids = torch.randint(0, 97, (2, 12))
    labels = ids.clone()
    labels[:, :5] = -100
    labels[1, 9:] = -100
    plain = model(ids, labels=labels, return_logits=False).loss
    ones = model(ids, labels=labels, return_logits=False, label_weights=torch.ones(2, 12)).loss
    assert torch.allclose(plain, ones)
    weights = torch.ones(2, 12)
    weights[0, 7] = 4.0
    weights[1, 2] = 9.0  # a prompt position: ignored with its label
    logits = model(ids).logits[:, :-1].float()
    token_loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")
    keep = labels[:, 1:] != -100
    expected = (token_loss * weights[:, 1:])[keep].sum() / keep.sum()
    weighted = model(ids, labels=labels, return_logits=False, label_weights=weights).loss
    assert torch.allclose(weighted, expected, atol=1e-5)
    assert weighted > plain or token_loss[0, 6] == 0  # position 7's loss counts 4 times
