"""
Build the tool-use data for MiniMind: SFT conversations, an RL prompt pool and a held-out eval set.

Every tool result in the data comes from execute_tool() in trainer/train_agent.py (the same mock tool world
the RL trainer runs), and every final answer quotes the ground-truth (GT) strings taken from those results.

Writes (under --out_dir):
    sft_agent.jsonl       {"conversations": [OpenAI-style messages], "category": ...}: --n_sft conversations
                          of every category, then a fifth more calculator requests (--extra_math)
    sft_agent_val.jsonl   same distribution, no conversation shared with sft_agent.jsonl
    agent_rl.jsonl        {"conversations": [system, user, reference answer], "gt", "category",
                           "expect_tools"}: a 2,000-prompt sample of the RL pool's distribution (shipped)
    agent_rl_pool.jsonl   the same, 20,000 prompts: what agent RL trains on (made on first use, ~15 s)
    eval_toolcall.jsonl   the held-out set: {"prompt", "tools", "gt", "expect_tools", "category", "skill",
                          "expect_calls"}, eval-only phrasings, held-out numbers
    eval_toolcall_seen.jsonl  the same with SFT phrasings (held-out numbers): a skill, not a phrasing
    eval_toolcall_dev.jsonl   a development set: RL phrasings and train numbers, which SFT never sees either,
                          for choosing among cold-start runs without reading the held-out set

Categories:
    single      one call, then the answer
    parallel    two calls in one assistant turn, one answer with both results
    chained     two turns; the second call's arguments use the first result
    correction  the first call fails, its hint says how to fix it, the model retries
    error       (SFT only) the tool cannot help; the answer says so politely
    no_tool     tools are offered but none is needed

Held-out evaluation: eval prompts come from their own template lists (never used for SFT or RL), and every
number a user types in eval (operands, unit values, money amounts) comes from a hash-defined pool that the
train data never draws from. The default test prompts 256×37 and 100 km -> miles appear in no file.

Train-only variety: a train prompt (SFT and RL, never eval) may get an opener ("你好,", "Excuse me, "), a
closer ("谢谢!", " Cheers!") and other end punctuation; none of their words occurs in an eval prompt. no_tool
train questions come in three kinds: small talk, questions on any topic, and hard negatives that name a tool
or its subject ("你能查天气吗?", "What is a kilometer?") but need no call.

Run from the repo root (deterministic: the same seed gives byte-identical files):
    python scripts/make_agent_data.py
    python scripts/make_agent_data.py --seed 42 --out_dir dataset --n_sft 40000 --n_sft_val 300 --n_rl 2000
    python scripts/make_agent_data.py --only agent_rl_pool.jsonl    # one file (the others are not built)
"""
import argparse
import functools
import hashlib
import json
import os
import random
import re
import sys
from collections import Counter
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from trainer.mock_world import DEFAULT_TIMEZONE, LOCATION_HINTS  # noqa: E402
from trainer.train_agent import TOOLS_BY_NAME, execute_tool  # noqa: E402
from dataset.no_tool_frames import MORE_TOPICS  # noqa: E402
from scripts.make_natural_set import fold, natural_prompts  # noqa: E402
from dataset.math_grammar import expression_request, spell, word_problem  # noqa: E402
from dataset.agent_phrasings import (  # noqa: E402  the phrasing tables
    SYSTEM_PROMPTS, PREFACES, CITY_NAMES, WEATHER_CITIES, TIME_PLACES, TIMEZONES, CITY_TIMEZONES,
    CURRENCY_NAMES, CURRENCY_PAIRS, UNIT_NAMES, LENGTH_WEIGHT_PAIRS, UNIT_PAIRS, UNIT_RANGES, LANGUAGE_NAMES,
    TRANSLATION_ITEMS, WEEKDAY_ZH, HINT_PLACES, OP_SYMBOLS, OP_WORDS, POWER_WORDS, ERROR_CITIES,
    ERROR_CURRENCIES, ERROR_TEXTS, ERROR_TIMEZONES, WEATHER_Q, TIME_Q, TIME_LOCAL_Q, EXCHANGE_Q, UNIT_Q,
    MATH_Q, TRANSLATE_Q, PAR_WEATHER2_Q, PAR_WEATHER_EXCHANGE_Q, PAR_TIME2_Q, PAR_EXCHANGE2_Q,
    PAR_WEATHER_TIME_Q, CHAIN_FAHRENHEIT_Q, CHAIN_MONEY_Q, CHAIN_PRICE_Q, CHAIN_TOTAL_Q, CORR_WEATHER_Q,
    CHAIN_CONVERT_Q, CHAIN_SPLIT_Q, THEN_OPS, PARALLEL_JOINS, CORR_MATH_Q, UNIT_SPELLINGS, CURRENCY_SPELLINGS, NEGATIVE_FORMS, LEAD_INS, OPENERS, CLOSERS, END_MARKS, END_VARIANTS, ZH_PARTICLES, POLITE_ENDINGS, EN_COMMANDS,
    KEEP_CAPITAL, MATH_WORD_Q, WEATHER_A, TIME_A, TIME_LOCAL_A, EXCHANGE_A, UNIT_A, MATH_A, TRANSLATE_A, PARALLEL_A,
    CHAIN_FAHRENHEIT_A, CHAIN_MONEY_A, CHAIN_PRICE_A, CHAIN_TOTAL_A, CHAIN_CONVERT_A, CHAIN_SPLIT_A,
    CORR_WEATHER_A, CORR_MATH_A,
    ERROR_WEATHER_A, ERROR_EXCHANGE_A, ERROR_TRANSLATE_A, ERROR_TIME_A, THINK_ERROR, THINK_DIRECT, LANGS,
    TOOL_NAMES, TOOL_TOPICS, TEMPLATE_TABLES, NO_TOOL_SPLITS, no_tool_eval_questions, SHARED_FRAMES,
    NO_TOOL_TOPIC_TEMPLATES, NO_TOOL_WORD_SPLITS, NO_TOOL_ENTITY_SPLITS, NO_TOOL_FRAME_SPLITS, NO_TOOL_TOPICS, NO_TOOL_WORD_TOPICS, NO_TOOL_EVAL_TOPICS,
)


FILES = ["sft_agent.jsonl", "sft_agent_val.jsonl", "agent_rl.jsonl", "agent_rl_pool.jsonl",
         "eval_toolcall.jsonl", "eval_toolcall_seen.jsonl", "eval_toolcall_dev.jsonl"]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="Build the SFT, RL and eval data for MiniMind tool use.")
    p.add_argument("--seed", type=int, default=42, help="random seed; the same seed gives identical files")
    p.add_argument("--out_dir", default=os.path.join(ROOT, "dataset"), help="folder for the .jsonl files")
    p.add_argument("--n_sft", type=int, default=40_000, help="number of SFT training conversations")
    p.add_argument("--n_sft_val", type=int, default=300, help="number of SFT validation conversations")
    p.add_argument("--quantity_rate", type=float, default=0.0,
                   help="share of SFT currency and unit requests asked in a quantity frame, around an amount "
                        "or a count of items alike (QUANTITY_FRAMES; 0: none, the shipped data)")
    p.add_argument("--state_numbers", type=int, default=0, choices=(0, 1, 2, 3),
                   help="1: a chained calculator turn first writes the numbers of the question, in the order "
                        "the user wrote them, and the expression takes them in that order; 2: single "
                        "calculator calls too; 3: as 2, and a price or total request names each number's "
                        "role ('count 36, price 446') (SFT only; 0: the shipped data)")
    p.add_argument("--word_topics", type=int, default=0, choices=(0, 1),
                   help="1: SFT and RL no_tool questions also ask about topics that hold a tool's word "
                        "(NO_TOOL_WORD_TOPICS: 天气谚语, time management, ...), which need no call, each in its "
                        "split's templates (0: the shipped data)")
    p.add_argument("--entity_topics", type=int, default=1, choices=(0, 1),
                   help="1: SFT and RL no_tool questions also ask about the tool world's own cities, currencies "
                        "and places where no live value is wanted (NO_TOOL_ENTITY_SPLITS: what a city is known "
                        "for, its climate, its country, who issues a currency, a place's time zone; 1: the "
                        "shipped data)")
    p.add_argument("--no_tool_frames", type=int, default=1, choices=(0, 1),
                   help="1: SFT and RL no_tool questions also come in the frames people ask in (ASK_FRAMES in "
                        "dataset/no_tool_frames.py: casual, formal, a sentence of context, typos), around the "
                        "train topics and more subjects (MORE_TOPICS; 1: the shipped data)")
    p.add_argument("--typing_noise", type=float, default=0.3,
                   help="share of SFT and RL requests typed in a hurry (typing_noise: lower case, no "
                        "punctuation, a swapped or dropped letter, full-width digits; 0.3: the shipped data). "
                        "The held-out sets are never changed")
    p.add_argument("--math_grammar", type=float, default=0.3,
                   help="share of SFT and RL calculator requests drawn from the request grammar "
                        "(dataset/math_grammar.py: numbers in words and of 1-9 digits, every operator form, "
                        "2-4 operands, powers, percentages, word problems; 0.3: the shipped data). The held-out "
                        "sets are never changed")
    p.add_argument("--unit_grammar", type=float, default=0.5,
                   help="share of SFT and RL unit requests typed as people do (UNIT_SPELLINGS: every spelling "
                        "and abbreviation, ft, lbs, kilos, metres, C; values in words; temperatures below zero "
                        "as -5, minus 5, 零下5; 0.5: the shipped data). The held-out sets are never changed")
    p.add_argument("--lead_ins", type=float, default=0.2,
                   help="share of SFT and RL requests after a sentence of the user's situation (LEAD_INS, "
                        "naming no place, unit or number; 0.2: the shipped data). The held-out sets never have one")
    p.add_argument("--currency_grammar", type=float, default=0.0,
                   help="share of SFT and RL currency names typed as people call them (CURRENCY_SPELLINGS: RMB, "
                        "yuan, bucks, quid, yen, 美金, 日币; 0: the shipped data). The held-out sets are never "
                        "changed")
    p.add_argument("--parallel_shapes", type=int, default=0, choices=(0, 1),
                   help="1: half the SFT and RL parallel requests are any two or three single requests in one "
                        "message, each in its own tool's templates (make_parallel_mixed: a translation and a "
                        "time, two conversions, three cities; 0: the shipped data, five fixed pairs). The "
                        "held-out sets are never changed")
    p.add_argument("--chain_shapes", type=int, default=0, choices=(0, 1),
                   help="1: SFT and RL chained requests also convert a quantity and then compute on the result, "
                        "or exchange an amount and then share it out (MORE_CHAINS), with counts in words and "
                        "decimal quantities now and then (0: the shipped data). The held-out sets are never "
                        "changed")
    p.add_argument("--extra_math", type=float, default=0.2,
                   help="calculator conversations added beyond --n_sft, as a share of it (0.2: 8,000 on top of "
                        "40,000, the shipped data; 0: none), from their own random stream, so that every other "
                        "conversation stays as it was")
    p.add_argument("--extra_math_grammar", type=float, default=0.7,
                   help="share of the --extra_math requests drawn from dataset/math_grammar.py")
    p.add_argument("--no_tool_weight", type=int, default=SFT_WEIGHTS["no_tool"],
                   help=f"weight of no_tool questions beside the other categories' (SFT_WEIGHTS; "
                        f"{SFT_WEIGHTS['no_tool']}: the shipped data, about one conversation in six), SFT and RL "
                        f"alike: more ways to ask for a tool move the call boundary, more no-call questions "
                        f"hold it")
    p.add_argument("--max_count", type=int, default=MAX_COUNT,
                   help=f"largest count of items in a chained price or total request of the SFT data "
                        f"('33 items at 155 GBP'; {MAX_COUNT}: the shipped data; SFT only). The RL prompts "
                        f"and the held-out sets always draw counts up to {MAX_COUNT}, so a larger value "
                        f"gives SFT more two-digit counts to copy, never a held-out one")
    p.add_argument("--n_rl", type=int, default=2000, help="number of RL prompts in the shipped sample")
    p.add_argument("--n_rl_pool", type=int, default=20_000,
                   help="number of RL prompts in the training pool (agent_rl_pool.jsonl, not shipped)")
    p.add_argument("--only", nargs="+", choices=FILES, default=None,
                   help="write only these files (the others are not built; the checks see what is)")
    args = p.parse_args(argv)
    for flag in ("quantity_rate", "typing_noise", "math_grammar", "unit_grammar", "lead_ins",
                 "extra_math_grammar", "currency_grammar"):
        if not 0.0 <= getattr(args, flag) <= 1.0:
            p.error(f"--{flag} {getattr(args, flag)}: a share, from 0 to 1")
    if args.extra_math < 0:
        p.error(f"--extra_math {args.extra_math}: a share of --n_sft, at least 0")
    if args.no_tool_weight < 0:
        p.error(f"--no_tool_weight {args.no_tool_weight}: a weight, at least 0")
    if args.max_count < 2:
        p.error(f"--max_count {args.max_count}: a count of items, at least 2")
    return args


