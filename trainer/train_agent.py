"""
Agent RL: teach a small MiniMind model to use tools with multi-turn reinforcement learning.

This file is the lesson, in the order one batch flows through it:
    1. the tool world  TOOLS (what the model is told), MOCK_RESULTS (what a call returns), CHECK_ARGS (is a
                       call well-formed), parse_tool_calls, execute_tool
    2. rollout         the policy answers each prompt num_generations times; whenever it writes a <tool_call>,
                       the call is executed and the result injected as a tool turn, then the model goes on (up
                       to max_turns). Token-in/token-out: the training sequence is exactly the ids the model
                       sampled plus the ids of the injected turns; response_mask is 1 only on the model's own.
    3. reward          calculate_rewards(): tag format, tool alignment, GT match in the final answer,
                       unfinished and repetition penalties, the reward-hacking guards; each term named
    4. advantage       group-normalised per prompt: (r - mean) / (std + 1e-4)
    5. loss            CISPO (or GRPO) on the tokens the model wrote, plus beta * KL to a frozen reference
    6. step            clip, AdamW, cosine LR; log; save; evaluate
Mechanism a first reading can skip lives in modules named for it: agent_flags (the command line), prompt_pool
(prompts and their order), train_batch (trajectories to tensors), dynamic_sampling, step_metrics,
checkpoint_eval (periodic evaluation, best checkpoint, rollback), train_state (resume), fast_engine (the fast
rollout engine; rollout_engine.py is the plain one), mock_world (the tools' data).

Run (CPU, from the shipped cold-start checkpoint):
    python trainer/train_agent.py
    python trainer/train_agent.py --max_steps 20 --debug_mode
    python trainer/train_agent.py --rollout_engine sglang --sglang_base_url http://127.0.0.1:30000
    torchrun --nproc_per_node 2 trainer/train_agent.py --batch_size 4
"""
import atexit
import copy
import json
import math
import os
import random
import re
import sys
import time
from dataclasses import dataclass, field

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
from tqdm import tqdm

from dataset.lm_dataset import AgentRLDataset, clean_text, encode, render
from model.model_minimind import weight_path
from trainer import agent_flags, mock_world
from trainer.checkpoint_eval import periodic_eval_on_rank0, write_final_profile
from trainer.dynamic_sampling import collect_groups
from trainer.evaluation import RolloutConfig, load_cases, report, run_cases
from trainer.fast_engine import compute_per_token_logps, create_rollout_engine
from trainer.outcome import count_repeated_calls, final_answer, validate_gt_in_text
from trainer.prompt_pool import category_weights, ensure_pool, epoch_batches
from trainer.reward_model import RewardModel
from trainer.step_metrics import debug_print, log_step, open_metrics, step_record
from trainer.tool_runner import ToolRunner, cap_tool_result
from trainer.train_batch import build_train_batch
from trainer.train_state import TrainState, save_checkpoints
from trainer.trainer_utils import (
    WeightAverage, all_ranks_any, all_ranks_sum, autocast, average_record, barrier, close_distributed,
    cosine_lr, every, exit_status, grad_sync, init_distributed, init_model, load_resume, lock_output,
    loss_share, on_stop_signal, resume_path, set_rank_seed, set_seed, wrap_ddp,
)


# ==========================================================================================================
# 1. The tool world. To add a tool: append it to TOOLS, its function to MOCK_RESULTS (data and function in
# trainer/mock_world.py) and its check to CHECK_ARGS, and teach it in scripts/make_agent_data.py.
# ==========================================================================================================


def _tool(name, description, properties, required):
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS = [
    _tool("calculate_math", "计算数学表达式", {"expression": {"type": "string"}}, ["expression"]),
    _tool(
        "unit_converter",
        "单位换算,支持 km、miles、kg、pounds、meters、feet、celsius、fahrenheit",
        {"value": {"type": "number"}, "from_unit": {"type": "string"}, "to_unit": {"type": "string"}},
        ["value", "from_unit", "to_unit"],
    ),
    _tool("get_current_weather", "查询城市的当前天气", {"location": {"type": "string"}}, ["location"]),
    _tool("get_current_time", "查询时区的当前时间,默认 Asia/Shanghai", {"timezone": {"type": "string"}}, []),
    _tool(
        "get_exchange_rate",
        "查询货币汇率,货币用代码表示,如 USD、CNY",
        {"from_currency": {"type": "string"}, "to_currency": {"type": "string"}},
        ["from_currency", "to_currency"],
    ),
    _tool(
        "translate_text",
        "把文本翻译成 english 或 chinese",
        {"text": {"type": "string"}, "target_language": {"type": "string"}},
        ["text", "target_language"],
    ),
]
TOOLS_BY_NAME = {t["function"]["name"]: t for t in TOOLS}
TOOL_NAMES = list(TOOLS_BY_NAME)


MOCK_RESULTS = {  # what a call returns: trainer/mock_world.py answers from fixed data (no network)
    "calculate_math": mock_world.tool_calculate_math,
    "unit_converter": mock_world.tool_unit_converter,
    "get_current_weather": mock_world.tool_get_current_weather,
    "get_current_time": mock_world.tool_get_current_time,
    "get_exchange_rate": mock_world.tool_get_exchange_rate,
    "translate_text": mock_world.tool_translate_text,
}


def _nonempty_str(x):
    return isinstance(x, str) and x.strip() != ""


