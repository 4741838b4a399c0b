"""
Rejection sampling: turn a checkpoint's own correct trajectories into SFT conversations (the data flywheel).

For every prompt, sample k trajectories with the training rollout (trainer/train_agent.py: same tool world,
parser and chat template), keep only those that are right in every way the reward and the evaluation check:

    finished; every GT value in the final answer; the tool calls are exactly the expected number, all valid
    and none repeated (a no-tool question: no call at all); balanced <tool_call> tags, nothing unparsable;
    no looping answer (3-gram repetition under 30%); no chat-template control token written inside a turn;
    and the conversation re-renders through the chat template to exactly the ids that were sampled (so SFT
    teaches precisely what the model wrote, token for token).

Accepted trajectories are deduplicated and written in the SFT format of dataset/sft_agent.jsonl (assistant
`tool_calls`, `tool` messages, the final answer), with a per-category summary of acceptance.

With --pairs_out, the prompts that some samples solved and some failed also give preference pairs for
trainer/train_dpo.py: each distinct failed trajectory (a needless call, a miscopied number, a missing call...)
beside one of the prompt's right ones, both as the token ids that were sampled, with the mask of the tokens
the model wrote. --skipped_call_pairs 1 adds the other side of the call boundary: as many tool prompts as
there are needless-call pairs, each a right trajectory against its own final answer given without the call.
--operator_pairs 1 does the same for a calculator operator that pairs take away: a pair that rejects `N**X`
for `N*X` (a prompt that says "N次", N times) gets a mirror on a solved power prompt, `5**7` over `5*7`.

Prompts: the RL pool by default; --categories picks categories by name, --profile picks the --weakest
categories of a behaviour profile (the *_profile.json the periodic evaluation of train_agent.py writes, or the
--out report of scripts/eval_toolcall.py).

Run:
    python scripts/rejection_sample.py --weight agent_best --k 8 --out dataset/rs_agent.jsonl
    python scripts/rejection_sample.py --weight agent_best --profile out/agent_best_256_profile.json --weakest 2
    python scripts/rejection_sample.py --weight full_sft --out out/rs.jsonl --pairs_out out/dpo_pairs.jsonl
"""
import argparse
import json
import os
import random
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from types import SimpleNamespace

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
from tqdm import tqdm

from dataset.lm_dataset import (CONTROL_TOKENS, AgentRLDataset, encode, encode_sft_conversation,
                                tokenizer_fingerprint)
