"""
The evaluation core: cases -> rollouts -> task metrics. The trainer's periodic evaluation and
scripts/eval_toolcall.py both use it; it imports neither. It knows no model and no tool: a case file is read
against the tool names it is given, rollouts come from the caller (anything that records its calls, turns and
whether it finished), and the metrics read only what a rollout recorded.

A case: {"prompt", "tools": [names offered], "gt": [str], "expect_tools": [names] ([] = answer without a
tool), "category", "skill", "expect_calls": [{"name", "arguments", "result"}]}. An RL prompt row (the design's
conversations format) reads as a case too.
"""
import math
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field, fields

from dataset.lm_dataset import AgentRLDataset, DataError, read_jsonl, text_problem
from trainer.outcome import count_repeated_calls, final_answer, task_solved, tool_result_ok

DEFAULT_SYSTEM = "你是一个有用的AI助手。"


@dataclass
class RolloutConfig:
    """What a rollout reads: the trainer's flags, or the evaluator's (greedy)."""
    max_turns: int = 3
    max_gen_len: int = 256
    max_total_len: int = 2500
    max_tool_tokens: int = 256
    tool_timeout: float = 1.0
    temperature: float = 0.0
    top_p: float = 1.0

    @classmethod
    def of(cls, args, **overrides):
        """The config from any object with these fields (an argparse Namespace), with overrides."""
        return cls(**{**{f.name: getattr(args, f.name) for f in fields(cls)}, **overrides})


def load_cases(path, known_tools, skip_bad_lines=False, stats=None):
    """A cases file -> list of case dicts; a bad line raises DataError (a ValueError) naming file, line and
    field (or, with skip_bad_lines, is counted in stats["skipped"]). known_tools: the tool names that exist
    (the order is the default offer: every tool)."""
    cases = []
    stats = stats if stats is not None else {}
    for lineno, record in read_jsonl(path, skip_bad_lines, stats):
        try:
            cases.append(parse_case(record, path, lineno, known_tools))
        except DataError:
            if not skip_bad_lines:
                raise
            stats["skipped"] = stats.get("skipped", 0) + 1
    return cases


def parse_case(record, path, lineno, known_tools):
    def bad(field, problem):
        raise DataError(f"{path}:{lineno}: field '{field}': {problem}")

    if "conversations" in record:  # an RL prompt row
        record = rl_prompt_case(record, path, lineno, known_tools)

    if not isinstance(record.get("prompt"), str) or not record["prompt"].strip():
        bad("prompt", "missing or not a non-empty string")
    if text_problem(record["prompt"]):
        bad("prompt", text_problem(record["prompt"]))
    tools = record.get("tools", list(known_tools))
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        bad("tools", "expected a list of tool names")
    unknown = [t for t in tools if t not in known_tools]
    if unknown:
        bad("tools", f"unknown tool names {unknown}")
    gt = record.get("gt", [])
    if not isinstance(gt, list) or not all(isinstance(g, str) for g in gt):
        bad("gt", "expected a list of strings")
    if any(not g.strip() for g in gt):
        bad("gt", "an empty string, which every answer would match")
    expect = record.get("expect_tools")
    if expect is not None and (not isinstance(expect, list) or not all(isinstance(t, str) for t in expect)):
        bad("expect_tools", "expected a list of tool names")
    if expect and any(t not in known_tools for t in expect):
        bad("expect_tools", f"unknown tool names {[t for t in expect if t not in known_tools]}")
    if not isinstance(record.get("category", "default"), str):
        bad("category", "expected a string")
    if not isinstance(record.get("skill", ""), str):
        bad("skill", "expected a string")
    expect_calls = record.get("expect_calls", [])
    if not isinstance(expect_calls, list) or not all(
            isinstance(c, dict) and c.get("name") in known_tools and isinstance(c.get("arguments"), dict)
            for c in expect_calls):
        bad("expect_calls", 'expected a list of {"name": a tool name, "arguments": {...}}')
    category = record.get("category", "default")
    return {"prompt": record["prompt"], "tools": tools, "gt": gt, "expect_tools": expect,
            "category": category, "skill": record.get("skill") or category, "expect_calls": expect_calls}


def rl_prompt_case(record, path, lineno, known_tools) -> dict:
    """An RL prompt row (dataset/agent_rl.jsonl) as a flat case: its user turn, offered tools and labels."""
    item = AgentRLDataset.parse_item(record, path, lineno, set(known_tools))
    users = [m for m in item["messages"] if m["role"] == "user"]
    if len(users) != 1 or item["messages"][-1]["role"] != "user":
        raise DataError(
            f"{path}:{lineno}: field 'conversations': a case is one user turn (and a system turn), "
            f"this row has {len(users)} user turns"
        )
    return {"prompt": users[0]["content"], "tools": [t["function"]["name"] for t in item["tools"]],
            "gt": item["gt"], "expect_tools": item["expect_tools"], "category": item["category"],
            "skill": item["category"], "expect_calls": []}


