"""
Agent RL: teach a small MiniMind model to use tools with multi-turn reinforcement learning.

One batch, top to bottom:
    1. rollout   the policy answers each prompt num_generations times; whenever it writes a <tool_call>, the
                 call is executed in a mock tool world and the result is injected as a <tool_response> turn,
                 then the model continues (up to max_turns). Token-in/token-out: the training sequence is
                 exactly the ids the model sampled plus the ids of the injected turns, never decoded and
                 re-encoded.
    2. reward    calculate_rewards(): tag format, tool alignment, GT match in the final answer, unfinished and
                 repetition penalties (the no-tool branch scores length/thinking/optional reward model
                 instead).
    3. advantage group-normalised per prompt: (r - mean) / (std + 1e-4).
    4. loss      CISPO (or GRPO) on the tokens the model wrote (response_mask = 1), minus beta * KL to a
                 frozen reference model; tool output tokens (mask 0) get no gradient.
    5. step      clip, AdamW step, cosine LR; log; save.

Simplifications: mock tools with fixed data (no network), rollouts from the policy itself in the training
process (or, with --rollout_engine sglang, from an SGLang server that gets the policy's weights after every
step). Under torchrun each rank rolls out its share of every batch's prompts (whole groups) and
DistributedDataParallel averages the gradients; rank 0 logs, evaluates and saves.

Run (CPU, from the shipped cold-start checkpoint):
    python trainer/train_agent.py
    python trainer/train_agent.py --max_steps 20 --debug_mode
    python trainer/train_agent.py --rollout_engine sglang --sglang_base_url http://127.0.0.1:30000
    torchrun --nproc_per_node 2 trainer/train_agent.py --batch_size 4
"""
import argparse
import atexit
import copy
import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field, fields

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
from tqdm import tqdm

from dataset.lm_dataset import AgentRLDataset, clean_text, encode, render
from model.model_minimind import count_parameters, save_minimind, weight_path
from trainer.calculator import evaluate_expression
from trainer.evaluation import load_cases, report, run_cases
from trainer.outcome import (count_repeated_calls, final_answer, task_solved, tool_result_ok,
                             validate_gt_in_text)
from trainer.fast_engine import compute_per_token_logps, create_rollout_engine
from trainer.tool_runner import ToolError, ToolRunner, cap_tool_result
from trainer.trainer_utils import (
    DistInfo, RankShare, WeightAverage, add_model_args, add_upstream_args, all_ranks_any, all_ranks_sum,
    autocast, average_record, barrier, broadcast_flag, broadcast_weights, close_distributed, cosine_lr,
    default_dtype, every, grad_sync, init_distributed, init_model, load_resume, lock_output, loss_share,
    on_stop_signal, open_log, resolve_device, resume_path, save_resume, set_rank_seed, set_rng_state,
    set_seed, split_batch, wrap_ddp,
)


# ==========================================================================================================
# The tool world: TOOLS (what the model is told), mock data, MOCK_RESULTS (what a call returns),
# CHECK_ARGS (is a call well-formed), parse_tool_calls, execute_tool. Every other file imports these.
# To add a tool: append to TOOLS, add its function to MOCK_RESULTS and its check to CHECK_ARGS, and add data
# for it in scripts/make_agent_data.py.
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

# --- mock data ---------------------------------------------------------------------------------------------

# city -> (temperature, condition, humidity)
WEATHER_DATA = {
    "北京": ("28°C", "晴", "35%"),
    "上海": ("15°C", "多云", "70%"),
    "广州": ("32°C", "闷热", "85%"),
    "深圳": ("30°C", "晴", "75%"),
    "杭州": ("22°C", "阴", "65%"),
    "成都": ("18°C", "小雨", "90%"),
    "武汉": ("25°C", "多云", "60%"),
    "南京": ("20°C", "晴", "55%"),
    "西安": ("16°C", "大风", "30%"),
    "重庆": ("26°C", "阴", "80%"),
    "Tokyo": ("12°C", "晴", "45%"),
    "New York": ("8°C", "多云", "50%"),
    "London": ("5°C", "小雨", "85%"),
    "Paris": ("10°C", "阴", "70%"),
    "Sydney": ("25°C", "晴朗", "60%"),
}
# other names the weather service understands, mapped to the canonical city
CITY_ALIASES = {
    "beijing": "北京", "shanghai": "上海", "guangzhou": "广州", "shenzhen": "深圳", "hangzhou": "杭州",
    "chengdu": "成都", "wuhan": "武汉", "nanjing": "南京", "xi'an": "西安", "xian": "西安", "chongqing": "重庆",
    "东京": "Tokyo", "纽约": "New York", "伦敦": "London", "巴黎": "Paris", "悉尼": "Sydney",
}
# places the service does not know, but whose city it can suggest (correction tasks: retry with the city)
LOCATION_HINTS = {
    "浦东": "上海", "徐汇": "上海", "海淀": "北京", "朝阳区": "北京", "天河": "广州", "南山": "深圳",
    "西湖区": "杭州", "武侯": "成都", "雁塔": "西安", "渝中": "重庆",
    "Manhattan": "New York", "Brooklyn": "New York", "Shibuya": "Tokyo", "涩谷": "Tokyo",
    "Westminster": "London", "Montmartre": "Paris",
}

MOCK_DATE = "2025-03-07"
MOCK_WEEKDAY = "Friday"
TIME_DATA = {
    "Asia/Shanghai": "14:30:00",
    "America/New_York": "01:30:00",
    "Europe/London": "06:30:00",
    "Asia/Tokyo": "15:30:00",
    "Europe/Paris": "07:30:00",
    "Australia/Sydney": "17:30:00",
}
DEFAULT_TIMEZONE = "Asia/Shanghai"
TIMEZONE_ALIASES = {
    "北京": "Asia/Shanghai", "上海": "Asia/Shanghai", "beijing": "Asia/Shanghai", "shanghai": "Asia/Shanghai",
    "china": "Asia/Shanghai", "中国": "Asia/Shanghai", "utc+8": "Asia/Shanghai", "cst": "Asia/Shanghai",
    "东京": "Asia/Tokyo", "tokyo": "Asia/Tokyo", "日本": "Asia/Tokyo", "japan": "Asia/Tokyo",
    "纽约": "America/New_York", "new york": "America/New_York",
    "伦敦": "Europe/London", "london": "Europe/London", "英国": "Europe/London",
    "巴黎": "Europe/Paris", "paris": "Europe/Paris", "法国": "Europe/Paris",
    "悉尼": "Australia/Sydney", "sydney": "Australia/Sydney",
}

# listed pairs; the reverse of a pair is 1/rate rounded to 4 decimals
EXCHANGE_RATES = {
    ("USD", "CNY"): 7.21, ("EUR", "CNY"): 7.85, ("GBP", "CNY"): 9.12, ("JPY", "CNY"): 0.048,
    ("USD", "EUR"): 0.92, ("USD", "GBP"): 0.79, ("CNY", "JPY"): 20.83, ("AUD", "CNY"): 4.72,
}
CURRENCY_ALIASES = {
    "美元": "USD", "人民币": "CNY", "欧元": "EUR", "英镑": "GBP", "日元": "JPY", "澳元": "AUD",
    "rmb": "CNY", "yuan": "CNY", "dollar": "USD", "euro": "EUR", "pound": "GBP", "yen": "JPY",
}

