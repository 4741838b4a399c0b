"""
The rollout engine in its plainest form: sample completions for a batch of token-id prompts and return, for
every sampled token, its log-probability under the sampling policy. Read this file to learn what an engine
does; the trainer runs trainer/fast_engine.py, which does the same faster (tests/test_engines.py checks that
the two give the same tokens and log-probs).

The policy is the model at the sampling temperature: p_T(x) = softmax(logits / T). The log-probs returned here
come from the very logits the token was sampled from (no second forward pass), and
compute_per_token_logps() computes the same quantity for training, so on the first update after a rollout the
importance ratio exp(logp - old_logp) is 1 up to numerics. (top-p only truncates what is sampled; the log-prob
is taken under the full tempered softmax, as in most GRPO implementations.)

    engine = create_rollout_engine("torch", policy_model, tokenizer.eos_token_id, tokenizer.pad_token_id)
    result = engine.rollout([[1, 55, 9], [1, 7]], max_new_tokens=64, temperature=0.8)
    result.completion_ids[0], result.logps[0], result.finished[0]

(create_rollout_engine is in trainer/fast_engine.py.)
"""
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import torch

from trainer.trainer_utils import autocast


def logps_of(logits, targets, temperature: float = 1.0):
    """log softmax(logits / T)[targets] in fp32. logits (..., V), targets (...) -> (...)."""
    logits = logits.float()
    if temperature and temperature != 1.0:
        logits = logits / temperature
    return torch.gather(logits.log_softmax(-1), -1, targets.unsqueeze(-1)).squeeze(-1)



def compute_per_token_logps(model, input_ids, n_keep: int, attention_mask=None, temperature=1.0):
    """Log-prob of each of the last n_keep tokens given everything before it: (B, T) -> (B, n_keep).
    Only the logits needed are materialised (logits_to_keep = n_keep + 1; the last position predicts nothing).
    (trainer/fast_engine.compute_per_token_logps also runs a prefix the rows share once.)"""
    if n_keep <= 0:
        return input_ids.new_zeros((input_ids.shape[0], 0), dtype=torch.float32)
    logits = model(input_ids, attention_mask=attention_mask, logits_to_keep=n_keep + 1).logits
    return logps_of(logits[:, :-1], input_ids[:, -n_keep:], temperature)


@dataclass
class RolloutResult:
    """One entry per prompt: the ids the model sampled (through its EOS when it stopped), the sampling
    log-prob of each, and whether it stopped by itself (False: it hit max_new_tokens)."""
    completion_ids: list = field(default_factory=list)  # list[list[int]]
    logps: list = field(default_factory=list)  # list[list[float]], same lengths as completion_ids
    finished: list = field(default_factory=list)  # list[bool]



class RolloutEngine(ABC):
    @abstractmethod
    def rollout(self, prompt_ids, max_new_tokens: int, temperature: float = 1.0, top_p: float = 1.0,
                max_length: int | None = None) -> RolloutResult:
        """Sample one completion per prompt. temperature 0 = greedy (log-probs then at T = 1)."""

    @abstractmethod
    def update_policy(self, model):
        """Make the next rollouts use these weights."""


def sample_next(logits, temperature: float, top_p: float, generator=None):
    """logits (B, V) -> (token (B,), logp (B,)) with the log-prob under softmax(logits / T)."""
    if temperature <= 0:
        token = logits.argmax(-1)
        return token, logps_of(logits, token)
    scaled = logits.float() / temperature
    probs = scaled.softmax(-1)
    if top_p < 1.0:
        sorted_p, sorted_idx = probs.sort(-1, descending=True)
        keep = sorted_p.cumsum(-1) - sorted_p < top_p  # always keeps the most likely token
        sorted_p = sorted_p * keep
        probs = torch.zeros_like(probs).scatter_(-1, sorted_idx, sorted_p)
    # inverse-CDF sampling: the first token whose cumulative probability passes u ~ U(0, total). The same
    # distribution as torch.multinomial, at a small fraction of its cost on CPU (one uniform per row)
    cdf = probs.cumsum(-1)
    u = torch.rand((probs.shape[0], 1), generator=generator, device=probs.device) * cdf[:, -1:]
    token = torch.searchsorted(cdf, u, right=True).squeeze(-1).clamp_(max=probs.shape[-1] - 1)
    if top_p < 1.0:
        return token, logps_of(scaled, token)  # under the full softmax, not the truncated one
    # log of the sampled token's probability: log_softmax at that token, without a second pass over the
    # vocabulary (a token is only drawn where its probability is above 0, so the log is finite)
    return token, probs.gather(-1, token[:, None]).squeeze(-1).log()


