"""
How people write a calculation: the calculator's request grammar for the SFT and RL data
(`scripts/make_agent_data.py --math_grammar R` draws that share of calculator requests from it; the shipped
data has 0.3).

A request is a MathRequest: what the user types, the expression the call carries, and the numbers typed (the
held-out pools are split on them: `draw` keeps a request's numbers in its pool). It composes
    numbers    1 to 9 digits, decimals, negatives, thousands separators, Chinese numerals (cn2an) and English
               number words (num2words) for the smaller ones
    operators  + - − × x * ÷ / ^ ** and their words (加 减去 乘以 除以; plus, minus, times, divided by, ...)
    shapes     2 to 4 operands, with parentheses (around the first two, or both pairs of four); powers
               (squared, cubed, the n-th power, 平方, 立方, 次方), two powers combined; percent of (15% of
               240, 240的百分之十五), a percentage added or taken off; half, twice, triple; a fraction of
               (two thirds of 450, 450的三分之一); square roots
    problems   word problems: a price and a count, a total split among people, the sum or the average of
               listed scores, a discount, the price of one of several
Word problems are whole requests from MATH_WORD_Q (dataset/agent_phrasings.py), whose phrasings are split like
every other table's; the other shapes fill a MATH_Q template's {expr}.
"""
from dataclasses import dataclass

import cn2an
from num2words import num2words


@dataclass
class MathRequest:
    text: str  # what the user types: a MATH_Q template's {expr}, or (whole) the request itself
    expression: str  # what the calculate_math call carries
    numbers: list  # the numbers the user typed, as values
    whole: bool = False  # a word problem: text is the whole request


# --- numbers -----------------------------------------------------------------------------------------------

DIGIT_WEIGHTS = {1: 8, 2: 22, 3: 24, 4: 16, 5: 10, 6: 8, 7: 5, 8: 4, 9: 3}  # how many digits an operand has
SPELLED_MAX = 100_000  # numbers people spell out in words stay below this


def integer(rng, max_digits: int = 9, min_value: int = 2) -> int:
    sizes = list(DIGIT_WEIGHTS)[:max_digits]
    digits = rng.choices(sizes, weights=[DIGIT_WEIGHTS[d] for d in sizes])[0]
    return max(min_value, rng.randint(10 ** (digits - 1), 10 ** digits - 1))


def decimal(rng) -> float:
    """A number with one or two decimals, as prices and measures are written: 3.5, 12.75, 0.8."""
    x = round(rng.uniform(0.1, 999), rng.choice([1, 1, 2]))
    return int(x) if x == int(x) else x


def chinese_numeral(rng, x) -> str:
    """3.5 -> 三点五, 2500 -> 两千五百 (people say 两 before 千 and 万), 12 -> 十二."""
    text = cn2an.an2cn(x)
    if text.startswith("二") and len(text) > 1 and text[1] in "千万" and rng.random() < 0.7:
        text = "两" + text[1:]
    return text


def english_words(rng, x) -> str:
    """2500 -> two thousand five hundred (num2words' comma left out), now and then without "and";
    -12 -> minus twelve or negative twelve."""
    text = num2words(x).replace(",", "")
    if text.startswith("minus ") and rng.random() < 0.5:
        text = "negative " + text[len("minus "):]
    return text.replace(" and ", " ") if rng.random() < 0.5 else text


def spell(rng, x, lang: str, words: float = 0.25) -> str:
    """How a user types the number x: digits (1,250 now and then for 1250) or, at `words`, in words."""
    if abs(x) < SPELLED_MAX and rng.random() < words:
        return chinese_numeral(rng, x) if lang == "zh" else english_words(rng, x)
    if isinstance(x, int) and abs(x) >= 1000 and rng.random() < 0.3:
        return f"{x:,}"
    return str(x)


# --- operators ---------------------------------------------------------------------------------------------

SYMBOLS = {"+": ["+"], "-": ["-", "−"], "*": ["*", "×", "x", "·"], "/": ["/", "÷"]}
WORDS = {
    "zh": {"+": ["加", "加上"], "-": ["减", "减去"], "*": ["乘以", "乘"], "/": ["除以"]},
    "en": {"+": ["plus", "and"], "-": ["minus", "take away", "less"], "*": ["times", "multiplied by"],
           "/": ["divided by", "over"]},
}