def _is_number(x):
    if isinstance(x, bool):
        return False
    try:
        if isinstance(x, (int, float)):
            return math.isfinite(x)
        return isinstance(x, str) and math.isfinite(float(x.replace(",", "")))
    except (ValueError, OverflowError):  # not a number, or an int too large for a float
        return False


CHECK_ARGS = {  # is a call well-formed: read by the reward and the metrics (execute_tool refuses the rest)
    "calculate_math": lambda a: _nonempty_str(a.get("expression")),
    "unit_converter": lambda a: _is_number(a.get("value")) and _nonempty_str(a.get("from_unit"))
    and _nonempty_str(a.get("to_unit")),
    "get_current_weather": lambda a: _nonempty_str(a.get("location")),
    "get_current_time": lambda a: a.get("timezone") is None or _nonempty_str(a.get("timezone")),
    "get_exchange_rate": lambda a: _nonempty_str(a.get("from_currency"))
    and _nonempty_str(a.get("to_currency")),
    "translate_text": lambda a: _nonempty_str(a.get("text")) and _nonempty_str(a.get("target_language")),
}
assert set(MOCK_RESULTS) == set(CHECK_ARGS) == set(TOOLS_BY_NAME), "the tool tables disagree"


CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
MAX_CALL_CHARS = 4000  # a call longer than this is not parsed (a runaway generation, not a call)
MAX_CALLS_PER_TURN = 8  # calls past this in one turn are answered with an error, not run


def parse_tool_call_body(body: str):
    """One <tool_call> body -> {"name", "arguments"} or None when it is not a usable call."""
    if len(body) > MAX_CALL_CHARS:
        return None
    try:
        call = json.loads(body)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
        return None
    arguments = call.get("arguments", {})
    if isinstance(arguments, str):  # OpenAI style: arguments as a JSON string
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            return None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return None
    return {"name": call["name"], "arguments": arguments}


def tool_call_bodies(text: str) -> list:
    """The text between each <tool_call> and the next </tool_call>, stripped, in order. One left-to-right
    scan with str.find (linear in the text: a regex with lazy groups backtracks cubically on an unclosed
    tag followed by spaces); an opening tag with no closing tag after it ends the scan."""
    bodies, pos = [], 0
    while True:
        start = text.find(CALL_OPEN, pos)
        if start < 0:
            return bodies
        end = text.find(CALL_CLOSE, start + len(CALL_OPEN))
        if end < 0:
            return bodies
        bodies.append(text[start + len(CALL_OPEN):end].strip())
        pos = end + len(CALL_CLOSE)


def parse_tool_calls(text: str):
    """All well-formed <tool_call> blocks in `text`, in order; malformed ones are skipped, never raised."""
    calls = []
    for body in tool_call_bodies(text):
        call = parse_tool_call_body(body)
        if call is not None:
            calls.append(call)
    return calls


def count_parse_errors(text: str, calls) -> int:
    """<tool_call> tags opened in `text` that did not become a parsed call (bad JSON, unclosed, ...)."""
    return max(0, text.count("<tool_call>") - len(calls))


def call_is_valid(call) -> bool:
    """The tool exists and CHECK_ARGS accepts the arguments (what the reward and the metrics call valid)."""
    check = CHECK_ARGS.get(call["name"])
    return check is not None and isinstance(call["arguments"], dict) and bool(check(call["arguments"]))


TOOL_RUNNER = ToolRunner(MOCK_RESULTS)  # worker processes with a timeout: trainer/tool_runner.py
atexit.register(TOOL_RUNNER.close)


def execute_tool(name, args, timeout: float = 1.0):
    """Run one call; always returns a dict, within `timeout` seconds (plus process overhead). Failures come
    back as {"error": ..., "hint": ...} for the model to read: unknown tool, invalid arguments, timeout,
    tool failure."""
    if not isinstance(name, str) or name not in MOCK_RESULTS:
        return {"error": f"unknown tool: {str(name)[:40]}", "hint": "available: " + ", ".join(MOCK_RESULTS)}
    if not isinstance(args, dict) or not CHECK_ARGS[name](args):
        params = TOOLS_BY_NAME[name]["function"]["parameters"]
        needs = "needs " + ", ".join(params["required"]) if params["required"] else \
            "takes only the optional " + ", ".join(params["properties"])
        return {"error": f"invalid arguments: {name} {needs}", "hint": "see the tool's parameters"}
    try:
        result = TOOL_RUNNER.call(name, args, timeout)
    except (TypeError, ValueError, RecursionError):  # arguments that are not JSON data
        return {"error": f"invalid arguments: {name} arguments are not JSON data"}
    return cap_tool_result(result)


# ==========================================================================================================
# 2. Multi-turn rollout: render -> generate -> parse -> execute -> inject, token-in/token-out.
# ==========================================================================================================


@dataclass
class Trajectory:
    """One multi-turn attempt at a prompt.

    The training sequence is prompt_ids + ids. `ids` holds, in order, each model turn exactly as sampled
    (through its <|im_end|>) and each injected tool turn as the template renders it. response_mask and
    old_logps are aligned with ids: mask 1 / the sampling log-prob on tokens the model wrote, mask 0 / 0.0 on
    tool-turn tokens (the model did not write them, so they get no gradient).
    """
    prompt_ids: list
    messages: list  # the conversation so far (copied per trajectory, never shared)
    open_thinking: bool
    ids: list = field(default_factory=list)
    response_mask: list = field(default_factory=list)
    old_logps: list = field(default_factory=list)
    turns: list = field(default_factory=list)  # the text of each model turn (without its <|im_end|>)
    tool_calls: list = field(
        default_factory=list
    )  # every parsed call: {"name", "arguments", "result", "turn"}
    parse_errors: int = 0  # <tool_call> blocks the model opened that did not parse into a call
    unfinished: bool = False  # still calling tools when the turns (or the length budget) ran out
    done: bool = False

    @property
    def length(self):
        return len(self.prompt_ids) + len(self.ids)