def row_budgets(prompt_ids, max_new_tokens: int, max_length: int | None = None) -> list:
    """New tokens each prompt may get: max_new_tokens, and never past max_length tokens in total."""
    if max_length is None:
        return [max_new_tokens for _ in prompt_ids]
    return [max(0, min(max_new_tokens, max_length - len(p))) for p in prompt_ids]


def left_pad(prompt_ids, pad_token_id: int, device: str):
    """(input_ids, attention_mask), both (B, T), T the longest prompt; padding on the left, so that every
    row's next token comes out of the last position."""
    T = max(len(p) for p in prompt_ids)
    input_ids = torch.full((len(prompt_ids), T), pad_token_id, dtype=torch.long)
    attention_mask = torch.zeros((len(prompt_ids), T), dtype=torch.long)
    for i, p in enumerate(prompt_ids):
        input_ids[i, T - len(p):] = torch.tensor(p, dtype=torch.long)
        attention_mask[i, T - len(p):] = 1
    return input_ids.to(device), attention_mask.to(device)


class ReferenceRolloutEngine(RolloutEngine):
    """Prefill, then sample one token at a time for every row, each with the log-prob it was sampled with.

    1. prefill   the left-padded prompts go through the model once; the KV cache keeps their keys and values
    2. sample    a token per row from the last position's logits (sample_next), and its log-prob
    3. decode    the sampled tokens go in, one position per row; a row that has stopped is fed padding,
                 masked out, until every row has stopped or used its budget
    """

    def __init__(self, model, eos_token_id: int, pad_token_id: int, device: str = "cpu",
                 dtype: str = "float32"):
        self.model, self.eos_token_id, self.pad_token_id = model, eos_token_id, pad_token_id
        self.device, self.dtype = device, dtype

    def update_policy(self, model):
        self.model = model  # same process, same weights: nothing to copy

    @torch.no_grad()
    def rollout(self, prompt_ids, max_new_tokens, temperature=1.0, top_p=1.0, max_length=None):
        B = len(prompt_ids)
        budgets = row_budgets(prompt_ids, max_new_tokens, max_length)
        result = RolloutResult([[] for _ in range(B)], [[] for _ in range(B)], [False] * B)
        if B == 0 or max(budgets) <= 0:
            return result
        was_training = self.model.training
        self.model.eval()
        with autocast(self.device, self.dtype):
            input_ids, attention_mask = left_pad(prompt_ids, self.pad_token_id, self.device)
            out = self.model(input_ids, attention_mask=attention_mask, use_cache=True, logits_to_keep=1)
            running = [b > 0 for b in budgets]
            for _ in range(max(budgets)):
                token, logp = sample_next(out.logits[:, -1], temperature, top_p)
                for i, (t, lp) in enumerate(zip(token.tolist(), logp.tolist())):
                    if not running[i]:
                        continue
                    result.completion_ids[i].append(t)
                    result.logps[i].append(lp)
                    if t == self.eos_token_id:
                        result.finished[i], running[i] = True, False
                    elif len(result.completion_ids[i]) >= budgets[i]:
                        running[i] = False
                if not any(running):
                    break
                live = torch.tensor(running, device=self.device)
                token = torch.where(live, token, torch.full_like(token, self.pad_token_id))
                attention_mask = torch.cat([attention_mask, live.long()[:, None]], dim=1)
                out = self.model(token[:, None], attention_mask=attention_mask, cache=out.cache,
                                 use_cache=True, logits_to_keep=1)
        self.model.train(was_training)
        return result