# ==========================================================================================================
# Settings
# ==========================================================================================================

THINKING_RATE = 0.15     # share of SFT conversations whose assistant turns carry reasoning_content
PREFACE_RATE = 0.2       # share of tool-calling turns that say a few words instead of empty content
EVAL_POOL_SHARE = 6      # one number in six belongs to the eval pool (see is_eval_number) ...
ALWAYS_TRAIN = 10        # ... except -10..10, too common to hold out
MAX_COUNT = 40           # chained requests count 2..MAX_COUNT items (the held-out sets always take 40)
MATH_BANNED = (256, 37)  # operands of the default test prompt 256×37 (another script has it built in)
UNIT_BANNED = (100,)     # value of the default test prompt 100 km -> miles

SFT_WEIGHTS = {"single": 45, "parallel": 15, "chained": 12, "correction": 10, "error": 5, "no_tool": 17}
RL_WEIGHTS = {c: w for c, w in SFT_WEIGHTS.items() if c != "error"}
EVAL_PER_SKILL = 84  # held-out cases per skill (eval phrasings); no_tool: every eval question (115)
SEEN_PER_SKILL = 40  # cases per skill of the second held-out set (SFT phrasings, held-out numbers)



# how often make_no_tool draws each kind of train question ("topic": a template around a topic, the kind with
# the most distinct questions, about 630 per language in SFT)
NO_TOOL_KINDS = {"chat": 10, "smalltalk": 8, "ask": 24, "hard": 23, "topic": 35}
# --word_topics: the weight of topic questions whose topic holds a tool's word (NO_TOOL_WORD_TOPICS), beside the
# kinds above (about one no_tool question in eight)
WORD_TOPIC_WEIGHT = 15
ENTITY_TOPIC_WEIGHT = 15  # --entity_topics: questions about a city, currency or place that need no call
FRAME_WEIGHT = 25  # --no_tool_frames: a question in one of the frames people ask in (ASK_FRAMES)
SEEN_NO_TOOL_KINDS = ("chat", "ask", "hard")  # the seen-phrasing set's no_tool questions (as it was first made)


# ==========================================================================================================
# Train-only phrasing variety: an opener, a closer and other end punctuation around a train prompt
# (SFT and RL, never eval). No opener or closer shares a word with an eval prompt (checked in run_checks).
# ==========================================================================================================

OPENER_RATE = 0.3    # share of train prompts that start with an opener
CLOSER_RATE = 0.25   # ... that end with a closer
PUNCT_RATE = 0.3     # ... whose end punctuation is redrawn
FRAMED_RATE = 0.1    # share of train requests with a shared frame, where a table has them (SHARED_FRAMES)


# ==========================================================================================================
# Records
# ==========================================================================================================


@dataclass
class ToolCall:
    name: str
    args: dict
    result: dict  # exactly what execute_tool(name, args) returned


@dataclass
class Step:
    """One assistant turn that calls tools: one call, or several in parallel."""
    calls: list
    reasoning: str
    kind: str = "first"  # "first", "next" (chained) or "retry" (correction); picks the preface
    say: str = ""  # what the turn writes before its calls instead of a preface (--state_numbers)


@dataclass
class Sample:
    category: str
    lang: str
    user: str
    steps: list             # tool-calling turns; empty for no_tool
    answer: str             # final assistant answer (the RL reference answer)
    final_reasoning: str
    gt: list = field(default_factory=list)
    expect_tools: list = field(default_factory=list)
    values: list = field(default_factory=list)  # numbers the user typed (eval and train never share one)
    wrap: bool = True   # may a train prompt get an opener and a closer (not small talk like "你好")
    mention: list = field(default_factory=list)  # no_tool: tools the question is about (always offered)


def is_eval_number(x) -> bool:
    """A fixed, hash-based split of all numbers: eval draws only these, train draws never do."""
    if abs(x) <= ALWAYS_TRAIN:
        return False
    return int(hashlib.md5(str(x).encode()).hexdigest(), 16) % EVAL_POOL_SHARE == 0


def is_eval_combo(*parts) -> bool:
    """The same hash split for combinations of entities (two cities, a city and a currency pair, ...): a
    combination in the eval pool is never asked in SFT or RL, although each entity alone is."""
    key = "|".join(map(str, parts))
    return int(hashlib.md5(key.encode()).hexdigest(), 16) % EVAL_POOL_SHARE == 0


@dataclass
class Ctx:
    """What every maker needs: the one shared RNG, the phrasing split it takes user templates from ("sft",
    "rl" or "eval") and the pool its numbers and entity combinations come from ("train" or "eval")."""
    rng: random.Random
    phrasing: str
    pool: str
    quantity_rate: float = 0.0  # share of SFT requests in a quantity frame, where a table has them
    state_numbers: int = 0  # calculator turns first list the question's numbers: 1 chained ones, 2 all,
    # 3 all, with the role of each number of a price or total request
    word_topics: bool = False  # no_tool questions also come from NO_TOOL_WORD_TOPICS (SFT and RL prompts)
    entity_topics: bool = False  # ... and from NO_TOOL_ENTITY_SPLITS
    no_tool_frames: bool = False  # ... and from NO_TOOL_FRAME_SPLITS
    max_count: int = MAX_COUNT  # largest count of items in a chained price or total request
    typing_noise: float = 0.0  # share of requests typed in a hurry (typing_noise); 0 draws nothing
    math_grammar: float = 0.0  # share of calculator requests from dataset/math_grammar.py; 0 draws nothing
    unit_grammar: float = 0.0  # share of unit requests in UNIT_SPELLINGS' words (spoken_unit); 0 draws nothing
    lead_ins: float = 0.0  # share of requests after a LEAD_INS sentence; 0 draws nothing
    currency_grammar: float = 0.0  # share of currency names from CURRENCY_SPELLINGS; 0 draws nothing
    parallel_shapes: bool = False  # half the parallel requests are any two or three single requests in one
    # message (make_parallel_mixed); False draws nothing
    chain_shapes: bool = False  # chained requests also convert-then-compute and exchange-then-split, with
    # counts in words and decimal quantities now and then (MORE_CHAINS, count_text); False draws nothing

    def template(self, table, lang):
        """A user template of this split; train prompts of a table with framed templates (SHARED_FRAMES)
        take one of those at FRAMED_RATE, and SFT prompts of a table with quantity templates (QUANTITY_FRAMES)
        one of those at quantity_rate (--quantity_rate; 0, no draw, by default)."""
        quantity = table.get(f"{self.phrasing}_quantity") if self.pool == "train" else None
        if quantity and self.quantity_rate and self.rng.random() < self.quantity_rate:
            return self.rng.choice(quantity[lang])
        framed = table.get(f"{self.phrasing}_framed") if self.pool == "train" else None
        if framed and self.rng.random() < FRAMED_RATE:
            return self.rng.choice(framed[lang])
        return self.rng.choice(table[self.phrasing][lang])

    def answer(self, table, lang, **values):
        text = self.rng.choice(table[lang]).format(**values)
        return text[0].upper() + text[1:]

    def draw(self, make, banned=()):
        """Call make() until every number it returns is in this pool and none is banned."""
        want_eval = self.pool == "eval"
        for _ in range(100_000):
            values = make()
            if all(is_eval_number(v) == want_eval and v not in banned for v in values):
                return values
        raise RuntimeError("no numbers left in the pool; widen the range")

    def combo(self, make):
        """Call make() until the combination it returns is in this pool."""
        want_eval = self.pool == "eval"
        for _ in range(100_000):
            parts = make()
            if is_eval_combo(*parts) == want_eval:
                return parts
        raise RuntimeError("no combinations left in the pool")


# ==========================================================================================================
# Small helpers
# ==========================================================================================================

def tr(lang, zh, en):
    return zh if lang == "zh" else en


def call(name, args) -> ToolCall:
    return ToolCall(name, args, execute_tool(name, args))


def gt_of(c: ToolCall) -> list:
    """The strings a correct answer must quote from this call's result."""
    r = c.result
    assert "error" not in r, (c.name, c.args, r)
    if c.name == "get_current_weather":
        return [r["temperature"], r["condition"]]
    if c.name == "get_current_time":
        return [r["datetime"].split()[1][:5]]  # "2025-03-07 14:30:00" -> "14:30"
    if c.name == "get_exchange_rate":
        return [str(r["rate"])]
    if c.name == "translate_text":
        return [r["translation"]]
    return [str(r["result"])]  # calculate_math, unit_converter


