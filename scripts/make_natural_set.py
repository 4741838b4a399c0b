"""
The natural test set: requests written by hand, one at a time, the way people type, outside the generator.

A draft row is what its writer decided: the request and the calls a right answer makes.
    {"prompt": "...", "skill": "math", "calls": [{"name": "calculate_math", "arguments": {...}}],
     "form": "lowercase, percent-of"}
    skill: math | unit | weather_time | exchange_translate | parallel | chained | no_tool
    "correction": true marks a request whose first call must fail (a district the weather service maps to
    its city); "calls" then holds the successful call.
This script runs every call through the tool world itself and writes the case file the evaluator reads, with
the ground truth taken from the results (gt_of: what an answer must quote), all six tools offered:
    python scripts/make_natural_set.py --draft draft.jsonl --out dataset/eval_natural.jsonl
    python scripts/make_natural_set.py --check dataset/eval_natural.jsonl   # recompute and compare

The set is frozen: tests pin its sha256, and scripts/make_agent_data.py refuses to write data with any of its
requests as a prompt (compared folded: case, spaces and punctuation aside). When it was frozen, the 33 drafted
requests the generator already wrote that way (short ones: "what time is it", "tell me a joke") were left
out, so that the set measures requests training never showed. Read it to learn which forms fail; never copy
its requests into templates.
"""
import argparse
import json
import os
import re
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from dataset.lm_dataset import DataError, read_jsonl
from trainer.train_agent import CHECK_ARGS, MOCK_RESULTS, TOOL_NAMES
from trainer.tool_runner import ToolError

NATURAL_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "dataset",
                            "eval_natural.jsonl")
SKILLS = ("math", "unit", "weather_time", "exchange_translate", "parallel", "chained", "no_tool")


def gt_of(name: str, result: dict) -> list:
    """The strings a right answer quotes from one call's result."""
    if name == "get_current_weather":
        return [result["temperature"], result["condition"]]
    if name == "get_current_time":
        return [result["datetime"].split()[1][:5]]  # "2025-03-07 14:30:00" -> "14:30"
    if name == "get_exchange_rate":
        return [str(result["rate"])]
    if name == "translate_text":
        return [result["translation"]]
    return [str(result["result"])]  # calculate_math, unit_converter


def build_case(row: dict, where: str) -> dict:
    """A draft row -> an evaluation case; DataError naming `where` and the field when a row is unusable."""
    def bad(field, problem):
        raise DataError(f"{where}: field '{field}': {problem}")

    prompt, skill, calls = row.get("prompt"), row.get("skill"), row.get("calls", row.get("expect_calls"))
    if not isinstance(prompt, str) or not prompt.strip():
        bad("prompt", "missing or empty")
    if skill not in SKILLS:
        bad("skill", f"{skill!r} is not one of {', '.join(SKILLS)}")
    if not isinstance(calls, list) or (skill == "no_tool") != (not calls):
        bad("calls", "a no_tool request has no calls, every other request at least one")
    if skill in ("parallel", "chained") and len(calls) < 2:
        bad("calls", f"a {skill} request makes two calls or more")
    expect_calls = []
    for i, call in enumerate(calls):
        if not isinstance(call, dict) or call.get("name") not in MOCK_RESULTS or \
                not isinstance(call.get("arguments"), dict):
            bad(f"calls[{i}]", 'expected {"name": a tool name, "arguments": {...}}')
        name, args = call["name"], call["arguments"]
        if not CHECK_ARGS[name](args):
            bad(f"calls[{i}].arguments", f"{name} does not accept {json.dumps(args, ensure_ascii=False)}")
        try:
            result = MOCK_RESULTS[name](args)
        except ToolError as e:
            bad(f"calls[{i}]", f"{name} {json.dumps(args, ensure_ascii=False)} fails: {e}")
        expect_calls.append({"name": name, "arguments": args, "result": result})
    correction = bool(row.get("correction")) or row.get("category") == "correction"
    if skill == "parallel":
        gt = [g for c in expect_calls for g in gt_of(c["name"], c["result"])]
    else:  # single, correction, chained: what the last call returned
        gt = gt_of(expect_calls[-1]["name"], expect_calls[-1]["result"]) if expect_calls else []
    category = "correction" if correction else skill if skill in ("parallel", "chained", "no_tool") else "single"
    expect_tools = [c["name"] for c in expect_calls]
    if correction:
        expect_tools = [expect_tools[0]] + expect_tools  # the failing call, then the one that works
    return {"prompt": prompt, "tools": list(TOOL_NAMES), "gt": gt, "expect_tools": expect_tools,
            "category": category, "skill": skill, "expect_calls": expect_calls, "form": row.get("form", "")}


def fold(text: str) -> str:
    """A request as the check compares it: lower case, without spaces and punctuation."""
    return re.sub(r"[\W_]+", "", text.lower())


def build(path: str) -> list:
    cases, seen = [], {}
    for lineno, row in read_jsonl(path):
        case = build_case(row, f"{path}:{lineno}")
        key = fold(case["prompt"])
        if key in seen:
            raise DataError(f"{path}:{lineno}: field 'prompt': the same request as line {seen[key]}")
        seen[key] = lineno
        cases.append(case)
    return cases


def natural_prompts(path: str = NATURAL_PATH) -> set:
    """The natural set's requests, folded (what the generator must never write)."""
    if not os.path.exists(path):
        return set()
    return {fold(row["prompt"]) for _, row in read_jsonl(path)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draft", help="draft rows to build cases from")
    parser.add_argument("--out", default=None, help="where to write the cases (default: print a summary only)")
    parser.add_argument("--check", default=None, help="a case file to rebuild from its own calls and compare")
    args = parser.parse_args(argv)
    if args.check:
        built = build(args.check)
        stored = [row for _, row in read_jsonl(args.check)]
        wrong = [i + 1 for i, (a, b) in enumerate(zip(built, stored)) if a != b]
        if wrong:
            raise SystemExit(f"{args.check}: lines {wrong[:20]} differ from what the tool world gives")
        print(f"{args.check}: {len(built)} cases, all as the tool world gives them")
        return built
    if not args.draft:
        parser.error("give --draft (build) or --check")
    cases = build(args.draft)
    counts = {s: sum(c["skill"] == s for c in cases) for s in SKILLS}
    print(f"{len(cases)} cases: " + ", ".join(f"{s} {n}" for s, n in counts.items()))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for case in cases:
                f.write(json.dumps(case, ensure_ascii=False) + "\n")
        print(f"wrote {args.out}")
    return cases


if __name__ == "__main__":
    main()