def generation_prefill(open_thinking: bool) -> str:
    """What the template's generation prompt writes after '<|im_start|>assistant\\n' (see the chat
    template)."""
    return "<think>\n" if open_thinking else "<think>\n\n</think>\n\n"


def start_trajectory(tokenizer, messages, tools, open_thinking: bool) -> Trajectory:
    messages = copy.deepcopy(messages)
    prompt = render(tokenizer, messages, tools, add_generation_prompt=True, open_thinking=open_thinking)
    return Trajectory(prompt_ids=encode(tokenizer, prompt), messages=messages, open_thinking=open_thinking)


TRUNCATION_MARK = " ...(truncated)"


def cap_tool_output(tokenizer, text: str, max_tokens: int) -> str:
    """Cut a tool result to a token budget (the truncation mark included) before it enters the context."""
    head = text[:max_tokens * 8]  # a token is rarely more than 8 characters: never tokenize a huge payload
    ids = encode(tokenizer, head)
    if len(ids) <= max_tokens and len(head) == len(text):
        return text
    keep = max(0, max_tokens - len(encode(tokenizer, TRUNCATION_MARK)))
    return tokenizer.decode(ids[:keep]) + TRUNCATION_MARK


def apply_turn(traj: Trajectory, tokenizer, tools, completion_ids, completion_logps, stopped: bool,
               last_turn: bool, args):
    """Record one model turn; if it calls tools (and turns remain), execute them and inject the tool turn."""
    traj.ids += completion_ids
    traj.response_mask += [1] * len(completion_ids)
    traj.old_logps += completion_logps
    text_ids = completion_ids[:-1] if stopped else completion_ids  # drop the model's <|im_end|>
    text = tokenizer.decode(text_ids, skip_special_tokens=False)
    traj.turns.append(text)
    calls = parse_tool_calls(text)
    traj.parse_errors += count_parse_errors(text, calls)
    if not stopped:
        # cut off mid-turn by the length budget: there is no complete turn to act on
        traj.unfinished = True
        traj.done = True
        return
    if not calls:
        traj.done = True  # a final answer
        return
    if last_turn:
        traj.unfinished = True  # wants more tools, but no turn is left for the answer
        traj.done = True
        return
    # the assistant message renders back to exactly what was sampled: prefill + text, verbatim
    assistant = {"role": "assistant", "content": generation_prefill(traj.open_thinking) + text}
    before = render(tokenizer, traj.messages + [assistant], tools)
    traj.messages.append(assistant)
    for k, call in enumerate(calls):
        if k < MAX_CALLS_PER_TURN:
            result = execute_tool(call["name"], call["arguments"], timeout=args.tool_timeout)
        else:  # a turn of many slow calls would stall the whole batch
            result = {"error": "too many tool calls in one turn",
                      "hint": f"make at most {MAX_CALLS_PER_TURN} calls per turn"}
        # what a tool echoes of a call (a lone surrogate, a spelled-out <|im_start|>) is text, never a turn
        content = cap_tool_output(tokenizer, clean_text(json.dumps(result, ensure_ascii=False)),
                                  args.max_tool_tokens)
        traj.tool_calls.append(
            {**call, "result": result, "valid": call_is_valid(call), "turn": len(traj.turns) - 1}
        )
        traj.messages.append({"role": "tool", "content": content})
    after = render(
        tokenizer, traj.messages, tools, add_generation_prompt=True, open_thinking=traj.open_thinking
    )
    if not after.startswith(before):
        raise RuntimeError("chat template is not prefix-stable; cannot append the tool turn")
    obs_ids = encode(tokenizer, after[len(before) - 1:])  # from the "\n" after the model's <|im_end|>
    traj.ids += obs_ids
    traj.response_mask += [0] * len(obs_ids)
    traj.old_logps += [0.0] * len(obs_ids)
    if traj.length >= args.max_total_len:
        traj.unfinished = True  # no room left to answer
        traj.done = True


def rollout_single(rollout_engine, tokenizer, messages, tools, args, open_thinking=False) -> Trajectory:
    """One trajectory, one turn at a time: the design's loop written out. Generate a turn; if it calls tools,
    run them and append the tool turn (apply_turn); go on until an answer or max_turns. rollout_batch runs the
    same loop for many trajectories at once (tests/test_agent.py checks that they agree)."""
    traj = start_trajectory(tokenizer, messages, tools, open_thinking)
    for turn in range(args.max_turns):
        out = rollout_engine.rollout([traj.prompt_ids + traj.ids], max_new_tokens=args.max_gen_len,
                                     temperature=args.temperature, top_p=args.top_p,
                                     max_length=args.max_total_len)
        apply_turn(traj, tokenizer, tools, out.completion_ids[0], out.logps[0], out.finished[0],
                   last_turn=turn == args.max_turns - 1, args=args)
        if traj.done:
            break
    return traj