def time_fields(c: ToolCall, lang) -> dict:
    date, clock = c.result["datetime"].split()
    weekday = c.result["weekday"]
    return {"hhmm": clock[:5], "date": date, "weekday": WEEKDAY_ZH[weekday] if lang == "zh" else weekday}


def city_label(ctx, city, lang):
    zh, en = CITY_NAMES[city]
    if lang == "zh":
        return en if ctx.rng.random() < 0.15 else zh  # Chinese users sometimes type the English name
    return en


def place_label(ctx, timezone, lang):
    return ctx.rng.choice(TIME_PLACES[timezone][0 if lang == "zh" else 1])


def currency_label(ctx, code, lang, codes_only_en=False):
    if ctx.currency_grammar and code in CURRENCY_SPELLINGS and ctx.rng.random() < ctx.currency_grammar:
        return ctx.rng.choice(CURRENCY_SPELLINGS[code][0 if lang == "zh" else 1])  # RMB, bucks, quid, 美金
    zh, en = CURRENCY_NAMES.get(code) or ERROR_CURRENCIES[code]
    if lang == "zh":
        return code if ctx.rng.random() < 0.15 else zh
    return code if codes_only_en or ctx.rng.random() < 0.5 else en


def unit_label(ctx, unit, lang):
    return ctx.rng.choice(UNIT_NAMES[unit][0 if lang == "zh" else 1])


def language_label(ctx, language, lang):
    return ctx.rng.choice(LANGUAGE_NAMES[language][0 if lang == "zh" else 1])


def unit_value(rng, unit):
    """An int in the unit's range, or (one time in four) a number with one decimal."""
    lo, hi = UNIT_RANGES[unit]
    if rng.random() < 0.25:
        v = round(rng.uniform(lo, hi), 1)
        return int(v) if v == int(v) else v
    return rng.randint(lo, hi)


def money_amount(rng):
    return rng.randint(1, 100) * 10 if rng.random() < 0.5 else rng.randint(2, 2000)


SEPARATOR_RATE = 0.3  # share of numbers of 1,000 and more that a user types with thousands separators


def number_text(rng, x) -> str:
    """How a user types a number: 1250 or, now and then, 1,250 (the call always carries the plain number)."""
    if isinstance(x, int) and abs(x) >= 1000 and rng.random() < SEPARATOR_RATE:
        return f"{x:,}"
    return str(x)


# --- reasoning_content for thinking samples ---

def describe_calls(names, lang):
    if len(names) == 2 and names[0] == names[1]:
        return tr(lang, f"{names[0]} 两次", f"{names[0]} twice")
    return tr(lang, " 和 ", " and ").join(names)


def think_call(lang, goal, names, then=None):
    if then:
        return tr(lang, f"用户想{goal}。先调用 {names[0]},再用它的结果调用 {then}。",
                  f"The user wants to {goal}. I will call {names[0]} first, then use its result for {then}.")
    calls = describe_calls(names, lang)
    return tr(lang, f"用户想{goal},需要调用 {calls}。", f"The user wants to {goal}, so I should call {calls}.")


def think_next(lang, got, name):
    return tr(lang, f"第一步得到 {got},接下来用它调用 {name}。",
              f"The first call gave {got}; now I use it to call {name}.")


def think_retry(lang, hint):
    return tr(lang, f"调用出错了,提示是:{hint}。按提示修改参数后重试。",
              f"The call failed with the hint: {hint}. I will fix the arguments and retry.")


def think_final(lang, gt):
    return tr(lang, f"工具返回 {'、'.join(gt)},可以回答了。", f"The tool returned {', '.join(gt)}; I can answer now.")


def finish(category, lang, user, steps, answer, gt, values=(), final_reasoning=None):
    expect = [c.name for s in steps for c in s.calls]
    reasoning = final_reasoning or think_final(lang, gt)
    return Sample(category, lang, user, steps, answer, reasoning, list(gt), expect, list(values))


def one_turn(category, lang, user, calls, goal, answer, values=()):
    """One tool-calling turn (a single call or parallel calls), then the answer quoting every result."""
    gt = [g for c in calls for g in gt_of(c)]
    step = Step(calls, think_call(lang, goal, [c.name for c in calls]))
    return finish(category, lang, user, [step], answer, gt, values)


# ==========================================================================================================
# single: one call per tool
# ==========================================================================================================

def weather_call(ctx, lang, city=None):
    city = city or ctx.rng.choice(WEATHER_CITIES)
    return city_label(ctx, city, lang), call("get_current_weather", {"location": city})


def time_call(ctx, lang, timezone=None):
    timezone = timezone or ctx.rng.choice(TIMEZONES)
    return place_label(ctx, timezone, lang), call("get_current_time", {"timezone": timezone})


def exchange_call(ctx, lang, pair=None, codes_only_en=False):
    src, dst = pair or ctx.rng.choice(CURRENCY_PAIRS)
    labels = (currency_label(ctx, src, lang, codes_only_en), currency_label(ctx, dst, lang, codes_only_en))
    return labels, call("get_exchange_rate", {"from_currency": src, "to_currency": dst})


def make_weather_single(ctx, lang):
    label, c = weather_call(ctx, lang)
    user = ctx.template(WEATHER_Q, lang).format(city=label)
    answer = ctx.answer(WEATHER_A, lang, **dict(c.result, city=label))
    goal = tr(lang, f"了解{label}的天气", f"know the weather in {label}")
    return one_turn("single", lang, user, [c], goal, answer)


def make_time_single(ctx, lang):
    if ctx.rng.random() < 0.25:  # "what time is it?" without a place: no argument or the default timezone
        c = call("get_current_time", ctx.rng.choice([{}, {"timezone": DEFAULT_TIMEZONE}]))
        user = ctx.template(TIME_LOCAL_Q, lang)
        answer = ctx.answer(TIME_LOCAL_A, lang, **time_fields(c, lang))
        return one_turn("single", lang, user, [c], tr(lang, "知道现在几点", "know the current time"), answer)
    label, c = time_call(ctx, lang)
    user = ctx.template(TIME_Q, lang).format(place=label)
    answer = ctx.answer(TIME_A, lang, place=label, **time_fields(c, lang))
    goal = tr(lang, f"知道{label}现在几点", f"know the time in {label}")
    return one_turn("single", lang, user, [c], goal, answer)


def make_exchange_single(ctx, lang):
    (src, dst), c = exchange_call(ctx, lang)
    user = ctx.template(EXCHANGE_Q, lang).format(src=src, dst=dst)
    answer = ctx.answer(EXCHANGE_A, lang, src=src, dst=dst, rate=c.result["rate"])
    goal = tr(lang, f"查{src}兑{dst}的汇率", f"get the {src} to {dst} exchange rate")
    return one_turn("single", lang, user, [c], goal, answer)


BELOW_ZERO_RATE = 0.4  # share of spoken temperatures below zero
GLUED_RATE = 0.4  # share of spoken values written against a short unit word: 6ft, 25C, 72kg


def spoken_unit(ctx, lang, src, dst):
    """A conversion as people type it (--unit_grammar): the units in any of UNIT_SPELLINGS' words, the value
    in words now and then, a temperature below zero as -5, minus 5 or 零下5, a short unit glued to its number.
    Returns (value, user text)."""
    rng = ctx.rng
    below = src in ("celsius", "fahrenheit") and rng.random() < BELOW_ZERO_RATE
    make = (lambda: (-rng.randint(1, 40),)) if below else (lambda: (unit_value(rng, src),))
    (value,) = ctx.draw(make, banned=UNIT_BANNED)
    s, d = (rng.choice(UNIT_SPELLINGS[u][0 if lang == "zh" else 1]) for u in (src, dst))
    size = spell(rng, abs(value), lang, words=0.2)
    typed = rng.choice(NEGATIVE_FORMS[lang]).format(n=size) if value < 0 else size
    user = ctx.template(UNIT_Q, lang).format(value=typed, src=s, dst=d)
    if lang == "en" and len(s) <= 3 and typed[-1].isdigit() and rng.random() < GLUED_RATE:
        user = user.replace(f"{typed} {s}", f"{typed}{s}", 1)
    return value, user


def make_unit_single(ctx, lang):
    src, dst = ctx.rng.choice(UNIT_PAIRS)
    if ctx.unit_grammar and ctx.rng.random() < ctx.unit_grammar:
        value, user = spoken_unit(ctx, lang, src, dst)
        s, d = unit_label(ctx, src, lang), unit_label(ctx, dst, lang)  # the answer's words
    else:
        (value,) = ctx.draw(lambda: (unit_value(ctx.rng, src),), banned=UNIT_BANNED)
        s, d = unit_label(ctx, src, lang), unit_label(ctx, dst, lang)
        user = ctx.template(UNIT_Q, lang).format(value=number_text(ctx.rng, value), src=s, dst=d)
    c = call("unit_converter", {"value": value, "from_unit": src, "to_unit": dst})
    answer = ctx.answer(UNIT_A, lang, value=value, src=s, dst=d, result=c.result["result"])
    goal = tr(lang, f"把{value}{s}换算成{d}", f"convert {value} {s} to {d}")
    return one_turn("single", lang, user, [c], goal, answer, values=[value])


def two_operands(rng, op):
    if op == "*":
        return rng.randint(2, 999), rng.randint(2, 99)
    if op == "/":  # exact integer division: a = b * k
        b = rng.randint(2, 99)
        return b * rng.randint(2, 999), b
    return rng.randint(10, 9999), rng.randint(10, 9999)


def decimal_operand(rng):
    """A number with one or two decimals, as people write prices and measures: 3.5, 12.75 (63.0 is 63)."""
    x = round(rng.uniform(1, 500), rng.choice([1, 1, 2]))
    return int(x) if x == int(x) else x


