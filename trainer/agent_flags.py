"""
The command line of trainer/train_agent.py, grouped as --help shows it: the design's rollout and loss first,
then the data and checkpoints, the reward-hacking guards, periodic evaluation, and the runtime. Read it to
look up a flag; the defaults are the README's main job.
"""
import argparse

import torch

from trainer.prompt_pool import DEFAULT_POOL
from trainer.trainer_utils import add_model_args, add_upstream_args, default_dtype, resolve_device


SAVE_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def parse_args(argv=None, guards=None):
    """The flags, grouped as --help lists them; `guards`: the RewardGuards whose values are the defaults."""
    parser = argparse.ArgumentParser(description="Agent RL: multi-turn tool use with CISPO/GRPO")
    add_rollout_flags(parser)
    add_loss_flags(parser)
    add_data_flags(parser)
    add_model_args(parser.add_argument_group("model (a new model's shape; a checkpoint keeps its own)"))
    add_guards_flags(parser, guards)
    add_dynamic_sampling_flags(parser)
    add_evaluation_flags(parser)
    add_runtime_flags(parser)
    add_engine_flags(parser)
    add_upstream_args(parser, max_seq_len_instead="a trajectory is bounded by --max_total_len (all turns) "
                                                  "and each model turn by --max_gen_len")
    args = parser.parse_args(argv)
    args.device = resolve_device(args.device)
    args.dtype = args.dtype or default_dtype(args.device)
    if args.cut_update is None:  # FLOPs cost on a CPU; on a GPU, at this size, launches do
        args.cut_update = int(not str(args.device).startswith("cuda"))
    return args


def add_rollout_flags(parser):
    group = parser.add_argument_group("rollout: the design's loop")
    group.add_argument("--num_generations", type=int, default=8, help="trajectories per prompt (the group)")
    group.add_argument("--max_turns", type=int, default=3, help="model turns per trajectory")
    group.add_argument("--max_gen_len", type=int, default=256, help="new tokens per model turn")
    group.add_argument("--max_total_len", type=int, default=2500, help="tokens per trajectory, all turns")
    group.add_argument("--max_tool_tokens", type=int, default=256, help="a tool result is cut to this")
    group.add_argument("--tool_timeout", type=float, default=1.0, help="seconds per tool call")
    group.add_argument("--thinking_ratio", type=float, default=0.0,
                       help="share of trajectories that think (the evaluation never does)")
    group.add_argument("--temperature", type=float, default=1.0,
                       help="rollout sampling temperature (1.0 doubles the informative groups of 0.8)")
    group.add_argument("--top_p", type=float, default=1.0)


def add_loss_flags(parser):
    group = parser.add_argument_group("loss and optimisation: the design's")
    group.add_argument("--loss_type", default="cispo", choices=["cispo", "grpo"])
    group.add_argument("--beta", type=float, default=0.1, help="KL penalty to the reference model")
    group.add_argument("--epsilon", type=float, default=0.2, help="GRPO clip range")
    group.add_argument("--epsilon_high", type=float, default=5.0, help="CISPO upper clip of the ratio")
    group.add_argument("--learning_rate", type=float, default=5e-5,
                       help="peak LR; the design's 3e-7 does not move a 4.6M model in a CPU-sized run")
    group.add_argument("--batch_size", type=int, default=16, help="prompts per step")
    group.add_argument("--epochs", type=int, default=1)
    group.add_argument("--max_steps", type=int, default=300,
                       help="stop after this many optimizer steps (-1: the epochs; the 20,000-prompt "
                            "pool is 1,250 steps of 16 prompts)")
    group.add_argument("--accumulation_steps", type=int, default=1)
    group.add_argument("--grad_clip", type=float, default=1.0)
    group.add_argument("--adv_clip", type=float, default=2.0, help="clip advantages to [-x, x]; 0 = off")
    group.add_argument("--scale_rewards", default="group", choices=["group", "none"],
                       help="divide each group's centred rewards by its std (group) or not (none)")
    group.add_argument("--loss_norm", default="sequence", choices=["sequence", "token"],
                       help="the loss is the mean over sequences of each one's token mean (sequence), or "
                            "the mean over all model-written tokens of the batch (token)")


