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

Cases: the held-out set by default (--cases design: the design's 8 cases), or --cases FILE.jsonl:
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
import concurrent.futures
import json
import os
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch

from dataset.lm_dataset import DataError, read_jsonl
from trainer import evaluation
from trainer.evaluation import DEFAULT_SYSTEM, CaseResult, case_completed, case_messages, report, run_cases
from trainer.fast_engine import create_rollout_engine
from trainer.train_agent import (
    MAX_CALLS_PER_TURN, TOOL_NAMES, TOOLS_BY_NAME, RolloutConfig, call_is_valid, execute_tool, final_answer,
    parse_tool_calls, rollout_cases, rollout_single,
)
from trainer.trainer_utils import (
    add_model_args, default_dtype, init_model, model_source, resolve_device, set_seed,
)

ALL_TOOLS = TOOL_NAMES

# the design's evaluation table; every tool is offered
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
DEFAULT_CASES_FILE = "dataset/eval_toolcall.jsonl"  # the held-out set (v2); "design" picks the table above


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Evaluate tool calling on tasks")
    parser.add_argument("--backend", default="local", choices=["local", "api"])
    # --- local model ---
    parser.add_argument("--weight", default="full_sft", help="out/{weight}_{hidden}[_moe].pth, or a .pth path")
    parser.add_argument("--save_dir", default="out")
    parser.add_argument("--load_from", default=None,
                        help="a transformers model directory instead of --weight (a folder without "
                             "config.json, like upstream's `--load_from model`, gives the tokenizer only)")
    add_model_args(parser)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default=None, choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--batch_size", type=int, default=16, help="cases rolled out together")
    # --- api ---
    parser.add_argument("--api_base_url", default="http://127.0.0.1:8998/v1")
    parser.add_argument("--api_model", default="minimind")
    parser.add_argument("--api_key", default=os.environ.get("OPENAI_API_KEY", "none"))
    parser.add_argument("--stream", type=int, nargs="?", const=1, default=0, choices=[0, 1],
                        help="stream API responses (--stream or --stream 1)")
    parser.add_argument("--api_timeout", type=float, default=60.0,
                        help="seconds one API reply may take in all (a server that trickles bytes or sends "
                             "keep-alives is cut off too); a case fails with the reason and the run goes on")
    parser.add_argument("--api_retries", type=int, default=1, help="retries of a failed API request")
    # --- cases and decoding ---
    parser.add_argument("--cases", default=DEFAULT_CASES_FILE,
                        help="JSONL cases (default: the held-out set); 'design' for the design's 8 cases")
    parser.add_argument("--skip_bad_lines", action="store_true", help="skip (and count) malformed case lines")
    parser.add_argument("--trained_on", default=None,
                        help="an agent RL metrics file: keep the --cases (its RL prompt pool) by --split")
    parser.add_argument("--split", default=None, choices=["seen", "unseen"],
                        help="with --trained_on: the prompts the run trained on, or the others")
    parser.add_argument("--system", default=DEFAULT_SYSTEM, help="system prompt ('' for none)")
    parser.add_argument("--max_turns", type=int, default=3)
    parser.add_argument("--max_gen_len", "--max_new_tokens", type=int, default=256, help="new tokens per turn")
    parser.add_argument("--max_total_len", type=int, default=2500)
    parser.add_argument("--max_tool_tokens", type=int, default=256)
    parser.add_argument("--tool_timeout", type=float, default=1.0)
    parser.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (reproducible)")
    parser.add_argument("--top_p", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", default=None, help="write the full report as JSON")
    parser.add_argument("--verbose", action="store_true", help="print every case")
    parser.add_argument("--show_speed", type=int, nargs="?", const=1, default=0, choices=[0, 1],
                        help="print the model-written tokens per second (local backend)")
    parser.add_argument("--interactive", action="store_true", help="type your own prompts")
    args = parser.parse_args(argv)
    if (args.trained_on is None) != (args.split is None):
        parser.error("--trained_on and --split go together")
    if args.trained_on and args.cases in (DEFAULT_CASES_FILE, "design"):
        parser.error("--trained_on needs --cases: the RL prompt file the run trained on")
    if args.backend == "local":
        args.device = resolve_device(args.device)
        args.dtype = args.dtype or default_dtype(args.device)
    return args


def load_cases(path, skip_bad_lines=False, stats=None):
    """A cases file read against this tool world (trainer/evaluation.load_cases)."""
    return evaluation.load_cases(path, TOOL_NAMES, skip_bad_lines, stats)


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


# ----------------------------------------------------------------------------------------------------------
# backends


def run_local(model, tokenizer, cases, args):
    """Roll out every case greedily (or sampled) with the training loop, args.batch_size cases at a time."""
    rollout = rollout_cases(model, tokenizer, RolloutConfig.of(args), args.device, args.dtype)
    return run_cases(cases, rollout, args.batch_size, args.system)


class BadReply(ValueError):
    """An API reply that is not a usable chat completion; the case fails with this reason."""


def _text(value, what) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadReply(f"{what} is a {type(value).__name__}, not a string")
    return value


def _reply_message(completion):
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise BadReply("no choices in the reply")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise BadReply("choices[0].message is null")
    return message


def _api_turn(client, args, messages, tools):
    """One chat completion; returns (content, [(id, name, arguments_json)]). A reply that is not a usable
    completion raises BadReply."""
    kwargs = dict(model=args.api_model, messages=messages, tools=tools or None, max_tokens=args.max_gen_len,
                  temperature=args.temperature, top_p=args.top_p)
    if not args.stream:
        message = _reply_message(client.chat.completions.create(**kwargs))
        calls = []
        for c in message.tool_calls or []:
            if getattr(c, "function", None) is None:
                raise BadReply("a tool call without a function")
            calls.append((c.id, _text(c.function.name, "a tool call's name"),
                          _text(c.function.arguments, "a tool call's arguments") or "{}"))
        return _text(message.content, "message.content"), calls
    content, partial = [], {}
    for chunk in client.chat.completions.create(stream=True, **kwargs):
        if not chunk.choices:
            continue
        if not isinstance(chunk.choices, list):
            raise BadReply(f"a stream chunk's choices is a {type(chunk.choices).__name__}, not a list")
        delta = chunk.choices[0].delta
        if delta is None:
            raise BadReply("a stream chunk without a delta")
        if delta.content:
            content.append(_text(delta.content, "delta.content"))
        for tc in delta.tool_calls or []:
            slot = partial.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
            slot["id"] = tc.id or slot["id"]
            if tc.function is not None:
                slot["name"] += tc.function.name or ""
                slot["arguments"] += tc.function.arguments or ""
    calls = [(s["id"], s["name"], s["arguments"] or "{}") for _, s in sorted(partial.items())]
    return "".join(content), calls


class ApiClient:
    """The openai client, with a deadline on each reply: the client's own timeout bounds each read, so a
    server that sends a byte at a time, or keep-alives, would hold a case forever. A reply past the deadline
    fails its case (BadReply); the client is closed, which ends the abandoned read, and a new one serves on."""

    def __init__(self, args):
        self.args, self.client = args, None
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)

    def turn(self, messages, tools):
        import openai

        if self.client is None:
            self.client = openai.OpenAI(base_url=self.args.api_base_url, api_key=self.args.api_key,
                                        timeout=self.args.api_timeout, max_retries=self.args.api_retries)
        deadline = self.args.api_timeout * (1 + self.args.api_retries)
        future = self.pool.submit(_api_turn, self.client, self.args, messages, tools)
        try:
            return future.result(timeout=deadline)
        except concurrent.futures.TimeoutError:
            client, self.client = self.client, None
            client.close()
            raise BadReply(f"Timeout: no complete reply within {deadline:g} s") from None


def run_api(cases, args):
    """Drive an OpenAI-compatible endpoint through the same tool world. A reply that cannot be used (an
    HTTP error, a timeout, a body that is not a completion) fails its case with the reason in
    CaseResult.error, and the run goes on."""
    import openai

    client = ApiClient(args)
    results = []
    for case in cases:
        result = CaseResult(case["prompt"], case["category"], case["gt"], case["expect_tools"],
                            skill=case["skill"], expect_calls=case["expect_calls"])
        try:
            run_api_case(client, case, result, args)
        except (openai.APIError, BadReply, ValueError, TypeError, AttributeError, RecursionError,
                KeyError, IndexError) as e:
            # openai.APIError: connection, timeout, HTTP status, a body that is not JSON; ValueError: a body
            # the client cannot read as a completion (pydantic), JSON nested past the recursion limit, ...
            result.error = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            result.unfinished = True
        result.final_answer = final_answer(result.turns)
        results.append(result)
    errors = sum(bool(r.error) for r in results)
    if errors:
        print(f"{errors} of {len(results)} cases failed on the API's reply (see each case's 'error')")
    return results


def run_api_case(client: ApiClient, case, result: CaseResult, args):
    """The multi-turn loop of one case against the API; fills `result`. As in training, a turn's calls past
    MAX_CALLS_PER_TURN are answered with an error, not run."""
    messages = case_messages(case, args.system)
    tools = [TOOLS_BY_NAME[n] for n in case["tools"]]
    for turn in range(args.max_turns):
        content, calls = client.turn(messages, tools)
        result.turns.append(content)
        parsed = []
        for call_id, name, arguments in calls:
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:  # a bad call, as a model may write one
                arguments = None
            except RecursionError:
                raise BadReply("a tool call's arguments are nested too deeply to read") from None
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
        for k, (i, (_, name, arguments)) in enumerate(zip(ids, parsed)):
            out = execute_tool(name, arguments, timeout=args.tool_timeout) if k < MAX_CALLS_PER_TURN else \
                {"error": "too many tool calls in one turn",
                 "hint": f"make at most {MAX_CALLS_PER_TURN} calls per turn"}
            result.calls.append({"name": name, "arguments": arguments, "result": out,
                                 "valid": call_is_valid({"name": name, "arguments": arguments})})
            content = json.dumps(out, ensure_ascii=False)
            messages.append({"role": "tool", "tool_call_id": i, "content": content})


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
    """Type a question, watch the calls and the answer: rollout_single, one trajectory (every tool offered)."""
    engine = create_rollout_engine("torch", model, tokenizer.eos_token_id, tokenizer.pad_token_id, args.device,
                                   args.dtype)
    print("type a question (empty line to quit); every tool is offered")
    while True:
        try:
            prompt = input("> ").strip()
        except EOFError:
            break
        if not prompt:
            break
        with torch.no_grad():
            traj = rollout_single(engine, tokenizer, case_messages({"prompt": prompt}, args.system),
                                  [TOOLS_BY_NAME[n] for n in ALL_TOOLS], RolloutConfig.of(args))
        for c in traj.tool_calls:
            print(f"  -> {c['name']}({json.dumps(c['arguments'], ensure_ascii=False)}) = "
                  f"{json.dumps(c['result'], ensure_ascii=False)}")
        print(final_answer(traj.turns))


def print_speed(results, tokenizer, seconds: float):
    """Model-written tokens per second over the whole run (each turn re-encoded, plus its end token)."""
    tokens = sum(len(tokenizer.encode(turn, add_special_tokens=False)) + 1 for r in results for turn in r.turns)
    print(f"[speed] {tokens} model-written tokens in {seconds:.1f}s: {tokens / max(seconds, 1e-9):.1f} tokens/s")


def write_report(rep: dict, path: str):
    """The report as JSON, whole or not at all (a temporary file renamed over `path`). Text a model or a
    server wrote may hold a lone surrogate, which no UTF-8 file can: it is written as its JSON escape."""
    text = json.dumps(rep, ensure_ascii=False, indent=2).encode("utf-8", "backslashreplace")
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv=None):
    args = parse_args(argv)
    set_seed(args.seed)
    stats = {}
    cases = [dict(c) for c in DEFAULT_CASES] if args.cases == "design" else \
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
        weights = model_source(args)
        model, tokenizer = init_model(args, weights, args.save_dir, args.device)
        model.eval()
        if args.interactive:
            return interactive(model, tokenizer, args)
        results = run_local(model, tokenizer, cases, args)
        if args.show_speed:
            print_speed(results, tokenizer, time.time() - t0)
        source = weights if os.path.isdir(weights) or weights.endswith(".pth") \
            else f"{args.save_dir}/{weights}_{args.hidden_size}"
    else:
        results = run_api(cases, args)
        source = f"{args.api_base_url} ({args.api_model})"
    rep = report(results, time.time() - t0, {"backend": args.backend, "model": source,
                                             "cases_file": args.cases or "default", "temperature": args.temperature,
                                             "trained_on": args.trained_on, "split": args.split}, TOOL_NAMES)
    if args.verbose:
        for r in results:
            print_case(r)
    print(f"\n{source}: {len(results)} cases in {time.time() - t0:.1f}s")
    print_report(rep)
    if args.out:
        write_report(rep, args.out)
        print(f"\nwrote {args.out}")
    return rep


if __name__ == "__main__":
    main()