def math_problem(ctx, lang):
    """(how the user writes it, the valid expression for the call, the operands the user typed)."""
    rng = ctx.rng
    spaced = rng.random() < 0.3

    def show(op):
        sym = rng.choice(OP_SYMBOLS[op])
        return f" {sym} " if spaced else sym

    def num(x):
        return number_text(rng, x)

    shape = rng.choice(["two", "two", "two", "decimal", "three", "paren", "power", "power_n"])
    if shape in ("two", "decimal"):
        op = rng.choice("+-*/" if shape == "two" else "+-*")
        make = (lambda: two_operands(rng, op)) if shape == "two" else \
            (lambda: (decimal_operand(rng), rng.choice([decimal_operand(rng), rng.randint(2, 99)])))
        a, b = ctx.draw(make, banned=MATH_BANNED)
        if rng.random() < 0.3:
            text = f"{num(a)}{rng.choice(OP_WORDS[lang][op])}{num(b)}"
        else:
            text = f"{num(a)}{show(op)}{num(b)}"
        return text, f"{a}{op}{b}", [a, b]
    if shape == "power":  # the exponent (2 or 3) counts as part of the operator, not as an operand
        (a,) = ctx.draw(lambda: (rng.randint(2, 99),), banned=MATH_BANNED)
        e = rng.choice([2, 3])
        text = f"{a}{POWER_WORDS[lang][e]}" if rng.random() < 0.5 else f"{a}^{e}"
        return text, f"{a}**{e}", [a]
    if shape == "power_n":  # a small base to a larger exponent: 2的10次方, 3 to the power of 7 (all <= 10)
        a, e = rng.randint(2, 9), rng.randint(4, 10)
        text = rng.choice([f"{a}的{e}次方", f"{a}的{e}次幂"] if lang == "zh" else
                          [f"{a} to the power of {e}", f"{a} raised to the {e}th power"])
        return (text if rng.random() < 0.7 else f"{a}^{e}"), f"{a}**{e}", []
    a, b, c = ctx.draw(lambda: tuple(rng.randint(2, 200) for _ in range(3)), banned=MATH_BANNED)
    if shape == "three":
        o1, o2 = rng.choice("+-*"), rng.choice("+-*")
        return f"{a}{show(o1)}{b}{show(o2)}{c}", f"{a}{o1}{b}{o2}{c}", [a, b, c]
    o1 = rng.choice("+-")  # paren: (a ± b) * c
    return f"({a}{show(o1)}{b}){show('*')}{c}", f"({a}{o1}{b})*{c}", [a, b, c]


WORD_PROBLEM_RATE = 0.35  # share of the grammar's calculator requests that are word problems


def grammar_math_problem(ctx, lang):
    """(user request, expression, numbers typed) from dataset/math_grammar.py (--math_grammar)."""
    draw = lambda make: ctx.draw(make, banned=MATH_BANNED)  # noqa: E731
    if ctx.rng.random() < WORD_PROBLEM_RATE:
        templates = {kind: MATH_WORD_Q[kind][ctx.phrasing][lang] for kind in MATH_WORD_Q}
        req = word_problem(ctx.rng, draw, lang, templates)
    else:
        req = expression_request(ctx.rng, draw, lang)
    user = req.text if req.whole else ctx.template(MATH_Q, lang).format(expr=req.text)
    return user, req.expression, req.numbers


def make_math_single(ctx, lang):
    if ctx.math_grammar and ctx.rng.random() < ctx.math_grammar:
        user, expr, operands = grammar_math_problem(ctx, lang)
        text = user
    else:
        text, expr, operands = math_problem(ctx, lang)
        user = ctx.template(MATH_Q, lang).format(expr=text)
    c = call("calculate_math", {"expression": expr})
    answer = ctx.answer(MATH_A, lang, expr=expr, result=c.result["result"])
    goal = tr(lang, f"计算 {expr}", f"calculate {expr}")
    sample = one_turn("single", lang, user, [c], goal, answer, operands)
    if ctx.state_numbers >= 2:  # the numbers as typed ("2的10次方": 2, 10), else the operands
        found, given = numbers_in(text), [str(v) for v in operands]
        listed = found if not given or sorted(found) == sorted(given) else given
        sample.steps[0].say = state_numbers(lang, listed) if listed else ""
    return sample


def make_translate_single(ctx, lang):
    (text, target), _ = ctx.rng.choice(TRANSLATION_ITEMS)
    c = call("translate_text", {"text": text, "target_language": target})
    lang_label = language_label(ctx, target, lang)
    user = ctx.template(TRANSLATE_Q, lang).format(text=text, lang=lang_label)
    translation = c.result["translation"]
    answer = ctx.answer(TRANSLATE_A, lang, text=text, language=lang_label, translation=translation)
    goal = tr(lang, f"把“{text}”翻译成{lang_label}", f"translate '{text}' into {lang_label}")
    return one_turn("single", lang, user, [c], goal, answer)


# ==========================================================================================================
# parallel: two calls in one turn, one answer with both results
# ==========================================================================================================

def fact(c: ToolCall, lang, label):
    """One result as a short clause for the combined answer."""
    r = c.result
    if c.name == "get_current_weather":
        return tr(lang, f"{label}{r['temperature']},{r['condition']},湿度{r['humidity']}",
                  f"{label} is {r['temperature']} and {r['condition']} (humidity {r['humidity']})")
    if c.name == "get_current_time":
        return tr(lang, f"{label}现在是{gt_of(c)[0]}", f"the time in {label} is {gt_of(c)[0]}")
    src, dst = label  # get_exchange_rate
    return tr(lang, f"1{src}={r['rate']}{dst}", f"1 {src} = {r['rate']} {dst}")


def parallel_sample(ctx, lang, table, fill, labelled_calls, goal):
    calls = [c for c, _ in labelled_calls]
    f1, f2 = (fact(c, lang, label) for c, label in labelled_calls)
    user = ctx.template(table, lang).format(**fill)
    return one_turn("parallel", lang, user, calls, goal, ctx.answer(PARALLEL_A, lang, f1=f1, f2=f2))


THREE_REQUESTS = 0.25  # --parallel_shapes: share of mixed parallel requests that ask three things


def make_parallel_mixed(ctx, lang):
    """Any two (or three) single requests in one message, each from its own maker and template, joined as
    people join them ("..., also ..."); one turn calls them all, the answer gives every result."""
    parts = []
    while len(parts) < (3 if ctx.rng.random() < THREE_REQUESTS else 2):
        part = ctx.rng.choice(list(MAKERS["single"].values()))(ctx, lang)
        if len(part.steps) == 1 and len(part.steps[0].calls) == 1 and part.user not in [p.user for p in parts]:
            parts.append(part)
    user = parts[0].user
    for part in parts[1:]:
        body, end = split_end(user)
        join = ctx.rng.choice(PARALLEL_JOINS[lang])
        if lang == "zh":
            user = body + (end or "。") + join + part.user
        else:
            user = body + (end or ".") + " " + (join + lower_first(part.user) if join else upper_first(part.user))
    calls = [p.steps[0].calls[0] for p in parts]
    answer = tr(lang, "", " ").join(p.answer if split_end(p.answer)[1] else p.answer + tr(lang, "。", ".")
                                   for p in parts)
    goal = tr(lang, f"一次问了{len(parts)}件事", f"get {len(parts)} things answered at once")
    return one_turn("parallel", lang, user, calls, goal, answer, [v for p in parts for v in p.values])


def make_parallel_weather2(ctx, lang):
    a, b = ctx.combo(lambda: ctx.rng.sample(WEATHER_CITIES, 2))
    (la, ca), (lb, cb) = weather_call(ctx, lang, a), weather_call(ctx, lang, b)
    goal = tr(lang, f"了解{la}和{lb}的天气", f"know the weather in {la} and {lb}")
    return parallel_sample(ctx, lang, PAR_WEATHER2_Q, {"a": la, "b": lb}, [(ca, la), (cb, lb)], goal)


def make_parallel_weather_exchange(ctx, lang):
    city, pair = ctx.combo(lambda: (ctx.rng.choice(WEATHER_CITIES), ctx.rng.choice(CURRENCY_PAIRS)))
    city, cw = weather_call(ctx, lang, city)
    (src, dst), ce = exchange_call(ctx, lang, pair)
    goal = tr(lang, f"了解{city}的天气,还想知道{src}兑{dst}的汇率",
              f"know the weather in {city} and the {src} to {dst} rate")
    fill = {"city": city, "src": src, "dst": dst}
    return parallel_sample(ctx, lang, PAR_WEATHER_EXCHANGE_Q, fill, [(cw, city), (ce, (src, dst))], goal)


def make_parallel_time2(ctx, lang):
    tz_a, tz_b = ctx.combo(lambda: ctx.rng.sample(TIMEZONES, 2))
    (la, ca), (lb, cb) = time_call(ctx, lang, tz_a), time_call(ctx, lang, tz_b)
    goal = tr(lang, f"知道{la}和{lb}现在几点", f"know the time in {la} and {lb}")
    return parallel_sample(ctx, lang, PAR_TIME2_Q, {"a": la, "b": lb}, [(ca, la), (cb, lb)], goal)


def make_parallel_exchange2(ctx, lang):
    def two_pairs():
        p1 = ctx.rng.choice(CURRENCY_PAIRS)
        return p1, ctx.rng.choice([p for p in CURRENCY_PAIRS if p not in (p1, p1[::-1])])

    p1, p2 = ctx.combo(two_pairs)
    (s1, d1), c1 = exchange_call(ctx, lang, p1)
    (s2, d2), c2 = exchange_call(ctx, lang, p2)
    goal = tr(lang, f"查{s1}兑{d1}和{s2}兑{d2}的汇率", f"get the {s1}/{d1} and {s2}/{d2} rates")
    fill = {"s1": s1, "d1": d1, "s2": s2, "d2": d2}
    return parallel_sample(ctx, lang, PAR_EXCHANGE2_Q, fill, [(c1, (s1, d1)), (c2, (s2, d2))], goal)


def make_parallel_weather_time(ctx, lang):
    city = ctx.rng.choice(list(CITY_TIMEZONES))
    label, cw = weather_call(ctx, lang, city)
    ct = call("get_current_time", {"timezone": CITY_TIMEZONES[city]})
    goal = tr(lang, f"知道{label}的时间和天气", f"know the time and the weather in {label}")
    return parallel_sample(ctx, lang, PAR_WEATHER_TIME_Q, {"place": label}, [(ct, label), (cw, label)], goal)


# ==========================================================================================================
# chained: the second call's arguments come from the first result
# ==========================================================================================================

def numbers_in(text) -> list:
    """The numbers a text writes, in order, as the call would carry them (1,250 -> 1250)."""
    return [m.rstrip(",").replace(",", "") for m in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]


def in_user_order(user, values) -> list:
    """values as strings, in the order the user wrote them (as given when the text has other numbers)."""
    found, given = numbers_in(user), [str(v) for v in values]
    return found if sorted(found) == sorted(given) else given


# --state_numbers 3: the word before each number of a price or total request, (Chinese, English)
ROLE_WORDS = {"price": ("单价", "price"), "each": ("每份", "each"), "count": ("数量", "count")}


def state_numbers(lang, numbers, rate=None, roles=None) -> str:
    """A calculator turn's first words with --state_numbers: the question's numbers (and the rate), so that
    the expression is copied from the line right above it; with roles, each number after its role's word."""
    if roles:
        numbers = [f"{ROLE_WORDS[role][0 if lang == 'zh' else 1]} {n}" for role, n in zip(roles, numbers)]
    listed = tr(lang, "、", ", ").join(numbers)
    rate_part = "" if rate is None else tr(lang, f";汇率 {rate}", f"; rate {rate}")
    return tr(lang, f"题中的数:{listed}{rate_part}。", f"Numbers in the question: {listed}{rate_part}.")


def user_roles(ctx, user, values, roles) -> tuple:
    """The numbers in the user's order, and their roles in that order (None below --state_numbers 3)."""
    numbers = in_user_order(user, values)
    if ctx.state_numbers < 3 or not roles:
        return numbers, None
    return numbers, list(roles) if numbers == [str(v) for v in values] else list(reversed(roles))