def add_data_flags(parser):
    group = parser.add_argument_group("data and checkpoints")
    group.add_argument("--data_path", default=DEFAULT_POOL,
                       help="RL prompts (JSONL, the design's format); the default pool of RL-only phrasings "
                            "is generated on first use")
    group.add_argument("--skip_bad_lines", action="store_true", help="skip (and count) malformed data lines")
    # the categories whose groups carry the most signal from the shipped cold start (about 30-38% of their
    # groups informative, against 10% for single calls and 2% for correction: docs/agent_rl_v2.md)
    group.add_argument("--category_weights", default="no_tool=3,parallel=3,chained=3",
                       help="prompt sampling weights by category, e.g. 'parallel=2,chained=2' (others 1; "
                            "'' = every prompt alike)")
    group.add_argument("--from_weight", default="full_sft", help="starting weights: a name in save_dir, "
                       "a .pth file or a transformers directory; also the frozen KL reference")
    group.add_argument("--save_weight", default="agent", help="output name: out/{save_weight}_{hidden}.pth")
    group.add_argument("--save_dir", default="out")
    group.add_argument("--save_dtype", default="float32", choices=list(SAVE_DTYPES),
                       help="dtype of the saved weights; bfloat16 rounds away most of a small RL update")
    group.add_argument("--save_interval", type=int, default=20,
                       help="steps between weight/resume saves (0 = only at the end)")
    group.add_argument("--from_resume", type=int, default=0, choices=[0, 1])
    group.add_argument("--average_last", type=float, default=0.0,
                       help="save the mean of the weights after each of this share of the last steps "
                            "(0.5: the second half), the last weights as {save_weight}_last (0 = off)")


def add_guards_flags(parser, guards):
    group = parser.add_argument_group("reward-hacking guards (0 turns one off; all off: the design's reward)")
    group.add_argument("--repeat_call_penalty", type=float, default=guards.repeat_call,
                       help="per call repeating an earlier one (same tool, same arguments)")
    group.add_argument("--needless_call_penalty", type=float, default=guards.needless_call,
                       help="for calling any tool on a question that needs none")
    group.add_argument("--extra_call_cost", type=float, default=guards.extra_calls,
                       help="per call past the expected number")
    group.add_argument("--missed_call_penalty", type=float, default=guards.missed_call,
                       help="for answering without any tool a task that needs one")
    group.add_argument("--direct_correction", type=int, default=1, choices=[0, 1],
                       help="a correction task solved without the failing call scores as aligned")
    group.add_argument("--spare_correct_repetition", type=int, default=1, choices=[0, 1],
                       help="no repetition penalty on an answer that holds every GT string")
    group.add_argument("--reward_model_path", default=None, help="optional reward model (no-tool branch)")


def add_dynamic_sampling_flags(parser):
    group = parser.add_argument_group("dynamic sampling")
    group.add_argument("--max_draws", type=int, default=1,
                       help="dynamic sampling (DAPO): a step draws up to this many batches of prompts, "
                            "until --batch_size of its groups have rewards that are not all equal (1 = off)")
    group.add_argument("--skip_zero_std", type=int, default=1, choices=[0, 1],
                       help="leave groups whose rewards are all equal out of the update (no policy signal)")


def add_evaluation_flags(parser):
    group = parser.add_argument_group("periodic evaluation and rollback")
    group.add_argument("--eval_interval", type=int, default=50,
                       help="steps between greedy evaluations on --eval_cases (0 = off)")
    group.add_argument(
        "--eval_cases", default="dataset/eval_toolcall.jsonl", help="evaluation cases (JSONL)"
    )
    group.add_argument(
        "--rollback_drop",
        type=float,
        default=0.0,
        help="if task completion falls this far below the best, reload the best weights (0 = off)",
    )


def add_runtime_flags(parser):
    group = parser.add_argument_group("runtime")
    group.add_argument("--device", default="auto")
    group.add_argument("--dtype", default=None, choices=["float32", "bfloat16", "float16"],
                       help="autocast dtype (default: bfloat16 where the CPU has bf16 kernels, "
                            "else float32)")
    group.add_argument("--seed", type=int, default=42)
    group.add_argument("--max_minutes", type=float, default=0.0,
                       help="also stop after this many minutes of this process's wall time (0 = off)")
    group.add_argument("--log_interval", type=int, default=10,
                       help="steps between terminal lines (the metrics file gets every step; 0 = none)")
    group.add_argument("--debug_mode", action="store_true", help="print whole trajectories")
    group.add_argument("--debug_interval", type=int, default=20)
    group.add_argument("--train_micro_batch", type=int, default=8, help="sequences per forward/backward")
    group.add_argument("--cut_update", type=int, default=None, choices=[0, 1],
                       help="1: each micro-batch cut to its model-written tokens, a group's prompt run "
                            "once (fewer FLOPs); 0: every row at the whole padded width (fewer kernel "
                            "launches). Default: 1 on the CPU, 0 on a GPU (docs/speed.md)")


def add_engine_flags(parser):
    group = parser.add_argument_group("rollout engine")
    group.add_argument("--rollout_engine", default="torch", choices=["torch", "sglang"],
                       help="torch: sample in this process; sglang: an SGLang server (README)")
    group.add_argument("--sglang_base_url", default="http://127.0.0.1:30000", help="the SGLang server")
    group.add_argument("--sglang_weights_dir", default=None,
                       help="the policy is written here for the server after every step; the server must "
                            "read it at the same path (default: {save_dir}/sglang_policy)")
    group.add_argument("--sglang_timeout", type=float, default=600.0, help="seconds to wait for one answer")