from trainer.fast_engine import create_rollout_engine
from trainer.train_agent import (
    CHECK_ARGS, GT_WEIGHT, MOCK_RESULTS, count_repeated_calls, final_answer, generation_prefill,
    gt_match_score, parse_tool_calls, repetition_penalty, rollout_batch, tag_format_score,
)
from trainer.trainer_utils import add_model_args, default_dtype, init_model, resolve_device, set_seed


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Rejection-sample correct trajectories into SFT data")
    parser.add_argument("--weight", default="agent_best", help="a name in save_dir, a .pth path or an HF dir")
    parser.add_argument("--save_dir", default="out")
    add_model_args(parser)
    parser.add_argument("--data_path", default="dataset/agent_rl.jsonl", help="prompts (the RL pool format)")
    parser.add_argument("--categories", default="", help="only these categories, comma-separated")
    parser.add_argument("--profile", default=None, help="a behaviour profile JSON: sample its weakest categories")
    parser.add_argument("--weakest", type=int, default=2, help="with --profile: how many categories")
    parser.add_argument("--rest", type=int, default=0, choices=[0, 1],
                        help="with --profile: sample the categories other than the --weakest instead "
                             "(self-rehearsal)")
    parser.add_argument("--max_prompts", type=int, default=0, help="at most this many prompts (0 = all)")
    parser.add_argument("--k", type=int, default=8, help="trajectories sampled per prompt")
    parser.add_argument("--max_per_prompt", type=int, default=2, help="distinct accepted trajectories kept")
    parser.add_argument("--max_per_hard_prompt", type=int, default=0,
                        help="distinct accepted trajectories kept of a prompt that some samples failed "
                             "(0: --max_per_prompt); the boundary cases get more weight")
    parser.add_argument("--batch_prompts", type=int, default=4, help="prompts rolled out together")
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--top_p", type=float, default=1.0)
    parser.add_argument("--max_turns", type=int, default=3)
    parser.add_argument("--max_gen_len", type=int, default=256)
    parser.add_argument("--max_total_len", type=int, default=2500)
    parser.add_argument("--max_tool_tokens", type=int, default=256)
    parser.add_argument("--tool_timeout", type=float, default=1.0)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default=None, choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="dataset/rs_agent.jsonl", help="accepted conversations (JSONL)")
    parser.add_argument("--pairs_out", default=None,
                        help="also write preference pairs (a right and a failed trajectory of one prompt) here")
    parser.add_argument("--max_pairs_per_prompt", type=int, default=4,
                        help="with --pairs_out: pairs kept of one prompt (one per distinct failed trajectory)")
    parser.add_argument("--reference_chosen", type=int, default=1, choices=[0, 1],
                        help="with --pairs_out: a no-tool prompt no sample got right is paired with its "
                             "reference answer from the data (0: only sampled right answers)")
    parser.add_argument("--skipped_call_pairs", type=int, default=0, choices=[0, 1],
                        help="with --pairs_out: 1 adds, for as many tool prompts as there are needless-call "
                             "pairs, a pair whose failed side answers at once without the call (the other "
                             "side of the call boundary, so that a preference step sharpens it, not moves it)")
    parser.add_argument("--operator_pairs", type=int, default=0, choices=[0, 1],
                        help="with --pairs_out: 1 adds, for each pair whose failed side swaps one calculator "
                             "operator for another (N**X rejected for N*X), a mirror pair on a solved prompt "
                             "where the operator is right (5**7 chosen over 5*7)")
    args = parser.parse_args(argv)
    if args.k < 1 or args.max_per_prompt < 1:
        parser.error("--k and --max_per_prompt must be at least 1")
    if args.max_pairs_per_prompt < 1:
        parser.error(f"--max_pairs_per_prompt must be at least 1, got {args.max_pairs_per_prompt}")
    if args.max_per_hard_prompt < 0:
        parser.error(f"--max_per_hard_prompt must be 0 (as --max_per_prompt) or more, got {args.max_per_hard_prompt}")
    args.max_per_hard_prompt = args.max_per_hard_prompt or args.max_per_prompt
    args.device = resolve_device(args.device)
    args.dtype = args.dtype or default_dtype(args.device)
    return args


# ----------------------------------------------------------------------------------------------------------
# the acceptance check

MAX_ANSWER_REPETITION = 0.3  # share of repeated 3-grams in the final answer that marks it as a loop


@dataclass
class Verdict:
    accepted: bool
    reason: str  # "ok", or the first check that failed


def judge(traj, item) -> Verdict:
    """Is this trajectory a correct, clean solution of the prompt? (The checks of the module docstring, except
    the re-render check, which needs the tokenizer: see to_sft_conversation.)"""
    expect = item["expect_tools"]
    expected_calls = len(expect) if expect is not None else len(item["gt"])
    calls = [c for turn in traj.turns for c in parse_tool_calls(turn)]
    if traj.unfinished:
        return Verdict(False, "unfinished")
    if traj.parse_errors or tag_format_score(traj.turns) < 0:
        return Verdict(False, "malformed_call")
    # a turn that writes <|im_start|> mid-message forges a role boundary: SFTDataset refuses such a record
    if any(token in turn for turn in traj.turns for token in CONTROL_TOKENS):
        return Verdict(False, "control_token")
    if expected_calls == 0:
        if calls:
            return Verdict(False, "needless_call")
    elif len(calls) != expected_calls:
        return Verdict(False, "wrong_call_count")
    offered = {t["function"]["name"] for t in item["tools"]}
    if any(c["name"] not in offered or not CHECK_ARGS[c["name"]](c["arguments"]) for c in calls):
        return Verdict(False, "invalid_call")
    if count_repeated_calls(calls):
        return Verdict(False, "repeated_call")
    answer = final_answer(traj.turns)
    if item["gt"] and gt_match_score(answer, item["gt"]) < GT_WEIGHT:
        return Verdict(False, "gt_missing")
    # two results in one answer repeat some 3-grams by nature ("1 USD = ...; 1 EUR = ..."): reject loops only
    if not answer or repetition_penalty(answer) <= -MAX_ANSWER_REPETITION:
        return Verdict(False, "bad_answer")
    return Verdict(True, "ok")


