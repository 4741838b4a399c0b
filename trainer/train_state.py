"""
What the training loop carries from step to step (TrainState), and what a run writes so that it can stop and
go on: the weights, and the resume checkpoint (optimizer, RNGs, data position, best evaluation, weight
average). `--from_resume 1` reads it back; a resumed run equals an uninterrupted one (tests/test_resume.py).
Read it when you resume runs or add state that must survive one.
"""
import argparse
import time
from dataclasses import dataclass, field

import torch

from model.model_minimind import save_minimind, weight_path
from trainer.agent_flags import SAVE_DTYPES
from trainer.prompt_pool import parse_category_weights
from trainer.trainer_utils import DistInfo, WeightAverage, resume_path, save_resume, set_rng_state


@dataclass
class TrainState:
    """What the training loop reads and updates, passed explicitly."""
    model: torch.nn.Module
    ref_model: torch.nn.Module
    rollout_engine: object
    tokenizer: object
    optimizer: torch.optim.Optimizer
    args: argparse.Namespace
    total_steps: int
    reward_model: object = None
    step: int = 0
    micro_step: int = 0
    metrics_file: object = None
    stop_requested: bool = False
    skipped_nonfinite: int = 0  # updates dropped because the loss or gradient was not finite
    guards: object = None  # the RewardGuards of calculate_rewards
    eval_cases: list = field(default_factory=list)
    best_completion: float = -1.0  # the best task completion seen by the periodic evaluation
    best_step: int = -1
    rollbacks: int = 0
    dist: DistInfo = field(default_factory=DistInfo)  # rank and world size under torchrun
    train_model: torch.nn.Module | None = None  # what the update's forward goes through: DDP(model) or model
    prompts_done: int = 0  # prompts of the current epoch trained on, all ranks together
    started: float = field(default_factory=time.time)  # for --max_minutes
    last_profile: tuple | None = None  # (step, behaviour profile) of the weights the latest evaluation saw
    average: WeightAverage = field(default_factory=WeightAverage)  # --average_last: what the run saves

    # resume state: what save_checkpoints writes beside the weights, and what --from_resume 1 reads back
    def resume_extra(self, epoch: int, batches_done: int) -> dict:
        return {
            "epoch": epoch,
            "batches_done": batches_done,
            "micro_step": self.micro_step,
            "skipped_nonfinite": self.skipped_nonfinite,
            "best_completion": self.best_completion,
            "best_step": self.best_step,
            "rollbacks": self.rollbacks,
            # progress in global units: a run saved by N processes resumes with any number of them
            "batch_size": self.args.batch_size,
            "category_weights": self.args.category_weights,  # with the seed, the order of the prompts
            "prompts_done": self.prompts_done,
            "samples_done": self.prompts_done * self.args.num_generations,
            "world_size": self.dist.world_size,
            "weight_average": self.average.state(),
        }

    def restore(self, ckpt: dict, path: str) -> tuple:
        """Load a resume checkpoint into the model, optimizer, RNGs and this state; returns (epoch, batch)."""
        extra = ckpt["extra"]
        if extra.get("batch_size", self.args.batch_size) != self.args.batch_size:
            raise ValueError(f"{path} was saved with --batch_size {extra['batch_size']}; resuming with "
                             f"{self.args.batch_size} would start at another data position")
        saved = extra.get("category_weights", self.args.category_weights)
        if parse_category_weights(saved) != parse_category_weights(self.args.category_weights):
            raise ValueError(f"{path} was saved with --category_weights {saved!r}; resuming with "
                             f"{self.args.category_weights!r} would draw the prompts in another order")
        self.model.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        set_rng_state(ckpt["rng"])
        self.step, self.micro_step = ckpt["step"], extra["micro_step"]
        self.skipped_nonfinite = extra.get("skipped_nonfinite", 0)
        self.best_completion = extra.get("best_completion", -1.0)
        self.best_step = extra.get("best_step", -1)
        self.rollbacks = extra.get("rollbacks", 0)
        self.average.load(extra.get("weight_average", {}), path)
        return extra["epoch"], extra["batches_done"]


def save_checkpoints(state: TrainState, epoch: int, batches_done: int):
    """The run's weights as {save_weight} (with --average_last, the average so far, and the last weights
    as {save_weight}_last) and the resume checkpoint."""
    args = state.args
    path = weight_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe))
    save_minimind(state.average.model(state.model), path, dtype=SAVE_DTYPES[args.save_dtype])
    if state.average.count:
        last = weight_path(args.save_dir, f"{args.save_weight}_last", args.hidden_size, bool(args.use_moe))
        save_minimind(state.model, last, dtype=SAVE_DTYPES[args.save_dtype])
    save_resume(resume_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe)),
                state.model, state.optimizer, state.step, state.resume_extra(epoch, batches_done))