def operator_text(rng, op: str, lang: str, in_words: bool) -> str:
    if in_words:
        word = rng.choice(WORDS[lang][op])
        return word if lang == "zh" and rng.random() < 0.6 else f" {word} "
    sym = rng.choice(SYMBOLS[op])
    return f" {sym} " if rng.random() < 0.4 else sym


def signed(x) -> str:
    """A negative operand in the expression, in parentheses: 5*(-3)."""
    return f"({x})" if x < 0 else str(x)


# --- shapes: the text fills MATH_Q's {expr} ---------------------------------------------------------------

def arithmetic(rng, draw, lang: str) -> MathRequest:
    """2 to 4 operands; in words only with two (a chain of words has no parentheses to read)."""
    n = rng.choices([2, 3, 4], weights=[6, 3, 1])[0]
    ops = [rng.choice("+-*/") for _ in range(n - 1)]
    if ops.count("/") > 1:  # one division, made exact below
        ops = [op if op != "/" or k == ops.index("/") else "*" for k, op in enumerate(ops)]

    def make():
        values = []
        for k in range(n):
            after = ops[k - 1] if k else None
            if after == "*" or (k + 1 < n and ops[k] == "*"):
                x = integer(rng, max_digits=4)  # products stay within what a user asks
            elif rng.random() < 0.15:
                x = decimal(rng)
            else:
                x = integer(rng)
            if k == 0 and rng.random() < 0.1:
                x = -x
            values.append(x)
        for k, op in enumerate(ops):  # an exact division: the dividend a multiple of a small divisor
            if op == "/":
                values[k + 1] = rng.randint(2, 99)
                values[k] = values[k + 1] * integer(rng, max_digits=5)
        return tuple(values)

    values = draw(make)
    if n == 2 and rng.random() < 0.4:  # in words, numbers maybe spelled out too
        a, b = (spell(rng, v, lang) for v in values)
        return MathRequest(f"{a}{operator_text(rng, ops[0], lang, True)}{b}".strip(),
                           f"{values[0]}{ops[0]}{signed(values[1])}", list(values))
    shown = [spell(rng, v, lang, words=0.0) for v in values]
    expr = [str(values[0])] + [signed(v) for v in values[1:]]
    pairs = [(0, 1), (2, 3)] if n == 4 and rng.random() < 0.5 else [(0, 1)]  # around both pairs of four
    if n >= 3 and rng.random() < 0.4:  # parentheses around the first two (and the last two)
        for i, j in pairs:
            shown[i], shown[j] = "(" + shown[i], shown[j] + ")"
            expr[i], expr[j] = "(" + expr[i], expr[j] + ")"
    text, expression = shown[0], expr[0]
    for op, s, e in zip(ops, shown[1:], expr[1:]):
        text += operator_text(rng, op, lang, False) + s
        expression += op + e
    return MathRequest(text, expression, list(values))


POWER_TEXT = {
    "zh": {2: ["{a}的平方", "{a}平方"], 3: ["{a}的立方", "{a}立方"], "n": ["{a}的{n}次方", "{a}的{n}次幂"]},
    "en": {2: ["{a} squared", "the square of {a}"], 3: ["{a} cubed", "the cube of {a}"],
           "n": ["{a} to the power of {n}", "{a} to the {n}th power", "{a} raised to {n}"]},
}


def power(rng, draw, lang: str) -> MathRequest:
    n = rng.choice([2, 2, 3, rng.randint(4, 9)])
    (a,) = draw(lambda: (integer(rng, max_digits=3 if n <= 3 else 1),))
    if rng.random() < 0.3:
        text = f"{a}{rng.choice(['^', '**', ' ^ '])}{n}"
    else:
        forms = POWER_TEXT[lang][n if n <= 3 else "n"]
        text = rng.choice(forms).format(a=spell(rng, a, lang), n=spell(rng, n, lang, words=0.5))
    return MathRequest(text, f"{a}**{n}", [a])