def rollout_batch(rollout_engine, tokenizer, messages_batch, tools_batch, num_generations, args,
                  open_thinking=None) -> list:
    """num_generations trajectories per prompt, advanced together: each turn makes one batched rollout call
    for every trajectory still running. Returns B * G trajectories, grouped by prompt (prompt i owns
    [i*G, (i+1)*G))."""
    trajs, traj_tools = [], []
    for i, (messages, tools) in enumerate(zip(messages_batch, tools_batch)):
        rendered = {}  # thinking -> prompt ids: a prompt's G copies are rendered and tokenized once
        for g in range(num_generations):
            thinking = open_thinking[i * num_generations + g] if open_thinking is not None else False
            if thinking not in rendered:
                rendered[thinking] = start_trajectory(tokenizer, messages, tools, thinking).prompt_ids
            trajs.append(Trajectory(prompt_ids=list(rendered[thinking]), messages=copy.deepcopy(messages),
                                    open_thinking=thinking))
            traj_tools.append(tools)
    for turn in range(args.max_turns):
        active = [k for k, t in enumerate(trajs) if not t.done]
        if not active:
            break
        contexts = [trajs[k].prompt_ids + trajs[k].ids for k in active]
        out = rollout_engine.rollout(contexts, max_new_tokens=args.max_gen_len, temperature=args.temperature,
                                     top_p=args.top_p, max_length=args.max_total_len)
        for j, k in enumerate(active):
            apply_turn(trajs[k], tokenizer, traj_tools[k], out.completion_ids[j], out.logps[j],
                       out.finished[j], turn == args.max_turns - 1, args)
    return trajs


def rollout_cases(model, tokenizer, cfg: RolloutConfig, device: str, dtype: str):
    """A rollout function for trainer/evaluation.run_cases: one trajectory per case, with the case's tools."""
    engine = create_rollout_engine(
        "torch", model, tokenizer.eos_token_id, tokenizer.pad_token_id, device, dtype
    )

    def rollout(messages_batch, cases):
        tools = [[TOOLS_BY_NAME[n] for n in case["tools"]] for case in cases]
        with torch.no_grad():
            return rollout_batch(engine, tokenizer, messages_batch, tools, 1, cfg)
    return rollout


# ==========================================================================================================
# 3. Reward: result > process > format. Each term is a named function; calculate_rewards returns them all.
# ==========================================================================================================


REWARD_CLIP = 3.0  # the total is clipped to [-3, 3]
TAG_PENALTY = 0.5  # per unbalanced <tool_call> tag
ALIGN_BONUS = 0.5  # the valid calls match what the task needs
ALIGN_PENALTY = 0.5  # per unit of gap otherwise
GT_WEIGHT = 2.5  # times the fraction of GT values found in the final answer
UNFINISHED_PENALTY = 0.5
MAX_REPETITION_PENALTY = 0.5
LENGTH_SCORE = 0.5  # no-tool branch: +0.5 for an answer of sensible length, -0.5 otherwise
MIN_ANSWER_CHARS, MAX_ANSWER_CHARS = 2, 800
THINK_SCORE = 0.25  # no-tool branch with thinking: closure and length of the think block
MIN_THINK_CHARS, MAX_THINK_CHARS = 5, 400
def tag_format_score(turns) -> float:
    """-0.5 for every <tool_call> without its </tool_call> (or the reverse), in every turn."""
    return -TAG_PENALTY * sum(abs(t.count("<tool_call>") - t.count("</tool_call>")) for t in turns)


def tool_alignment_score(calls, tools, expected_calls: int) -> float:
    """+0.5 when the valid calls match the expected count and nothing invalid was called, else -0.5 per
    unit of gap = |valid - expected| + invalid. A call is valid when the tool was offered and CHECK_ARGS
    accepts it.
    """
    offered = {t["function"]["name"] for t in tools}
    valid = sum(1 for c in calls if c["name"] in offered and CHECK_ARGS.get(c["name"], lambda a: False)(
        c["arguments"]))
    gap = abs(valid - expected_calls) + (len(calls) - valid)
    return ALIGN_BONUS if gap == 0 else -ALIGN_PENALTY * gap


def gt_match_score(answer: str, gt_list) -> float:
    if not gt_list:
        return 0.0
    return GT_WEIGHT * len(validate_gt_in_text(answer, gt_list)) / len(gt_list)


def _ngram_units(text: str):
    # Chinese characters one by one, words, digit runs, punctuation
    return re.findall(r"[\u4e00-\u9fff]|[A-Za-z]+|\d+|[^\sA-Za-z\d\u4e00-\u9fff]", text)


def repetition_penalty(text: str, n: int = 3) -> float:
    """-(share of repeated n-grams), capped at 0.5: 'the weather is good the weather is good' loses points."""
    units = _ngram_units(text)
    grams = [tuple(units[i:i + n]) for i in range(len(units) - n + 1)]
    if not grams:
        return 0.0
    repeated = 1 - len(set(grams)) / len(grams)
    return -min(MAX_REPETITION_PENALTY, repeated)


def length_score(answer: str) -> float:
    return LENGTH_SCORE if MIN_ANSWER_CHARS <= len(answer) <= MAX_ANSWER_CHARS else -LENGTH_SCORE


