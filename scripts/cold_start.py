"""
The whole cold start in one command: data, pretraining, SFT. It makes the checkpoint agent RL starts from.

    python scripts/cold_start.py                    # about 2 hours on 2 CPU cores
    python scripts/cold_start.py --from_resume 1    # after a kill: done stages are skipped, the cut one resumes

Stages (each prints its own progress bar with an ETA):
    1. data      scripts/make_agent_data.py --n_sft N     SFT conversations, RL prompts, held-out sets (~1 min)
                 scripts/make_pretrain_data.py            the pretraining text (~2 min)
    2. pretrain  trainer/train_pretrain.py                out/{prefix}pretrain_{hidden}.pth
    3. sft       trainer/train_full_sft.py --from_weight {prefix}pretrain
                                                          out/{prefix}full_sft_{hidden}.pth

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

STAGES = ("data", "pretrain", "sft")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="The cold start: data, pretraining and SFT in one command")
    p.add_argument("--prefix", default="", help="prefix of the output names (a sweep arm: 'sweep_256x8_')")
    p.add_argument("--hidden_size", type=int, default=None, help="model width (default: the CPU preset)")
    p.add_argument("--num_hidden_layers", type=int, default=None, help="blocks (default: the CPU preset)")
    p.add_argument("--n_sft", type=int, default=40_000, help="distinct SFT conversations")
    p.add_argument("--n_pretrain_docs", type=int, default=100_000, help="pretraining documents")
    p.add_argument("--pretrain_epochs", type=int, default=1)
    p.add_argument("--pretrain_steps", type=int, default=-1, help="cap on pretraining steps (-1: the epochs)")
    p.add_argument("--pretrain_warmup", type=int, default=100, help="pretraining warmup steps")
    p.add_argument("--sft_epochs", type=int, default=1, help="passes over the SFT conversations")
    p.add_argument("--sft_warmup", type=int, default=50, help="SFT warmup steps")
    p.add_argument("--sft_steps", type=int, default=-1, help="cap on SFT steps (-1: the epochs)")
    p.add_argument("--sft_learning_rate", type=float, default=1e-3, help="peak LR of SFT after pretraining")
    p.add_argument("--save_dir", default="out")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--from_resume", type=int, default=0, choices=[0, 1])
    return p.parse_args(argv)


def shape_args(args) -> list:
    out = []
    if args.hidden_size:
        out += ["--hidden_size", str(args.hidden_size)]
    if args.num_hidden_layers:
        out += ["--num_hidden_layers", str(args.num_hidden_layers)]
    return out


def stage_data(args, resume: bool):
    """Both generators, always: they are deterministic and take minutes, and files already in dataset/ may
    come from other phrasing tables or another seed (a count of lines cannot tell)."""
    from scripts.make_agent_data import main as make_agent_data
    from scripts.make_pretrain_data import main as make_pretrain_data

    make_agent_data(["--n_sft", str(args.n_sft), "--seed", str(args.seed)])
    make_pretrain_data(["--n_docs", str(args.n_pretrain_docs)])


def stage_pretrain(args, resume: bool):
    from trainer.train_pretrain import parse_args as pretrain_args, train

    argv = shape_args(args) + ["--save_weight", f"{args.prefix}pretrain", "--save_dir", args.save_dir,
                               "--epochs", str(args.pretrain_epochs), "--max_steps", str(args.pretrain_steps),
                               "--warmup_steps", str(args.pretrain_warmup), "--seed", str(args.seed),
                               "--from_resume", str(int(resume))]
    return train(pretrain_args(argv))


def stage_sft(args, resume: bool):
    from trainer.train_full_sft import parse_args as sft_args, train

    argv = shape_args(args) + ["--from_weight", f"{args.prefix}pretrain", "--save_weight", f"{args.prefix}full_sft",
                               "--save_dir", args.save_dir, "--epochs", str(args.sft_epochs),
                               "--max_steps", str(args.sft_steps), "--learning_rate", str(args.sft_learning_rate),
                               "--warmup_steps", str(args.sft_warmup), "--seed", str(args.seed),
                               "--from_resume", str(int(resume))]
    return train(sft_args(argv))


RUNNERS = {"data": stage_data, "pretrain": stage_pretrain, "sft": stage_sft}


def resume_file_exists(args, stage) -> bool:
    from model.model_minimind import DEFAULT_HIDDEN_SIZE
    from trainer.trainer_utils import resume_path

    weight = {"pretrain": "pretrain", "sft": "full_sft"}.get(stage)
    if weight is None:
        return False
    return os.path.exists(resume_path(args.save_dir, f"{args.prefix}{weight}",
                                      args.hidden_size or DEFAULT_HIDDEN_SIZE, False))


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
        if not finished:  # a signal: the stage saved a resume checkpoint
            print(f"\nstopped during {stage}: python scripts/cold_start.py --from_resume 1 goes on from there")
            return
    total = sum(state["seconds"].values())
    print(f"\ncold start done in {total / 60:.1f} min of stage time ({(time.time() - t_all) / 60:.1f} min this run): "
          + ", ".join(f"{s} {state['seconds'][s] / 60:.1f} min" for s in STAGES))


if __name__ == "__main__":
    main()
