"""
Convert a MiniMind checkpoint to a transformers directory, with its tokenizer and tool chat template.

--format qwen3 (the default): a dense MiniMind is a Qwen3 model (same modules, same names), so config.json
names Qwen3ForCausalLM and model.safetensors holds the exact fp32 weights. SGLang, vLLM and transformers load
it as Qwen3 with no custom code. MoE checkpoints have no Qwen3 equivalent.
--format minimind: MiniMind's own layout (any shape, MoE included) with the model's code beside the weights
(auto_map), for AutoModelForCausalLM.from_pretrained(dir, trust_remote_code=True) in any process.
This project's scripts load either back as MiniMind (--from_weight DIR, --load_from DIR).

    python scripts/convert_model.py --weight full_sft --out_dir out/minimind_qwen3
    python scripts/convert_model.py --weight agent --format minimind --out_dir out/agent_hf
"""
import argparse
import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from model.model_minimind import save_minimind_dir, save_qwen3_dir
from trainer.trainer_utils import add_model_args, init_model


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="MiniMind checkpoint -> Qwen3-layout transformers directory")
    parser.add_argument("--weight", default="full_sft", help="out/{weight}_{hidden}.pth, or a .pth path")
    parser.add_argument("--save_dir", default="out", help="where --weight is looked up")
    parser.add_argument("--out_dir", default="out/minimind_qwen3", help="the transformers directory to write")
    parser.add_argument("--format", default="qwen3", choices=["qwen3", "minimind"],
                        help="qwen3: loads anywhere without custom code (dense only); minimind: own layout "
                             "with its code, for trust_remote_code=True")
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"],
                        help="the precision config.json asks a server for (weights are fp32)")
    add_model_args(parser)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    model, tokenizer = init_model(args, args.weight, args.save_dir)
    if args.format == "qwen3":
        save_qwen3_dir(model, args.out_dir, args.dtype)
    else:
        save_minimind_dir(model, args.out_dir, args.dtype)
    tokenizer.save_pretrained(args.out_dir)
    kind = "Qwen3ForCausalLM" if args.format == "qwen3" else "MiniMindForCausalLM (trust_remote_code)"
    print(f"wrote {args.out_dir}: {kind}, hidden {model.config.hidden_size} x "
          f"{model.config.num_hidden_layers} layers, config dtype {args.dtype}, with the tokenizer")


if __name__ == "__main__":
    main()