def times_rate(ctx, lang, user, values, rate, canonical, roles=None) -> tuple:
    """The chained calculator call after get_exchange_rate: (expression, what the turn says first)."""
    if not ctx.state_numbers:
        return canonical, ""
    numbers, ordered = user_roles(ctx, user, values, roles)
    return "*".join(numbers + [str(rate)]), state_numbers(lang, numbers, rate, ordered)


def chain(lang, user, first, second, goal, got, answer, values=(), say=("", "")):
    steps = [Step([first], think_call(lang, goal, [first.name], then=second.name), say=say[0]),
             Step([second], think_next(lang, got, second.name), "next", say=say[1])]
    return finish("chained", lang, user, steps, answer, gt_of(second), values)


def make_chain_fahrenheit(ctx, lang):
    """weather -> 28°C -> unit_converter(28, celsius, fahrenheit) -> 82.4"""
    label, first = weather_call(ctx, lang)
    temperature = first.result["temperature"]
    celsius = int(temperature.removesuffix("°C"))
    second = call("unit_converter", {"value": celsius, "from_unit": "celsius", "to_unit": "fahrenheit"})
    user = ctx.template(CHAIN_FAHRENHEIT_Q, lang).format(city=label)
    answer = ctx.answer(CHAIN_FAHRENHEIT_A, lang, city=label, temperature=temperature,
                        f=second.result["result"])
    goal = tr(lang, f"知道{label}现在的华氏温度", f"know the temperature in {label} in Fahrenheit")
    return chain(lang, user, first, second, goal, temperature, answer)


def make_chain_money(ctx, lang):
    """get_exchange_rate(EUR, CNY) -> 7.85 -> calculate_math("500*7.85") -> 3925"""
    (amount,) = ctx.draw(lambda: (money_amount(ctx.rng),))
    (src, dst), first = exchange_call(ctx, lang, codes_only_en=True)
    rate = first.result["rate"]
    user = ctx.template(CHAIN_MONEY_Q, lang).format(amount=number_text(ctx.rng, amount), src=src, dst=dst)
    expression, say = times_rate(ctx, lang, user, [amount], rate, f"{amount}*{rate}")
    second = call("calculate_math", {"expression": expression})
    answer = ctx.answer(CHAIN_MONEY_A, lang, amount=amount, src=src, dst=dst, rate=rate,
                        total=second.result["result"])
    goal = tr(lang, f"知道{amount}{src}能换多少{dst}", f"know what {amount} {src} is in {dst}")
    return chain(lang, user, first, second, goal, rate, answer, [amount], say=("", say))


def make_chain_price(ctx, lang):
    """get_exchange_rate(USD, CNY) -> 7.21 -> calculate_math("25*4*7.21"): a price times a count, converted"""
    price, n = ctx.draw(lambda: (ctx.rng.randint(2, 500), ctx.rng.randint(2, ctx.max_count)))
    (src, dst), first = exchange_call(ctx, lang, codes_only_en=True)
    rate = first.result["rate"]
    user = ctx.template(CHAIN_PRICE_Q, lang).format(price=price, n=count_text(ctx, n, lang), src=src, dst=dst)
    expression, say = times_rate(ctx, lang, user, [price, n], rate, f"{price}*{n}*{rate}",
                                 roles=("price", "count"))
    second = call("calculate_math", {"expression": expression})
    answer = ctx.answer(CHAIN_PRICE_A, lang, n=n, dst=dst, rate=rate, total=second.result["result"])
    goal = tr(lang, f"知道{n}件单价{price}{src}的东西合多少{dst}", f"know what {n} items at {price} {src} cost in {dst}")
    return chain(lang, user, first, second, goal, rate, answer, [price, n], say=("", say))


def make_chain_total(ctx, lang):
    """calculate_math("12*8") -> 96 -> unit_converter(96, kg, pounds): add up, then convert"""
    src, dst = ctx.rng.choice(LENGTH_WEIGHT_PAIRS)
    decimal = ctx.chain_shapes and ctx.rng.random() < DECIMAL_RATE
    q, n = ctx.draw(lambda: (round(ctx.rng.uniform(0.5, 50), 1) if decimal else ctx.rng.randint(2, 500),
                             ctx.rng.randint(2, ctx.max_count)), banned=UNIT_BANNED)
    s, d = unit_label(ctx, src, lang), unit_label(ctx, dst, lang)
    user = ctx.template(CHAIN_TOTAL_Q, lang).format(q=q, n=count_text(ctx, n, lang), src=s, dst=d)
    numbers, roles = [str(q), str(n)], None
    if ctx.state_numbers:
        numbers, roles = user_roles(ctx, user, [q, n], ("each", "count"))
    say = state_numbers(lang, numbers, roles=roles) if ctx.state_numbers else ""
    first = call("calculate_math", {"expression": "*".join(numbers)})
    total = first.result["result"]
    second = call("unit_converter", {"value": as_number(total), "from_unit": src, "to_unit": dst})
    answer = ctx.answer(CHAIN_TOTAL_A, lang, q=q, n=n, src=s, dst=d, total=total,
                        result=second.result["result"])
    goal = tr(lang, f"把{n}个{q}{s}加起来换算成{d}", f"convert {n} times {q} {s} to {d}")
    return chain(lang, user, first, second, goal, total, answer, [q, n], say=(say, ""))


DECIMAL_RATE = 0.25  # --chain_shapes: share of total requests whose quantity has a decimal (2.5 kg)
COUNT_WORDS = 0.3  # --chain_shapes: share of counts written in words (three, 五)


def count_text(ctx, n, lang) -> str:
    """A count as the user types it: digits or, with --chain_shapes, now and then in words."""
    if not ctx.chain_shapes:
        return str(n)
    text = spell(ctx.rng, n, lang, words=COUNT_WORDS)
    return "两" if text == "二" else text  # 两个, not 二个


def as_number(text: str):
    """A calculator result ("36", "37.5") as the number a next call takes."""
    return float(text) if "." in text else int(text)


def make_chain_convert(ctx, lang):
    """unit_converter(5, miles, km) -> 8.0467 -> calculate_math("8.0467*2"): convert, then compute on it"""
    src, dst = ctx.rng.choice(UNIT_PAIRS)
    (v,) = ctx.draw(lambda: (unit_value(ctx.rng, src),), banned=UNIT_BANNED)
    phrase, op, takes = ctx.rng.choice(THEN_OPS[lang])
    k = ctx.rng.randint(2, 12) if takes else 2
    s, d = unit_label(ctx, src, lang), unit_label(ctx, dst, lang)
    then = phrase.format(k=count_text(ctx, k, lang))
    user = ctx.template(CHAIN_CONVERT_Q, lang).format(v=v, src=s, dst=d, then=then)
    first = call("unit_converter", {"value": v, "from_unit": src, "to_unit": dst})
    converted = first.result["result"]
    second = call("calculate_math", {"expression": f"{converted}{op}{k}"})
    answer = ctx.answer(CHAIN_CONVERT_A, lang, v=v, src=s, dst=d, first=converted, result=second.result["result"])
    goal = tr(lang, f"把{v}{s}换成{d},再{then}", f"convert {v} {s} to {d}, then {then}")
    return chain(lang, user, first, second, goal, converted, answer, [v])


def make_chain_split(ctx, lang):
    """get_exchange_rate(USD, CNY) -> 7.21 -> calculate_math("1200*7.21/3"): exchange, then share out"""
    amount, n = ctx.draw(lambda: (money_amount(ctx.rng), ctx.rng.randint(2, 8)))
    (src, dst), first = exchange_call(ctx, lang, codes_only_en=True)
    rate = first.result["rate"]
    user = ctx.template(CHAIN_SPLIT_Q, lang).format(amount=number_text(ctx.rng, amount), src=src, dst=dst,
                                                    n=count_text(ctx, n, lang))
    second = call("calculate_math", {"expression": f"{amount}*{rate}/{n}"})
    answer = ctx.answer(CHAIN_SPLIT_A, lang, amount=amount, src=src, dst=dst, rate=rate, n=n,
                        total=second.result["result"])
    goal = tr(lang, f"知道{amount}{src}换成{dst}后{n}人平分各得多少",
              f"know each of {n} shares of {amount} {src} in {dst}")
    return chain(lang, user, first, second, goal, rate, answer, [amount, n])


# ==========================================================================================================
# correction: the first call fails, the hint says how to fix it, the retry succeeds
# ==========================================================================================================

def correction(lang, user, first, second, goal, answer, values=()):
    assert "hint" in first.result, first.result
    steps = [Step([first], think_call(lang, goal, [first.name])),
             Step([second], think_retry(lang, first.result["hint"]), "retry")]
    return finish("correction", lang, user, steps, answer, gt_of(second), values)


def make_correction_weather(ctx, lang):
    """weather("浦东") -> hint "浦东 is in 上海; query 上海" -> weather("上海")"""
    place = ctx.rng.choice(HINT_PLACES[lang])
    parent = LOCATION_HINTS[place]
    first = call("get_current_weather", {"location": place})
    assert first.result.get("hint") == f"{place} is in {parent}; query {parent}", first.result
    second = call("get_current_weather", {"location": parent})
    parent_label = CITY_NAMES[parent][0 if lang == "zh" else 1]
    user = ctx.template(CORR_WEATHER_Q, lang).format(place=place)
    answer = ctx.answer(CORR_WEATHER_A, lang, **dict(second.result, place=place, parent=parent_label))
    goal = tr(lang, f"了解{place}的天气", f"know the weather in {place}")
    return correction(lang, user, first, second, goal, answer)


def make_correction_math(ctx, lang):
    """calculate_math("12x34") -> hint "use * for multiplication" -> calculate_math("12*34")"""
    a, b = ctx.draw(lambda: (ctx.rng.randint(11, 99), ctx.rng.randint(11, 999)), banned=MATH_BANNED)
    typed = f"{a}{ctx.rng.choice(['x', 'x', ' x ', 'X'])}{b}"
    first = call("calculate_math", {"expression": typed})
    assert first.result.get("hint") == "use * for multiplication", first.result
    fixed = f"{a}*{b}"
    second = call("calculate_math", {"expression": fixed})
    user = ctx.template(CORR_MATH_Q, lang).format(expr=typed)
    answer = ctx.answer(CORR_MATH_A, lang, fixed=fixed, result=second.result["result"])
    goal = tr(lang, f"计算 {typed}", f"calculate {typed}")
    return correction(lang, user, first, second, goal, answer, [a, b])


# ==========================================================================================================
# error (SFT only): the tool returns an error nobody can fix; the answer says so
# ==========================================================================================================