# (from, to) -> factor; temperatures use the real formula instead
UNIT_FACTORS = {
    ("km", "miles"): 0.621371, ("miles", "km"): 1.60934,
    ("kg", "pounds"): 2.20462, ("pounds", "kg"): 0.453592,
    ("meters", "feet"): 3.28084, ("feet", "meters"): 0.3048,
}
UNIT_ALIASES = {
    "km": "km", "kilometer": "km", "kilometers": "km", "公里": "km", "千米": "km",
    "miles": "miles", "mile": "miles", "mi": "miles", "英里": "miles",
    "kg": "kg", "kilogram": "kg", "kilograms": "kg", "公斤": "kg", "千克": "kg",
    "pounds": "pounds", "pound": "pounds", "lb": "pounds", "lbs": "pounds", "磅": "pounds",
    "meters": "meters", "meter": "meters", "m": "meters", "米": "meters",
    "feet": "feet", "foot": "feet", "ft": "feet", "英尺": "feet",
    "celsius": "celsius", "c": "celsius", "°c": "celsius", "摄氏度": "celsius",
    "fahrenheit": "fahrenheit", "f": "fahrenheit", "°f": "fahrenheit", "华氏度": "fahrenheit",
}

# (text, target language) -> translation
TRANSLATIONS = {
    ("你好世界", "english"): "Hello World",
    ("今天天气真好", "english"): "The weather is nice today",
    ("机器学习很有趣", "english"): "Machine learning is interesting",
    ("谢谢你的帮助", "english"): "Thank you for your help",
    ("我爱北京", "english"): "I love Beijing",
    ("早上好", "english"): "Good morning",
    ("祝你好运", "english"): "Good luck",
    ("欢迎来到中国", "english"): "Welcome to China",
    ("Good morning", "chinese"): "早上好",
    ("I love programming", "chinese"): "我喜欢编程",
    ("Happy birthday", "chinese"): "生日快乐",
    ("Hello World", "chinese"): "你好世界",
    ("See you tomorrow", "chinese"): "明天见",
    ("Thank you very much", "chinese"): "非常感谢",
    ("Nice to meet you", "chinese"): "很高兴认识你",
    ("Artificial intelligence", "chinese"): "人工智能",
}
LANGUAGE_ALIASES = {
    "english": "english", "en": "english", "英文": "english", "英语": "english",
    "chinese": "chinese", "zh": "chinese", "中文": "chinese", "汉语": "chinese",
}


# --- the other tools --------------------------------------------------------------------------------------

def _norm(text) -> str:
    return str(text).strip().lower()


THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?")  # 1,250 or 12,345.5


def _to_number(value):
    if isinstance(value, bool):
        raise ToolError("value must be a number")
    text = str(value).strip()
    if isinstance(value, str) and "," in text:
        if not THOUSANDS.fullmatch(text):  # "1,5": a decimal comma, or a typo; 15 would be a guess
            raise ToolError(f"value must be a number, got {text[:40]!r}", hint="write decimals with a dot")
        text = text.replace(",", "")
    try:
        number = value if isinstance(value, (int, float)) else float(text)
    except ValueError:
        raise ToolError(f"value must be a number, got {text[:40]!r}") from None
    if not math.isfinite(number) or abs(number) > 1e15:
        raise ToolError(f"value out of range: {text[:40]}", hint="use a value below 1e15")
    return number


def tool_calculate_math(args):  # the evaluator: trainer/calculator.py
    return {"result": evaluate_expression(str(args["expression"]))}


def tool_unit_converter(args):
    value = _to_number(args["value"])
    src = UNIT_ALIASES.get(_norm(args["from_unit"]))
    dst = UNIT_ALIASES.get(_norm(args["to_unit"]))
    supported = "km, miles, kg, pounds, meters, feet, celsius, fahrenheit"
    if src is None or dst is None:
        bad = args["from_unit"] if src is None else args["to_unit"]
        raise ToolError(f"unknown unit: {str(bad)[:40]}", hint=f"supported units: {supported}")
    if (src, dst) == ("celsius", "fahrenheit"):
        result = value * 1.8 + 32
    elif (src, dst) == ("fahrenheit", "celsius"):
        result = (value - 32) / 1.8
    elif src == dst:
        result = value
    elif (src, dst) in UNIT_FACTORS:
        result = value * UNIT_FACTORS[(src, dst)]
    else:
        raise ToolError(f"cannot convert {src} to {dst}", hint=f"supported units: {supported}")
    return {"value": value, "from_unit": src, "to_unit": dst, "result": round(result, 4)}


def resolve_city(location: str):
    name = str(location).strip()
    if name in WEATHER_DATA:
        return name
    if name in CITY_ALIASES:
        return CITY_ALIASES[name]
    lowered = {k.lower(): k for k in WEATHER_DATA}
    return lowered.get(name.lower()) or CITY_ALIASES.get(name.lower())


def tool_get_current_weather(args):
    location = str(args["location"]).strip()
    city = resolve_city(location)
    if city is None:
        if location in LOCATION_HINTS:
            parent = LOCATION_HINTS[location]
            raise ToolError(
                f"unknown location: {location}", hint=f"{location} is in {parent}; query {parent}"
            )
        raise ToolError(f"unknown location: {location[:40]}", hint="supported: " + ", ".join(WEATHER_DATA))
    temperature, condition, humidity = WEATHER_DATA[city]
    return {"city": city, "temperature": temperature, "condition": condition, "humidity": humidity}


def tool_get_current_time(args):
    tz = str(args.get("timezone") or DEFAULT_TIMEZONE).strip()
    canonical = {k.lower(): k for k in TIME_DATA}.get(tz.lower()) or TIMEZONE_ALIASES.get(tz.lower()) \
        or TIMEZONE_ALIASES.get(tz)
    if canonical is None:
        raise ToolError(f"unknown timezone: {tz[:40]}", hint="supported: " + ", ".join(TIME_DATA))
    return {"timezone": canonical, "datetime": f"{MOCK_DATE} {TIME_DATA[canonical]}", "weekday": MOCK_WEEKDAY}


def _currency(code):
    text = str(code).strip()
    return CURRENCY_ALIASES.get(text) or CURRENCY_ALIASES.get(text.lower()) or text.upper()


def exchange_rate(src: str, dst: str):
    """Listed pair, its reverse (1/rate, 4 decimals), 1.0 for the same known currency, else None."""
    if src == dst:
        return 1.0 if src in KNOWN_CURRENCIES else None
    if (src, dst) in EXCHANGE_RATES:
        return EXCHANGE_RATES[(src, dst)]
    if (dst, src) in EXCHANGE_RATES:
        return round(1 / EXCHANGE_RATES[(dst, src)], 4)
    return None


