"""
From trajectories to the update's tensors: prompt + trajectory ids right-padded into one batch, the completion
mask (1 on tokens the model wrote, through the first EOS of each turn), the sampling log-probs beside them.
A trajectory longer than --max_total_len loses whole middle turns first. TrainBatch.rows cuts a micro-batch to
the columns that hold model-written tokens and finds the prompt its rows share (the update runs it once):
mechanism to skip on a first reading.
"""
from dataclasses import dataclass

import torch


@dataclass
class TrainBatch:
    input_ids: torch.Tensor  # (N, T) right-padded prompt + trajectory ids
    completion_mask: torch.Tensor  # (N, T-1) 1 where the predicted token was written by the model
    old_logps: torch.Tensor  # (N, T-1) sampling log-probs of those tokens
    advantages: torch.Tensor  # (N,)
    shared_prefix: int = 0  # leading tokens all rows have (a prompt): compute_per_token_logps runs them once

    # a shared prefix shorter than this is run in every row: a forward of its own costs more than it saves
    MIN_SHARED_PREFIX = 16

    def rows(self, sl: slice, cut: bool = True) -> "TrainBatch":
        """Rows `sl`, cut to the columns where they have model-written tokens: the log-probs are needed only
        there, so the LM head and its log-softmax skip the prompt, and the padding after the last model token
        is not fed at all (causal attention: later tokens change nothing before them). The cut batch's
        completion_mask and old_logps cover logps of its last `n_keep` input tokens, n_keep = their width.
        The tokens before the first model token that all the rows have (a group's prompt) are its
        shared_prefix. cut=False: the rows whole, at the batch's padded width."""
        if not cut:
            return TrainBatch(self.input_ids[sl], self.completion_mask[sl], self.old_logps[sl],
                              self.advantages[sl])
        mask = self.completion_mask[sl]
        cols = mask.any(0).nonzero().flatten()
        first, last = (int(cols[0]), int(cols[-1])) if len(cols) else (0, 0)
        ids = self.input_ids[sl, :last + 2]
        differ = (ids[:, :first] != ids[:1, :first]).any(0).nonzero().flatten()
        shared = int(differ[0]) if len(differ) else first
        if ids.shape[0] < 2 or shared < self.MIN_SHARED_PREFIX:
            shared = 0
        return TrainBatch(ids, mask[:, first:last + 1], self.old_logps[sl, first:last + 1],
                          self.advantages[sl], shared)

    @property
    def n_keep(self) -> int:
        return self.completion_mask.shape[1]


def truncate_for_training(prompt_len, ids, mask, logps, max_len):
    """Fit prompt + trajectory into max_len: drop whole middle turns (a model turn with its tool turn),
    earliest first, so the system/tools prompt and the final answer survive; cut the end only as a last
    resort.
    (Tokens kept after a dropped turn keep their sampling log-probs.)"""
    if prompt_len + len(ids) <= max_len:
        return ids, mask, logps
    # segments start where a model turn starts (mask goes 0 -> 1)
    starts = [j for j in range(len(ids)) if mask[j] == 1 and (j == 0 or mask[j - 1] == 0)] or [0]
    bounds = list(zip(starts, starts[1:] + [len(ids)]))
    keep = list(bounds)
    while len(keep) > 1 and prompt_len + sum(e - s for s, e in keep) > max_len:
        keep.pop(0)
    pick = [j for s, e in keep for j in range(s, e)][:max(0, max_len - prompt_len)]
    return [ids[j] for j in pick], [mask[j] for j in pick], [logps[j] for j in pick]


def completion_mask_for(mask, ids, eos_token_id):
    """response_mask, with each model turn cut after its first EOS (anything written past it is ignored)."""
    out, after_eos = [], False
    for m, t in zip(mask, ids):
        if m == 0:
            after_eos = False  # a new model turn starts after the injected tool turn
            out.append(0)
            continue
        out.append(0 if after_eos else 1)
        if t == eos_token_id:
            after_eos = True
    return out


def build_train_batch(trajs, advantages, pad_token_id, eos_token_id, max_total_len) -> TrainBatch:
    rows = []
    for traj in trajs:
        ids, mask, logps = truncate_for_training(len(traj.prompt_ids), traj.ids, traj.response_mask,
                                                 traj.old_logps, max_total_len)
        prompt = traj.prompt_ids[:max_total_len]
        mask = completion_mask_for(mask, ids, eos_token_id)
        rows.append((prompt + ids, [0] * len(prompt) + mask, [0.0] * len(prompt) + logps))
    T = max(len(r[0]) for r in rows)
    input_ids = torch.full((len(rows), T), pad_token_id, dtype=torch.long)
    completion_mask = torch.zeros((len(rows), T))
    old_logps = torch.zeros((len(rows), T))
    for i, (ids, mask, logps) in enumerate(rows):
        input_ids[i, :len(ids)] = torch.tensor(ids)
        completion_mask[i, :len(mask)] = torch.tensor(mask, dtype=torch.float)
        old_logps[i, :len(logps)] = torch.tensor(logps)
    # position t predicts token t: drop column 0, which nothing predicts
    return TrainBatch(input_ids, completion_mask[:, 1:], old_logps[:, 1:], advantages)
