"""
The first digit after '<amount>*' in the calculator call of a chained currency case, as a checkpoint scores it.

For every held-out chained case whose first call is get_exchange_rate, the conversation is built with that
call and its result as the case expects them, then the second call is written up to the first factor and
'*' ('{"expression": "283*'); the model's next-token distribution there says whether it goes on to the rate
(a plain amount: 283*7.85) or to a count (a price times a count: 446*33*0.1387), and what it puts instead.

    python docs/cold_start_v11/probe_second_call.py --weight full_sft
"""
import argparse
import json
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from model.model_minimind import MiniMindConfig, load_minimind, weight_path  # noqa: E402
from trainer.evaluation import DEFAULT_SYSTEM  # noqa: E402
from trainer.train_agent import TOOLS_BY_NAME, encode, generation_prefill, render  # noqa: E402
from trainer.trainer_utils import load_tokenizer  # noqa: E402


def prefix_text(tokenizer, case) -> str:
    first, second = case["expect_calls"]
    call = json.dumps({"name": first["name"], "arguments": first["arguments"]}, ensure_ascii=False)
    messages = [
        {"role": "system", "content": DEFAULT_SYSTEM},
        {"role": "user", "content": case["prompt"]},
        {"role": "assistant", "content": generation_prefill(False) + f"<tool_call>\n{call}\n</tool_call>"},
        {"role": "tool", "content": json.dumps(first["result"], ensure_ascii=False)},
    ]
    tools = [TOOLS_BY_NAME[n] for n in case["tools"]]
    head = second["arguments"]["expression"].split("*")[0]
    return render(tokenizer, messages, tools, add_generation_prompt=True, open_thinking=False) + \
        '<tool_call>\n{"name": "calculate_math", "arguments": {"expression": "' + head + "*"


def main():
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--weight", default="full_sft")
    p.add_argument("--cases", default=os.path.join(ROOT, "dataset", "eval_toolcall.jsonl"))
    p.add_argument("--save_dir", default=os.path.join(ROOT, "out"))
    args = p.parse_args()
    tokenizer = load_tokenizer()
    model = load_minimind(weight_path(args.save_dir, args.weight, 256, False), MiniMindConfig()).eval()
    cases = [json.loads(line) for line in open(args.cases, encoding="utf-8")]
    cases = [c for c in cases if c["category"] == "chained" and c["expect_tools"][0] == "get_exchange_rate"]
    tally = {"amount": [], "count": []}  # per kind: (P(right), right is the most likely digit)
    for c in cases:
        ids = torch.tensor([encode(tokenizer, prefix_text(tokenizer, c))])
        with torch.no_grad():
            probs = model(ids).logits[0, -1].float().softmax(-1)
        expression = c["expect_calls"][1]["arguments"]["expression"]
        right = expression.split("*")[1][0]
        amount = expression.split("*")[0]
        top = [(tokenizer.decode([int(i)]), round(float(v), 2)) for v, i in zip(*probs.topk(3))]
        kind = "count" if expression.count("*") == 2 else "amount"
        p_right = float(probs[tokenizer.convert_tokens_to_ids(right)])
        tally[kind].append((p_right, top[0][0] == right))
        print(f"{kind:6} P(right {right!r})={probs[tokenizer.convert_tokens_to_ids(right)]:.2f} "
              f"P(amount's first digit {amount[0]!r})={probs[tokenizer.convert_tokens_to_ids(amount[0])]:.2f} "
              f"top={top} {expression} | {c['prompt']}")
    for kind, rows in tally.items():
        print(f"{args.weight} {kind}: {len(rows)} cases, mean P(right) {sum(p for p, _ in rows) / len(rows):.2f}, "
              f"right digit most likely in {sum(ok for _, ok in rows)}")


if __name__ == "__main__":
    main()
