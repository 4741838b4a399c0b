"""
Score tool use on tasks, not reward: run each case through the multi-turn tool loop and report task completion,
tool selection, argument validity, tool success, turns, repeated calls and no-tool accuracy, overall, by tool
and by category.

Backends:
  local  a checkpoint (out/{weight}_{hidden}[_moe].pth, or --load_from a transformers directory), run with the
         same rollout loop, tool world and parser as training (trainer/train_agent.py), batched, greedy.
  api    any OpenAI-compatible endpoint through the official `openai` client: tools are sent as `tools`, the
         returned message.tool_calls (or <tool_call> blocks in the content) are executed in the same tool world
         and answered with `tool` messages.

Cases: the seed's table by default, or --cases FILE.jsonl, one per line:
    {"prompt": str, "tools": [names offered], "gt": [str], "expect_tools": [names], "category": str}
(expect_tools [] = the right behaviour is to answer without a tool). The held-out set is dataset/eval_toolcall.jsonl.
A file of RL prompts (dataset/agent_rl.jsonl rows) works too: each row's user turn, offered tools, gt,
expect_tools and category become a case. With --trained_on, the cases are the prompts an agent RL run trained on
(--split seen) or the rest (--split unseen), read from the "prompts" field of the run's metrics file; a gain on
the seen prompts that is missing on the unseen ones was memorised, not learned.

Run:
    python scripts/eval_toolcall.py --weight full_sft
    python scripts/eval_toolcall.py --weight agent --cases dataset/eval_toolcall.jsonl --out r.json
    python scripts/eval_toolcall.py --backend api --api_base_url http://127.0.0.1:8998/v1 --api_model minimind
    python scripts/eval_toolcall.py --weight agent --interactive
    python scripts/eval_toolcall.py --weight agent --cases dataset/agent_rl.jsonl \
        --trained_on out/agent_256_metrics.jsonl --split unseen
"""
import argparse
import json
import math
import os
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch

from dataset.lm_dataset import AgentRLDataset, DataError, read_jsonl
from trainer.rollout_engine import create_rollout_engine
from trainer.train_agent import (
    CHECK_ARGS, CURRENCY_ALIASES, TOOLS, TOOLS_BY_NAME, UNIT_ALIASES, count_repeated_calls, execute_tool, final_answer, parse_tool_calls,
    rollout_batch, tool_result_ok, validate_gt_in_text,
)
from trainer.trainer_utils import add_model_args, default_dtype, init_model, resolve_device, set_seed

DEFAULT_SYSTEM = "你是一个有用的AI助手。"
ALL_TOOLS = [t["function"]["name"] for t in TOOLS]

# the seed's evaluation table; every tool is offered
DEFAULT_CASES = [
    {"prompt": "帮我算一下 256 乘以 37", "gt": ["9472"], "expect_tools": ["calculate_math"],
     "category": "math"},
    {"prompt": "北京今天天气怎么样?", "gt": ["28°C", "晴"], "expect_tools": ["get_current_weather"],
     "category": "weather"},
    {"prompt": "帮我把100公里换算成英里", "gt": ["62.1371"], "expect_tools": ["unit_converter"],
     "category": "units"},
    {"prompt": "美元兑人民币的汇率是多少?", "gt": ["7.21"], "expect_tools": ["get_exchange_rate"],
     "category": "exchange"},
    {"prompt": "把'你好世界'翻译成英文", "gt": ["Hello World"], "expect_tools": ["translate_text"],
     "category": "translation"},
    {"prompt": "现在几点了?", "gt": ["14:30"], "expect_tools": ["get_current_time"], "category": "time"},
    {"prompt": "北京和东京今天的天气怎么样?", "gt": ["28°C", "12°C"],
     "expect_tools": ["get_current_weather", "get_current_weather"], "category": "multi_call"},
    {"prompt": "北京天气怎么样?另外美元兑人民币汇率是多少?", "gt": ["28°C", "7.21"],
     "expect_tools": ["get_current_weather", "get_exchange_rate"], "category": "multi_tool"},
]
for _case in DEFAULT_CASES:
    _case.update(tools=list(ALL_TOOLS), skill=_case["category"], expect_calls=[])