def failed(lang, user, c, goal, answer):
    assert "error" in c.result, c.result
    step = Step([c], think_call(lang, goal, [c.name]))
    return finish("error", lang, user, [step], answer, [], final_reasoning=THINK_ERROR[lang])


def make_error_weather(ctx, lang):
    city = ctx.rng.choice(ERROR_CITIES[lang])
    c = call("get_current_weather", {"location": city})
    user = ctx.template(WEATHER_Q, lang).format(city=city)
    answer = ctx.answer(ERROR_WEATHER_A, lang, city=city)
    return failed(lang, user, c, tr(lang, f"了解{city}的天气", f"know the weather in {city}"), answer)


def make_error_exchange(ctx, lang):
    bad = ctx.rng.choice(list(ERROR_CURRENCIES))
    pair = (bad, ctx.rng.choice(["CNY", "USD"]))
    pair = pair if ctx.rng.random() < 0.5 else pair[::-1]
    c = call("get_exchange_rate", {"from_currency": pair[0], "to_currency": pair[1]})
    src, dst = (currency_label(ctx, code, lang) for code in pair)
    user = ctx.template(EXCHANGE_Q, lang).format(src=src, dst=dst)
    answer = ctx.answer(ERROR_EXCHANGE_A, lang, src=src, dst=dst)
    return failed(lang, user, c, tr(lang, f"查{src}兑{dst}的汇率", f"get the {src} to {dst} rate"), answer)


def make_error_translate(ctx, lang):
    text, target = ctx.rng.choice(ERROR_TEXTS[lang])
    c = call("translate_text", {"text": text, "target_language": target})
    lang_label = language_label(ctx, target, lang)
    user = ctx.template(TRANSLATE_Q, lang).format(text=text, lang=lang_label)
    answer = ctx.answer(ERROR_TRANSLATE_A, lang, text=text)
    goal = tr(lang, f"把“{text}”翻译成{lang_label}", f"translate '{text}' into {lang_label}")
    return failed(lang, user, c, goal, answer)


def make_error_time(ctx, lang):
    zh, en, timezone = ctx.rng.choice(ERROR_TIMEZONES)
    place = tr(lang, zh, en)
    c = call("get_current_time", {"timezone": timezone})
    user = ctx.template(TIME_Q, lang).format(place=place)
    answer = ctx.answer(ERROR_TIME_A, lang, place=place)
    return failed(lang, user, c, tr(lang, f"知道{place}现在几点", f"know the time in {place}"), answer)


# ==========================================================================================================
# no_tool: tools are offered, the question needs none
# ==========================================================================================================

def make_no_tool(ctx, lang, question=None):
    if question is not None:  # an eval case: the question is given, and it has no answer
        return Sample("no_tool", lang, question, [], "", THINK_DIRECT[lang])
    kinds = dict(NO_TOOL_KINDS, word=WORD_TOPIC_WEIGHT) if ctx.word_topics else dict(NO_TOOL_KINDS)
    if ctx.entity_topics:
        kinds["entity"] = ENTITY_TOPIC_WEIGHT
    if ctx.no_tool_frames:
        kinds["frames"] = FRAME_WEIGHT
    kind = ctx.rng.choices(list(kinds), weights=list(kinds.values()))[0]
    extra = {"word": NO_TOOL_WORD_SPLITS, "entity": NO_TOOL_ENTITY_SPLITS, "frames": NO_TOOL_FRAME_SPLITS}
    table = extra[kind][ctx.phrasing] if kind in extra else NO_TOOL_SPLITS[ctx.phrasing][kind]
    entry = ctx.rng.choice(table[lang])
    sample = Sample("no_tool", lang, entry[0], [], entry[1], THINK_DIRECT[lang], wrap=kind != "chat")
    if len(entry) > 2 and entry[2]:  # about a tool ("hard", some "topic" ones): that tool is offered
        sample.mention = list(TOOL_NAMES) if entry[2] == "all" else [TOOL_TOPICS[entry[2]]]
    return sample


MAKERS = {
    "single": {"calculate_math": make_math_single, "unit_converter": make_unit_single,
               "get_current_weather": make_weather_single, "get_current_time": make_time_single,
               "get_exchange_rate": make_exchange_single, "translate_text": make_translate_single},
    "parallel": {"weather2": make_parallel_weather2, "weather_exchange": make_parallel_weather_exchange,
                 "time2": make_parallel_time2, "exchange2": make_parallel_exchange2,
                 "weather_time": make_parallel_weather_time},
    "chained": {"fahrenheit": make_chain_fahrenheit, "money": make_chain_money, "price": make_chain_price,
                "total": make_chain_total},
    "correction": {"weather": make_correction_weather, "math": make_correction_math},
    "error": {"weather": make_error_weather, "exchange": make_error_exchange,
              "translate": make_error_translate, "time": make_error_time},
    "no_tool": {"chat": make_no_tool},
}
assert list(MAKERS["single"]) == TOOL_NAMES
MORE_CHAINS = {"convert": make_chain_convert, "split": make_chain_split}  # --chain_shapes: SFT and RL only


def make_sample(ctx, category, lang):
    """An SFT or RL sample (eval cases come from eval_jobs); its prompt gets the train-only phrasing variety."""
    if ctx.phrasing not in ("sft", "rl") or ctx.pool != "train":
        raise ValueError(f"make_sample draws SFT and RL samples, not {ctx.phrasing} phrasings from the "
                         f"{ctx.pool} pool")
    if category == "math":  # only calculator requests (--extra_math)
        sample = make_math_single(ctx, lang)
    else:
        makers = dict(MAKERS[category], **MORE_CHAINS) if category == "chained" and ctx.chain_shapes \
            else MAKERS[category]
        if category == "parallel" and ctx.parallel_shapes and ctx.rng.random() < 0.5:
            makers = {"mixed": make_parallel_mixed}
        sample = ctx.rng.choice(list(makers.values()))(ctx, lang)
    sample.user = vary_prompt(ctx.rng, sample)
    return sample


# ==========================================================================================================
# Train-only phrasing variety (see OPENERS, CLOSERS, END_VARIANTS)
# ==========================================================================================================

def split_end(text):
    """(text without its end marks, the end marks): "几点?" -> ("几点", "?")."""
    body = text.rstrip(END_MARKS)
    return body, text[len(body):]


def is_question(end):
    return "?" in end or "?" in end


def prompt_shape(body, end, lang):
    """Which openers fit: "question", "command" (an en imperative) or "any"."""
    if is_question(end):
        return "question"
    first = body.split(" ")[0].lower()
    return "command" if lang == "en" and first in EN_COMMANDS else "any"


def upper_first(text):
    return text[:1].upper() + text[1:]


def lower_first(text):
    """"What's the time?" -> "what's the time?", but names ("Tokyo", "USD", "I") keep their capital."""
    word = text.split(" ")[0].strip("',.?!:;")
    if word in KEEP_CAPITAL or not word[:1].isupper() or (word[1:] and not word[1:].islower()):
        return text
    return text[0].lower() + text[1:]


def open_with(opener, body, lang):
    if lang == "zh":
        return opener + body
    if opener.rstrip()[-1] in "!.?":  # the opener is a sentence of its own
        return opener + upper_first(body)
    return opener + lower_first(body)


def add_closer(rng, body, end, lang):
    """body + end with a closer: after the end mark, or inline before it (where the last word allows)."""
    question = is_question(end)
    last = body[-1:]
    inline_ok = (last.isalnum() or last in "'”)") and not body.lower().endswith(POLITE_ENDINGS)
    if lang == "zh" and question:  # an inline particle needs a Chinese word before it: "几点啊?"
        inline_ok = "\u4e00" <= last <= "\u9fff" and last not in ZH_PARTICLES
    kinds = (["after"] if end else []) + (["inline"] if inline_ok else [])
    if not kinds:
        return body + end
    if rng.choice(kinds) == "after":
        return body + end + rng.choice(CLOSERS[lang]["after"])
    return body + rng.choice(CLOSERS[lang]["inline_question" if question else "inline"]) + end


def vary_end(rng, text, lang):
    """Redraw the end punctuation within its kind: ? / ? / none / ??, or 。/ ! / none."""
    body, end = split_end(text)
    variant = rng.choice(END_VARIANTS[(lang, is_question(end))])
    return body + variant if variant else body.rstrip()


def vary_prompt(rng, sample):
    """The prompt with maybe an opener, a closer and other end punctuation. Arguments the model copies from
    the prompt (text to translate, a math expression) are never touched: no opener right before one, no closer
    or punctuation change right after one. The answer and GT do not depend on the prompt's wording."""
    lang, text = sample.lang, sample.user
    body, end = split_end(text)
    copied = [v for step in sample.steps for c in step.calls for k, v in c.args.items()
              if k in ("text", "expression")]
    free_start = not any(text.startswith(v) for v in copied)
    free_end = not any(body.endswith(v) for v in copied)
    if sample.wrap and free_start and rng.random() < OPENER_RATE:
        openers = OPENERS[lang]
        opener = rng.choice(openers["any"] + openers.get(prompt_shape(body, end, lang), []))
        body = open_with(opener, body, lang)
    elif lang == "en":
        body = upper_first(body)
    if sample.wrap and free_end and rng.random() < CLOSER_RATE:
        body, end = split_end(add_closer(rng, body, end, lang))
    text = body + end
    if free_end and rng.random() < PUNCT_RATE:
        text = vary_end(rng, text, lang)
    return text


# ==========================================================================================================
# Serialisation: Sample -> SFT / RL / eval record
# ==========================================================================================================

def offer_tools(rng, sample):
    """The tools a sample needs plus 0-3 others (no_tool: 1-4 random tools), shuffled."""
    needed = list(dict.fromkeys(sample.expect_tools))
    if not needed:
        names = rng.sample(TOOL_NAMES, rng.randint(1, 4))
        names += [n for n in sample.mention if n not in names]  # "你能查天气吗?" sees the weather tool
    else:
        others = [n for n in TOOL_NAMES if n not in needed]
        names = needed + rng.sample(others, rng.randint(0, min(3, len(others))))
    rng.shuffle(names)
    return names


def system_message(rng, tool_names):
    schemas = [TOOLS_BY_NAME[n] for n in tool_names]
    return {"role": "system", "content": rng.choice(SYSTEM_PROMPTS),
            "tools": json.dumps(schemas, ensure_ascii=False)}


def dialogue(rng, sample, thinking):
    """user, each tool-calling turn followed by its tool results, final answer (OpenAI message format)."""
    messages = [{"role": "user", "content": sample.user}]
    n_calls = 0
    for step in sample.steps:
        preface = rng.choice(PREFACES[step.kind][sample.lang]) if rng.random() < PREFACE_RATE else ""
        turn = {"role": "assistant", "content": step.say or preface, "tool_calls": []}
        results = []
        for c in step.calls:
            n_calls += 1
            call_id = f"call_{n_calls}"
            arguments = json.dumps(c.args, ensure_ascii=False)
            turn["tool_calls"].append({"id": call_id, "type": "function",
                                       "function": {"name": c.name, "arguments": arguments}})
            results.append({"role": "tool", "tool_call_id": call_id, "name": c.name,
                            "content": json.dumps(c.result, ensure_ascii=False)})
        if thinking:
            turn["reasoning_content"] = step.reasoning
        messages += [turn] + results
    final = {"role": "assistant", "content": sample.answer}
    if thinking:
        final["reasoning_content"] = sample.final_reasoning
    return messages + [final]


