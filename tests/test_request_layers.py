"""The request grammar's unit words and lead-ins (make_agent_data.py --unit_grammar, --lead_ins): a unit
request typed as people do still carries the value the user means and the units they named; a lead-in sentence
names nothing that could change the right call; neither touches the held-out sets."""
import json
import random
import re

import cn2an
import pytest

import scripts.make_agent_data as data
import scripts.robustness as robustness
from dataset.agent_phrasings import CITY_NAMES, CURRENCY_NAMES, LEAD_INS, UNIT_NAMES, UNIT_SPELLINGS


def spoken(lang, seed, n=400):
    ctx = data.Ctx(random.Random(seed), "sft", "train", unit_grammar=1.0)
    return [(src, dst, *data.spoken_unit(ctx, lang, src, dst))
            for src, dst in random.Random(seed).choices(data.UNIT_PAIRS, k=n)]


def typed_value(text, lang, unit_words):
    """The number the request gives, read back: digits or the Chinese numeral before the unit's word (None for
    English number words, checked below), with its sign from -, −, minus, negative, 零下, 负."""
    negative = re.search(r"(?<![\dA-Za-z.])[-−]\s*\d|\bminus\b|\bnegative\b|零下|负", text) is not None
    digits = re.search(r"\d[\d,]*(?:\.\d+)?", text)
    if digits:
        value = float(digits.group().replace(",", ""))
    elif lang == "zh":
        before = "|".join(re.escape(w) for w in unit_words)
        numeral = re.search(rf"([零一二两三四五六七八九十百千万点]+) ?(?:{before})", text.replace("零下", ""))
        value = float(cn2an.cn2an(numeral.group(1), "smart"))
    else:
        return None  # English number words: checked by test_english_words_carry_the_value
    return -value if negative else value


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_spoken_conversion_carries_its_value_and_units(lang):
    words = {u: set(UNIT_SPELLINGS[u][0 if lang == "zh" else 1]) for u in UNIT_SPELLINGS}
    for src, dst, value, text in spoken(lang, 3):
        read = typed_value(text, lang, words[src])
        if read is not None:
            assert read == value, (text, value)
        assert any(w in text for w in words[src]) and any(w in text for w in words[dst]), (text, src, dst)


def test_english_words_carry_the_value():
    from num2words import num2words
    for src, dst, value, text in spoken("en", 5, n=600):
        if not re.search(r"\d", text):
            assert num2words(abs(value)).replace(",", "").replace(" and ", " ").split()[0] in text, text


def test_the_forms_people_type_all_occur():
    en = " || ".join(t for *_, t in spoken("en", 7, n=1500))
    zh = " || ".join(t for *_, t in spoken("zh", 7, n=1500))
    for form in ["ft", "lbs", "kilos", "metres", "kilometres", "minus ", "negative ", "centigrade", "mi"]:
        assert form in en, form
    assert re.search(r"\d(ft|kg|km|lbs|mi|m|C|F)\b", en), "a short unit glued to its number"
    assert re.search(r"\b(one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty|sixty|seventy|"
                     r"eighty|ninety) ", en), "a value in English words"
    for form in ["零下", "负", "℃", "呎", "公尺"]:
        assert form in zh, form
    assert re.search(r"[一二两三四五六七八九十]+[百千]", zh), "a value as a Chinese numeral"


def test_below_zero_temperatures_are_drawn():
    temps = [(src, value) for src, dst, value, _ in spoken("en", 11, n=2000) if src in ("celsius", "fahrenheit")]
    assert sum(v < 0 for _, v in temps) > len(temps) / 4


def test_lead_ins_name_nothing_a_call_needs_and_are_not_the_suites():
    names = {n for zh, en in CITY_NAMES.values() for n in (zh, en)}
    names |= {n for zh, en in CURRENCY_NAMES.values() for n in (zh, en)}
    names |= {w for zh, en in UNIT_NAMES.values() for w in zh + en} | {"USD", "EUR", "GBP", "JPY", "CNY", "AUD"}
    for lang in ("zh", "en"):
        for sentence in LEAD_INS[lang]:
            assert not re.search(r"\d", sentence), sentence
            assert not [n for n in names if n.lower() in sentence.lower().split() or
                        (lang == "zh" and len(n) > 1 and n in sentence)], sentence
        assert not set(LEAD_INS[lang]) & set(robustness.LEAD_INS[lang]), "the robustness suite's lead-ins"


def test_lead_in_keeps_the_request():
    sample = data.make_sample(data.Ctx(random.Random(0), "sft", "train"), "single", "en")
    for seed in range(20):
        text = data.lead_in(sample, random.Random(seed))
        assert text.lower().endswith(sample.user.lower()), (text, sample.user)
        assert any(text.startswith(s) for s in LEAD_INS["en"])