def thinking_scores(turn: str, open_thinking: bool):
    """(closure, length) of the think block when the model was asked to think; (0, 0) otherwise."""
    if not open_thinking:
        return 0.0, 0.0
    closed = turn.count("</think>") == 1
    closure = THINK_SCORE if closed else -THINK_SCORE
    reasoning = turn.split("</think>", 1)[0].strip() if closed else ""
    length = THINK_SCORE if MIN_THINK_CHARS <= len(reasoning) <= MAX_THINK_CHARS else -THINK_SCORE
    return closure, length


@dataclass
class RewardBreakdown:
    """Every term of one trajectory's reward; `total` is their sum clipped to [-3, 3]."""
    tag_format: float = 0.0
    tool_alignment: float = 0.0
    gt_match: float = 0.0
    unfinished: float = 0.0
    repetition: float = 0.0
    length: float = 0.0
    think_closure: float = 0.0
    think_length: float = 0.0
    reward_model: float = 0.0
    repeat_call: float = 0.0  # guard: the same tool with the same arguments again
    needless_call: float = 0.0  # guard: any tool called on a question that needs none
    missed_call: float = 0.0  # guard: no tool called on a task that needs one
    extra_calls: float = 0.0  # guard: each call past the expected number
    total: float = 0.0

    def terms(self) -> dict:
        return {k: v for k, v in vars(self).items() if k != "total"}


@dataclass
class RewardGuards:
    """What this trainer adds to the design's reward. Three reward-hacking guards, each a named reward term
    (0 turns one off), and two fixes of the design's reward that remove noise from the advantages (False
    turns one off). With all of them off (RewardGuards.design(), or guards=None) calculate_rewards is
    exactly the design's reward."""
    repeat_call: float = 1.0  # per call that repeats an earlier call (same name, same arguments)
    needless_call: float = 2.0  # once, when a question that needs no tool gets any tool call
    extra_calls: float = 0.3  # per call past the expected number
    # once, when a task that needs a tool gets no call: the design's no-tool branch scores such an answer
    # +0.5 for its length, as much as a right call with a wrong answer and above a malformed call
    missed_call: float = 0.0
    # a correction task solved directly (the fixed call at once, no failing call first) is aligned too;
    # the design's count rule scores it 2.0, below the 3.0 of making the failing call first
    direct_correction: bool = True
    # no 3-gram repetition penalty on an answer that already holds every GT string: between two correct
    # answers it only ranks wording, a few hundredths that become a full advantage in a low-variance group
    spare_correct_repetition: bool = True

    @classmethod
    def design(cls):
        return cls(0.0, 0.0, 0.0, 0.0, direct_correction=False, spare_correct_repetition=False)


def calculate_rewards(trajectories, gt_batch, tools_batch, num_generations, reward_model=None,
                      expect_tools_batch=None, guards: RewardGuards | None = None,
                      categories=None) -> list:
    """One RewardBreakdown per trajectory. Prompt i's data (gt, tools) applies to trajectories
    [i*G, (i+1)*G).

    Tool branch (the model called a tool): tag format + tool alignment + GT match on the final answer.
    No-tool branch: tag format + answer length + thinking closure/length + optional reward model.
    Both: -0.5 if unfinished, and the 3-gram repetition penalty on the final answer.
    The expected number of calls is len(expect_tools) when the data gives it, else len(gt) (the design's
    rule). Guards (when given): repeated calls, a tool called when none is needed (expect_tools == [], or no
    expect_tools and no GT), calls past the expected number, no call where one is needed; and the two
    fixes of RewardGuards, which read `categories` (one per prompt) to know a correction task.
    """
    guards = guards or RewardGuards.design()
    rewards = []
    for k, traj in enumerate(trajectories):
        i = k // num_generations
        gt, tools = gt_batch[i], tools_batch[i]
        expect = expect_tools_batch[i] if expect_tools_batch is not None else None
        expected_calls = len(expect) if expect is not None else len(gt)
        answer = final_answer(traj.turns)
        r = RewardBreakdown(tag_format=tag_format_score(traj.turns))
        calls = [c for turn in traj.turns for c in parse_tool_calls(turn)]
        needs_no_tool = expect == [] if expect is not None else not gt
        if calls:
            r.tool_alignment = tool_alignment_score(calls, tools, expected_calls)
            direct = guards.direct_correction and categories is not None and categories[i] == "correction"
            if direct and expected_calls > 1:  # the fixed call alone solves it
                direct_score = tool_alignment_score(calls, tools, expected_calls - 1)
                r.tool_alignment = max(r.tool_alignment, direct_score)
            r.gt_match = gt_match_score(answer, gt)
        else:
            r.length = length_score(answer)
            r.think_closure, r.think_length = thinking_scores(traj.turns[-1] if traj.turns else "",
                                                              traj.open_thinking)
            if reward_model is not None:
                r.reward_model = reward_model.score(traj.messages, answer)
            r.missed_call = 0.0 if needs_no_tool else -guards.missed_call
        r.unfinished = -UNFINISHED_PENALTY if traj.unfinished else 0.0
        correct = bool(gt) and r.gt_match == GT_WEIGHT
        r.repetition = 0.0 if guards.spare_correct_repetition and correct else repetition_penalty(answer)
        if calls:
            r.repeat_call = -guards.repeat_call * count_repeated_calls(calls)
            r.needless_call = -guards.needless_call if needs_no_tool else 0.0
            if not needs_no_tool:
                r.extra_calls = -guards.extra_calls * max(0, len(calls) - expected_calls)
        r.total = max(-REWARD_CLIP, min(REWARD_CLIP, sum(r.terms().values())))
        rewards.append(r)
    return rewards