def tool_get_exchange_rate(args):
    src, dst = _currency(args["from_currency"]), _currency(args["to_currency"])
    rate = exchange_rate(src, dst)
    if rate is None:
        pairs = ", ".join(f"{a}->{b}" for a, b in EXCHANGE_RATES)
        raise ToolError(f"unknown currency pair: {src[:10]}->{dst[:10]}", hint=f"supported pairs: {pairs}")
    return {"from": src, "to": dst, "rate": rate}


KNOWN_CURRENCIES = {c for pair in EXCHANGE_RATES for c in pair}
TEXT_QUOTES_AND_STOPS = "。.!!??\"'“”"  # characters stripped from both ends of a text to translate


def tool_translate_text(args):
    text = str(args["text"]).strip().strip(TEXT_QUOTES_AND_STOPS)
    language = LANGUAGE_ALIASES.get(_norm(args["target_language"]))
    if language is None:
        raise ToolError(f"unsupported target language: {str(args['target_language'])[:20]}",
                        hint="use english or chinese")
    for (source, target), translation in TRANSLATIONS.items():
        if target == language and source.lower() == text.lower():
            return {"text": text, "target_language": language, "translation": translation}
    raise ToolError(f"no translation available for: {text[:40]}")


MOCK_RESULTS = {
    "calculate_math": tool_calculate_math,
    "unit_converter": tool_unit_converter,
    "get_current_weather": tool_get_current_weather,
    "get_current_time": tool_get_current_time,
    "get_exchange_rate": tool_get_exchange_rate,
    "translate_text": tool_translate_text,
}


# --- CHECK_ARGS: is a call well-formed (used by the reward and the metrics, not to refuse execution) -------

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


def check_calculate_math(a):
    return _nonempty_str(a.get("expression"))


def check_unit_converter(a):
    return (
        _is_number(a.get("value")) and _nonempty_str(a.get("from_unit")) and _nonempty_str(a.get("to_unit"))
    )


def check_get_current_weather(a):
    return _nonempty_str(a.get("location"))


def check_get_current_time(a):
    return a.get("timezone") is None or _nonempty_str(a.get("timezone"))


def check_get_exchange_rate(a):
    return _nonempty_str(a.get("from_currency")) and _nonempty_str(a.get("to_currency"))


def check_translate_text(a):
    return _nonempty_str(a.get("text")) and _nonempty_str(a.get("target_language"))


CHECK_ARGS = {
    "calculate_math": check_calculate_math,
    "unit_converter": check_unit_converter,
    "get_current_weather": check_get_current_weather,
    "get_current_time": check_get_current_time,
    "get_exchange_rate": check_get_exchange_rate,
    "translate_text": check_translate_text,
}
assert set(MOCK_RESULTS) == set(CHECK_ARGS) == set(TOOLS_BY_NAME), "the tool tables disagree"


# --- parsing and executing calls ---------------------------------------------------------------------------

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
# Multi-turn rollout: render -> generate -> parse -> execute -> inject, token-in/token-out.
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
# Reward: result > process > format. Each term is a named function; calculate_rewards returns them per sample.
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


class RewardModel:
    """An optional transformers reward model (sequence classification, one logit) for the no-tool branch:
    it scores the user's question with the model's final answer."""

    def __init__(self, path: str, device: str = "cpu", max_length: int = 1024, clip: float = 3.0):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForSequenceClassification.from_pretrained(path, dtype=torch.float32).to(device)
        self.model.eval().requires_grad_(False)
        if self.model.config.num_labels != 1:
            raise ValueError(f"{path}: a reward model needs num_labels=1, got {self.model.config.num_labels}")
        self.device, self.max_length, self.clip = device, max_length, clip

    @torch.no_grad()
    def score(self, messages, answer: str) -> float:
        question = next((m.get("content") or "" for m in reversed(messages) if m["role"] == "user"), "")
        chat = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        if self.tokenizer.chat_template:
            text = self.tokenizer.apply_chat_template(chat, tokenize=False)
        else:
            text = f"user: {question}\nassistant: {answer}"
        enc = self.tokenizer(text, truncation=True, max_length=self.max_length, return_tensors="pt")
        logit = self.model(**{k: v.to(self.device) for k, v in enc.items()}).logits[0, 0].item()
        return max(-self.clip, min(self.clip, logit))


# ==========================================================================================================
# Training: rollout -> reward -> group advantages -> CISPO/GRPO loss with KL to the reference -> step.
# ==========================================================================================================


SAVE_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Agent RL: multi-turn tool use with CISPO/GRPO")
    add_data_args(parser)
    add_rollout_args(parser)
    add_reward_args(parser)
    add_training_args(parser)
    add_upstream_args(parser, max_seq_len_instead="a trajectory is bounded by --max_total_len (all turns) "
                                                  "and each model turn by --max_gen_len")
    args = parser.parse_args(argv)
    args.device = resolve_device(args.device)
    args.dtype = args.dtype or default_dtype(args.device)
    if args.cut_update is None:  # FLOPs cost on a CPU; on a GPU, at this size, launches do
        args.cut_update = int(not str(args.device).startswith("cuda"))
    return args


DEFAULT_POOL = "dataset/agent_rl_pool.jsonl"
POOL_SOURCES = ("scripts/make_agent_data.py", "dataset/agent_phrasings.py")  # besides this file's tool world