def test_the_layers_reach_train_requests_and_the_held_out_sets_never_change(tmp_path):
    """At 1 (typing noise off, so the lead-ins keep their letters), every SFT request has a lead-in and the unit
    requests their spoken forms; the held-out sets stay byte for byte."""
    out = tmp_path / "u"
    data.main(["--out_dir", str(out), "--unit_grammar", "1", "--lead_ins", "1", "--typing_noise", "0",
               "--n_sft", "400", "--n_sft_val", "10", "--n_rl", "100", "--n_rl_pool", "20"])
    for name in ("eval_toolcall.jsonl", "eval_toolcall_seen.jsonl", "eval_toolcall_dev.jsonl"):
        assert (out / name).read_bytes() == open(f"dataset/{name}", "rb").read(), name
    users = [next(t["content"] for t in json.loads(line)["conversations"] if t["role"] == "user")
             for line in open(out / "sft_agent.jsonl", encoding="utf-8")]
    starts = [s.lower() for lang in ("zh", "en") for s in LEAD_INS[lang]]
    assert all(any(u.lower().startswith(s) for s in starts) for u in users)


def test_entity_questions_name_the_tool_worlds_things_and_need_no_call(tmp_path):
    """--entity_topics 1: no_tool questions about a city, a currency or a place of the tool world, with the tool
    that looks it up offered and no call in the answer; each city, currency and place is asked about."""
    from dataset.agent_phrasings import NO_TOOL_ENTITY_SPLITS, TIME_PLACES
    for split in ("sft", "rl"):
        for lang in ("zh", "en"):
            text = " ".join(q for q, _, _ in NO_TOOL_ENTITY_SPLITS[split][lang])
            i = 0 if lang == "zh" else 1
            things = [v[i] for v in CITY_NAMES.values()] + [v[i] for v in CURRENCY_NAMES.values()]
            assert all(t in text for t in things), (split, lang)
            assert all(p in text for ps in TIME_PLACES.values() for p in ps[i]), (split, lang)
    out = tmp_path / "e"
    data.main(["--out_dir", str(out), "--entity_topics", "1", "--no_tool_frames", "0", "--typing_noise", "0",
               "--lead_ins", "0", "--n_sft", "1500", "--n_sft_val", "10", "--n_rl", "50", "--n_rl_pool", "10",
               "--only", "sft_agent.jsonl", "sft_agent_val.jsonl"])
    asked = {q for split in NO_TOOL_ENTITY_SPLITS.values() for lang in ("zh", "en") for q, _, _ in split[lang]}
    rows = [json.loads(line)["conversations"] for line in open(out / "sft_agent.jsonl", encoding="utf-8")]
    hits = [conv for conv in rows if any(q in t.get("content", "") for t in conv if t["role"] == "user"
                                         for q in asked)]
    assert len(hits) > 15
    assert all(not t.get("tool_calls") for conv in hits for t in conv), "an entity question got a call"


def test_no_tool_weight_sets_the_share_of_no_call_questions(tmp_path):
    data.main(["--out_dir", str(tmp_path), "--only", "sft_agent_val.jsonl", "agent_rl.jsonl", "--n_sft_val", "200",
               "--n_rl", "200", "--no_tool_weight", "50"])
    total = sum(data.SFT_WEIGHTS.values()) - data.SFT_WEIGHTS["no_tool"] + 50
    val = [json.loads(line) for line in open(tmp_path / "sft_agent_val.jsonl", encoding="utf-8")]
    assert sum(r["category"] == "no_tool" for r in val) == round(200 * 50 / total)
    rl = [json.loads(line) for line in open(tmp_path / "agent_rl.jsonl", encoding="utf-8")]
    rl_total = total - data.SFT_WEIGHTS["error"]
    assert sum(r["category"] == "no_tool" for r in rl) == round(200 * 50 / rl_total)
    assert all(r["gt"] == [] and r["expect_tools"] == [] for r in rl if r["category"] == "no_tool")


def test_extra_math_adds_calculator_conversations_and_keeps_the_rest(tmp_path):
    def sft(name, *flags):
        data.main(["--out_dir", str(tmp_path / name), "--only", "sft_agent.jsonl", "sft_agent_val.jsonl",
                   "--n_sft", "600", "--n_sft_val", "10", *flags])
        return [json.loads(line) for line in open(tmp_path / name / "sft_agent.jsonl", encoding="utf-8")]

    base, more = sft("base", "--extra_math", "0"), sft("more", "--extra_math", "0.5")
    assert len(sft("default")) == 720  # 600 and a fifth more
    assert more[:600] == base  # every other conversation as it was
    added = more[600:]
    assert len(added) == 300 and all(r["category"] == "single" for r in added)
    calls = [next(t for t in r["conversations"] if t.get("tool_calls"))["tool_calls"][0]["function"]["name"]
             for r in added]
    assert set(calls) == {"calculate_math"}
    keys = {json.dumps(r["conversations"], ensure_ascii=False) for r in more}
    assert len(keys) == len(more)  # no conversation twice
    with pytest.raises(SystemExit):
        data.parse_args(["--extra_math", "-1"])


EN_COUNTS = dict(enumerate("zero one two three four five six seven eight nine ten eleven twelve".split()))


