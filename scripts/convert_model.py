"""
Convert a MiniMind checkpoint to a transformers directory that serving engines load without custom code.

A dense MiniMind is a Qwen3 model (same modules, same names), so the directory is written in the Qwen3 layout:
config.json naming Qwen3ForCausalLM, model.safetensors (fp32, the exact weights) and the tokenizer with its
tool chat template. SGLang, vLLM and transformers' AutoModelForCausalLM load it as Qwen3; this project's own
scripts load it back as MiniMind (--from_weight DIR, --load_from DIR). MoE checkpoints have no Qwen3 equivalent.

    python scripts/convert_model.py --weight full_sft --out_dir out/minimind_qwen3
    python scripts/convert_model.py --weight out/agent_step400_256.pth --out_dir out/agent400_qwen3 --dtype float32
"""
import argparse
import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from model.model_minimind import save_qwen3_dir
from trainer.trainer_utils import add_model_args, init_model


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="MiniMind checkpoint -> Qwen3-layout transformers directory")
    parser.add_argument("--weight", default="full_sft", help="out/{weight}_{hidden}.pth, or a .pth path")
    parser.add_argument("--save_dir", default="out", help="where --weight is looked up")
    parser.add_argument("--out_dir", default="out/minimind_qwen3", help="the transformers directory to write")
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"],
                        help="precision config.json asks a server to run in (weights are always written in fp32)")
    add_model_args(parser)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    model, tokenizer = init_model(args, args.weight, args.save_dir)
    save_qwen3_dir(model, args.out_dir, args.dtype)
    tokenizer.save_pretrained(args.out_dir)
    print(f"wrote {args.out_dir}: Qwen3ForCausalLM, hidden {model.config.hidden_size} x "
          f"{model.config.num_hidden_layers} layers, config dtype {args.dtype}, with the tokenizer")


if __name__ == "__main__":
    main()
