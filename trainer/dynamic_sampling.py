"""
Which prompt groups one step trains on. Plain: one batch of --batch_size prompts, this rank's share of them
under torchrun. With dynamic sampling (--max_draws > 1, DAPO) the step draws further batches until it has
--batch_size groups whose rewards are not all equal; ranks that draw no prompt of a batch stay in step.
score_groups (trainer/train_agent.py) runs phases 1-3 on a list of prompts. Read it when you turn on dynamic
sampling or run on several processes.
"""
import time
from dataclasses import dataclass

import torch

from trainer.trainer_utils import RankShare, all_ranks_sum, split_batch


@dataclass
class StepGroups:
    """The prompt groups of one step: rollouts, rewards and advantages (phases 1-3), and what was drawn."""
    items: list
    trajs: list
    rewards: list
    advantages: torch.Tensor
    group_std: torch.Tensor
    rank_share: RankShare  # this rank's prompts (all chunks together)
    chunks: int  # batches of the epoch this step consumed (more than 1 only with dynamic sampling)
    prompts: list  # every prompt drawn (global dataset indices)
    informative: int  # groups whose rewards are not all equal, all ranks together
    rollout_s: float


def collect_groups(state, dataset, batches, b: int, score_groups) -> StepGroups:
    """Phases 1-3 (score_groups) on batch b: rollout, reward, advantages. With dynamic sampling
    (--max_draws > 1, DAPO) the step goes on drawing the next batches while fewer than --batch_size of its
    groups are informative (rewards not all equal), up to --max_draws batches; the groups without signal are
    left out of the update by --skip_zero_std. Every rank draws the same batches."""
    args, t0 = state.args, time.time()
    items, trajs, rewards, advs, stds, mine, n_global, prompts = [], [], [], [], [], [], 0, []
    informative, chunks, filler = 0, 0, True
    while b + chunks < len(batches) and (chunks == 0 or (chunks < args.max_draws
                                                         and informative < args.batch_size)):
        share = split_batch(batches[b + chunks], state.dist)  # this rank's prompts: groups never span ranks
        chunks, n_global, prompts = chunks + 1, n_global + share.n_global, prompts + list(batches[b + chunks])
        n_informative = 0.0
        if not (share.filler and chunks > 1):  # a rank without prompts in a later batch skips it
            chunk = [dataset[i] for i in share.indices]
            t, r, adv, std = score_groups(state, chunk)  # phases 1-3: rollout, rewards, advantages
            if filler and not share.filler:  # real prompts replace the filler of a first batch
                items, trajs, rewards, advs, stds, mine = [], [], [], [], [], []
            filler = filler and share.filler
            items, trajs, rewards = items + chunk, trajs + t, rewards + r
            advs, stds, mine = advs + [adv], stds + [std], mine + list(share.indices)
            n_informative = float((std >= 1e-6).sum()) * share.weight
        informative += round(all_ranks_sum(n_informative, state.dist))
    rank_share = RankShare(mine, n_global, filler=filler)
    return StepGroups(items, trajs, rewards, torch.cat(advs), torch.cat(stds), rank_share, chunks, prompts,
                      informative, time.time() - t0)