def pool_fingerprint() -> str:
    """A hash of what the default pool is made from: the generator, its phrasing tables, the tool world."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = hashlib.sha256()
    for rel in POOL_SOURCES:
        with open(os.path.join(root, rel), "rb") as f:
            digest.update(f.read())
    world = (TOOLS, WEATHER_DATA, LOCATION_HINTS, TIME_DATA, EXCHANGE_RATES, UNIT_FACTORS, TRANSLATIONS,
             DEFAULT_TIMEZONE)
    digest.update(repr(world).encode())
    return digest.hexdigest()


def ensure_pool(path: str):
    """The default prompt pool is generated (deterministically, in seconds) rather than shipped: make it on
    first use by running the generator (a script, so the trainer imports nothing from scripts/), and again
    when a phrasing table, the generator or the tool world changed since (a stale pool would train on the
    old wordings without a word). Beside it, {path}.sources holds the fingerprint of its sources and the hash
    of the pool it made, so a pool written since by anything else (scripts/make_agent_data.py run on other
    tables) is made again too."""
    if os.path.normpath(path) != os.path.normpath(DEFAULT_POOL):
        return
    stamp, sources = path + ".sources", pool_fingerprint()
    if os.path.exists(path):
        if os.path.exists(stamp):
            with open(stamp, encoding="utf-8") as f:
                if f.read().split() == [sources, file_sha256(path)]:
                    return
        print(f"{path} was made from other phrasings, generator or tool data: regenerating it")
    else:
        print(f"{path} missing: generating it with scripts/make_agent_data.py")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run([sys.executable, os.path.join(root, "scripts", "make_agent_data.py"), "--only",
                    os.path.basename(DEFAULT_POOL), "--out_dir", os.path.dirname(path) or "."], check=True)
    with open(stamp + ".tmp", "w", encoding="utf-8") as f:
        f.write(f"{sources} {file_sha256(path)}\n")
    os.replace(stamp + ".tmp", stamp)


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def add_data_args(parser):
    parser.add_argument("--data_path", default=DEFAULT_POOL,
                        help="RL prompts (JSONL, the design's format); the default pool of RL-only phrasings "
                             "is generated on first use")
    parser.add_argument("--skip_bad_lines", action="store_true", help="skip (and count) malformed data lines")
    parser.add_argument("--from_weight", default="full_sft", help="starting weights: a name in save_dir, "
                        "a .pth file or a transformers directory; also the frozen KL reference")
    parser.add_argument("--save_weight", default="agent", help="output name: out/{save_weight}_{hidden}.pth")
    parser.add_argument("--save_dir", default="out")
    parser.add_argument("--save_dtype", default="float32", choices=list(SAVE_DTYPES),
                        help="dtype of the saved weights; bfloat16 rounds away most of a small RL update")
    add_model_args(parser)


def add_rollout_args(parser):
    parser.add_argument("--num_generations", type=int, default=8, help="trajectories per prompt (the group)")
    parser.add_argument("--max_turns", type=int, default=3, help="model turns per trajectory")
    parser.add_argument("--max_gen_len", type=int, default=256, help="new tokens per model turn")
    parser.add_argument("--max_total_len", type=int, default=2500, help="tokens per trajectory, all turns")
    parser.add_argument("--max_tool_tokens", type=int, default=256, help="a tool result is cut to this")
    parser.add_argument("--tool_timeout", type=float, default=1.0, help="seconds per tool call")
    parser.add_argument("--thinking_ratio", type=float, default=0.0,
                        help="share of trajectories that think (the evaluation never does)")
    parser.add_argument("--temperature", type=float, default=1.0,
                        help="rollout sampling temperature (1.0 doubles the informative groups of 0.8)")
    parser.add_argument("--top_p", type=float, default=1.0)
    parser.add_argument("--rollout_engine", default="torch", choices=["torch", "sglang"],
                        help="torch: sample in this process; sglang: an SGLang server (README)")
    parser.add_argument("--sglang_base_url", default="http://127.0.0.1:30000", help="the SGLang server")
    parser.add_argument("--sglang_weights_dir", default=None,
                        help="the policy is written here for the server after every step; the server must "
                             "read it at the same path (default: {save_dir}/sglang_policy)")
    parser.add_argument("--sglang_timeout", type=float, default=600.0, help="seconds to wait for one answer")
    parser.add_argument("--reward_model_path", default=None, help="optional reward model (no-tool branch)")


def add_reward_args(parser):  # the reward-hacking guards: 0 disables one; all 0 = the design's reward
    parser.add_argument("--repeat_call_penalty", type=float, default=RewardGuards.repeat_call,
                        help="per call repeating an earlier one (same tool, same arguments)")
    parser.add_argument("--needless_call_penalty", type=float, default=RewardGuards.needless_call,
                        help="for calling any tool on a question that needs none")
    parser.add_argument("--extra_call_cost", type=float, default=RewardGuards.extra_calls,
                        help="per call past the expected number")
    parser.add_argument("--missed_call_penalty", type=float, default=RewardGuards.missed_call,
                        help="for answering without any tool a task that needs one")
    parser.add_argument("--direct_correction", type=int, default=1, choices=[0, 1],
                        help="a correction task solved without the failing call scores as aligned")
    parser.add_argument("--spare_correct_repetition", type=int, default=1, choices=[0, 1],
                        help="no repetition penalty on an answer that holds every GT string")


def add_training_args(parser):
    # --- periodic evaluation and rollback ---
    parser.add_argument("--eval_interval", type=int, default=50,
                        help="steps between greedy evaluations on --eval_cases (0 = off)")
    parser.add_argument(
        "--eval_cases", default="dataset/eval_toolcall.jsonl", help="evaluation cases (JSONL)"
    )
    parser.add_argument(
        "--rollback_drop",
        type=float,
        default=0.0,
        help="if task completion falls this far below the best, reload the best weights (0 = off)",
    )
    # --- optimisation ---
    # the categories whose groups carry the most signal from the shipped cold start (about 30-38% of their
    # groups informative, against 10% for single calls and 2% for correction: docs/agent_rl_v2.md)
    parser.add_argument("--category_weights", default="no_tool=3,parallel=3,chained=3",
                        help="prompt sampling weights by category, e.g. 'parallel=2,chained=2' (others 1; "
                             "'' = every prompt alike)")
    parser.add_argument("--max_draws", type=int, default=1,
                        help="dynamic sampling (DAPO): a step draws up to this many batches of prompts, "
                             "until --batch_size of its groups have rewards that are not all equal (1 = off)")
    parser.add_argument("--skip_zero_std", type=int, default=1, choices=[0, 1],
                        help="leave groups whose rewards are all equal out of the update (no policy signal)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=16, help="prompts per step")
    parser.add_argument("--accumulation_steps", type=int, default=1)
    parser.add_argument(
        "--learning_rate",
        type=float,
        default=5e-5,
        help="peak LR; the design's 3e-7 does not move a 4.6M model in a CPU-sized run (README)",
    )
    parser.add_argument("--loss_type", default="cispo", choices=["cispo", "grpo"])
    parser.add_argument("--beta", type=float, default=0.1, help="KL penalty to the reference model")
    parser.add_argument("--epsilon", type=float, default=0.2, help="GRPO clip range")
    parser.add_argument("--epsilon_high", type=float, default=5.0, help="CISPO upper clip of the ratio")
    parser.add_argument("--adv_clip", type=float, default=2.0, help="clip advantages to [-x, x]; 0 = off")
    parser.add_argument("--scale_rewards", default="group", choices=["group", "none"],
                        help="divide each group's centred rewards by its std (group) or not (none)")
    parser.add_argument("--grad_clip", type=float, default=1.0)
    parser.add_argument("--train_micro_batch", type=int, default=8, help="sequences per forward/backward")
    parser.add_argument("--cut_update", type=int, default=None, choices=[0, 1],
                        help="1: each micro-batch cut to its model-written tokens, a group's prompt run "
                             "once (fewer FLOPs); 0: every row at the whole padded width (fewer kernel "
                             "launches). Default: 1 on the CPU, 0 on a GPU (docs/speed.md)")
    parser.add_argument("--loss_norm", default="sequence", choices=["sequence", "token"],
                        help="the loss is the mean over sequences of each one's token mean (sequence), or "
                             "the mean over all model-written tokens of the batch (token)")
    # --- runtime ---
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default=None, choices=["float32", "bfloat16", "float16"],
                        help="autocast dtype (default: bfloat16 where the CPU has bf16 kernels, "
                             "else float32)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--max_steps", type=int, default=300,
                        help="stop after this many optimizer steps (-1: the epochs; the 20,000-prompt "
                             "pool is 1,250 steps of 16 prompts)")
    parser.add_argument("--max_minutes", type=float, default=0.0,
                        help="also stop after this many minutes of this process's wall time (0 = off)")
    parser.add_argument("--log_interval", type=int, default=10,
                        help="steps between terminal lines (the metrics file gets every step; 0 = none)")
    parser.add_argument("--average_last", type=float, default=0.0,
                        help="save the mean of the weights after each of this share of the last steps "
                             "(0.5: the second half), the last weights as {save_weight}_last (0 = off)")
    parser.add_argument("--save_interval", type=int, default=20,
                        help="steps between weight/resume saves (0 = only at the end)")
    parser.add_argument("--from_resume", type=int, default=0, choices=[0, 1])
    parser.add_argument("--debug_mode", action="store_true", help="print whole trajectories")
    parser.add_argument("--debug_interval", type=int, default=20)


@dataclass
class TrainState:
    """What the training loop reads and updates, passed explicitly."""
    model: torch.nn.Module
    ref_model: torch.nn.Module
    rollout_engine: object
    tokenizer: object
    optimizer: torch.optim.Optimizer
    args: argparse.Namespace
    total_steps: int
    reward_model: object = None
    step: int = 0
    micro_step: int = 0
    metrics_file: object = None
    stop_requested: bool = False
    skipped_nonfinite: int = 0  # updates dropped because the loss or gradient was not finite
    guards: "RewardGuards | None" = None
    eval_cases: list = field(default_factory=list)
    best_completion: float = -1.0  # the best task completion seen by the periodic evaluation
    best_step: int = -1
    rollbacks: int = 0
    dist: DistInfo = field(default_factory=DistInfo)  # rank and world size under torchrun
    train_model: torch.nn.Module | None = None  # what the update's forward goes through: DDP(model) or model
    prompts_done: int = 0  # prompts of the current epoch trained on, all ranks together
    started: float = field(default_factory=time.time)  # for --max_minutes
    last_profile: tuple | None = None  # (step, behaviour profile) of the weights the latest evaluation saw
    average: WeightAverage = field(default_factory=WeightAverage)  # --average_last: what the run saves

    # resume state: what save_checkpoints writes beside the weights, and what --from_resume 1 reads back
    def resume_extra(self, epoch: int, batches_done: int) -> dict:
        return {
            "epoch": epoch,
            "batches_done": batches_done,
            "micro_step": self.micro_step,
            "skipped_nonfinite": self.skipped_nonfinite,
            "best_completion": self.best_completion,
            "best_step": self.best_step,
            "rollbacks": self.rollbacks,
            # progress in global units: a run saved by N processes resumes with any number of them
            "batch_size": self.args.batch_size,
            "category_weights": self.args.category_weights,  # with the seed, the order of the prompts
            "prompts_done": self.prompts_done,
            "samples_done": self.prompts_done * self.args.num_generations,
            "world_size": self.dist.world_size,
            "weight_average": self.average.state(),
        }

    def restore(self, ckpt: dict, path: str) -> tuple:
        """Load a resume checkpoint into the model, optimizer, RNGs and this state; returns (epoch, batch)."""
        extra = ckpt["extra"]
        if extra.get("batch_size", self.args.batch_size) != self.args.batch_size:
            raise ValueError(f"{path} was saved with --batch_size {extra['batch_size']}; resuming with "
                             f"{self.args.batch_size} would start at another data position")
        saved = extra.get("category_weights", self.args.category_weights)
        if parse_category_weights(saved) != parse_category_weights(self.args.category_weights):
            raise ValueError(f"{path} was saved with --category_weights {saved!r}; resuming with "
                             f"{self.args.category_weights!r} would draw the prompts in another order")
        self.model.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        set_rng_state(ckpt["rng"])
        self.step, self.micro_step = ckpt["step"], extra["micro_step"]
        self.skipped_nonfinite = extra.get("skipped_nonfinite", 0)
        self.best_completion = extra.get("best_completion", -1.0)
        self.best_step = extra.get("best_step", -1)
        self.rollbacks = extra.get("rollbacks", 0)
        self.average.load(extra.get("weight_average", {}), path)
        return extra["epoch"], extra["batches_done"]


@dataclass
class TrainBatch:
    input_ids: torch.Tensor  # (N, T) right-padded prompt + trajectory ids
    completion_mask: torch.Tensor  # (N, T-1) 1 where the predicted token was written by the model
    old_logps: torch.Tensor  # (N, T-1) sampling log-probs of those tokens
    advantages: torch.Tensor  # (N,)
    shared_prefix: int = 0  # leading tokens all rows have (a prompt): compute_per_token_logps runs them once

    # a shared prefix shorter than this is run in every row: a forward of its own costs more than it saves
    MIN_SHARED_PREFIX = 16

    def rows(self, sl: slice, cut: bool = True) -> "TrainBatch":
        """Rows `sl`, cut to the columns where they have model-written tokens: the log-probs are needed only
        there, so the LM head and its log-softmax skip the prompt, and the padding after the last model token
        is not fed at all (causal attention: later tokens change nothing before them). The cut batch's
        completion_mask and old_logps cover logps of its last `n_keep` input tokens, n_keep = their width.
        The tokens before the first model token that all the rows have (a group's prompt) are its
        shared_prefix. cut=False: the rows whole, at the batch's padded width."""
        if not cut:
            return TrainBatch(self.input_ids[sl], self.completion_mask[sl], self.old_logps[sl],
                              self.advantages[sl])
        mask = self.completion_mask[sl]
        cols = mask.any(0).nonzero().flatten()
        first, last = (int(cols[0]), int(cols[-1])) if len(cols) else (0, 0)
        ids = self.input_ids[sl, :last + 2]
        differ = (ids[:, :first] != ids[:1, :first]).any(0).nonzero().flatten()
        shared = int(differ[0]) if len(differ) else first
        if ids.shape[0] < 2 or shared < self.MIN_SHARED_PREFIX:
            shared = 0
        return TrainBatch(ids, mask[:, first:last + 1], self.old_logps[sl, first:last + 1],
                          self.advantages[sl], shared)

    @property
    def n_keep(self) -> int:
        return self.completion_mask.shape[1]


def truncate_for_training(prompt_len, ids, mask, logps, max_len):
    """Fit prompt + trajectory into max_len: drop whole middle turns (a model turn with its tool turn),
    earliest first, so the system/tools prompt and the final answer survive; cut the end only as a last
    resort.
    (Tokens kept after a dropped turn keep their sampling log-probs.)"""
    if prompt_len + len(ids) <= max_len:
        return ids, mask, logps
    # segments start where a model turn starts (mask goes 0 -> 1)
    starts = [j for j in range(len(ids)) if mask[j] == 1 and (j == 0 or mask[j - 1] == 0)] or [0]
    bounds = list(zip(starts, starts[1:] + [len(ids)]))
    keep = list(bounds)
    while len(keep) > 1 and prompt_len + sum(e - s for s, e in keep) > max_len:
        keep.pop(0)
    pick = [j for s, e in keep for j in range(s, e)][:max(0, max_len - prompt_len)]
    return [ids[j] for j in pick], [mask[j] for j in pick], [logps[j] for j in pick]


def completion_mask_for(mask, ids, eos_token_id):
    """response_mask, with each model turn cut after its first EOS (anything written past it is ignored)."""
    out, after_eos = [], False
    for m, t in zip(mask, ids):
        if m == 0:
            after_eos = False  # a new model turn starts after the injected tool turn
            out.append(0)
            continue
        out.append(0 if after_eos else 1)
        if t == eos_token_id:
            after_eos = True
    return out


def build_train_batch(trajs, advantages, pad_token_id, eos_token_id, max_total_len) -> TrainBatch:
    rows = []
    for traj in trajs:
        ids, mask, logps = truncate_for_training(len(traj.prompt_ids), traj.ids, traj.response_mask,
                                                 traj.old_logps, max_total_len)
        prompt = traj.prompt_ids[:max_total_len]
        mask = completion_mask_for(mask, ids, eos_token_id)
        rows.append((prompt + ids, [0] * len(prompt) + mask, [0.0] * len(prompt) + logps))
    T = max(len(r[0]) for r in rows)
    input_ids = torch.full((len(rows), T), pad_token_id, dtype=torch.long)
    completion_mask = torch.zeros((len(rows), T))
    old_logps = torch.zeros((len(rows), T))
    for i, (ids, mask, logps) in enumerate(rows):
        input_ids[i, :len(ids)] = torch.tensor(ids)
        completion_mask[i, :len(mask)] = torch.tensor(mask, dtype=torch.float)
        old_logps[i, :len(logps)] = torch.tensor(logps)
    # position t predicts token t: drop column 0, which nothing predicts
    return TrainBatch(input_ids, completion_mask[:, 1:], old_logps[:, 1:], advantages)


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


def debug_print(state: TrainState, trajs, rewards):
    tok = state.tokenizer
    for k, (traj, r) in enumerate(zip(trajs, rewards)):
        g = state.args.num_generations
        name = f"gen[{k // g}][{k % g}]"
        print(f"{'=' * 30} [DEBUG] {name} CONTEXT {'=' * 30}")
        print(tok.decode(traj.prompt_ids))
        print(f"[DEBUG] {name} prompt_len={len(traj.prompt_ids)}, seq_len={traj.length}, "
              f"thinking={traj.open_thinking}, unfinished={traj.unfinished}")
        spans, start = [], 0
        for j in range(1, len(traj.response_mask) + 1):
            if j == len(traj.response_mask) or traj.response_mask[j] != traj.response_mask[start]:
                spans.append((start, j, traj.response_mask[start]))
                start = j
        for s, e, m in spans:
            who = "MODEL (mask 1)" if m else "TOOL  (mask 0)"
            print(f"--- {who} [{len(traj.prompt_ids) + s}:{len(traj.prompt_ids) + e}] ---")
            print(tok.decode(traj.ids[s:e]))
        print(
            f"[DEBUG] {name} reward {r.total:+.2f} "
            + " ".join(f"{k}={v:+.2f}" for k, v in r.terms().items() if v)
        )


def trajectory_stats(trajs) -> dict:
    calls = [c for t in trajs for c in t.tool_calls]
    n = max(1, len(trajs))
    seen_repeats = sum(count_repeated_calls(t.tool_calls) for t in trajs)
    return {
        "resp_len": sum(sum(t.response_mask) for t in trajs) / n,
        "tool_calls": len(calls) / n,
        "parse_errors": sum(t.parse_errors for t in trajs) / n,
        "tool_success": sum(tool_result_ok(c["result"]) for c in calls) / max(1, len(calls)),
        "repeat_calls": seen_repeats / max(1, len(calls)),
        "unfinished": sum(t.unfinished for t in trajs) / n,
        "turns": sum(len(t.turns) for t in trajs) / n,
    }


@dataclass
class UpdateStats:
    """What one batch's update did: its loss over the global batch, the sequences it trained on, and the
    token-level importance ratios and KL (for the log)."""
    loss: float
    trained: float
    ratios: torch.Tensor
    kls: torch.Tensor


@dataclass
class StepGroups:
    """The prompt groups of one step: rollouts, rewards and advantages (phases 1-3), and what was drawn."""
    items: list
    trajs: list
    rewards: list
    advantages: torch.Tensor
    group_std: torch.Tensor
    rank_share: RankShare  # this rank's prompts (all chunks together)
    chunks: int  # batches of the epoch this step consumed (more than 1 only with dynamic sampling)
    prompts: list  # every prompt drawn (global dataset indices)
    informative: int  # groups whose rewards are not all equal, all ranks together
    rollout_s: float


def collect_groups(state: TrainState, dataset, batches, b: int) -> StepGroups:
    """Phases 1-3 on batch b: rollout, reward, advantages. With dynamic sampling (--max_draws > 1, DAPO) the
    step goes on drawing the next batches while fewer than --batch_size of its groups are informative
    (rewards not all equal), up to --max_draws batches; the groups without signal are left out of the update
    by --skip_zero_std. Every rank draws the same batches, so the ranks stay in step."""
    args, G, t0 = state.args, state.args.num_generations, time.time()
    items, trajs, rewards, advs, stds, mine, n_global, prompts = [], [], [], [], [], [], 0, []
    informative, chunks, filler = 0, 0, True
    while b + chunks < len(batches) and (chunks == 0 or (chunks < args.max_draws
                                                         and informative < args.batch_size)):
        share = split_batch(batches[b + chunks], state.dist)  # this rank's prompts: groups never span ranks
        chunks, n_global, prompts = chunks + 1, n_global + share.n_global, prompts + list(batches[b + chunks])
        n_informative = 0.0
        if not (share.filler and chunks > 1):  # a rank without prompts in a later batch skips it
            chunk = [dataset[i] for i in share.indices]
            t = rollout_phase(state, chunk)  # Phase 1: multi-turn rollout with the current policy
            # Phase 2: tool-aware rewards, each term kept for the log
            r = calculate_rewards(t, [it["gt"] for it in chunk], [it["tools"] for it in chunk], G,
                                  state.reward_model, [it["expect_tools"] for it in chunk], state.guards,
                                  [it["category"] for it in chunk])
            # Phase 3: group-normalised advantages (a group whose rewards are all equal gets 0: no signal)
            totals = torch.tensor([x.total for x in r])
            adv, std = group_advantages(totals, G, args.adv_clip, args.scale_rewards)
            if filler and not share.filler:  # real prompts replace the filler of a first batch
                items, trajs, rewards, advs, stds, mine = [], [], [], [], [], []
            filler = filler and share.filler
            items, trajs, rewards = items + chunk, trajs + t, rewards + r
            advs, stds, mine = advs + [adv], stds + [std], mine + list(share.indices)
            n_informative = float((std >= 1e-6).sum()) * share.weight
        informative += round(all_ranks_sum(n_informative, state.dist))
    rank_share = RankShare(mine, n_global, filler=filler)
    return StepGroups(items, trajs, rewards, torch.cat(advs), torch.cat(stds), rank_share, chunks, prompts,
                      informative, time.time() - t0)


def rollout_phase(state: TrainState, items) -> list:
    """Phase 1: num_generations trajectories per prompt with the current policy (no gradient)."""
    args = state.args
    thinking = [random.random() < args.thinking_ratio for _ in range(len(items) * args.num_generations)]
    with torch.no_grad():
        return rollout_batch(state.rollout_engine, state.tokenizer, [it["messages"] for it in items],
                             [it["tools"] for it in items], args.num_generations, args, thinking)


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


def step_record(state: TrainState, epoch, groups: StepGroups, update: UpdateStats, stepped, grad_norm,
                step_s) -> dict:
    """Phase 6: the step's full record for the metrics file: every reward term, the behaviour, the update,
    and the prompts drawn (dataset indices: with the seed, they replay the step)."""
    items, trajs, rewards = groups.items, groups.trajs, groups.rewards
    advantages, group_std = groups.advantages, groups.group_std
    expected = [len(it["expect_tools"]) if it["expect_tools"] is not None else len(it["gt"]) for it in items]
    solved = solved_share(items, trajs, len(trajs) // max(1, len(items)))
    ratio, kl = update.ratios, update.kls
    return {
        "step": state.step, "epoch": epoch, "reward": torch.tensor([r.total for r in rewards]).mean().item(),
        **{f"r_{k}": sum(getattr(r, k) for r in rewards) / len(rewards) for k in rewards[0].terms()},
        **trajectory_stats(trajs),
        "expected_calls": sum(expected) / len(items),
        "solved": solved,
        "kl": kl.mean().item() if kl.numel() else 0.0,
        "group_std": group_std.mean().item(),
        "zero_std_groups": (group_std < 1e-6).float().mean().item(),
        "trained_samples": round(update.trained),
        "adv_std": advantages.std().item() if advantages.numel() > 1 else 0.0,
        "loss": update.loss, "grad_norm": grad_norm, "stepped": stepped,
        "skipped_nonfinite": state.skipped_nonfinite,
        "ratio_mean": ratio.mean().item() if ratio.numel() else 1.0,
        "ratio_max": ratio.max().item() if ratio.numel() else 1.0,
        "lr": state.optimizer.param_groups[0]["lr"], "rollout_s": groups.rollout_s, "step_s": step_s,
        "prompts_drawn": len(groups.prompts), "informative_groups": groups.informative,
        "informative_share": groups.informative / max(1, len(groups.prompts)),
        "groups_by_category": groups_by_category(items, group_std),
        "prompts": list(groups.prompts),
    }


def solved_share(items, trajs, num_generations: int) -> float:
    """Share of the step's trajectories that solve their task as the evaluation counts it (GT in the final
    answer, finished, no call where none is needed): what the reward should raise. tool_success, unlike
    it, counts the correction task's failing first call, which the task asks for."""
    solved = 0
    for k, traj in enumerate(trajs):
        it = items[k // num_generations]
        expect = it["expect_tools"]
        needs_no_tool = expect == [] if expect is not None else not it["gt"]
        solved += task_solved(final_answer(traj.turns), it["gt"], bool(traj.tool_calls), traj.unfinished,
                              needs_no_tool)
    return solved / max(1, len(trajs))


def groups_by_category(items, group_std) -> dict:
    """{category: [groups, informative groups]} of this rank's prompts: where the step's signal came from
    (what --category_weights can aim at)."""
    out = {}
    for it, std in zip(items, group_std.tolist()):
        n = out.setdefault(it["category"], [0, 0])
        n[0], n[1] = n[0] + 1, n[1] + int(std >= 1e-6)
    return dict(sorted(out.items()))


TERMINAL_KEYS = ["reward", "r_gt_match", "solved", "tool_success", "kl", "informative_share", "loss",
                 "step_s"]


def log_step(state: TrainState, record: dict, bar):
    """The record to the metrics file (every step); a compact line to the terminal every --log_interval."""
    if state.metrics_file is not None:
        state.metrics_file.write(json.dumps(record) + "\n")
        state.metrics_file.flush()
    bar.set_postfix(reward=f"{record['reward']:.3f}", kl=f"{record['kl']:.4f}")
    if state.dist.is_main and every(record["step"], state.args.log_interval):
        tqdm.write(f"step {record['step']} | " + " | ".join(f"{k} {record[k]:.4g}" for k in TERMINAL_KEYS))


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
        groups = collect_groups(state, dataset, batches, b)
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
            periodic_eval_on_rank0(state)
        if args.max_minutes > 0 and time.time() - state.started > 60 * args.max_minutes:
            state.stop_requested = True  # the time budget is spent: configurations compared at equal time
    bar.close()
    return next_batch


def save_checkpoints(state: TrainState, epoch: int, batches_done: int):
    """The run's weights as {save_weight} (with --average_last, the average so far, and the last weights
    as {save_weight}_last) and the resume checkpoint."""
    args = state.args
    path = weight_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe))
    save_minimind(state.average.model(state.model), path, dtype=SAVE_DTYPES[args.save_dtype])
    if state.average.count:
        last = weight_path(args.save_dir, f"{args.save_weight}_last", args.hidden_size, bool(args.use_moe))
        save_minimind(state.model, last, dtype=SAVE_DTYPES[args.save_dtype])
    save_resume(resume_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe)),
                state.model, state.optimizer, state.step, state.resume_extra(epoch, batches_done))


