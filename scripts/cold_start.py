"""
The whole cold start in one command: data, pretraining, SFT, and optionally a rejection-sampling round and a
preference (DPO) round. It makes the checkpoint agent RL starts from.

    python scripts/cold_start.py                    # about 1.5 hours on 2 CPU cores
    python scripts/cold_start.py --from_resume 1    # after a kill: done stages are skipped, the cut one resumes
    python scripts/cold_start.py --rft_round 1      # with stage 4, about 21 minutes more
    python scripts/cold_start.py --rft_round 1 --stages rft   # only the round, on an existing full_sft_r0
    python scripts/cold_start.py --dpo_round 1      # with stage 5, about 8 minutes more
    python scripts/cold_start.py --state_numbers 2 --dpo_round 1 --dpo_operator_pairs 1 --dpo_rehearse 2
                                                    # the best cold starts on v2 so far: 0.933-0.947
    python scripts/cold_start.py --sft_seed 7       # another SFT draw on seed 42's data and pretraining
    python scripts/cold_start.py --use_compile 1    # training steps through torch.compile (needs a C++ compiler)

Stages (each prints its own progress bar with an ETA):
    1. data      scripts/make_agent_data.py --n_sft N     SFT conversations (N, and N/5 more calculator
                                                          requests), RL prompts, held-out sets (~1 min)
                 scripts/make_pretrain_data.py            the pretraining text (~2 min)
    2. pretrain  trainer/train_pretrain.py                out/{prefix}pretrain_{hidden}.pth
    3. sft       trainer/train_full_sft.py --from_weight {prefix}pretrain
                                                          out/{prefix}full_sft_r0_{hidden}.pth
    4. rft       scripts/rejection_sample.py --weight {prefix}full_sft_r0 --k 8
                     the SFT model's own correct trajectories on the 2,000 RL-split prompts (~5 min)
                 trainer/train_full_sft.py --from_weight {prefix}full_sft_r0 on them, half of them
                     rehearsed SFT conversations, 2 epochs (~15 min)
                                                          out/{prefix}full_sft[_rft]_{hidden}.pth
    5. dpo       scripts/rejection_sample.py --weight <the previous stage's> --k 8 --pairs_out ...
                     pairs of a right and a failed trajectory of one prompt (~5 min)
                 trainer/train_dpo.py --from_weight <the previous stage's> on them, 2 epochs (~4 min)
                                                          out/{prefix}full_sft_{hidden}.pth

The last stage run writes out/{prefix}full_sft_{hidden}.pth: stage 3 itself without a round (the shipped
checkpoint was made so), otherwise the last round. Stage 4 is the data flywheel (docs/flywheel.md) with its
own settings. It raised the cold start by 0.9-1.6 points in three rounds, and agent RL after it by 1.1-1.8
points from a weaker cold-start draw but not from the shipped one. Stage 5 raised parallel calls by 11-12
points (significant in both seeds) and no_tool to 0.948-0.957, with single calls 1-2 points lower
(docs/cold_start.md). Both are options, not defaults.

The tokenizer is not retrained: the shipped model/tokenizer.json covers the new text (digits, ASCII words and
Chinese characters are its pieces). Progress is kept in out/{prefix}cold_start.json, so --from_resume 1 knows
which stages are done; the stage that was cut resumes from its own resume checkpoint.

A shape sweep runs the same command at other sizes and step budgets (docs/cold_start.md):
    bash scripts/sweep_shapes.sh
"""
import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

