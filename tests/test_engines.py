"""The reference engine (trainer/rollout_engine.py) and the fast one the trainer runs (trainer/fast_engine.py)
sample the same tokens with the same log-probs, and compute the same training log-probs."""
import os

import pytest
import torch

from conftest import rollout_config
from dataset.lm_dataset import encode, render
from model.model_minimind import MiniMindConfig, load_minimind
from trainer.fast_engine import compute_per_token_logps, create_rollout_engine
from trainer.rollout_engine import ReferenceRolloutEngine
from trainer.rollout_engine import compute_per_token_logps as reference_per_token_logps
from trainer.train_agent import TOOLS, rollout_batch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = os.path.join(ROOT, "out", "full_sft_256.pth")
REQUESTS = ["北京和东京现在天气怎么样?", "帮我算一下 123 乘以 45", "What is 300 USD in CNY?", "你好,介绍一下你自己"]


@pytest.fixture(scope="module")
def model():
    if not os.path.exists(SHIPPED):
        pytest.skip("no shipped checkpoint")
    return load_minimind(SHIPPED, MiniMindConfig()).eval()


def engines(model, tok, eos=None):
    eos = tok.eos_token_id if eos is None else eos
    return (ReferenceRolloutEngine(model, eos, tok.pad_token_id, "cpu", "float32"),
            create_rollout_engine("torch", model, eos, tok.pad_token_id, "cpu", "float32"))


def test_multi_turn_greedy_rollouts_are_the_same(model, tok):
    """Whole trajectories (tool calls, injected tool turns, answers, rows stopping at different times): the fast
    engine's caches, prompt sharing and kept prefixes change no token."""
    args = rollout_config(max_gen_len=96, temperature=0.0)
    prompts = [[{"role": "user", "content": r}] for r in REQUESTS]
    runs = [rollout_batch(engine, tok, prompts, [TOOLS] * len(prompts), 2, args) for engine in engines(model, tok)]
    assert sum(len(t.turns) for t in runs[0]) > len(runs[0])  # some trajectories took a second turn
    assert len({len(t.ids) for t in runs[0]}) > 1  # rows stopped at different lengths
    for ref, fast in zip(*runs):
        assert ref.ids == fast.ids and ref.response_mask == fast.response_mask
        assert torch.allclose(torch.tensor(ref.old_logps), torch.tensor(fast.old_logps), atol=1e-4)


def test_sampled_tokens_and_logps_are_the_same_on_the_same_seed(model, tok):
    """Sampling at T = 1.5, two calls (the second continues the first, as a trajectory's next turn does). No id
    stops a row here (eos -1), so both engines draw one uniform per row per step and must sample alike."""
    prompts = [encode(tok, render(tok, [{"role": "user", "content": r}], TOOLS, add_generation_prompt=True))
               for r in REQUESTS[:2] for _ in range(3)]
    results = []
    for engine in engines(model, tok, eos=-1):
        torch.manual_seed(7)
        first = engine.rollout(prompts, max_new_tokens=24, temperature=1.5)
        turn2 = [p + c + encode(tok, "\n<|im_start|>user\n好的<|im_end|>\n<|im_start|>assistant\n")
                 for p, c in zip(prompts, first.completion_ids)]
        results.append((first, engine.rollout(turn2, max_new_tokens=16, temperature=1.5)))
    (ref1, ref2), (fast1, fast2) = results
    for ref, fast in ((ref1, fast1), (ref2, fast2)):
        assert ref.completion_ids == fast.completion_ids
        assert len({tuple(c) for c in ref.completion_ids}) > 2  # the copies of a prompt sampled differently
        for a, b in zip(ref.logps, fast.logps):
            assert torch.allclose(torch.tensor(a), torch.tensor(b), atol=1e-4)


def test_training_logps_are_the_same_with_a_shared_prefix(model, tok):
    """fast_engine.compute_per_token_logps runs the rows' shared prompt once; the reference runs every row
    whole. Both match the log-probs the rollout sampled with."""
    prompt = encode(tok, render(tok, [{"role": "user", "content": REQUESTS[0]}], TOOLS,
                                add_generation_prompt=True))
    engine = engines(model, tok, eos=-1)[0]
    torch.manual_seed(3)
    out = engine.rollout([prompt] * 4, max_new_tokens=20, temperature=1.0)
    ids = torch.tensor([prompt + c for c in out.completion_ids])
    with torch.no_grad():
        ref = reference_per_token_logps(model, ids, 20)
        fast = compute_per_token_logps(model, ids, 20, shared_prefix=len(prompt) - 1)
    assert torch.allclose(ref, fast, atol=1e-4)
    assert torch.allclose(ref, torch.tensor(out.logps), atol=1e-4)