# --- periodic evaluation: behaviour profiles, the best checkpoint, rollback --------------------------------

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


def behaviour_profile(rep: dict, step: int, n_bad: int = 5) -> dict:
    """What a checkpoint does (the field notes, section 5.1): completion overall and per category, tool
    success, turns, which tools it reaches for, no-tool accuracy, and a few cases it gets wrong."""
    summary = rep["summary"]
    bad = [c for c in rep["cases"] if not c["completed"]][:n_bad]
    return {
        "step": step,
        "task_completion": summary["task_completion"],
        "by_category": {cat: m["task_completion"] for cat, m in rep["by_category"].items()},
        "tool_success_rate": summary["tool_success_rate"],
        "avg_turns": summary["avg_turns"],
        "avg_tool_calls": summary["avg_tool_calls"],
        "expected_tool_calls": summary["expected_tool_calls"],
        "repeat_call_rate": summary["repeat_call_rate"],
        "no_tool_accuracy": summary["no_tool_accuracy"],
        "tool_usage": {name: m["calls"] for name, m in rep["by_tool"].items()},
        "bad_cases": [{"prompt": c["prompt"], "category": c["category"], "gt": c["gt"],
                       "called": c["called_tools"], "answer": c["final_answer"][:200]} for c in bad],
    }