@dataclass
class CaseResult:
    prompt: str
    category: str
    gt: list
    expect_tools: list | None
    calls: list = field(default_factory=list)  # {"name", "arguments", "result", "valid"}
    turns: list = field(default_factory=list)  # the model's text per turn
    final_answer: str = ""
    unfinished: bool = False
    skill: str = ""  # what the case measures (math, unit, ..., no_tool); the category where a file has none
    expect_calls: list = field(default_factory=list)  # the reference's successful calls (with their results)
    error: str = ""  # why the case could not be run (an API reply that was not a usable answer); a failure

    @property
    def called_tools(self):
        return [c["name"] for c in self.calls]


def case_messages(case, system):
    messages = [{"role": "system", "content": system}] if system else []
    return messages + [{"role": "user", "content": case["prompt"]}]


def run_cases(cases, rollout, batch_size: int = 16, system: str = DEFAULT_SYSTEM) -> list:
    """Every case through `rollout`, batch_size cases at a time. rollout(messages_batch, cases_batch) returns
    one trajectory per case: anything with .tool_calls ({"name", "arguments", "result", "valid"}), .turns and
    .unfinished, as trainer/train_agent.rollout_batch makes them."""
    results = []
    for start in range(0, len(cases), batch_size):
        chunk = cases[start:start + batch_size]
        trajs = rollout([case_messages(c, system) for c in chunk], chunk)
        for case, traj in zip(chunk, trajs):
            results.append(
                CaseResult(
                    prompt=case["prompt"],
                    category=case["category"],
                    gt=case["gt"],
                    expect_tools=case["expect_tools"],
                    calls=[
                        {k: c.get(k) for k in ("name", "arguments", "result", "valid")}
                        for c in traj.tool_calls
                    ],
                    turns=traj.turns,
                    final_answer=final_answer(traj.turns),
                    unfinished=traj.unfinished,
                    skill=case["skill"],
                    expect_calls=case["expect_calls"],
                )
            )
    return results


# --- metrics ------------------------------------------------------------------------------------------------


def case_completed(r: CaseResult) -> bool:
    """All GT values in the final answer; for a no-tool case, also no tool called."""
    return task_solved(r.final_answer, r.gt, bool(r.calls), r.unfinished, r.expect_tools == [])


def repeated_calls(r: CaseResult) -> int:
    return count_repeated_calls(r.calls)


def call_valid(call) -> bool:
    """Whether the tool's argument check accepted the call (the rollout records it as "valid")."""
    return bool(call.get("valid"))


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
    wanted = [
        c for c in r.expect_calls if c["name"] == "calculate_math" and isinstance(c.get("result"), dict)
    ]
    if not wanted:
        return None
    target = wanted[-1]["result"].get("result")
    return any(c["name"] == "calculate_math" and isinstance(c["result"], dict)
               and c["result"].get("result") == target for c in r.calls)


# tool -> the result fields that say which way a call converted (the tool writes them in canonical form)
DIRECTED_TOOLS = {"unit_converter": ("from_unit", "to_unit"), "get_exchange_rate": ("from", "to")}


def direction(call):
    keys = DIRECTED_TOOLS.get(call["name"])
    result = call.get("result")
    if keys is None or not isinstance(result, dict) or not all(k in result for k in keys):
        return None
    return result[keys[0]], result[keys[1]]


def wrong_direction_calls(r: CaseResult) -> tuple:
    """(expected unit/exchange calls, how many of them the model made with source and target swapped)."""
    expected, swapped = 0, 0
    made = [direction(c) for c in r.calls]
    for want in r.expect_calls:
        way = direction(want)
        if way is None:
            continue
        expected += 1
        swapped += way[::-1] in made and way not in made
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
        "errors": sum(bool(r.error) for r in results),
    }


def by_tool(results, tool_names=None) -> dict:
    """Per tool (in the order of tool_names; default: as they first appear): calls made, their validity and
    success, and completion of the cases that need it."""
    if tool_names is None:
        seen = [n for r in results for n in (r.expect_tools or []) + r.called_tools]
        tool_names = list(dict.fromkeys(seen))
    out = {}
    for name in tool_names:
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


def report(results, elapsed: float, meta: dict, tool_names=None) -> dict:
    cases = []
    for r in results:
        item = asdict(r)
        item.update(called_tools=r.called_tools, completed=case_completed(r), n_turns=len(r.turns))
        cases.append(item)
    return {
        "summary": summarize(results),
        "by_tool": by_tool(results, tool_names),
        "by_category": by_category(results),
        "by_skill": by_category(results, "skill"),
        "cases": cases,
        "meta": {**meta, "elapsed_s": round(elapsed, 1)},
    }
