"""
Average checkpoints of one architecture, parameter by parameter (a uniform "model soup").

Fine-tunes that start from the same weights and differ only in their seed land close together, and their
average keeps what they have in common while the seed-specific part partly cancels. The data flywheel uses
it to average the incremental-SFT runs of several seeds (scripts/flywheel.sh, SEEDS="42 7").

Run:
    python scripts/average_weights.py --weights fw6_sft fw7_sft --out soup_sft
    python scripts/average_weights.py --weights out/a_256.pth out/b_256.pth --out soup --dtype bfloat16
"""
import argparse
import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch

from model.model_minimind import save_minimind, weight_path
from trainer.trainer_utils import add_model_args, init_model


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Average checkpoints parameter by parameter")
    parser.add_argument("--weights", nargs="+", required=True,
                        help="names in save_dir or .pth paths, all of one architecture")
    parser.add_argument("--save_dir", default="out")
    add_model_args(parser)
    parser.add_argument("--out", required=True, help="name of the averaged checkpoint in save_dir")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"], help="saved precision")
    args = parser.parse_args(argv)
    if len(args.weights) < 2:
        parser.error("--weights needs at least two checkpoints")
    return args


@torch.no_grad()
def average(models):
    """Load the parameter-wise mean of `models` into the first one and return it."""
    states = [m.state_dict() for m in models]
    # all means first: tied tensors (lm_head = embeddings) share storage, so copying in place would average
    # an already averaged tensor again
    means = {name: torch.stack([s[name].float() for s in states]).mean(0) for name in states[0]}
    models[0].load_state_dict(means)
    return models[0]


def main(argv=None):
    args = parse_args(argv)
    models = [init_model(args, w, args.save_dir)[0] for w in args.weights]
    shapes = [{k: v.shape for k, v in m.state_dict().items()} for m in models]
    for w, shape in zip(args.weights[1:], shapes[1:]):
        if shape != shapes[0]:  # each checkpoint loads with its own shape; a mean needs one shape
            raise ValueError(f"{w} does not match the shape of {args.weights[0]} "
                             f"({models[0].config.num_hidden_layers} layers, hidden {models[0].config.hidden_size})")
    merged = average(models)
    path = weight_path(args.save_dir, args.out, args.hidden_size, bool(args.use_moe))
    save_minimind(merged, path, dtype=getattr(torch, args.dtype))
    print(f"averaged {len(models)} checkpoints ({', '.join(args.weights)}) into {path}")
    return path


if __name__ == "__main__":
    main()