def save_profiled(state: TrainState, name: str, profile: dict):
    args = state.args
    path = weight_path(args.save_dir, name, args.hidden_size, bool(args.use_moe))
    save_minimind(state.model, path, dtype=SAVE_DTYPES[args.save_dtype])
    with open(path.replace(".pth", "_profile.json"), "w", encoding="utf-8") as f:
        json.dump(profile, f, ensure_ascii=False, indent=2)
    return path


def periodic_eval(state: TrainState):
    """Evaluate; save the checkpoint with its profile as {save_weight}_step{N}; keep {save_weight}_best by
    task completion; with --rollback_drop, go back to the best weights when completion falls too far
    below it."""
    args = state.args
    profile = behaviour_profile(evaluate_policy(state), state.step)
    state.last_profile = (state.step, profile)
    completion = profile["task_completion"]
    path = save_profiled(state, f"{args.save_weight}_step{state.step}", profile)
    event = ""
    if completion > state.best_completion:
        state.best_completion, state.best_step = completion, state.step
        save_profiled(state, f"{args.save_weight}_best", profile)
        event = "new best"
    elif args.rollback_drop > 0 and completion < state.best_completion - args.rollback_drop:
        best = weight_path(args.save_dir, f"{args.save_weight}_best", args.hidden_size, bool(args.use_moe))
        weights = {k: v.float() for k, v in torch.load(best, map_location="cpu", weights_only=True).items()}
        weights.setdefault("lm_head.weight", weights["model.embed_tokens.weight"])  # tied embeddings
        state.model.load_state_dict(weights)
        state.optimizer.state.clear()  # the moments point the way that went wrong
        state.rollout_engine.update_policy(state.model)
        state.average.reset()  # the average restarts from the best weights
        state.rollbacks += 1
        event = f"rolled back to step {state.best_step}"
        with open(best.replace(".pth", "_profile.json"), encoding="utf-8") as f:
            state.last_profile = (state.step, json.load(f))  # what the weights now are
    cats = " ".join(f"{c} {v:.2f}" for c, v in profile["by_category"].items())
    tqdm.write(f"eval step {state.step} | task_completion {completion:.3f} | {cats} | "
               f"no_tool {profile['no_tool_accuracy']:.2f} | {event or 'saved'} {path}")
    if state.metrics_file is not None:
        record = {"step": state.step, "eval_task_completion": completion, "eval_event": event,
                  **{f"eval_{c}": v for c, v in profile["by_category"].items()},
                  "eval_tool_success": profile["tool_success_rate"],
                  "eval_no_tool_accuracy": profile["no_tool_accuracy"],
                  "eval_repeat_call_rate": profile["repeat_call_rate"], "rollbacks": state.rollbacks}
        state.metrics_file.write(json.dumps(record) + "\n")
        state.metrics_file.flush()
    return profile