def typed_count(user, n, lang):
    """Whether the request gives the count n, in digits or in words."""
    if re.search(rf"(?<![\d.]){n}(?!\d|\.\d)", user):
        return True
    if lang == "en":
        return re.search(rf"\b{EN_COUNTS[n]}\b", user, re.I) is not None
    return (cn2an.an2cn(n) if n != 2 else "两") in user


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_chain_shapes_compute_on_the_first_result_and_keep_the_users_numbers(lang):
    """--chain_shapes: convert-then-compute takes the converter's result into the expression, with the user's
    number; exchange-then-split multiplies the amount by the rate the tool gave and divides by the count."""
    ctx = data.Ctx(random.Random(3), "sft", "train", chain_shapes=True)
    words = 0
    for _ in range(300):
        s = data.make_chain_convert(ctx, lang)
        first, second = s.steps[0].calls[0], s.steps[1].calls[0]
        assert first.name == "unit_converter" and second.name == "calculate_math"
        assert str(first.args["value"]) in s.user
        converted, op, k = re.fullmatch(r"(-?[\d.]+)([-+*/])(\d+)", second.args["expression"]).groups()
        assert float(converted) == first.result["result"] and s.gt == [second.result["result"]]
        assert "error" not in second.result
        s = data.make_chain_split(ctx, lang)
        (rate_call,), (calc,) = s.steps[0].calls, s.steps[1].calls
        amount, rate, n = re.fullmatch(r"(\d+)\*([\d.]+)/(\d+)", calc.args["expression"]).groups()
        assert rate_call.name == "get_exchange_rate" and float(rate) == rate_call.result["rate"]
        assert amount in s.user.replace(",", "") and typed_count(s.user, int(n), lang)
        words += not re.search(rf"(?<![\d.]){n}(?!\d|\.\d)", s.user)
    assert 40 < words < 200  # counts in words now and then (COUNT_WORDS)


def test_chain_shapes_are_drawn_only_when_asked():
    def chained(flag):
        ctx = data.Ctx(random.Random(5), "rl", "train", chain_shapes=flag)
        return {tuple(c.name for step in s.steps for c in step.calls)
                for s in (data.make_sample(ctx, "chained", lang) for lang in ("zh", "en") * 150)}
    assert ("unit_converter", "calculate_math") not in chained(False)
    assert ("unit_converter", "calculate_math") in chained(True)
    assert {data.count_text(data.Ctx(random.Random(i), "sft", "train"), 7, "en") for i in range(50)} == {"7"}


def test_mixed_parallel_requests_ask_every_part_and_are_drawn_only_when_asked():
    """--parallel_shapes: two or three single requests in one message; one turn makes every part's call, and
    the answer carries every part's values."""
    ctx = data.Ctx(random.Random(2), "sft", "train", parallel_shapes=True)
    tools, sizes = set(), set()
    for i in range(400):
        s = data.make_parallel_mixed(ctx, ("zh", "en")[i % 2])
        (step,) = s.steps
        sizes.add(len(step.calls))
        tools.update(c.name for c in step.calls)
        assert s.expect_tools == [c.name for c in step.calls]
        assert s.gt == [g for c in step.calls for g in data.gt_of(c)] and all(g in s.answer for g in s.gt)
        for c in step.calls:  # what the model copies from the request is in it
            copied = c.args.get("text") or c.args.get("location")
            assert copied is None or copied in s.user or c.name == "get_current_weather"
    assert sizes == {2, 3} and tools == set(data.TOOL_NAMES)
    plain = data.Ctx(random.Random(2), "sft", "train")
    pairs = {tuple(sorted(c.name for c in data.make_sample(plain, "parallel", "en").steps[0].calls))
             for _ in range(200)}
    assert ("calculate_math", "translate_text") not in pairs and len(pairs) <= 5  # the five fixed pairs


def test_currency_words_name_one_currency_each_and_reach_the_requests_only_when_asked():
    from dataset.agent_phrasings import CURRENCY_SPELLINGS

    owners = {}
    for code, (zh, en) in CURRENCY_SPELLINGS.items():
        for word in zh + en:
            owners.setdefault(word.lower(), set()).add(code)
    assert all(len(codes) == 1 for codes in owners.values())  # "rmb" is always CNY
    units = {w.lower() for zh, en in UNIT_NAMES.values() for w in zh + en}
    assert not units & set(owners)  # never a bare "pounds"
    ctx = data.Ctx(random.Random(6), "sft", "train", currency_grammar=1.0)
    for i in range(200):
        s = data.make_exchange_single(ctx, ("zh", "en")[i % 2])
        (call,) = s.steps[0].calls
        for code in (call.args["from_currency"], call.args["to_currency"]):
            words = CURRENCY_SPELLINGS[code][0] + CURRENCY_SPELLINGS[code][1]
            assert any(w in s.user for w in words), (code, s.user)
    plain = data.Ctx(random.Random(6), "sft", "train")
    users = [data.make_exchange_single(plain, "en").user for _ in range(200)]
    assert not [u for u in users if re.search(r"\b(rmb|bucks|quid|renminbi)\b", u, re.I)]