# ----------------------------------------------------------------------------------------------------------
# trajectory -> SFT conversation


CALL_BLOCK = re.compile(r'<tool_call>\n\{"name": ("(?:[^"\\]|\\.)*"), "arguments": (.*)\}\n</tool_call>', re.S)


def split_turn(text: str):
    """A sampled model turn -> (content, tool_calls) in the chat template's form: text before the calls, then
    the <tool_call> blocks one per line. None when the turn is not in that form (it cannot be written as
    tool_calls); whether it renders back exactly is checked on the ids (to_sft_conversation)."""
    start = text.find("<tool_call>")
    if start < 0:
        return text, None
    content = text[:start]
    if content:
        if not content.endswith("\n"):
            return None
        content = content[:-1]
    calls = []
    for j, block in enumerate(text[start:].split("\n<tool_call>")):
        match = CALL_BLOCK.fullmatch(block if j == 0 else "<tool_call>" + block)
        if match is None:
            return None
        calls.append({"type": "function", "function": {"name": json.loads(match[1]), "arguments": match[2]}})
    return content, calls


def to_sft_conversation(traj, item, tokenizer):
    """The accepted trajectory as an SFT record, or None when it does not re-render to the sampled ids."""
    if traj.open_thinking:
        return None  # sampled without a think block only; see rejection_sample()
    messages = [dict(m) for m in item["messages"]]
    prefill = generation_prefill(False)
    for m in traj.messages[len(item["messages"]):] + [{"role": "assistant", "content": prefill + traj.turns[-1]}]:
        if m["role"] == "tool":
            messages.append({"role": "tool", "content": m["content"]})
            continue
        split = split_turn(m["content"][len(prefill):])
        if split is None:
            return None
        content, tool_calls = split
        messages.append({"role": "assistant", "content": content, **({"tool_calls": tool_calls} if tool_calls
                                                                    else {})})
    ids, labels = encode_sft_conversation(tokenizer, messages, item["tools"])
    sampled = traj.prompt_ids + traj.ids
    learned = [t for t, m in zip(traj.ids, traj.response_mask) if m]
    # the template closes the last turn with "\n" after <|im_end|>: not sampled, and not learned
    if ids[:len(sampled)] != sampled or [t for t in labels if t != -100] != learned:
        return None
    system = next((m for m in messages if m["role"] == "system"), None)
    if system is not None:
        system["tools"] = json.dumps(item["tools"], ensure_ascii=False)
    else:
        messages.insert(0, {"role": "system", "content": "", "tools": json.dumps(item["tools"],
                                                                                ensure_ascii=False)})
    return {"conversations": messages, "gt": item["gt"], "category": item["category"],
            "expect_tools": item["expect_tools"]}


# ----------------------------------------------------------------------------------------------------------
# preference pairs (trainer/train_dpo.py)

# a right solution that only failed to re-render is not a wrong answer: never the rejected side of a pair
NOT_WRONG = {"ok", "not_rerenderable"}


def side(traj, tokenizer) -> dict:
    return {"ids": list(traj.ids), "mask": list(traj.response_mask),
            "text": tokenizer.decode(traj.ids, skip_special_tokens=False)}


def reference_side(item, prompt_ids, tokenizer):
    """The dataset's reference answer of a no-tool prompt as a trajectory side: the ids the chat template
    writes for it after the sampled prompt, all written by the assistant. None for a tool task (its reference
    is only the final answer, not the calls) or when the template does not continue the prompt exactly."""
    reference = item.get("reference")
    if item["expect_tools"] != [] or not reference or reference.get("tool_calls"):
        return None
    ids, labels = encode_sft_conversation(tokenizer, item["messages"] + [reference], item["tools"])
    learned = [j for j, label in enumerate(labels) if label != -100]
    if ids[:len(prompt_ids)] != list(prompt_ids) or not learned or learned[0] != len(prompt_ids):
        return None
    answer = ids[len(prompt_ids):learned[-1] + 1]
    return SimpleNamespace(ids=answer, response_mask=[1] * len(answer))


def distinct(items, ids_of) -> list:
    """The items with distinct token ids, each first one kept, in order."""
    seen, out = set(), []
    for x in items:
        if tuple(ids_of(x)) not in seen:
            seen.add(tuple(ids_of(x)))
            out.append(x)
    return out