def write_final_profile(state: TrainState):
    """The behaviour profile of the weights the run ends with, beside them ({weight}_{hidden}_profile.json):
    the latest periodic evaluation's when it saw these weights, else a new evaluation. With --average_last,
    the averaged weights are evaluated, and the last ones' profile goes beside {weight}_last."""
    args = state.args
    path = weight_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe))
    step, profile = state.last_profile or (None, None)
    if step != state.step:
        profile = behaviour_profile(evaluate_policy(state), state.step)
    if state.average.count:
        last = weight_path(args.save_dir, f"{args.save_weight}_last", args.hidden_size, bool(args.use_moe))
        with open(last.replace(".pth", "_profile.json"), "w", encoding="utf-8") as f:
            json.dump(profile, f, ensure_ascii=False, indent=2)
        print(f"profile of the last weights: task completion {profile['task_completion']:.3f}")
        profile = behaviour_profile(evaluate_policy(state, state.average.model(state.model)), state.step)
        profile["averaged_steps"] = [state.average.start, state.average.start + state.average.count - 1]
    with open(path.replace(".pth", "_profile.json"), "w", encoding="utf-8") as f:
        json.dump(profile, f, ensure_ascii=False, indent=2)
    print(f"profile: task completion {profile['task_completion']:.3f} on {args.eval_cases} at step "
          f"{state.step}, in {path.replace('.pth', '_profile.json')}")


