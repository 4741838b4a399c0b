"""Shared fakes for the tests: the tokenizer, a tiny model, rollout settings and scripted rollout engines."""
import json
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from dataset.lm_dataset import encode  # noqa: E402
from model.model_minimind import MiniMindConfig, MiniMindForCausalLM  # noqa: E402
from trainer.rollout_engine import RolloutEngine, RolloutResult  # noqa: E402
from trainer.train_agent import RolloutConfig  # noqa: E402
from trainer.trainer_utils import load_tokenizer  # noqa: E402


@pytest.fixture(scope="session")
def tok():
    return load_tokenizer()


def tiny_model(seed=0, **config):
    """A 2-layer, 64-wide MiniMind with the project's vocabulary, in eval mode."""
    torch.manual_seed(seed)
    return MiniMindForCausalLM(MiniMindConfig(**{"hidden_size": 64, "num_hidden_layers": 2, **config})).eval()


def rollout_config(**kw) -> RolloutConfig:
    """The rollout settings the tests use: short turns, sampling at 0.8 unless told otherwise."""
    return RolloutConfig(**{"max_gen_len": 24, "temperature": 0.8, **kw})


def tool_call_text(name, arguments) -> str:
    return ('<tool_call>\n{"name": "%s", "arguments": %s}\n</tool_call>'
            % (name, json.dumps(arguments, ensure_ascii=False)))


class ScriptedEngine(RolloutEngine):
    """Answers the k-th rollout call with scripts[k][row] for each row, encoded, plus <|im_end|>."""

    def __init__(self, tok, scripts, logp=-0.5):
        self.tok, self.scripts, self.calls, self.logp = tok, scripts, 0, logp

    def rollout(self, prompt_ids, max_new_tokens, temperature=1.0, top_p=1.0, max_length=None):
        out = RolloutResult()
        for row in range(len(prompt_ids)):
            ids = encode(self.tok, self.scripts[self.calls][row]) + [self.tok.eos_token_id]
            out.completion_ids.append(ids)
            out.logps.append([self.logp] * len(ids))
            out.finished.append(True)
        self.calls += 1
        return out

    def update_policy(self, model):
        pass


class PerTrajectoryEngine(RolloutEngine):
    """Trajectory j writes scripts[j][turn] at each turn; rows still running are asked in order."""

    def __init__(self, tok, scripts, logp=-0.1):
        self.tok, self.scripts, self.turn, self.logp = tok, scripts, 0, logp

    def rollout(self, prompt_ids, max_new_tokens, temperature=1.0, top_p=1.0, max_length=None):
        rows = [j for j, script in enumerate(self.scripts) if len(script) > self.turn]
        assert len(rows) == len(prompt_ids)
        out = RolloutResult()
        for j in rows:
            ids = encode(self.tok, self.scripts[j][self.turn]) + [self.tok.eos_token_id]
            out.completion_ids.append(ids)
            out.logps.append([self.logp] * len(ids))
            out.finished.append(True)
        self.turn += 1
        return out

    def update_policy(self, model):
        pass