# ==========================================================================================================
# 4-6. Training: group advantages -> CISPO/GRPO loss with KL to the reference -> step; the loop; main.
# ==========================================================================================================


def group_advantages(rewards: torch.Tensor, num_generations: int, adv_clip: float, scale: str = "group"):
    """(r - group mean) / (group std + 1e-4), per prompt; returns advantages, per-group std.

    scale="none" leaves out the division (as Dr. GRPO does): a group whose rewards differ only by a few
    hundredths (a repetition penalty, say) then gets advantages of a few hundredths, not of +-1."""
    grouped = rewards.view(-1, num_generations)  # (B, G)
    mean, std = grouped.mean(1, keepdim=True), grouped.std(1, keepdim=True) if num_generations > 1 \
        else torch.zeros_like(grouped[:, :1])
    centred = grouped - mean
    advantages = (centred / (std + 1e-4) if scale == "group" else centred).flatten()
    if adv_clip > 0:
        advantages = advantages.clamp(-adv_clip, adv_clip)
    return advantages, std.flatten()


def score_groups(state: TrainState, items):
    """Phases 1-3 for a list of prompts: num_generations trajectories each with the current policy (no
    gradient), their rewards (each term kept for the log), and group-normalised advantages (a group whose
    rewards are all equal gets 0: no signal). Returns (trajectories, rewards, advantages, group std)."""
    args, G = state.args, state.args.num_generations
    thinking = [random.random() < args.thinking_ratio for _ in range(len(items) * G)]
    with torch.no_grad():
        trajs = rollout_batch(state.rollout_engine, state.tokenizer, [it["messages"] for it in items],
                              [it["tools"] for it in items], G, args, thinking)
    rewards = calculate_rewards(trajs, [it["gt"] for it in items], [it["tools"] for it in items], G,
                                state.reward_model, [it["expect_tools"] for it in items], state.guards,
                                [it["category"] for it in items])
    totals = torch.tensor([r.total for r in rewards])
    advantages, group_std = group_advantages(totals, G, args.adv_clip, args.scale_rewards)
    return trajs, rewards, advantages, group_std


def policy_loss(logps, old_logps, ref_logps, advantages, mask, args):
    """Per-sequence mean over the model's tokens of the CISPO/GRPO objective plus beta * KL; returns the batch
    mean loss and the token-level ratio and KL (for logging)."""
    ratio = torch.exp(logps - old_logps)  # (N, T-1)
    adv = advantages[:, None]
    if args.loss_type == "cispo":
        # the clipped ratio only weights the gradient of the log-prob; it is not differentiated through
        pg = -torch.clamp(ratio, max=args.epsilon_high).detach() * adv * logps
    else:
        pg = -torch.min(ratio * adv, torch.clamp(ratio, 1 - args.epsilon, 1 + args.epsilon) * adv)
    # k3 estimator of KL(policy || reference): exp(ref - logp) - (ref - logp) - 1 >= 0
    delta = ref_logps - logps
    kl = torch.exp(delta) - delta - 1
    per_token = (pg + args.beta * kl) * mask
    if getattr(args, "loss_norm", "sequence") == "token":
        return per_token.sum(), ratio.detach(), kl.detach()  # normalised by the batch's token count later
    per_seq = per_token.sum(1) / mask.sum(1).clamp(min=1)
    return per_seq.mean(), ratio.detach(), kl.detach()


@dataclass
class UpdateStats:
    """What one batch's update did: its loss over the global batch, the sequences it trained on, and the
    token-level importance ratios and KL (for the log)."""
    loss: float
    trained: float
    ratios: torch.Tensor
    kls: torch.Tensor