STAGES = ("data", "pretrain", "sft", "rft", "dpo")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="The cold start: data, pretraining and SFT in one command")
    p.add_argument("--prefix", default="", help="prefix of the output names (a sweep arm: 'sweep_256x8_')")
    p.add_argument("--hidden_size", type=int, default=None, help="model width (default: the CPU preset)")
    p.add_argument("--num_hidden_layers", type=int, default=None, help="blocks (default: the CPU preset)")
    p.add_argument("--n_sft", type=int, default=40_000,
                   help="distinct SFT conversations of every category (and a fifth more calculator requests)")
    p.add_argument("--quantity_rate", type=float, default=0.0,
                   help="share of SFT currency and unit requests in a quantity frame (make_agent_data.py)")
    p.add_argument("--state_numbers", type=int, default=0, choices=(0, 1, 2, 3),
                   help="1: chained calculator turns first list the question's numbers; 2: single ones too; "
                        "3: as 2, with each number's role in price and total requests (make_agent_data.py)")
    p.add_argument("--word_topics", type=int, default=0, choices=(0, 1),
                   help="1: no_tool questions also ask about topics that hold a tool's word (make_agent_data.py)")
    p.add_argument("--max_count", type=int, default=40,
                   help="largest count of items in a chained SFT request (make_agent_data.py; 40: the "
                        "shipped data)")
    p.add_argument("--n_pretrain_docs", type=int, default=100_000, help="pretraining documents")
    p.add_argument("--quantity_drills", type=float, default=0.0,
                   help="weight of the pretraining quantity drills (make_pretrain_data.py --quantity_weight)")
    p.add_argument("--pretrain_epochs", type=int, default=1)
    p.add_argument("--pretrain_steps", type=int, default=-1, help="cap on pretraining steps (-1: the epochs)")
    p.add_argument("--pretrain_warmup", type=int, default=100, help="pretraining warmup steps")
    p.add_argument("--sft_epochs", type=int, default=1, help="passes over the SFT conversations")
    p.add_argument("--sft_warmup", type=int, default=50, help="SFT warmup steps")
    p.add_argument("--sft_steps", type=int, default=-1, help="cap on SFT steps (-1: the epochs)")
    p.add_argument("--sft_learning_rate", type=float, default=1e-3, help="peak LR of SFT after pretraining")
    p.add_argument("--sft_ema_decay", type=float, default=0.0,
                   help="also save a moving average of the SFT weights beside them, "
                        "out/{prefix}full_sft[_r0]_ema_{hidden}.pth (train_full_sft.py --ema_decay; 0: off)")
    p.add_argument("--rft_round", type=int, default=0, choices=[0, 1],
                   help="1: stage 4, one rejection-sampling round after SFT (0: stop after SFT)")
    p.add_argument("--rft_k", type=int, default=8, help="trajectories sampled a prompt in the round")
    p.add_argument("--rft_epochs", type=int, default=2, help="passes over the round's SFT data")
    p.add_argument("--rft_learning_rate", type=float, default=2e-4, help="peak LR of the round's SFT")
    p.add_argument("--dpo_round", type=int, default=0, choices=[0, 1],
                   help="1: stage 5, one DPO round on the model's own right and failed trajectories")
    p.add_argument("--dpo_rehearse", type=int, default=0, choices=[0, 1, 2],
                   help="stage 5 also learns 16 conversations a step (train_dpo.py --rehearse_path): 1 of the "
                        "SFT data, 2 of the round's own right trajectories (0: none)")
    p.add_argument("--dpo_operator_pairs", type=int, default=0, choices=[0, 1],
                   help="1: stage 5's pairs also mirror each calculator operator they take away "
                        "(rejection_sample.py --operator_pairs)")
    p.add_argument("--stages", default=",".join(STAGES),
                   help="run only these stages, comma-separated (the others must have been run before)")
    p.add_argument("--use_compile", type=int, default=0, choices=[0, 1],
                   help="1: pretraining and SFT steps through torch.compile (about 1.2x faster steps on a CPU; "
                        "needs a C++ compiler)")
    p.add_argument("--save_dir", default="out")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--sft_seed", type=int, default=None,
                   help="seed of SFT and the rounds after it, their training and sampling (default: --seed, "
                        "which seeds the data and the pretraining): another SFT draw from the same data and "
                        "pretraining")
    p.add_argument("--from_resume", type=int, default=0, choices=[0, 1])
    args = p.parse_args(argv)
    args.stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = [s for s in args.stages if s not in STAGES]
    if unknown:
        p.error(f"--stages: unknown stage(s) {unknown}; the stages are {', '.join(STAGES)}")
    for stage, on in (("rft", args.rft_round), ("dpo", args.dpo_round)):
        if not on and stage in args.stages:
            args.stages.remove(stage)
    return args


def output_name(args, stage: str) -> str:
    """The checkpoint a training stage writes: full_sft for the last one, a name of its own otherwise."""
    last = "dpo" if args.dpo_round else "rft" if args.rft_round else "sft"
    own = {"sft": "full_sft_r0", "rft": "full_sft_rft", "dpo": "full_sft"}[stage]
    return f"{args.prefix}full_sft" if stage == last else f"{args.prefix}{own}"


def sft_name(args) -> str:
    """Stage 3's checkpoint: the first round's start when there is a round, else the cold start's end."""
    return output_name(args, "sft")