DEFAULT_CASES_FILE = "dataset/eval_toolcall.jsonl"  # the held-out set (v2); "seed" picks the table above


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Evaluate tool calling on tasks")
    parser.add_argument("--backend", default="local", choices=["local", "api"])
    # --- local model ---
    parser.add_argument("--weight", default="full_sft", help="out/{weight}_{hidden}[_moe].pth, or a .pth path")
    parser.add_argument("--save_dir", default="out")
    parser.add_argument("--load_from", default=None, help="a transformers model directory instead of --weight")
    add_model_args(parser)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default=None, choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--batch_size", type=int, default=16, help="cases rolled out together")
    # --- api ---
    parser.add_argument("--api_base_url", default="http://127.0.0.1:8998/v1")
    parser.add_argument("--api_model", default="minimind")
    parser.add_argument("--api_key", default=os.environ.get("OPENAI_API_KEY", "none"))
    parser.add_argument("--stream", action="store_true", help="stream API responses")
    # --- cases and decoding ---
    parser.add_argument("--cases", default=DEFAULT_CASES_FILE,
                        help="JSONL cases (default: the held-out set); 'seed' for the design's 8 cases")
    parser.add_argument("--skip_bad_lines", action="store_true", help="skip (and count) malformed case lines")
    parser.add_argument("--trained_on", default=None,
                        help="an agent RL metrics file: keep the --cases (its RL prompt pool) by --split")
    parser.add_argument("--split", default=None, choices=["seen", "unseen"],
                        help="with --trained_on: the prompts the run trained on, or the others")
    parser.add_argument("--system", default=DEFAULT_SYSTEM, help="system prompt ('' for none)")
    parser.add_argument("--max_turns", type=int, default=3)
    parser.add_argument("--max_gen_len", type=int, default=256)
    parser.add_argument("--max_total_len", type=int, default=2500)
    parser.add_argument("--max_tool_tokens", type=int, default=256)
    parser.add_argument("--tool_timeout", type=float, default=1.0)
    parser.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (reproducible)")
    parser.add_argument("--top_p", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", default=None, help="write the full report as JSON")
    parser.add_argument("--verbose", action="store_true", help="print every case")
    parser.add_argument("--interactive", action="store_true", help="type your own prompts")
    args = parser.parse_args(argv)
    if (args.trained_on is None) != (args.split is None):
        parser.error("--trained_on and --split go together")
    if args.trained_on and args.cases in (DEFAULT_CASES_FILE, "seed"):
        parser.error("--trained_on needs --cases: the RL prompt file the run trained on")
    if args.backend == "local":
        args.device = resolve_device(args.device)
        args.dtype = args.dtype or default_dtype(args.device)
    return args


def load_cases(path, skip_bad_lines=False, stats=None):
    """--cases file -> list of case dicts; a bad line raises ValueError naming file, line and field (or, with
    skip_bad_lines, is counted in stats["skipped"])."""
    cases = []
    stats = stats if stats is not None else {}
    for lineno, record in read_jsonl(path, skip_bad_lines, stats):
        try:
            cases.append(parse_case(record, path, lineno))
        except DataError:
            if not skip_bad_lines:
                raise
            stats["skipped"] = stats.get("skipped", 0) + 1
    return cases


def parse_case(record, path, lineno):
    def bad(field, problem):
        raise DataError(f"{path}:{lineno}: field '{field}': {problem}")

    if "conversations" in record:  # an RL prompt row
        record = rl_prompt_case(record, path, lineno)

    if not isinstance(record.get("prompt"), str) or not record["prompt"].strip():
        bad("prompt", "missing or not a non-empty string")
    tools = record.get("tools", ALL_TOOLS)
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        bad("tools", "expected a list of tool names")
    unknown = [t for t in tools if t not in TOOLS_BY_NAME]
    if unknown:
        bad("tools", f"unknown tool names {unknown}")
    gt = record.get("gt", [])
    if not isinstance(gt, list) or not all(isinstance(g, str) for g in gt):
        bad("gt", "expected a list of strings")
    expect = record.get("expect_tools")
    if expect is not None and (not isinstance(expect, list) or not all(isinstance(t, str) for t in expect)):
        bad("expect_tools", "expected a list of tool names")
    if expect and any(t not in TOOLS_BY_NAME for t in expect):
        bad("expect_tools", f"unknown tool names {[t for t in expect if t not in TOOLS_BY_NAME]}")
    if not isinstance(record.get("category", "default"), str):
        bad("category", "expected a string")
    if not isinstance(record.get("skill", ""), str):
        bad("skill", "expected a string")
    expect_calls = record.get("expect_calls", [])
    if not isinstance(expect_calls, list) or not all(
            isinstance(c, dict) and c.get("name") in TOOLS_BY_NAME and isinstance(c.get("arguments"), dict)
            for c in expect_calls):
        bad("expect_calls", "expected a list of {\"name\": a tool name, \"arguments\": {...}}")
    category = record.get("category", "default")
    return {"prompt": record["prompt"], "tools": tools, "gt": gt, "expect_tools": expect,
            "category": category, "skill": record.get("skill") or category, "expect_calls": expect_calls}


def rl_prompt_case(record, path, lineno) -> dict:
    """An RL prompt row (dataset/agent_rl.jsonl) as a flat case: its user turn, offered tools and labels."""
    item = AgentRLDataset.parse_item(record, path, lineno, set(TOOLS_BY_NAME))
    users = [m for m in item["messages"] if m["role"] == "user"]
    if len(users) != 1 or item["messages"][-1]["role"] != "user":
        raise DataError(f"{path}:{lineno}: field 'conversations': a case is one user turn (and a system turn), "
                        f"this row has {len(users)} user turns")
    return {"prompt": users[0]["content"], "tools": [t["function"]["name"] for t in item["tools"]],
            "gt": item["gt"], "expect_tools": item["expect_tools"], "category": item["category"],
            "skill": item["category"], "expect_calls": []}


def trained_prompts(metrics_path) -> set:
    """The dataset indices an agent RL run trained on: the union of the "prompts" of its metrics records."""
    seen, found = set(), False
    for lineno, record in read_jsonl(metrics_path):
        if "prompts" in record:
            found = True
            if not isinstance(record["prompts"], list) or not all(isinstance(i, int) for i in record["prompts"]):
                raise DataError(f"{metrics_path}:{lineno}: field 'prompts': expected a list of indices")
            seen.update(record["prompts"])
    if not found:
        raise ValueError(f"{metrics_path}: no record has a 'prompts' field (is it an agent RL metrics file, "
                         "written by this version of trainer/train_agent.py?)")
    return seen


def split_by_training(cases, seen: set, split: str, cases_path, metrics_path) -> list:
    outside = sorted(i for i in seen if not 0 <= i < len(cases))
    if outside:
        raise ValueError(f"{metrics_path} trained on prompt index {outside[-1]}, but {cases_path} has "
                         f"{len(cases)} cases: not the prompt file of that run")
    keep = (lambda i: i in seen) if split == "seen" else (lambda i: i not in seen)
    kept = [c for i, c in enumerate(cases) if keep(i)]
    if not kept:
        raise ValueError(f"no {split} prompts: {metrics_path} trained on {len(seen)} of the {len(cases)} prompts "
                         f"of {cases_path}")
    return kept


@dataclass
class CaseResult:
    prompt: str
    category: str
    gt: list
    expect_tools: list | None
    calls: list = field(default_factory=list)  # {"name", "arguments", "result"}
    turns: list = field(default_factory=list)  # the model's text per turn
    final_answer: str = ""
    unfinished: bool = False
    skill: str = ""  # what the case measures (math, unit, ..., no_tool); the category where a file has none
    expect_calls: list = field(default_factory=list)  # the reference's successful calls, when the file has them

    @property
    def called_tools(self):
        return [c["name"] for c in self.calls]


def case_messages(case, system):
    messages = [{"role": "system", "content": system}] if system else []
    return messages + [{"role": "user", "content": case["prompt"]}]


# ----------------------------------------------------------------------------------------------------------
# backends


def run_local(model, tokenizer, cases, args):
    """Roll out every case greedily (or sampled) with the training loop, args.batch_size cases at a time."""
    engine = create_rollout_engine("torch", model, tokenizer.eos_token_id, tokenizer.pad_token_id,
                                   args.device, args.dtype)
    results = []
    for start in range(0, len(cases), args.batch_size):
        chunk = cases[start:start + args.batch_size]
        messages = [case_messages(c, args.system) for c in chunk]
        tools = [[TOOLS_BY_NAME[n] for n in c["tools"]] for c in chunk]
        with torch.no_grad():
            trajs = rollout_batch(engine, tokenizer, messages, tools, 1, args)
        for case, traj in zip(chunk, trajs):
            results.append(CaseResult(
                prompt=case["prompt"], category=case["category"], gt=case["gt"], expect_tools=case["expect_tools"],
                skill=case["skill"], expect_calls=case["expect_calls"],
                calls=[{"name": c["name"], "arguments": c["arguments"], "result": c["result"]}
                       for c in traj.tool_calls],
                turns=traj.turns, final_answer=final_answer(traj.turns), unfinished=traj.unfinished,
            ))
    return results


def _api_turn(client, args, messages, tools):
    """One chat completion; returns (content, [(id, name, arguments_json)])."""
    kwargs = dict(model=args.api_model, messages=messages, tools=tools or None, max_tokens=args.max_gen_len,
                  temperature=args.temperature, top_p=args.top_p)
    if not args.stream:
        message = client.chat.completions.create(**kwargs).choices[0].message
        calls = [(c.id, c.function.name, c.function.arguments or "{}") for c in (message.tool_calls or [])]
        return message.content or "", calls
    content, partial = [], {}
    for chunk in client.chat.completions.create(stream=True, **kwargs):
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        if delta.content:
            content.append(delta.content)
        for tc in delta.tool_calls or []:
            slot = partial.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
            slot["id"] = tc.id or slot["id"]
            if tc.function is not None:
                slot["name"] += tc.function.name or ""
                slot["arguments"] += tc.function.arguments or ""
    calls = [(s["id"], s["name"], s["arguments"] or "{}") for _, s in sorted(partial.items())]
    return "".join(content), calls


def run_api(cases, args):
    """Drive an OpenAI-compatible endpoint through the same tool world."""
    from openai import OpenAI

    client = OpenAI(base_url=args.api_base_url, api_key=args.api_key)
    results = []
    for case in cases:
        messages = case_messages(case, args.system)
        tools = [TOOLS_BY_NAME[n] for n in case["tools"]]
        result = CaseResult(case["prompt"], case["category"], case["gt"], case["expect_tools"],
                            skill=case["skill"], expect_calls=case["expect_calls"])
        for turn in range(args.max_turns):
            content, calls = _api_turn(client, args, messages, tools)
            result.turns.append(content)
            parsed = []
            for call_id, name, arguments in calls:
                try:
                    arguments = json.loads(arguments)
                except json.JSONDecodeError:
                    arguments = None
                if isinstance(arguments, dict):
                    parsed.append((call_id, name, arguments))
            if not calls:  # servers that leave calls in the text
                parsed = [(None, c["name"], c["arguments"]) for c in parse_tool_calls(content)]
            if not parsed:
                break
            if turn == args.max_turns - 1:
                result.unfinished = True
                break
            ids = [call_id or f"call_{turn}_{k}" for k, (call_id, _, _) in enumerate(parsed)]
            messages.append({"role": "assistant", "content": content, "tool_calls": [
                {"id": i, "type": "function",
                 "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
                for i, (_, name, arguments) in zip(ids, parsed)]})
            for i, (_, name, arguments) in zip(ids, parsed):
                out = execute_tool(name, arguments, timeout=args.tool_timeout)
                result.calls.append({"name": name, "arguments": arguments, "result": out})
                content = json.dumps(out, ensure_ascii=False)
                messages.append({"role": "tool", "tool_call_id": i, "content": content})
        result.final_answer = final_answer(result.turns)
        results.append(result)
    return results


# ----------------------------------------------------------------------------------------------------------
# metrics


def case_completed(r: CaseResult) -> bool:
    """All GT values in the final answer; for a no-tool case, also no tool called."""
    if r.expect_tools == [] and r.calls:
        return False
    if r.unfinished:
        return False
    return len(validate_gt_in_text(r.final_answer, r.gt)) == len(r.gt)


def repeated_calls(r: CaseResult) -> int:
    return count_repeated_calls(r.calls)


def call_valid(call) -> bool:
    check = CHECK_ARGS.get(call["name"])
    return check is not None and isinstance(call["arguments"], dict) and bool(check(call["arguments"]))


def _ratio(num, den):
    return num / den if den else float("nan")


def wilson_interval(successes: int, n: int, z: float = 1.96) -> list:
    """The 95% Wilson score interval of a proportion (sound at 0 and n successes, unlike the normal one)."""
    if n == 0:
        return [float("nan"), float("nan")]
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


def calc_result_ok(r: CaseResult):
    """None without an expected calculator call; else whether some calculator call the model made returned
    the expected call's result (the expression may differ in form, not in value)."""
    wanted = [c for c in r.expect_calls if c["name"] == "calculate_math"]
    if not wanted:
        return None
    target = execute_tool("calculate_math", wanted[-1]["arguments"]).get("result")
    return any(c["name"] == "calculate_math" and isinstance(c["result"], dict)
               and c["result"].get("result") == target for c in r.calls)


DIRECTED_TOOLS = {"unit_converter": ("from_unit", "to_unit", UNIT_ALIASES),
                  "get_exchange_rate": ("from_currency", "to_currency", CURRENCY_ALIASES)}


def _canonical(value, aliases):
    text = str(value).strip()
    return aliases.get(text) or aliases.get(text.lower()) or text.lower()


def wrong_direction_calls(r: CaseResult) -> tuple:
    """(expected unit/exchange calls, how many of them the model made with source and target swapped)."""
    expected, swapped = 0, 0
    for want in r.expect_calls:
        if want["name"] not in DIRECTED_TOOLS:
            continue
        src_key, dst_key, aliases = DIRECTED_TOOLS[want["name"]]
        src = _canonical(want["arguments"].get(src_key), aliases)
        dst = _canonical(want["arguments"].get(dst_key), aliases)
        expected += 1
        made = [(_canonical(c["arguments"].get(src_key), aliases), _canonical(c["arguments"].get(dst_key), aliases))
                for c in r.calls if c["name"] == want["name"] and isinstance(c["arguments"], dict)]
        swapped += (dst, src) in made and (src, dst) not in made
    return expected, swapped


def summarize(results) -> dict:
    """The summary metrics over a list of CaseResult (NaN where a metric has no cases)."""
    calls = [c for r in results for c in r.calls]
    tool_cases = [r for r in results if r.expect_tools]
    no_tool_cases = [r for r in results if r.expect_tools == []]
    with_expect = [r for r in results if r.expect_tools is not None]
    completed = sum(case_completed(r) for r in results)
    calc = [ok for ok in map(calc_result_ok, results) if ok is not None]
    directed = [wrong_direction_calls(r) for r in results]
    return {
        "cases": len(results),
        "task_completion": _ratio(completed, len(results)),
        "task_completion_ci95": wilson_interval(completed, len(results)),
        "tool_call_rate": _ratio(sum(bool(r.calls) for r in tool_cases), len(tool_cases)),
        "tool_selection_accuracy": _ratio(
            sum(Counter(r.called_tools) == Counter(r.expect_tools) for r in with_expect), len(with_expect)),
        "arg_validity": _ratio(sum(call_valid(c) for c in calls), len(calls)),
        "tool_success_rate": _ratio(sum(tool_result_ok(c["result"]) for c in calls), len(calls)),
        "avg_turns": _ratio(sum(len(r.turns) for r in results), len(results)),
        "avg_tool_calls": _ratio(len(calls), len(results)),
        "expected_tool_calls": _ratio(sum(len(r.expect_tools) for r in with_expect), len(with_expect)),
        "repeat_call_rate": _ratio(sum(repeated_calls(r) for r in results), len(calls)),
        "no_tool_accuracy": _ratio(sum(not r.calls for r in no_tool_cases), len(no_tool_cases)),
        "unfinished_rate": _ratio(sum(r.unfinished for r in results), len(results)),
        "calc_result_accuracy": _ratio(sum(calc), len(calc)),
        "wrong_direction_rate": _ratio(sum(s for _, s in directed), sum(e for e, _ in directed)),
    }


def by_tool(results) -> dict:
    """Per tool: calls made, their validity and success, and completion of the cases that need it."""
    out = {}
    for name in ALL_TOOLS:
        calls = [c for r in results for c in r.calls if c["name"] == name]
        needing = [r for r in results if r.expect_tools and name in r.expect_tools]
        if not calls and not needing:
            continue
        out[name] = {
            "calls": len(calls),
            "arg_validity": _ratio(sum(call_valid(c) for c in calls), len(calls)),
            "tool_success_rate": _ratio(sum(tool_result_ok(c["result"]) for c in calls), len(calls)),
            "cases": len(needing),
            "selected": _ratio(sum(name in r.called_tools for r in needing), len(needing)),
            "task_completion": _ratio(sum(case_completed(r) for r in needing), len(needing)),
        }
    return out


def by_category(results, key: str = "category") -> dict:
    groups = defaultdict(list)
    for r in results:
        groups[getattr(r, key)].append(r)
    return {cat: summarize(rs) for cat, rs in sorted(groups.items())}


def report(results, elapsed: float, meta: dict) -> dict:
    cases = []
    for r in results:
        item = asdict(r)
        item.update(called_tools=r.called_tools, completed=case_completed(r), n_turns=len(r.turns))
        cases.append(item)
    return {"summary": summarize(results), "by_tool": by_tool(results), "by_category": by_category(results),
            "by_skill": by_category(results, "skill"), "cases": cases, "meta": {**meta, "elapsed_s": round(elapsed, 1)}}


def print_report(rep: dict):
    s = rep["summary"]
    print(f"\n{'metric':<26}{'value':>8}")
    for key, value in s.items():
        if isinstance(value, list):
            print(f"{key:<26}{_interval(value):>14}")
        else:
            print(f"{key:<26}{value:>8.3f}" if isinstance(value, float) else f"{key:<26}{value:>8}")
    cols = ["cases", "task_completion", "task_completion_ci95", "tool_selection_accuracy", "tool_success_rate",
            "avg_tool_calls", "no_tool_accuracy"]
    for title, key in (("category", "by_category"), ("skill", "by_skill")):
        if key == "by_skill" and list(rep[key]) == list(rep["by_category"]):
            continue  # a file without skills: the same table twice
        print(f"\n{title:<20}" + "".join(f"{c[:14]:>15}" for c in cols))
        for cat, m in rep[key].items():
            print(f"{cat:<20}" + "".join(_cell(m[c]) for c in cols))
    tcols = ["calls", "arg_validity", "tool_success_rate", "cases", "selected", "task_completion"]
    print(f"\n{'tool':<22}" + "".join(f"{c[:14]:>15}" for c in tcols))
    for name, m in rep["by_tool"].items():
        print(f"{name:<22}" + "".join(_cell(m[c]) for c in tcols))


def _interval(pair) -> str:
    return f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def _cell(value):
    if isinstance(value, list):
        return f"{_interval(value):>15}"
    return f"{value:>15.3f}" if isinstance(value, float) else f"{value:>15}"


def print_case(r: CaseResult):
    mark = "OK " if case_completed(r) else "BAD"
    calls = ", ".join(f"{c['name']}({json.dumps(c['arguments'], ensure_ascii=False)})" for c in r.calls)
    print(f"[{mark}] {r.category:<11} {r.prompt}\n      calls: {calls or '-'}\n      answer: {r.final_answer!r}"
          f"  (gt {r.gt})")


def interactive(model, tokenizer, args):
    print("type a question (empty line to quit); every tool is offered")
    while True:
        try:
            prompt = input("> ").strip()
        except EOFError:
            break
        if not prompt:
            break
        case = {"prompt": prompt, "tools": ALL_TOOLS, "gt": [], "expect_tools": None, "category": "interactive",
                "skill": "interactive", "expect_calls": []}
        r = run_local(model, tokenizer, [case], args)[0]
        for c in r.calls:
            print(f"  -> {c['name']}({json.dumps(c['arguments'], ensure_ascii=False)}) = "
                  f"{json.dumps(c['result'], ensure_ascii=False)}")
        print(r.final_answer)


def main(argv=None):
    args = parse_args(argv)
    set_seed(args.seed)
    stats = {}
    cases = [dict(c) for c in DEFAULT_CASES] if args.cases == "seed" else \
        load_cases(args.cases, args.skip_bad_lines, stats)
    if stats.get("skipped"):
        print(f"skipped {stats['skipped']} malformed lines of {args.cases}")
    if args.trained_on:
        if stats.get("skipped"):  # the run's indices count the file's valid rows; a skipped line shifts them
            raise ValueError(f"--trained_on: {args.cases} has malformed lines, so its indices are not the run's")
        cases = split_by_training(cases, trained_prompts(args.trained_on), args.split, args.cases,
                                  args.trained_on)
        print(f"{len(cases)} {args.split} prompts of {args.cases} (by {args.trained_on})")
    t0 = time.time()
    if args.backend == "local":
        model, tokenizer = init_model(args, args.load_from or args.weight, args.save_dir, args.device)
        model.eval()
        if args.interactive:
            return interactive(model, tokenizer, args)
        results = run_local(model, tokenizer, cases, args)
        source = args.load_from or (args.weight if args.weight.endswith(".pth")
                                    else f"{args.save_dir}/{args.weight}_{args.hidden_size}")
    else:
        results = run_api(cases, args)
        source = f"{args.api_base_url} ({args.api_model})"
    rep = report(results, time.time() - t0, {"backend": args.backend, "model": source,
                                             "cases_file": args.cases or "default", "temperature": args.temperature,
                                             "trained_on": args.trained_on, "split": args.split})
    if args.verbose:
        for r in results:
            print_case(r)
    print(f"\n{source}: {len(results)} cases in {time.time() - t0:.1f}s")
    print_report(rep)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(rep, f, ensure_ascii=False, indent=2)
        print(f"\nwrote {args.out}")
    return rep


if __name__ == "__main__":
    main()