def policy_update(state: TrainState, trajs, advantages, group_std, rank_share) -> UpdateStats:
    """Phase 4: policy and reference log-probs of the trajectories, the CISPO/GRPO loss, backward.

    A group whose rewards are all equal has zero advantage everywhere: with --skip_zero_std it is left out
    (its only gradient would be the KL term). Micro-batches of --train_micro_batch sequences bound
    the memory; each is cut to the columns of its model-written tokens, and a prompt its rows share goes
    through the model once (TrainBatch.rows)."""
    args, tok = state.args, state.tokenizer
    G = args.num_generations
    keep = [k for k in range(len(trajs)) if not (args.skip_zero_std and group_std[k // G] < 1e-6)]
    weight = rank_share.weight
    n_trained = all_ranks_sum(len(keep) * weight, state.dist)  # over the global batch
    if not keep and state.dist.enabled:
        keep, weight = [0], 0.0  # a zero-weight pass: DDP needs every rank in the all-reduce
    sync = (state.micro_step + 1) % args.accumulation_steps == 0  # all-reduce on the step's last backward
    loss_sum, ratios, kls = 0.0, [], []
    if keep:
        batch = build_train_batch([trajs[k] for k in keep], advantages[keep], tok.pad_token_id,
                                  tok.eos_token_id, args.max_total_len)
    if args.loss_norm == "token":  # the mean over the global batch's model-written tokens
        n_tokens = all_ranks_sum(float(batch.completion_mask.sum()) * weight if keep else 0.0, state.dist)
    for s in range(0, len(keep), args.train_micro_batch):
        micro = batch.rows(slice(s, s + args.train_micro_batch), cut=args.cut_update)
        ids, mask = micro.input_ids.to(args.device), micro.completion_mask.to(args.device)
        # the group's prompt once, not once per sample; under DDP the prompt goes through the plain model
        # and the rows through DDP (one DDP forward per backward), whose backward all-reduces both parts
        n_keep, shared = micro.n_keep, micro.shared_prefix
        with torch.no_grad(), autocast(args.device, args.dtype):
            ref_logps = compute_per_token_logps(state.ref_model, ids, n_keep, temperature=args.temperature,
                                                shared_prefix=shared)
        with grad_sync(state.train_model, sync and s + args.train_micro_batch >= len(keep)):
            with autocast(args.device, args.dtype):
                logps = compute_per_token_logps(state.train_model, ids, n_keep, temperature=args.temperature,
                                                shared_prefix=shared, prefix_model=state.model)
            loss, ratio, kl = policy_loss(logps, micro.old_logps.to(args.device), ref_logps,
                                          micro.advantages.to(args.device), mask, args)
            if args.loss_norm == "token":
                share = weight * state.dist.world_size / max(n_tokens, 1.0)
            else:
                share = loss_share(ids.shape[0], weight, state.dist.world_size, n_trained)
            (loss * share / args.accumulation_steps).backward()
        loss_sum += loss.item() * share
        if weight:
            ratios.append(ratio[mask.bool()])
            kls.append(kl[mask.bool()])
    loss_all = all_ranks_sum(loss_sum, state.dist) / state.dist.world_size  # the same on every rank
    return UpdateStats(loss_all, n_trained, torch.cat(ratios) if ratios else torch.zeros(0),
                       torch.cat(kls) if kls else torch.zeros(0))


def optimizer_step(state: TrainState, loss: float):
    """Phase 5: on the last micro-step of --accumulation_steps: cosine LR, clip, AdamW step (skipped when the
    loss or the gradient is not finite), and the new weights to the rollout engine. Returns (stepped, norm).
    """
    args = state.args
    if state.micro_step % args.accumulation_steps != 0:
        return False, float("nan")
    lr = cosine_lr(state.step, state.total_steps, args.learning_rate)
    for group in state.optimizer.param_groups:
        group["lr"] = lr
    grad_norm = torch.nn.utils.clip_grad_norm_(state.model.parameters(), args.grad_clip).item()
    stepped = math.isfinite(loss) and math.isfinite(grad_norm)
    if stepped:
        state.optimizer.step()
    else:  # never write a non-finite update into the weights
        state.skipped_nonfinite += 1
    state.optimizer.zero_grad(set_to_none=True)
    state.rollout_engine.update_policy(state.model)
    state.step += 1
    state.average.update(state.model, state.step)  # with --average_last, the mean of the last steps' weights
    return stepped, grad_norm


def rl_train_epoch(state: TrainState, dataset, batches, epoch: int, start_batch: int = 0) -> int:
    """One pass over `batches` (lists of dataset indices), one optimizer step per --accumulation_steps
    collections (a collection is one batch, or up to --max_draws with dynamic sampling). Returns the index
    of the first batch not trained on (len(batches) when the epoch is complete)."""
    args = state.args
    bar = tqdm(
        total=state.total_steps,
        initial=state.step,
        desc=f"agent rl (epoch {epoch})",
        dynamic_ncols=True,
        disable=not state.dist.is_main,
    )
    b = next_batch = start_batch
    state.prompts_done = sum(len(batch) for batch in batches[:start_batch])
    while b < len(batches):
        state.stop_requested = all_ranks_any(state.stop_requested, state.dist)  # a signal reaches all ranks
        if state.step >= state.total_steps or state.stop_requested:  # ... but not always at the same step
            break
        t0 = time.time()
        # Phases 1-3: multi-turn rollout with the current policy, tool-aware rewards, group advantages
        # (with --max_draws > 1, more prompts until the step has --batch_size informative groups)
        groups = collect_groups(state, dataset, batches, b, score_groups)
        b = next_batch = b + groups.chunks
        # Phase 4: the CISPO/GRPO loss on the model's tokens, with KL to the reference; backward
        update = policy_update(state, groups.trajs, groups.advantages, groups.group_std, groups.rank_share)
        state.micro_step += 1
        state.prompts_done += groups.rank_share.n_global
        # Phase 5: the optimizer step
        stepped, grad_norm = optimizer_step(state, update.loss)
        bar.update(int(state.micro_step % args.accumulation_steps == 0))
        # Phase 6: log (averaged over all ranks' batches; which prompts were drawn)
        record = step_record(state, epoch, groups, update, stepped, grad_norm, time.time() - t0)
        record = average_record(record, len(groups.trajs) * groups.rank_share.weight, state.dist)
        log_step(state, record, bar)
        if args.debug_mode and every(state.step, args.debug_interval) and state.dist.is_main:
            debug_print(state, groups.trajs, groups.rewards)
        # Phase 7: save and evaluate
        if stepped and every(state.step, args.save_interval) and state.dist.is_main:
            save_checkpoints(state, epoch, b)
        if stepped and every(state.step, args.eval_interval):
            periodic_eval_on_rank0(state, evaluate_policy)
        if args.max_minutes > 0 and time.time() - state.started > 60 * args.max_minutes:
            state.stop_requested = True  # the time budget is spent: configurations compared at equal time
    bar.close()
    return next_batch


def evaluate_policy(state: TrainState, model=None) -> dict:
    """Greedy evaluation of the current policy (or of `model`) on the eval cases (trainer/evaluation.py)."""
    args = state.args
    model = state.model if model is None else model
    rollout = rollout_cases(model, state.tokenizer, RolloutConfig.of(args, temperature=0.0, top_p=1.0),
                            args.device, args.dtype)
    t0 = time.time()
    was_training = model.training
    model.eval()
    try:
        results = run_cases(state.eval_cases, rollout)
    finally:
        model.train(was_training)
    return report(results, time.time() - t0, {"cases_file": args.eval_cases, "temperature": 0.0},
                  TOOL_NAMES)


def parse_args(argv=None):
    """The command line (trainer/agent_flags.py); the guards' defaults are RewardGuards'."""
    return agent_flags.parse_args(argv, RewardGuards())


def build_state(args, dist_info) -> tuple:
    """The prompts, the policy and its frozen reference, the optimizer, the rollout engine: a TrainState."""
    if dist_info.is_main:
        ensure_pool(args.data_path, TOOLS)
    barrier(dist_info)
    dataset = AgentRLDataset(
        args.data_path, known_tools=set(MOCK_RESULTS), skip_bad_lines=args.skip_bad_lines
    )
    model, tokenizer = init_model(args, args.from_weight, args.save_dir, args.device)
    ref_model = copy.deepcopy(model).eval().requires_grad_(False)  # frozen starting weights: the KL anchor
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0.0)
    weights_dir = args.sglang_weights_dir or os.path.join(args.save_dir, "sglang_policy")
    engine = create_rollout_engine(args.rollout_engine, model, tokenizer.eos_token_id, tokenizer.pad_token_id,
                                   args.device, args.dtype, base_url=args.sglang_base_url,
                                   weights_dir=weights_dir, timeout=args.sglang_timeout)
    reward_model = RewardModel(args.reward_model_path, args.device) if args.reward_model_path else None
    n_batches = math.ceil(len(dataset) / args.batch_size)
    total_steps = args.epochs * (n_batches // args.accumulation_steps)
    if args.max_steps > 0:
        total_steps = min(total_steps, args.max_steps)
    state = TrainState(model, ref_model, engine, tokenizer, optimizer, args, total_steps, reward_model,
                       dist=dist_info)
    state.guards = RewardGuards(args.repeat_call_penalty, args.needless_call_penalty, args.extra_call_cost,
                                args.missed_call_penalty, bool(args.direct_correction),
                                bool(args.spare_correct_repetition))
    if args.eval_interval > 0:
        state.eval_cases = load_cases(args.eval_cases, TOOL_NAMES)
    if args.average_last > 0:  # the mean of the weights after each of the last steps is what the run saves
        state.average = WeightAverage(start=total_steps - max(1, round(args.average_last * total_steps)) + 1)
    return state, dataset, n_batches


def main(argv=None):
    args = parse_args(argv)
    dist_info = init_distributed(args.device)  # rank 0 of 1 unless started by torchrun
    args.device = dist_info.device
    if args.batch_size < dist_info.world_size:
        raise ValueError(
            f"--batch_size {args.batch_size} is smaller than the {dist_info.world_size} processes: "
            "each rank rolls out whole prompt groups"
        )
    set_seed(args.seed)  # the same on every rank: identical starting weights
    state, dataset, n_batches = build_state(args, dist_info)
    start_epoch, start_batch = 0, 0
    if args.from_resume:
        path = resume_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe))
        ckpt = load_resume(path)
        start_epoch, start_batch = state.restore(ckpt, path)
        if dist_info.is_main:
            print(f"resumed from {path} at step {state.step} (epoch {start_epoch}, batch {start_batch}, "
                  f"saved by {ckpt['extra'].get('world_size', 1)} process(es))")
    state.train_model = wrap_ddp(state.model, dist_info, find_unused_parameters=bool(args.use_moe))
    set_rank_seed(args.seed, dist_info, state.step)  # each rank samples its own trajectories
    os.makedirs(args.save_dir, exist_ok=True)
    if dist_info.is_main:  # one run per checkpoint: a second one on the same --save_dir stops here
        lock_output(weight_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe)))
        open_metrics(state, dataset, n_batches)

    on_stop_signal(lambda signum: setattr(state, "stop_requested", True))
    state.train_model.train()
    if args.eval_interval > 0 and state.step == 0:
        # the starting point: the first "best", and the baseline of the curves
        periodic_eval_on_rank0(state, evaluate_policy)
    categories = [dataset[i]["category"] for i in range(len(dataset))]
    weights = category_weights(args, categories, dist_info.is_main)
    epoch, next_batch = start_epoch, start_batch
    for epoch in range(start_epoch, args.epochs):
        batches = epoch_batches(categories, args.batch_size, args.seed, epoch, weights)
        next_batch = rl_train_epoch(
            state, dataset, batches, epoch, start_batch if epoch == start_epoch else 0
        )
        state.stop_requested = all_ranks_any(state.stop_requested, dist_info)
        if state.step >= state.total_steps or state.stop_requested:
            break
    if dist_info.is_main:
        save_checkpoints(state, epoch, next_batch)
        if args.eval_interval > 0:
            write_final_profile(state, evaluate_policy)
        state.metrics_file.close()
        print(f"saved {weight_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe))} "
              f"at step {state.step}")
    close_distributed(dist_info)
    return state


if __name__ == "__main__":
    final = main()
    # a stop at the time budget is a finish; one by a signal is not
    sys.exit(exit_status(final.step >= final.total_steps))