def dpo_start(args) -> str:
    return output_name(args, "rft" if args.rft_round else "sft")


def sft_seed(args) -> int:
    """The seed of stages 3-5 (--sft_seed, else --seed)."""
    return args.seed if args.sft_seed is None else args.sft_seed


def shape_args(args) -> list:
    out = []
    if args.hidden_size:
        out += ["--hidden_size", str(args.hidden_size)]
    if args.num_hidden_layers:
        out += ["--num_hidden_layers", str(args.num_hidden_layers)]
    return out


def trainer_args(args) -> list:
    """The shape flags, and --use_compile, for a stage that runs train_pretrain.py or train_full_sft.py."""
    return shape_args(args) + ["--use_compile", str(args.use_compile)]


def stage_data(args, resume: bool):
    """Both generators, always: they are deterministic and take minutes, and files already in dataset/ may
    come from other phrasing tables or another seed (a count of lines cannot tell)."""
    from scripts.make_agent_data import main as make_agent_data
    from scripts.make_pretrain_data import main as make_pretrain_data

    make_agent_data(["--n_sft", str(args.n_sft), "--seed", str(args.seed),
                     "--quantity_rate", str(args.quantity_rate), "--state_numbers", str(args.state_numbers),
                     "--word_topics", str(args.word_topics), "--max_count", str(args.max_count)])
    make_pretrain_data(["--n_docs", str(args.n_pretrain_docs), "--quantity_weight", str(args.quantity_drills)])


def stage_pretrain(args, resume: bool):
    from trainer.train_pretrain import parse_args as pretrain_args, train

    argv = trainer_args(args) + ["--save_weight", f"{args.prefix}pretrain", "--save_dir", args.save_dir,
                                 "--epochs", str(args.pretrain_epochs), "--max_steps", str(args.pretrain_steps),
                                 "--warmup_steps", str(args.pretrain_warmup), "--seed", str(args.seed),
                                 "--from_resume", str(int(resume))]
    return train(pretrain_args(argv))


def stage_sft(args, resume: bool):
    from trainer.train_full_sft import parse_args as sft_args, train

    argv = trainer_args(args) + ["--from_weight", f"{args.prefix}pretrain", "--save_weight", sft_name(args),
                                 "--save_dir", args.save_dir, "--epochs", str(args.sft_epochs),
                                 "--max_steps", str(args.sft_steps), "--learning_rate", str(args.sft_learning_rate),
                                 "--warmup_steps", str(args.sft_warmup), "--seed", str(sft_seed(args)),
                                 "--ema_decay", str(args.sft_ema_decay), "--from_resume", str(int(resume))]
    return train(sft_args(argv))


def stage_rft(args, resume: bool):
    """Sample, keep the correct trajectories, learn them. A resumed round keeps a finished sample file (it is
    written whole or not at all) and resumes the SFT from its resume checkpoint."""
    from scripts.rejection_sample import main as rejection_sample
    from trainer.train_full_sft import parse_args as sft_args, train

    sft_resume = checkpoint_exists(args, output_name(args, "rft"))
    start = sft_name(args)
    samples = rft_samples_path(args)
    if not (resume and os.path.exists(samples)):
        rejection_sample(shape_args(args) + ["--weight", start, "--save_dir", args.save_dir,
                                             "--k", str(args.rft_k), "--batch_prompts", "16",
                                             "--seed", str(sft_seed(args)), "--out", samples])
    argv = trainer_args(args) + ["--from_weight", start, "--save_weight", output_name(args, "rft"),
                                 "--save_dir", args.save_dir, "--data_path", samples,
                                 "--mix_path", "dataset/sft_agent.jsonl", "--mix_ratio", "0.5",
                                 "--epochs", str(args.rft_epochs), "--learning_rate", str(args.rft_learning_rate),
                                 "--warmup_steps", "10", "--eval_interval", "50", "--save_best", "0",
                                 "--seed", str(sft_seed(args)), "--from_resume", str(int(resume and sft_resume))]
    return train(sft_args(argv))


