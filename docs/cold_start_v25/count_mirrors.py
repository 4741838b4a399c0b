"""Count mirror pairs for the DPO round: teach "does this currency request carry a count" on the round's own
right trajectories, as the operator mirrors teach an operator.

For each distinct chained currency prompt among a round's accepted trajectories (rejection_sample.py --out),
the right trajectory is the chosen side; the rejected side is the same conversation up to its calculator
turn, written as the two failures the held-out set shows (docs/cold_start.md, the twin probe):
    a count of items at a price, the count dropped:   37*450*9.12   ->  450*9.12
    a plain amount, a count invented from its digits:  283*7.85     ->  283*28*7.85  (20*9.12 -> 20*20*9.12)
and the turn's listed numbers (--state_numbers 2: "题中的数:37、450;汇率 9.12。") changed to match.
DPO scores from the turn where the two sides part (train_dpo.py --divergent_turn_only 1).

    python docs/cold_start_v25/count_mirrors.py out/r7_accepted.jsonl out/r7_count_mirrors.jsonl
    cat out/r7_pairs_op.jsonl out/r7_count_mirrors.jsonl > out/r7_pairs_cm.jsonl
"""
import copy
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from dataset.lm_dataset import encode_sft_conversation, parse_conversation, tokenizer_fingerprint  # noqa: E402
from scripts.make_agent_data import MAX_COUNT  # noqa: E402  the SFT data's largest count of items
from trainer.trainer_utils import TOKENIZER_DIR, load_tokenizer  # noqa: E402

LISTED = re.compile(r"^(题中的数:|Numbers in the question: )(.*?)([;;].*)$", re.S)


def calc_turn(messages):
    """Index of the calculator turn that follows an exchange-rate result, or None."""
    rate_seen = False
    for i, m in enumerate(messages):
        if m["role"] == "tool" and '"rate"' in m["content"]:
            rate_seen = True
        if rate_seen and m["role"] == "assistant" and m.get("tool_calls"):
            fn = m["tool_calls"][0]["function"]
            if fn["name"] == "calculate_math":
                return i
    return None


def mirrored(expression: str):
    """(the failed expression, the numbers to list instead of the right ones' change) or None."""
    factors = expression.split("*")
    if len(factors) == 3:  # price and count, either order, then the rate
        small = [f for f in factors[:2] if f.isdigit() and int(f) <= MAX_COUNT]
        if len(small) != 1:
            return None
        kept = [f for f in factors[:2] if f != small[0]]
        return "*".join(kept + [factors[2]]), ("drop", small[0])
    if len(factors) == 2 and factors[0].isdigit() and int(factors[0]) > 10:
        amount = factors[0]
        invented = amount[:2] if len(amount) >= 3 else amount
        return f"{amount}*{invented}*{factors[1]}", ("add", invented)
    return None


def relist(content: str, change, lang_sep: str):
    m = LISTED.match(content)
    if not m:
        return content
    numbers = [n for n in re.split(r"、|, ", m.group(2)) if n]
    kind, number = change
    if kind == "add":
        numbers.append(number)
    elif number in numbers:
        numbers.remove(number)
    return m.group(1) + lang_sep.join(numbers) + m.group(3)


def side(ids, labels, start):
    """The ids after the prompt and their mask, without the template's newline after the last turn (a
    rollout stops at <|im_end|>)."""
    mask = [int(x != -100) for x in labels]
    end = max(j for j, m in enumerate(mask) if m) + 1
    return {"ids": ids[start:end], "mask": mask[start:end]}


def main(accepted_path, out_path):
    tokenizer = load_tokenizer(TOKENIZER_DIR)
    fingerprint = tokenizer_fingerprint(tokenizer)
    seen, pairs = set(), []
    for lineno, line in enumerate(open(accepted_path, encoding="utf-8"), 1):
        record = json.loads(line)
        if record.get("category") != "chained":
            continue
        messages, tools = parse_conversation(record, accepted_path, lineno)
        user = next(m["content"] for m in messages if m["role"] == "user")
        i = calc_turn(messages)
        if user in seen or i is None:
            continue
        call = messages[i]["tool_calls"][0]["function"]
        expression = json.loads(call["arguments"]).get("expression", "")
        mirror = mirrored(expression)
        if mirror is None:
            continue
        seen.add(user)
        wrong, change = mirror
        bad = copy.deepcopy(messages[:i + 1])
        sep = "、" if messages[i]["content"].startswith("题中的数") else ", "
        bad[i]["content"] = relist(messages[i]["content"], change, sep)
        bad[i]["tool_calls"][0]["function"]["arguments"] = json.dumps({"expression": wrong}, ensure_ascii=False)
        good_ids, good_labels = encode_sft_conversation(tokenizer, messages, tools)
        bad_ids, bad_labels = encode_sft_conversation(tokenizer, bad, tools)
        start = next(j for j, x in enumerate(good_labels) if x != -100)
        if bad_ids[:start] != good_ids[:start]:
            continue
        chosen, rejected = side(good_ids, good_labels, start), side(bad_ids, bad_labels, start)
        chosen["text"] = tokenizer.decode(chosen["ids"], skip_special_tokens=False)
        rejected["text"] = tokenizer.decode(rejected["ids"], skip_special_tokens=False)
        pairs.append({"prompt": user, "category": "chained", "reason": "count_mirror", "chosen_source": "sample",
                      "tokenizer": fingerprint, "prompt_ids": good_ids[:start], "chosen": chosen,
                      "rejected": rejected})
    with open(out_path, "w", encoding="utf-8") as f:
        for p in pairs:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    kinds = sum("*" in p["rejected"]["text"] for p in pairs)
    print(f"{len(pairs)} count mirror pairs ({kinds} with a calculator call) -> {out_path}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