def preference_pairs(item, accepted, rejected, tokenizer, max_pairs: int, fingerprint: str,
                     use_reference: bool = False) -> list:
    """One prompt's pairs: each distinct failed trajectory (in sampled order, at most max_pairs) beside a
    distinct right one, taken in turn. A no-tool prompt that no sample answered right takes the dataset's
    reference answer as its right side when use_reference (those are the prompts the model always fails,
    which on-policy pairs never reach). Nothing without a right and a wrong side."""
    right = distinct(accepted, lambda t: t.ids)
    source = "sample"
    if not right and use_reference and rejected:
        ref = reference_side(item, rejected[0][0].prompt_ids, tokenizer)
        right, source = ([ref], "reference") if ref is not None else ([], source)
    wrong = distinct([(t, r) for t, r in rejected if r not in NOT_WRONG], lambda pair: pair[0].ids)
    return [pair_record(item, reason, source, bad.prompt_ids, right[j % len(right)], bad, tokenizer,
                        fingerprint) for j, (bad, reason) in enumerate(wrong[:max_pairs] if right else [])]


def pair_record(item, reason: str, source: str, prompt_ids, good, bad, tokenizer, fingerprint: str) -> dict:
    """One line of the pairs file (dataset/lm_dataset.PreferenceDataset reads it)."""
    user = next((m["content"] for m in reversed(item["messages"]) if m["role"] == "user"), "")
    return {"prompt": user, "category": item["category"], "reason": reason, "chosen_source": source,
            "tokenizer": fingerprint, "prompt_ids": list(prompt_ids),
            "chosen": side(good, tokenizer), "rejected": side(bad, tokenizer)}


def last_model_turn(traj):
    """The ids of the trajectory's last model-written turn (its final answer, through <|im_end|>)."""
    end = len(traj.response_mask)
    start = end
    while start > 0 and traj.response_mask[start - 1]:
        start -= 1
    return list(traj.ids[start:end])


def skipped_call_pair(item, good, tokenizer, fingerprint: str) -> dict:
    """A tool prompt's pair across the call boundary: a right trajectory beside the answer that skips the
    tool, its own final answer written as the first turn (what a model that does not call states without
    knowing it). The mirror of a needless-call pair, which prefers no call where none is needed."""
    answer = last_model_turn(good)
    bad = SimpleNamespace(ids=answer, response_mask=[1] * len(answer))
    return pair_record(item, "skipped_call", "sample", good.prompt_ids, good, bad, tokenizer, fingerprint)


OPERATOR = re.compile(r"\*\*|[-+*/%^]")  # the calculator's operators; ** before *


def first_expression(text: str):
    """The expression of the first calculate_math call written in `text`, or None."""
    for call in parse_tool_calls(text):
        if call["name"] == "calculate_math" and isinstance(call["arguments"], dict):
            expression = call["arguments"].get("expression")
            return expression if isinstance(expression, str) else None
    return None


def operator_swap(pair: dict):
    """(taken, given) when the pair's failed side differs from its right side by one calculator operator
    swapped for another (`N**X` rejected for `N*X`: ("**", "*")), else None."""
    right, wrong = first_expression(pair["chosen"]["text"]), first_expression(pair["rejected"]["text"])
    if right is None or wrong is None:
        return None
    taken = Counter(OPERATOR.findall(wrong)) - Counter(OPERATOR.findall(right))
    given = Counter(OPERATOR.findall(right)) - Counter(OPERATOR.findall(wrong))
    if sum(taken.values()) != 1 or sum(given.values()) != 1:
        return None
    return next(iter(taken)), next(iter(given))


def first_model_turn(traj):
    """The ids of the trajectory's first model-written turn (through its <|im_end|>)."""
    end = 0
    while end < len(traj.response_mask) and traj.response_mask[end]:
        end += 1
    return list(traj.ids[:end])