def percent_of(rng, draw, lang: str) -> MathRequest:
    p, a = draw(lambda: (rng.choice([5, 10, 12, 15, 20, 25, 30, 35, 40, 45, 60, 75, 80, 8, 3, 2.5, 12.5]),
                         integer(rng, max_digits=6) * rng.choice([1, 4, 20])))
    shown = spell(rng, a, lang, words=0.1)
    if lang == "zh":
        pct = f"百分之{chinese_numeral(rng, p)}" if rng.random() < 0.4 else f"{p}%"
        text = rng.choice([f"{shown}的{pct}", f"{shown}乘以{pct}"])
    else:
        pct = f"{p} percent" if rng.random() < 0.3 else f"{p}%"
        text = rng.choice([f"{pct} of {shown}", f"{shown} times {pct}"])
    return MathRequest(text, f"{a}*{p}/100", [p, a])


def powers_combined(rng, draw, lang: str) -> MathRequest:
    """Two powers added or subtracted: 3 cubed plus 4 squared, 3的4次方减去2的5次方."""
    m, k = (rng.choice([2, 3, rng.randint(4, 6)]) for _ in range(2))
    op = rng.choice("+-")
    a, b = draw(lambda: tuple(integer(rng, max_digits=2 if e <= 3 else 1) for e in (m, k)))
    parts = []
    for x, e in ((a, m), (b, k)):
        form = rng.choice(POWER_TEXT[lang][e if e <= 3 else "n"] + [f"{{a}}^{e}"])
        parts.append(form.format(a=spell(rng, x, lang, words=0.2), n=spell(rng, e, lang, words=0.5)))
    return MathRequest(parts[0] + operator_text(rng, op, lang, rng.random() < 0.7) + parts[1],
                       f"{a}**{m}{op}{b}**{k}", [a, b])


PERCENT_CHANGE = {
    "zh": {"+": ["{a}加上{pct}", "{a}再加{pct}", "{a}上浮{pct}"],
           "-": ["{a}减去{pct}", "{a}少{pct}", "{a}下浮{pct}"]},
    "en": {"+": ["{a} plus {pct}", "{a} with {pct} added", "{a} increased by {pct}"],
           "-": ["{a} minus {pct}", "{a} less {pct}", "{a} reduced by {pct}"]},
}


def percent_change(rng, draw, lang: str) -> MathRequest:
    """A percentage added or taken off: 1,280 plus 13% -> 1280*(100+13)/100."""
    op = rng.choice("+-")
    p, a = draw(lambda: (rng.choice([3, 5, 6, 8, 10, 13, 15, 20, 25, 30, 40]), integer(rng, max_digits=6)))
    if lang == "zh":
        pct = f"百分之{chinese_numeral(rng, p)}" if rng.random() < 0.4 else f"{p}%"
    else:
        pct = f"{p} percent" if rng.random() < 0.3 else f"{p}%"
    text = rng.choice(PERCENT_CHANGE[lang][op]).format(a=spell(rng, a, lang, words=0.1), pct=pct)
    return MathRequest(text, f"{a}*(100{op}{p})/100", [p, a])


FRACTIONS = {(1, 2): ("one half", "二分之一"), (1, 3): ("a third", "三分之一"),
             (2, 3): ("two thirds", "三分之二"), (1, 4): ("a quarter", "四分之一"),
             (3, 4): ("three quarters", "四分之三"), (1, 5): ("a fifth", "五分之一"),
             (2, 5): ("two fifths", "五分之二"), (3, 5): ("three fifths", "五分之三"),
             (1, 8): ("an eighth", "八分之一"), (3, 8): ("three eighths", "八分之三"), (1, 10): ("a tenth", "十分之一")}


def fraction_of(rng, draw, lang: str) -> MathRequest:
    """A fraction of a number: two thirds of 450, 450的三分之一, 3/4 of 1200 -> 450*2/3."""
    (n, d), (en, zh) = rng.choice(list(FRACTIONS.items()))
    (a,) = draw(lambda: (d * integer(rng, max_digits=5),))
    shown = spell(rng, a, lang, words=0.15)
    frac = f"{n}/{d}" if rng.random() < 0.3 else (zh if lang == "zh" else en)
    text = rng.choice([f"{shown}的{frac}", f"{frac}的{shown}"]) if lang == "zh" else f"{frac} of {shown}"
    return MathRequest(text, f"{a}*{n}/{d}", [a])