def stage_dpo(args, resume: bool):
    """Sample, pair each failed trajectory with a right one of its prompt, DPO on the pairs. Resumed like the
    rejection-sampling round: a finished pairs file is kept, the DPO resumes from its own checkpoint."""
    from scripts.rejection_sample import main as rejection_sample
    from trainer.train_dpo import parse_args as dpo_args, train

    dpo_resume = checkpoint_exists(args, output_name(args, "dpo"))
    start, pairs = dpo_start(args), dpo_pairs_path(args)
    accepted = os.path.join(args.save_dir, f"{args.prefix}dpo_accepted.jsonl")
    if not (resume and os.path.exists(pairs) and os.path.exists(accepted)):
        rejection_sample(shape_args(args) + ["--weight", start, "--save_dir", args.save_dir,
                                             "--k", "8", "--batch_prompts", "16", "--seed", str(sft_seed(args)),
                                             "--out", accepted, "--pairs_out", pairs,
                                             "--operator_pairs", str(args.dpo_operator_pairs)])
    argv = shape_args(args) + ["--from_weight", start, "--save_weight", output_name(args, "dpo"),
                               "--save_dir", args.save_dir, "--data_path", pairs, "--seed", str(sft_seed(args)),
                               "--from_resume", str(int(resume and dpo_resume))]
    if args.dpo_rehearse:  # 1: the SFT data; 2: the trajectories the sampling above accepted
        argv += ["--rehearse_path", "dataset/sft_agent.jsonl" if args.dpo_rehearse == 1 else accepted]
    return train(dpo_args(argv))


RUNNERS = {"data": stage_data, "pretrain": stage_pretrain, "sft": stage_sft, "rft": stage_rft, "dpo": stage_dpo}


def rft_samples_path(args) -> str:
    return os.path.join(args.save_dir, f"{args.prefix}rft_samples.jsonl")


def dpo_pairs_path(args) -> str:
    return os.path.join(args.save_dir, f"{args.prefix}dpo_pairs.jsonl")


def checkpoint_exists(args, weight: str) -> bool:
    """Is there a resume checkpoint of this training run?"""
    from model.model_minimind import DEFAULT_HIDDEN_SIZE
    from trainer.trainer_utils import resume_path

    return os.path.exists(resume_path(args.save_dir, weight, args.hidden_size or DEFAULT_HIDDEN_SIZE, False))


def resume_file_exists(args, stage) -> bool:
    if stage == "rft":  # a finished sample file is worth keeping even when the round's SFT never started
        return os.path.exists(rft_samples_path(args)) or checkpoint_exists(args, output_name(args, "rft"))
    if stage == "dpo":
        return os.path.exists(dpo_pairs_path(args)) or checkpoint_exists(args, output_name(args, "dpo"))
    weight = {"pretrain": f"{args.prefix}pretrain", "sft": sft_name(args)}.get(stage)
    return weight is not None and checkpoint_exists(args, weight)


def main(argv=None):
    args = parse_args(argv)
    os.chdir(ROOT)
    os.makedirs(args.save_dir, exist_ok=True)
    state_path = os.path.join(args.save_dir, f"{args.prefix}cold_start.json")
    state = {"done": [], "seconds": {}}
    if args.from_resume and os.path.exists(state_path):
        with open(state_path, encoding="utf-8") as f:
            state = json.load(f)
        print(f"resuming: done {state['done'] or 'nothing'}")
    state["config"] = vars(args)
    t_all = time.time()
    for k, stage in enumerate(STAGES, start=1):
        if stage not in args.stages:
            continue
        if stage in state["done"]:
            print(f"stage {k}/{len(STAGES)}: {stage} done already ({state['seconds'][stage]:.0f}s)")
            continue
        resume = bool(args.from_resume) and resume_file_exists(args, stage)
        print(f"\n=== stage {k}/{len(STAGES)}: {stage}" + (" (resuming)" if resume else "") + " ===", flush=True)
        t0 = time.time()
        finished = RUNNERS[stage](args, resume) is not False
        state["seconds"][stage] = state["seconds"].get(stage, 0) + time.time() - t0
        if finished:
            state["done"].append(stage)
        with open(state_path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(state, f, indent=1)
        os.replace(state_path + ".tmp", state_path)
        if not finished:  # a signal: the stage saved a resume checkpoint; a non-zero status stops `&& next`
            from trainer.trainer_utils import exit_status

            print(f"\nstopped during {stage}: python scripts/cold_start.py --from_resume 1 goes on from there")
            return exit_status(False) or 1  # 1: stopped without a signal (a stage that cannot go on)
    total = sum(state["seconds"].values())
    print(f"\ncold start done in {total / 60:.1f} min of stage time ({(time.time() - t_all) / 60:.1f} min this run): "
          + ", ".join(f"{s} {t / 60:.1f} min" for s, t in state["seconds"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