def operator_pair(item, good, taken: str, given: str, tokenizer, fingerprint: str):
    """The mirror of the pairs that take `taken` away: a right trajectory whose first turn calls the calculator
    with `taken`, beside that turn with its first `taken` written as `given` (`5**7` against `5*7`; DPO
    scores both through that turn), so that the round learns where the operator belongs, not only where it
    does not. None when the first turn has no such call."""
    turn = first_model_turn(good)
    text = tokenizer.decode(turn, skip_special_tokens=False)
    expression = first_expression(text)
    if expression is None or taken not in OPERATOR.findall(expression):
        return None
    at = next(m.start() for m in OPERATOR.finditer(expression) if m.group() == taken)
    swapped = expression[:at] + given + expression[at + len(taken):]
    start = text.find(expression)
    if start < 0:  # written with JSON escapes: leave it
        return None
    wrong = encode(tokenizer, text[:start] + swapped + text[start + len(expression):])
    bad = SimpleNamespace(ids=wrong, response_mask=[1] * len(wrong))
    return pair_record(item, "operator_mirror", "sample", good.prompt_ids, good, bad, tokenizer, fingerprint)


def mirror_operator_pairs(candidates, pairs, tokenizer, fingerprint: str, seed: int) -> list:
    """For each operator swap the pairs teach ("**" rejected for "*" ...), as many mirror pairs as there are
    such pairs, from right trajectories (`candidates`: [(item, trajectory)]) whose call holds the operator."""
    wanted = Counter(swap for swap in map(operator_swap, pairs) if swap is not None)
    out = []
    for (taken, given), n in sorted(wanted.items()):
        mirrors = [m for m in (operator_pair(item, good, taken, given, tokenizer, fingerprint)
                               for item, good in candidates) if m is not None]
        out += random.Random(seed).sample(mirrors, min(n, len(mirrors)))
    return out


def balancing_pairs(candidates, pairs, seed: int) -> list:
    """The tool prompts to give a skipped-call pair: as many as `pairs` has needless-call pairs, drawn from
    `candidates` ([(item, a right trajectory)], one per tool prompt with a right sample)."""
    wanted = sum(p["reason"] == "needless_call" for p in pairs)
    return random.Random(seed).sample(candidates, min(wanted, len(candidates)))


# ----------------------------------------------------------------------------------------------------------
# the sampling loop


@dataclass
class CategoryStats:
    prompts: int = 0
    samples: int = 0
    accepted: int = 0  # passed every check
    written: int = 0  # distinct, within --max_per_prompt
    prompts_solved: int = 0  # prompts with at least one accepted trajectory
    rejected: Counter = None

    def __post_init__(self):
        self.rejected = Counter() if self.rejected is None else self.rejected


def select_items(dataset, args) -> list:
    categories = [c for c in args.categories.split(",") if c]
    if args.profile:
        with open(args.profile, encoding="utf-8") as f:
            by_category = json.load(f)["by_category"]
        # a behaviour profile maps category -> completion; an eval_toolcall --out report, category -> metrics
        by_category = {c: v["task_completion"] if isinstance(v, dict) else v for c, v in by_category.items()}
        ranked = sorted(by_category, key=by_category.get)
        categories = ranked[args.weakest:] if args.rest else ranked[:args.weakest]
        if not categories:
            raise ValueError(f"--rest 1: {args.profile} has no categories beyond the {args.weakest} weakest")
        which = "other" if args.rest else "weakest"
        print(f"{which} categories in {args.profile}: "
              + ", ".join(f"{c} {by_category[c]:.3f}" for c in categories))
    items = [it for it in dataset.items if not categories or it["category"] in categories]
    if categories and not items:
        raise ValueError(f"no prompts of categories {categories} in {args.data_path}")
    if args.max_prompts > 0:
        items = random.Random(args.seed).sample(items, min(args.max_prompts, len(items)))
    return items


@dataclass
class SampleResult:
    records: list  # SFT records to write
    trajectories: list  # the sampled trajectory behind each record
    stats: dict  # category -> CategoryStats
    pairs: list = None  # preference pairs (when args.pairs_out)