def periodic_eval_on_rank0(state: TrainState):
    """periodic_eval on rank 0 alone; the other ranks wait for it, and follow when it rolls the weights
    back."""
    rollbacks = state.rollbacks
    if state.dist.is_main:
        periodic_eval(state)
    rolled_back = broadcast_flag(state.rollbacks > rollbacks, state.dist)
    if rolled_back and state.dist.enabled:
        broadcast_weights(state.model, state.dist)  # rank 0 has reloaded the best weights
        if not state.dist.is_main:
            state.optimizer.state.clear()
            state.rollout_engine.update_policy(state.model)
            state.rollbacks += 1


def parse_category_weights(text: str) -> dict:
    """'parallel=2,chained=2' -> {'parallel': 2.0, 'chained': 2.0}; categories not named weigh 1."""
    weights = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        name, sep, value = part.partition("=")
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--category_weights: {part!r} is not name=number") from None
        if not sep or not name.strip() or weights[name.strip()] <= 0:
            raise ValueError(f"--category_weights: {part!r} needs a category name and a weight > 0")
    return weights


def category_weights(args, categories, say: bool) -> dict:
    """--category_weights, with a warning for a category no prompt has (a typo, or data of its own)."""
    weights = parse_category_weights(args.category_weights)
    missing = sorted(set(weights) - set(categories))
    if missing and say:
        print(f"warning: --category_weights names {', '.join(missing)}, which no prompt of {args.data_path} "
              f"has (its categories: {', '.join(sorted(set(categories)))})")
    return weights


def epoch_batches(categories, batch_size: int, seed: int, epoch: int, weights: dict | None = None):
    """Every prompt once per epoch, in a seeded order. With category weights the order is a weighted shuffle
    (each prompt draws the key -log(u) / w and the smallest keys go first), so heavier categories come
    earlier and more often in any prefix of the epoch, e.g. a run stopped by --max_steps. Weights that name
    no category of the data leave the plain shuffle."""
    rng = random.Random(seed * 1000003 + epoch)
    present = set(categories)
    if not any(w != 1.0 for c, w in (weights or {}).items() if c in present):  # nothing to weigh: a shuffle
        order = list(range(len(categories)))
        rng.shuffle(order)
    else:
        keys = [-math.log(1.0 - rng.random()) / weights.get(c, 1.0) for c in categories]
        order = sorted(range(len(categories)), key=keys.__getitem__)
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def build_state(args, dist_info) -> tuple:
    """The prompts, the policy and its frozen reference, the optimizer, the rollout engine: a TrainState."""
    if dist_info.is_main:
        ensure_pool(args.data_path)
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


def open_metrics(state: TrainState, dataset, n_batches: int):
    args = state.args
    path = weight_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe))
    state.metrics_file = open_log(path.replace(".pth", "_metrics.jsonl"),
                                  state.step if args.from_resume else None, args)
    print(f"model: {count_parameters(state.model) / 1e6:.2f}M parameters from '{args.from_weight}' | "
          f"device {args.device} | dtype {args.dtype} | {state.dist.world_size} process(es)")
    print(
        f"data: {len(dataset)} prompts ({dataset.stats}) | {n_batches} batches/epoch | "
        f"{state.total_steps} steps"
    )
    print("config: " + " ".join(f"{k}={v}" for k, v in vars(args).items()))


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
        periodic_eval_on_rank0(state)  # the starting point: the first "best", and the baseline of the curves
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
            write_final_profile(state)
        state.metrics_file.close()
        print(f"saved {weight_path(args.save_dir, args.save_weight, args.hidden_size, bool(args.use_moe))} "
              f"at step {state.step}")
    close_distributed(dist_info)
    return state


if __name__ == "__main__":
    main()