MULTIPLES = {
    "zh": {("/", 2): ["{a}的一半"], ("*", 2): ["{a}的两倍", "{a}的2倍"], ("*", 3): ["{a}的三倍", "{a}的3倍"]},
    "en": {("/", 2): ["half of {a}", "half {a}"], ("*", 2): ["twice {a}", "double {a}"],
           ("*", 3): ["triple {a}", "three times {a}"]},
}


def multiple(rng, draw, lang: str) -> MathRequest:
    (op, k), forms = rng.choice(list(MULTIPLES[lang].items()))
    (a,) = draw(lambda: (integer(rng, max_digits=6) * (2 if op == "/" else 1),))
    return MathRequest(rng.choice(forms).format(a=spell(rng, a, lang)), f"{a}{op}{k}", [a])


def square_root(rng, draw, lang: str) -> MathRequest:
    (a,) = draw(lambda: (rng.randint(2, 999) ** 2,))
    text = rng.choice(["√{a}", f"{a}的平方根", f"根号{a}"] if lang == "zh" else
                      ["√{a}", f"the square root of {a}", f"sqrt {a}"]).format(a=a)
    return MathRequest(text, f"sqrt({a})", [a])


SHAPES = {arithmetic: 6, power: 2, powers_combined: 1, percent_of: 2, percent_change: 1, multiple: 2,
          fraction_of: 1, square_root: 1}


def expression_request(rng, draw, lang: str) -> MathRequest:
    shape = rng.choices(list(SHAPES), weights=list(SHAPES.values()))[0]
    return shape(rng, draw, lang)


# --- word problems: whole requests from MATH_WORD_Q --------------------------------------------------------

def word_problem(rng, draw, lang: str, templates: dict) -> MathRequest:
    """One of MATH_WORD_Q's kinds; `templates`: kind -> this split's templates in `lang`."""
    kind = rng.choice(sorted(k for k, t in templates.items() if t))
    template = rng.choice(templates[kind])
    if kind == "price_count":
        price, count = draw(lambda: (rng.choice([decimal(rng), integer(rng, max_digits=4)]),
                                     rng.randint(2, 60)))
        values, expression = {"price": price, "count": count}, f"{price}*{count}"
    elif kind == "split":
        def make():
            people = rng.randint(2, 12)
            return people, people * integer(rng, max_digits=5)
        people, total = draw(make)
        values, expression = {"total": total, "people": people}, f"{total}/{people}"
    elif kind in ("sum", "average"):
        n = rng.randint(3, 5)
        scores = draw(lambda: tuple(rng.randint(40, 100) for _ in range(n)))
        listed = (", " if lang == "en" else "、").join(map(str, scores[:-1])) + \
            (" and " if lang == "en" else "和") + str(scores[-1])
        values = {"scores": listed, "n": n}
        expression = "+".join(map(str, scores))
        if kind == "average":
            expression = f"({expression})/{n}"
        return MathRequest(template.format(**values), expression, list(scores), whole=True)
    elif kind == "discount":  # 20% off, or in 折: 打八折 keeps 8 tenths, 打85折 85 hundredths
        off, price, keep = draw(lambda: (o := rng.choice([10, 15, 20, 25, 30, 40, 50]),
                                          integer(rng, max_digits=4) * 2, 100 - o))
        if "{zhe}" in template:
            tenths = keep % 10 == 0
            values = {"price": price, "zhe": chinese_numeral(rng, keep // 10) if tenths else str(keep)}
            expression = f"{price}*{keep // 10}/10" if tenths else f"{price}*{keep}/100"
            numbers = [price] if tenths else [price, keep]
        else:
            values, numbers = {"price": price, "off": off}, [price, off]
            expression = f"{price}*(100-{off})/100"
        return MathRequest(template.format(**values), expression, numbers, whole=True)
    else:  # per_unit
        def make():
            count = rng.randint(2, 24)
            return count, count * integer(rng, max_digits=4)
        count, total = draw(make)
        values, expression = {"total": total, "count": count}, f"{total}/{count}"
    numbers = [v for k, v in values.items() if k in ("price", "count", "total", "people")]
    return MathRequest(template.format(**values), expression, numbers, whole=True)