def rejection_sample(engine, tokenizer, items, args) -> SampleResult:
    stats = defaultdict(CategoryStats)
    records, sources, pairs, boundary = [], [], [], []
    want_pairs = bool(getattr(args, "pairs_out", None))
    fingerprint = tokenizer_fingerprint(tokenizer) if want_pairs else ""
    for start in tqdm(range(0, len(items), args.batch_prompts), desc="rejection sampling", dynamic_ncols=True):
        chunk = items[start:start + args.batch_prompts]
        with torch.no_grad():
            trajs = rollout_batch(engine, tokenizer, [it["messages"] for it in chunk],
                                  [it["tools"] for it in chunk], args.k, args)  # no think blocks
        for i, item in enumerate(chunk):
            st = stats[item["category"]]
            st.prompts += 1
            accepted, rejected = [], []
            for traj in trajs[i * args.k:(i + 1) * args.k]:
                st.samples += 1
                verdict = judge(traj, item)
                record = to_sft_conversation(traj, item, tokenizer) if verdict.accepted else None
                if verdict.accepted and record is None:
                    verdict = Verdict(False, "not_rerenderable")
                if not verdict.accepted:
                    st.rejected[verdict.reason] += 1
                    rejected.append((traj, verdict.reason))
                    continue
                st.accepted += 1
                accepted.append((traj, record))
            cap = args.max_per_prompt if len(accepted) == args.k else args.max_per_hard_prompt
            kept, seen = 0, set()
            for traj, record in accepted:
                key = tuple(traj.ids)
                if key in seen or kept >= cap:
                    continue
                seen.add(key)
                kept += 1
                records.append(record)
                sources.append(traj)
            st.written += kept
            st.prompts_solved += kept > 0
            if want_pairs and accepted and item["expect_tools"]:
                boundary.append((item, accepted[0][0]))
            if want_pairs:
                pairs += preference_pairs(item, [t for t, _ in accepted], rejected, tokenizer,
                                          args.max_pairs_per_prompt, fingerprint,
                                          getattr(args, "reference_chosen", 0))
    if want_pairs and getattr(args, "operator_pairs", 0):
        pairs += mirror_operator_pairs(boundary, pairs, tokenizer, fingerprint, getattr(args, "seed", 0))
    if want_pairs and getattr(args, "skipped_call_pairs", 0):
        pairs += [skipped_call_pair(item, good, tokenizer, fingerprint)
                  for item, good in balancing_pairs(boundary, pairs, getattr(args, "seed", 0))]
    return SampleResult(records, sources, dict(stats), pairs)


def print_summary(stats):
    print(f"{'category':<12}{'prompts':>8}{'samples':>8}{'accepted':>9}{'rate':>7}{'solved':>8}{'written':>8}"
          "  top rejections")
    for cat, st in sorted(stats.items()):
        rate = st.accepted / max(1, st.samples)
        top = ", ".join(f"{r} {n}" for r, n in st.rejected.most_common(3))
        print(f"{cat:<12}{st.prompts:>8}{st.samples:>8}{st.accepted:>9}{rate:>7.3f}{st.prompts_solved:>8}"
              f"{st.written:>8}  {top}")


def write_jsonl(path: str, records: list):
    """Whole or not at all (a resumed cold start keeps a finished file)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    os.replace(path + ".tmp", path)


def main(argv=None):
    args = parse_args(argv)
    set_seed(args.seed)
    dataset = AgentRLDataset(args.data_path, known_tools=set(MOCK_RESULTS))
    items = select_items(dataset, args)
    model, tokenizer = init_model(args, args.weight, args.save_dir, args.device)
    model.eval()
    engine = create_rollout_engine("torch", model, tokenizer.eos_token_id, tokenizer.pad_token_id,
                                   args.device, args.dtype)
    t0 = time.time()
    result = rejection_sample(engine, tokenizer, items, args)
    records, stats = result.records, result.stats
    write_jsonl(args.out, records)
    if args.pairs_out:
        write_jsonl(args.pairs_out, result.pairs)
    summary = {"weight": args.weight, "k": args.k, "temperature": args.temperature, "prompts": len(items),
               "written": len(records), "seconds": round(time.time() - t0, 1),
               **({"pairs": len(result.pairs), "pairs_by_reason": dict(Counter(p["reason"] for p in result.pairs)),
                   "pairs_by_chosen_source": dict(Counter(p["chosen_source"] for p in result.pairs))}
                  if args.pairs_out else {}),
               "by_category": {c: {**asdict(s), "rejected": dict(s.rejected)} for c, s in stats.items()}}
    with open(args.out.replace(".jsonl", "") + "_summary.json", "w", encoding="utf-8") as f:
        json.dump(summary, f, ensure_ascii=False, indent=2)
    print_summary(stats)
    print(f"wrote {len(records)} conversations to {args.out} in {summary['seconds']}s")
    if args.pairs_out:
        print(f"wrote {len(result.pairs)} preference pairs to {args.pairs_out}: {summary['pairs_by_reason']}, "
              f"right side {summary['pairs_by_chosen_source']}")
    return summary


if __name__ == "__main__":
    main()
