"""
Rollout engines: sample completions for a batch of token-id prompts and return, for every sampled token, its
log-probability under the sampling policy.

The policy is the model at the sampling temperature: p_T(x) = softmax(logits / T). The log-probs returned here
come from the very logits the token was sampled from (no second forward pass), and
compute_per_token_logps() computes the same quantity for training, so on the first update after a rollout the
importance ratio exp(logp - old_logp) is 1 up to numerics. (top-p only truncates what is sampled; the log-prob is
taken under the full tempered softmax, as in most GRPO implementations.)

    engine = create_rollout_engine("torch", policy_model, eos_token_id=2, pad_token_id=0)
    result = engine.rollout([[1, 55, 9], [1, 7]], max_new_tokens=64, temperature=0.8)
    result.completion_ids[0], result.logps[0], result.finished[0]
"""
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import torch
from transformers.cache_utils import DynamicCache

from trainer.trainer_utils import autocast


def logps_of(logits, targets, temperature: float = 1.0):
    """log softmax(logits / T)[targets] in fp32. logits (..., V), targets (...) -> (...)."""
    logits = logits.float()
    if temperature and temperature != 1.0:
        logits = logits / temperature
    return torch.gather(logits.log_softmax(-1), -1, targets.unsqueeze(-1)).squeeze(-1)


def compute_per_token_logps(model, input_ids, n_keep: int, attention_mask=None, temperature: float = 1.0):
    """Log-prob of each of the last n_keep tokens given everything before it: (B, T) -> (B, n_keep).

    Only the logits needed are materialised (logits_to_keep = n_keep + 1; the last position predicts nothing).
    """
    if n_keep <= 0:
        return input_ids.new_zeros((input_ids.shape[0], 0), dtype=torch.float32)
    logits = model(input_ids, attention_mask=attention_mask, logits_to_keep=n_keep + 1).logits  # (B, n_keep+1, V)
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
    token = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    return token, logps_of(scaled, token)


class TorchRolloutEngine(RolloutEngine):
    """Batched sampling in this process with a KV cache: one prefill over the left-padded prompts, then one
    token per step for every row still running. Identical prompts (the num_generations copies of a prompt on
    the first turn) are prefilled once and their cache rows copied."""

    def __init__(self, model, eos_token_id: int, pad_token_id: int = 0, device: str = "cpu",
                 dtype: str = "float32"):
        self.model = model
        self.eos_token_id = eos_token_id
        self.pad_token_id = pad_token_id
        self.device = device
        self.dtype = dtype

    def update_policy(self, model):
        self.model = model  # same process, same weights: nothing to copy

    def left_pad(self, prompt_ids):
        """(input_ids, attention_mask), both (B, T), T the longest prompt; padding on the left."""
        T = max(len(p) for p in prompt_ids)
        input_ids = torch.full((len(prompt_ids), T), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(prompt_ids), T), dtype=torch.long)
        for i, p in enumerate(prompt_ids):
            input_ids[i, T - len(p):] = torch.tensor(p, dtype=torch.long)
            attention_mask[i, T - len(p):] = 1
        return input_ids.to(self.device), attention_mask.to(self.device)

    def prefill(self, prompt_ids, cache):
        """Logits of the next token (B, V) and the attention mask (B, T); fills `cache`. Each distinct prompt
        goes through the model once: the G copies of a prompt get the same logits and cache rows."""
        first_row = {}
        source = [first_row.setdefault(tuple(p), len(first_row)) for p in prompt_ids]  # row -> distinct row
        input_ids, attention_mask = self.left_pad([list(p) for p in first_row])
        with autocast(self.device, self.dtype):
            logits = self.model(input_ids, attention_mask=attention_mask, cache=cache, use_cache=True,
                                logits_to_keep=1).logits[:, -1]
        if len(first_row) < len(prompt_ids):
            index = torch.tensor(source, device=self.device)
            cache.reorder_cache(index)  # (distinct, ...) -> (B, ...)
            logits, attention_mask = logits.index_select(0, index), attention_mask.index_select(0, index)
        return logits, attention_mask

    @torch.no_grad()
    def rollout(self, prompt_ids, max_new_tokens, temperature=1.0, top_p=1.0, max_length=None):
        B = len(prompt_ids)
        result = RolloutResult([[] for _ in range(B)], [[] for _ in range(B)], [False] * B)
        if B == 0 or max_new_tokens <= 0:
            return result
        was_training = self.model.training
        self.model.eval()
        # per-row budget: max_new_tokens, and never past max_length in total
        budget = [max_new_tokens if max_length is None else min(max_new_tokens, max_length - len(p))
                  for p in prompt_ids]
        running = [b > 0 for b in budget]  # a Python list: the loop below reads it row by row
        cache = DynamicCache()
        logits, attention_mask = self.prefill(prompt_ids, cache)
        for _ in range(max(budget)):
            token, logp = sample_next(logits, temperature, top_p)
            running_mask = torch.tensor(running, device=self.device)
            token = torch.where(running_mask, token, torch.full_like(token, self.pad_token_id))
            tokens, logps = token.tolist(), logp.tolist()  # one copy per step, not one per row
            for i in range(B):
                if not running[i]:
                    continue
                result.completion_ids[i].append(tokens[i])
                result.logps[i].append(logps[i])
                if tokens[i] == self.eos_token_id:
                    result.finished[i] = True
                    running[i] = False
                elif len(result.completion_ids[i]) >= budget[i]:
                    running[i] = False
            if not any(running):
                break
            # rows that stopped are fed padding, masked out
            running_mask = torch.tensor(running, device=self.device)
            attention_mask = torch.cat([attention_mask, running_mask.long()[:, None]], dim=1)
            with autocast(self.device, self.dtype):
                logits = self.model(token[:, None], attention_mask=attention_mask, cache=cache,
                                    use_cache=True).logits[:, -1]
        if was_training:
            self.model.train()
        return result


def create_rollout_engine(engine_type: str, model, eos_token_id: int, pad_token_id: int = 0, device="cpu",
                          dtype="float32") -> RolloutEngine:
    if engine_type == "torch":
        return TorchRolloutEngine(model, eos_token_id, pad_token_id, device, dtype)
    raise ValueError(f"unknown rollout engine {engine_type!r}: this version provides 'torch'")