def sft_record(rng, sample):
    thinking = rng.random() < THINKING_RATE
    system = system_message(rng, offer_tools(rng, sample))
    return {"conversations": [system] + dialogue(rng, sample, thinking), "category": sample.category}


def rl_record(rng, sample):
    conversations = [system_message(rng, offer_tools(rng, sample)), {"role": "user", "content": sample.user},
                     {"role": "assistant", "content": sample.answer}]
    return {"conversations": conversations, "gt": sample.gt, "category": sample.category,
            "expect_tools": sample.expect_tools}


def eval_record(rng, sample, skill):
    """A held-out case; expect_calls are the reference's successful calls with their results (what a right
    answer asks, and what it gets back)."""
    calls = [{"name": c.name, "arguments": c.args, "result": c.result} for step in sample.steps for c in step.calls
             if "error" not in c.result]
    return {"prompt": sample.user, "tools": offer_tools(rng, sample), "gt": sample.gt,
            "expect_tools": sample.expect_tools, "category": sample.category, "skill": skill,
            "expect_calls": calls}


# ==========================================================================================================
# Building the files
# ==========================================================================================================

def category_plan(rng, n, weights):
    """Exactly n categories in the given proportions (largest remainders first), shuffled."""
    total = sum(weights.values())
    counts = {c: n * w // total for c, w in weights.items()}
    for c in sorted(weights, key=weights.get, reverse=True)[: n - sum(counts.values())]:
        counts[c] += 1
    plan = [c for c, k in counts.items() for _ in range(k)]
    rng.shuffle(plan)
    return plan


# --- typing noise: the same request, typed in a hurry ---------------------------------------------------------

NOISE_PUNCTUATION = re.compile(r"[.,](?!\d)|(?<!\d)[.,]|[!?;:'\"“”‘’，。！？；：、]")
NOISE_FULL_WIDTH = str.maketrans({**{str(d): chr(0xFF10 + d) for d in range(10)},
                                  **{c: chr(ord(c) + 0xFEE0) for c in ",.?!:;()%"}})


def _keep_words(sample) -> set:
    """Lower-cased words of the call arguments and the gt: a typo there would change the right call."""
    strings = [v for step in sample.steps for c in step.calls for v in c.args.values() if isinstance(v, str)]
    return {w.lower() for s in strings + list(sample.gt) for w in re.findall(r"[A-Za-z]+", s)}


def _misspell(text, sample, rng, drop: bool):
    keep = _keep_words(sample)
    words = [m for m in re.finditer(r"[A-Za-z]{4,}", text) if m.group().lower() not in keep]
    if not words:
        return text
    m = rng.choice(words)
    w, i = m.group(), rng.randrange(1, len(m.group()) - 2)
    typo = w[:i] + w[i + 1:] if drop else w[:i] + w[i + 1] + w[i] + w[i + 2:]
    return text[:m.start()] + typo + text[m.end():]


NOISE = {
    "lower_case": lambda text, sample, rng: text.lower(),
    "no_punctuation": lambda text, sample, rng: re.sub(r" {2,}", " ", NOISE_PUNCTUATION.sub("", text)).strip(),
    "swapped_letters": lambda text, sample, rng: _misspell(text, sample, rng, drop=False),
    "dropped_letter": lambda text, sample, rng: _misspell(text, sample, rng, drop=True),
    "full_width": lambda text, sample, rng: text.translate(NOISE_FULL_WIDTH),
}


def typing_noise(sample, rng) -> str:
    """The request as people type it in a hurry: one to three of NOISE's changes. Nothing the call needs
    changes: numbers keep their digits (full-width digits are the same digits), and the words of the call's
    arguments keep their letters."""
    text = sample.user
    for name in rng.sample(sorted(NOISE), rng.choice((1, 1, 2, 3))):
        text = NOISE[name](text, sample, rng)
    return text


def lead_in(sample, rng) -> str:
    """The request after a sentence of the user's situation (--lead_ins): "Just got off work, so tired. ..." """
    first = rng.choice(LEAD_INS[sample.lang])
    if sample.lang == "zh":
        return first + sample.user
    if first.endswith(","):  # "Between meetings, what's ..."
        return f"{first} {sample.user[0].lower()}{sample.user[1:]}"
    return f"{first} {sample.user}"


def build_split(ctx, n, weights, to_record, seen=None):
    """n (sample, record) rows; with `seen`, a repeated conversation is redrawn (keeps train/val disjoint)."""
    rows, natural = [], natural_prompts()
    for category in category_plan(ctx.rng, n, weights):
        for _ in range(1000):
            sample = make_sample(ctx, category, ctx.rng.choice(LANGS))
            if ctx.lead_ins and ctx.rng.random() < ctx.lead_ins:
                sample.user = lead_in(sample, ctx.rng)
            if ctx.typing_noise and ctx.rng.random() < ctx.typing_noise:
                sample.user = typing_noise(sample, ctx.rng)
            if fold(sample.user) in natural or is_default_test_prompt(sample.user):  # never one of these
                continue
            record = to_record(ctx.rng, sample)
            key = json.dumps(record["conversations"], ensure_ascii=False)
            if seen is None or key not in seen:
                break
        else:
            raise RuntimeError(f"could not draw a new {category} conversation")
        if seen is not None:
            seen.add(key)
        rows.append((sample, record))
    return rows


# the skills the held-out sets measure, each with the makers of its cases; no_tool is added by eval_jobs
EVAL_SKILLS = {
    "math": [make_math_single], "unit": [make_unit_single],
    "weather_time": [make_weather_single, make_time_single],
    "exchange_translate": [make_exchange_single, make_translate_single],
    "parallel": list(MAKERS["parallel"].values()), "chained": list(MAKERS["chained"].values()),
    "correction": list(MAKERS["correction"].values()),
}


def eval_jobs(rng, phrasing, per_skill):
    """(skill, maker, lang) for every case of one held-out set: each skill's makers in turn, both languages.
    no_tool: every eval question ("eval"), per_skill SFT questions of the first kinds ("sft"), or as many RL
    questions of every kind as the held-out set has ("rl": the development set)."""
    jobs = []
    for skill, makers in EVAL_SKILLS.items():
        jobs += [(skill, makers[i % len(makers)], LANGS[i // len(makers) % 2]) for i in range(per_skill)]
    for lang in LANGS:
        if phrasing == "eval":
            questions = no_tool_eval_questions(lang)
        elif phrasing == "rl":
            pairs = [p for kind in NO_TOOL_SPLITS["rl"].values() for p in kind[lang]]
            questions = [p[0] for p in rng.sample(pairs, len(no_tool_eval_questions(lang)))]
        else:
            pairs = [p for kind in SEEN_NO_TOOL_KINDS for p in NO_TOOL_SPLITS[phrasing][kind][lang]]
            questions = [p[0] for p in rng.sample(pairs, per_skill // 2)]
        jobs += [("no_tool", functools.partial(make_no_tool, question=q), lang) for q in questions]
    return jobs


def build_eval(ctx, jobs):
    """One case per job; a prompt drawn twice is redrawn."""
    rows, prompts = [], set()
    for skill, maker, lang in jobs:
        for _ in range(1000):
            sample = maker(ctx, lang)
            if sample.user not in prompts:
                break
        else:
            raise RuntimeError(f"could not draw a new {skill} eval prompt ({ctx.phrasing} phrasings)")
        prompts.add(sample.user)
        rows.append((sample, eval_record(ctx.rng, sample, skill)))
    return rows


# ==========================================================================================================
# Checks
# ==========================================================================================================

class DataCheckError(ValueError):
    """Generated data that breaks a promise of the data; the message names the table, template or sample."""


def check_conversation(conversations):
    """Every tool message equals what execute_tool returns for the call with its id."""
    calls = {}
    for m in conversations:
        for tc in m.get("tool_calls", []):
            calls[tc["id"]] = tc["function"]
        if m["role"] == "tool":
            f = calls[m["tool_call_id"]]
            expected = json.dumps(execute_tool(f["name"], json.loads(f["arguments"])), ensure_ascii=False)
            if m["name"] != f["name"] or m["content"] != expected:
                raise DataCheckError(f"tool message {m} does not match execute_tool: {expected}")


def check_sample(sample, answer, offered):
    for step in sample.steps:
        for c in step.calls:
            expected = json.dumps(execute_tool(c.name, c.args), ensure_ascii=False)
            if json.dumps(c.result, ensure_ascii=False) != expected:
                raise DataCheckError(f"{sample.user!r}: result of {c.name}({c.args}) is not {expected}")
    missing = [g for g in sample.gt if g not in answer]
    if missing:
        raise DataCheckError(f"{sample.user!r}: the answer {answer!r} does not quote {missing}")
    if not set(sample.expect_tools) <= set(offered):
        raise DataCheckError(f"{sample.user!r}: needs {sample.expect_tools}, offered {offered}")
    errors = ["error" in c.result for step in sample.steps for c in step.calls]
    expected = {"correction": [True, False], "error": [True]}.get(sample.category, [False] * len(errors))
    if errors != expected:
        raise DataCheckError(f"{sample.user!r}: {sample.category} calls fail as {errors}, not {expected}")
    if is_default_test_prompt(sample.user):
        raise DataCheckError(f"{sample.user!r} is a default test prompt")


def is_default_test_prompt(text) -> bool:
    """256 x 37 or 100 km -> miles, the prompts other scripts test a checkpoint with, in any wording."""
    return bool(re.search(r"256\D{1,12}37(?!\d)", text) or
                re.search(r"(?<![\d.])100\s*(km|公里|千米|kilometers)", text))


def normalized(text):
    """Lower case, letters, digits and CJK only: "What's the time?" -> "whatsthetime"."""
    return re.sub(r"[\W_]+", "", text.lower())


PHRASING_SPLITS = ("sft", "rl", "eval")


def phrasing_owners() -> dict:
    """normalized phrasing -> {(split, where)}: every user template and no_tool question of every split."""
    owners = {}
    for name, table in TEMPLATE_TABLES.items():
        for split in PHRASING_SPLITS:
            for lang in LANGS:
                extra = [t for kind in ("framed", "quantity")
                         for t in table.get(f"{split}_{kind}", {}).get(lang, [])]
                for t in table[split][lang] + extra:
                    owners.setdefault(normalized(t), set()).add((split, f"template table {name} ({lang}): {t!r}"))
    for split in ("sft", "rl"):
        for kind, pairs in NO_TOOL_SPLITS[split].items():
            for lang in LANGS:
                for p in pairs[lang]:
                    owners.setdefault(normalized(p[0]), set()).add((split, f"no_tool {kind} ({lang}): {p[0]!r}"))
        for lang in LANGS:
            for p in NO_TOOL_WORD_SPLITS[split][lang]:
                owners.setdefault(normalized(p[0]), set()).add((split, f"no_tool word ({lang}): {p[0]!r}"))
            for p in NO_TOOL_ENTITY_SPLITS[split][lang]:
                owners.setdefault(normalized(p[0]), set()).add((split, f"no_tool entity ({lang}): {p[0]!r}"))
            for p in NO_TOOL_FRAME_SPLITS[split][lang]:
                owners.setdefault(normalized(p[0]), set()).add((split, f"no_tool frames ({lang}): {p[0]!r}"))
    for lang in LANGS:
        for q in no_tool_eval_questions(lang):
            owners.setdefault(normalized(q), set()).add(("eval", f"no_tool eval ({lang}): {q!r}"))
    return owners


def check_phrasings():
    """The three phrasing splits share no phrasing (a template or a no_tool question in two of them is an
    error that names both), and no opener or closer has a word that occurs in an eval prompt (Chinese: as a
    substring; English: as whole words)."""
    for owners in phrasing_owners().values():
        if len({split for split, _ in owners}) > 1:
            where = "; ".join(f"{split}: {w}" for split, w in sorted(owners))
            raise DataCheckError(f"one phrasing in two phrasing splits: {where}")
    for lang in LANGS:
        unknown = [f for f in SHARED_FRAMES[lang] if f not in NO_TOOL_TOPIC_TEMPLATES[lang]]
        if unknown:  # its split would be undefined: a frame takes the split of its topic template
            raise DataCheckError(f"SHARED_FRAMES ({lang}): {unknown} not in NO_TOOL_TOPIC_TEMPLATES")
    questions = [e[0] for split in NO_TOOL_SPLITS.values() for kinds in split.values() for lang in LANGS
                 for e in kinds[lang]]
    questions += [e[0] for extra in (NO_TOOL_WORD_SPLITS, NO_TOOL_ENTITY_SPLITS, NO_TOOL_FRAME_SPLITS)
                  for split in extra.values()
                  for lang in LANGS for e in split[lang]]
    twice = sorted(q for q, n in Counter(questions).items() if n > 1)
    if twice:
        raise DataCheckError(f"no_tool questions listed twice: {twice}")
    for lang in LANGS:  # a train topic is never an eval one, in any template
        held_out = {normalized(t) for t in NO_TOOL_EVAL_TOPICS[lang]}
        topics = NO_TOOL_TOPICS[lang] + NO_TOOL_WORD_TOPICS[lang] + MORE_TOPICS[lang]
        shared = [t for t, *_ in topics if normalized(t) in held_out]
        if shared:
            raise DataCheckError(f"no_tool topics ({lang}) that are also eval topics: {shared}")
    eval_texts = [t for table in TEMPLATE_TABLES.values() for lang in LANGS for t in table["eval"][lang]]
    eval_lower = [t.lower() for lang in LANGS for t in no_tool_eval_questions(lang)] + \
        [t.lower() for t in eval_texts]
    for lang in LANGS:
        words = [w for kinds in (OPENERS[lang], CLOSERS[lang]) for ws in kinds.values() for w in ws]
        for w in words:
            core = normalized(w) if lang == "zh" else " ".join(re.findall(r"[\w']+", w.lower()))
            pattern = re.escape(core) if lang == "zh" else rf"\b{re.escape(core)}\b"
            hits = [t for t in eval_lower if re.search(pattern, t)]
            if hits:
                raise DataCheckError(f"train opener/closer {w!r} ({lang}) occurs in eval prompts {hits[:3]}")


def offered_names(conversations):
    return [t["function"]["name"] for t in json.loads(conversations[0]["tools"])]


def run_checks(sft, val, rl, evals, seen_evals, dev=()):
    """Every check of the built rows; `rl` holds every RL row (the shipped sample and the pool)."""
    natural = natural_prompts()  # the hand-written test set (dataset/eval_natural.jsonl): never a prompt here
    for sample, _ in [row for rows in (sft, val, rl, evals, seen_evals, dev) for row in rows]:
        if fold(sample.user) in natural:
            raise DataCheckError(f"prompt {sample.user!r} is a request of the natural test set "
                                 "(dataset/eval_natural.jsonl); draw another")
    for rows in (sft, val):
        for sample, record in rows:
            conv = record["conversations"]
            check_conversation(conv)
            check_sample(sample, conv[-1]["content"], offered_names(conv))
            thinking = "reasoning_content" in conv[-1]
            if not all(("reasoning_content" in m) == thinking for m in conv if m["role"] == "assistant"):
                raise DataCheckError(f"{sample.user!r}: some assistant turns think and some do not")
    for sample, record in rl:
        conv = record["conversations"]
        check_sample(sample, conv[-1]["content"], offered_names(conv))
    for sample, record in evals + seen_evals + list(dev):
        check_sample(sample, sample.answer, record["tools"])
    sft_prompts = {s.user for rows in (sft, val) for s, _ in rows}
    for sample, _ in rl:  # RL learns on phrasings SFT never fit
        if sample.user in sft_prompts:
            raise DataCheckError(f"RL prompt {sample.user!r} is also an SFT prompt")
    train = [s for rows in (sft, val, rl) for s, _ in rows]
    train_prompts = {s.user for s in train}
    train_values = {str(v) for s in train for v in s.values}
    for sample, _ in evals:
        if sample.user in train_prompts:
            raise DataCheckError(f"eval prompt {sample.user!r} is also a train prompt")
    for sample, _ in evals + seen_evals:
        shared = [v for v in sample.values if str(v) in train_values]
        if shared:
            raise DataCheckError(f"eval prompt {sample.user!r}: the numbers {shared} also occur in train prompts")
    held_out = {s.user for s, _ in evals + seen_evals}
    for sample, _ in dev:  # RL phrasings: never an SFT or a held-out prompt
        if sample.user in sft_prompts or sample.user in held_out:
            raise DataCheckError(f"development prompt {sample.user!r} is also an SFT or held-out prompt")
    leaked = {s.category for s, _ in rl + evals + seen_evals + list(dev)} & {"error"}
    if leaked:
        raise DataCheckError("error conversations are SFT only")
    check_phrasings()


# ==========================================================================================================
# Main
# ==========================================================================================================

def write_jsonl(path, records):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def main(argv=None):
    args = parse_args(argv)
    check_phrasings()  # before anything is drawn: a shared phrasing is a table error, not a data error

    def rng(name):  # one random stream per file, so that the size of one file never changes another
        return random.Random(f"{args.seed}:{name}")

    wanted = set(args.only or FILES)
    eval_rng, seen_rng, val_rng = rng("eval"), rng("eval_seen"), rng("sft_val")
    evals = build_eval(Ctx(eval_rng, "eval", "eval"), eval_jobs(eval_rng, "eval", EVAL_PER_SKILL))
    seen_evals = build_eval(Ctx(seen_rng, "sft", "eval"), eval_jobs(seen_rng, "sft", SEEN_PER_SKILL))
    dev_rng = rng("eval_dev")
    dev = build_eval(Ctx(dev_rng, "rl", "train"), eval_jobs(dev_rng, "rl", EVAL_PER_SKILL)) \
        if "eval_toolcall_dev.jsonl" in wanted else []
    seen, val, sft, rl, pool = set(), [], [], [], []
    q, say, word, most = args.quantity_rate, args.state_numbers, bool(args.word_topics), args.max_count
    # the request grammar's layers, SFT and RL alike
    layers = dict(word_topics=word, entity_topics=bool(args.entity_topics),
                  no_tool_frames=bool(args.no_tool_frames), typing_noise=args.typing_noise,
                  math_grammar=args.math_grammar, unit_grammar=args.unit_grammar, lead_ins=args.lead_ins,
                  chain_shapes=bool(args.chain_shapes), parallel_shapes=bool(args.parallel_shapes),
                  currency_grammar=args.currency_grammar)
    sft_weights = dict(SFT_WEIGHTS, no_tool=args.no_tool_weight)
    rl_weights = dict(RL_WEIGHTS, no_tool=args.no_tool_weight)
    if wanted & {"sft_agent.jsonl", "sft_agent_val.jsonl"}:  # val first: SFT redraws what val holds
        val = build_split(Ctx(val_rng, "sft", "train", q, say, max_count=most, **layers), args.n_sft_val,
                          sft_weights, sft_record, seen)
        sft = build_split(Ctx(rng("sft"), "sft", "train", q, say, max_count=most, **layers), args.n_sft,
                          sft_weights, sft_record, seen)
        if args.extra_math:  # more calculator requests on top: the trainer's sampler mixes them in
            extra = dict(layers, math_grammar=args.extra_math_grammar)
            sft += build_split(Ctx(rng("sft_math"), "sft", "train", q, say, max_count=most, **extra),
                               round(args.extra_math * args.n_sft), {"math": 1}, sft_record, seen)
    if "agent_rl.jsonl" in wanted:
        rl = build_split(Ctx(rng("rl"), "rl", "train", **layers), args.n_rl, rl_weights, rl_record)
    if "agent_rl_pool.jsonl" in wanted:
        pool = build_split(Ctx(rng("rl_pool"), "rl", "train", **layers), args.n_rl_pool, rl_weights, rl_record)
    run_checks(sft, val, rl + pool, evals, seen_evals, dev)

    os.makedirs(args.out_dir, exist_ok=True)
    files = {"sft_agent.jsonl": sft, "sft_agent_val.jsonl": val, "agent_rl.jsonl": rl,
             "agent_rl_pool.jsonl": pool, "eval_toolcall.jsonl": evals, "eval_toolcall_seen.jsonl": seen_evals,
             "eval_toolcall_dev.jsonl": dev}
    files = {name: rows for name, rows in files.items() if name in wanted}
    categories = list(SFT_WEIGHTS)
    print(f"{'file':<26}" + "".join(f"{c:>11}" for c in categories) + f"{'total':>8}{'thinking':>10}")
    for name, rows in files.items():
        write_jsonl(os.path.join(args.out_dir, name), [r for _, r in rows])
        counts = Counter(s.category for s, _ in rows)
        thinking = sum("reasoning_content" in r.get("conversations", [{}])[-1] for _, r in rows)
        cells = "".join(f"{counts[c]:>11}" for c in categories)
        print(f"{name:<26}{cells}{len(rows):>8}{thinking:>10}")
    print(f"checks passed; wrote {len(files)} files to {args.out_dir}")


if __name__ == "__main__":
    main()
