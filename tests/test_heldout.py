"""The held-out sets: three phrasing splits that never meet, held-out numbers, the interval code."""
import json
import os
import math
import re
import unicodedata

import pytest

import scripts.make_agent_data as data
from scripts.compare_evals import compare, paired_difference
from trainer.evaluation import CaseResult, calc_result_ok, summarize, wilson_interval, wrong_direction_calls


def test_the_three_phrasing_splits_are_disjoint():
    owners = data.phrasing_owners()
    splits = {split for o in owners.values() for split, _ in o}
    assert splits == {"sft", "rl", "eval"}
    assert all(len({split for split, _ in o}) == 1 for o in owners.values())
    data.check_phrasings()
    for name, table in data.TEMPLATE_TABLES.items():
        for lang in data.LANGS:
            assert table["rl"][lang], f"{name} ({lang}) has no RL phrasing"
            if name in ("chain_convert", "chain_split"):  # --chain_shapes: v2 stays as it was, so no eval
                assert table["eval"][lang] == []  # phrasing; the natural set asks in these shapes
                continue
            assert len(table["eval"][lang]) >= 2, f"{name} ({lang}) has fewer than 2 eval phrasings"


def test_a_shared_phrasing_is_an_error_that_names_the_table(monkeypatch):
    table = data.TEMPLATE_TABLES["unit"]
    leaked = dict(table, eval={**table["eval"], "en": table["eval"]["en"] + [table["sft"]["en"][0]]})
    monkeypatch.setitem(data.TEMPLATE_TABLES, "unit", leaked)
    with pytest.raises(data.DataCheckError, match=r"template table unit \(en\)"):
        data.check_phrasings()
    chat = data.NO_TOOL_SPLITS["rl"]["chat"]
    monkeypatch.setitem(data.NO_TOOL_SPLITS["rl"], "chat", {**chat, "zh": chat["zh"] + [("多谢你的帮忙", "不客气")]})
    monkeypatch.setitem(data.TEMPLATE_TABLES, "unit", table)
    with pytest.raises(data.DataCheckError, match="no_tool chat"):
        data.check_phrasings()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("data")
    data.main(["--out_dir", str(out), "--n_sft", "300", "--n_sft_val", "30", "--n_rl", "200", "--n_rl_pool", "300"])
    return {name: [json.loads(line) for line in open(out / name, encoding="utf-8")]
            for name in ("eval_toolcall.jsonl", "eval_toolcall_seen.jsonl", "agent_rl.jsonl", "sft_agent.jsonl",
                         "agent_rl_pool.jsonl", "eval_toolcall_dev.jsonl")}


def test_rl_prompts_are_never_sft_prompts(built):
    sft = {m["content"] for r in built["sft_agent.jsonl"] for m in r["conversations"] if m["role"] == "user"}
    rl = [r["conversations"][1]["content"] for name in ("agent_rl.jsonl", "agent_rl_pool.jsonl")
          for r in built[name]]
    assert len(rl) == 500 and not [p for p in rl if p in sft]


def test_topic_questions_keep_their_templates_apart_and_offer_their_tool(built):
    """The "topic" no_tool kind (templates x topics) is carved by template, so an RL question never has an
    SFT wording; no train topic is an eval topic; a question about a tool's subject is asked with that tool
    offered (a hard negative)."""
    from dataset.agent_phrasings import NO_TOOL_EVAL_TOPICS, NO_TOOL_TOPIC_TEMPLATES, NO_TOOL_TOPICS, carve_rl

    for lang in data.LANGS:
        sft_templates, rl_templates = carve_rl(NO_TOOL_TOPIC_TEMPLATES[lang])
        assert sft_templates and rl_templates and not set(sft_templates) & set(rl_templates)
        topics = {name for name, _, _ in NO_TOOL_TOPICS[lang]}
        assert not topics & set(NO_TOOL_EVAL_TOPICS[lang])
        sft = {q for q, *_ in data.NO_TOOL_SPLITS["sft"]["topic"][lang]}
        rl = {q for q, *_ in data.NO_TOOL_SPLITS["rl"]["topic"][lang]}
        assert len(sft) == len(sft_templates) * len(topics) and len(rl) == len(rl_templates) * len(topics)
        assert not sft & rl
    about_a_tool = {q: data.TOOL_TOPICS[tool] for lang in data.LANGS
                    for q, _, tool in data.NO_TOOL_SPLITS["sft"]["topic"][lang] if tool}
    checked = 0
    for row in built["sft_agent.jsonl"]:
        conv = row["conversations"]
        if row["category"] != "no_tool":
            continue
        user = next(m["content"] for m in conv if m["role"] == "user")
        for question, tool in about_a_tool.items():
            if question in user:
                assert tool in data.offered_names(conv), (user, tool)
                checked += 1
    assert checked > 0


def framed_pattern(template):
    """A regex that matches what a template makes, whatever fills its placeholders."""
    parts = re.split(r"\{[a-z]+\}", template)
    return re.compile(".+".join(re.escape(p) for p in parts))


def test_shared_frames_ask_on_both_sides_of_the_call_boundary(built, tmp_path, monkeypatch):
    """A framed request is a no_tool topic template of the same split around a request phrase, so one frame
    is asked with a call (SFT tool conversations) and without one (SFT topic questions); a shared frame that
    is no topic template is an error that names it; eval prompts never come from a framed template."""
    from dataset import agent_phrasings as ph

    for lang in data.LANGS:
        carved = dict(zip(("sft", "rl"), ph.carve_rl(ph.NO_TOOL_TOPIC_TEMPLATES[lang])))
        for name, phrases in ph.REQUEST_PHRASES.items():
            for split in ("sft", "rl"):
                want = [f.format(topic=p) for f in carved[split] if f in ph.SHARED_FRAMES[lang] for p in phrases[lang]]
                assert data.TEMPLATE_TABLES[name][f"{split}_framed"][lang] == want and want, (name, split, lang)
    assert not any("eval_framed" in table for table in data.TEMPLATE_TABLES.values())

    topics = {f: [framed_pattern(f.format(topic=t)) for t, *_ in ph.NO_TOOL_TOPICS[lang]]
              for lang in data.LANGS for f in ph.SHARED_FRAMES[lang]}
    requests = {f: [framed_pattern(f.format(topic=p)) for phrases in ph.REQUEST_PHRASES.values()
                    for p in phrases[lang]] for lang in data.LANGS for f in ph.SHARED_FRAMES[lang]}
    asked = {"call": set(), "no call": set()}  # the frames SFT prompts were asked in, with a call or without
    data.main(["--out_dir", str(tmp_path), "--n_sft", "2000", "--only", "sft_agent.jsonl"])
    for r in map(json.loads, open(tmp_path / "sft_agent.jsonl", encoding="utf-8")):
        user = next(m["content"] for m in r["conversations"] if m["role"] == "user")
        side, patterns = ("no call", topics) if r["category"] == "no_tool" else ("call", requests)
        asked[side] |= {f for f, ps in patterns.items() if any(p.search(user) for p in ps)}
    assert asked["call"] & asked["no call"]

    framed = [framed_pattern(t) for table in data.TEMPLATE_TABLES.values() for split in ("sft", "rl")
              for lang in data.LANGS for t in table.get(f"{split}_framed", {}).get(lang, [])]
    assert not [r["prompt"] for r in built["eval_toolcall.jsonl"] if any(p.fullmatch(r["prompt"]) for p in framed)]

    monkeypatch.setitem(ph.SHARED_FRAMES, "en", ph.SHARED_FRAMES["en"] + ["Ponder {topic}."])
    with pytest.raises(data.DataCheckError, match="Ponder"):
        data.check_phrasings()


def test_only_writes_the_files_asked_for(tmp_path):
    data.main(["--out_dir", str(tmp_path), "--only", "agent_rl_pool.jsonl", "--n_rl_pool", "50"])
    assert sorted(os.listdir(tmp_path)) == ["agent_rl_pool.jsonl"]
    rows = [json.loads(line) for line in open(tmp_path / "agent_rl_pool.jsonl", encoding="utf-8")]
    assert len(rows) == 50 and {r["category"] for r in rows} <= set(data.RL_WEIGHTS)


def test_held_out_sets_sizes_and_skills(built):
    evals, seen = built["eval_toolcall.jsonl"], built["eval_toolcall_seen.jsonl"]
    assert len(evals) >= 600 and len(seen) >= 300
    for rows, least in ((evals, 80), (seen, 40)):
        counts = {}
        for r in rows:
            counts[r["skill"]] = counts.get(r["skill"], 0) + 1
        assert set(counts) == set(data.EVAL_SKILLS) | {"no_tool"}
        assert min(counts.values()) >= least, counts
    prompts = [r["prompt"] for r in evals]
    assert len(set(prompts)) == len(prompts)


def test_every_no_tool_kind_is_drawn_from_both_train_splits():
    """A kind the generator draws has SFT and RL questions in both languages, and the seen-phrasing set
    samples only kinds that exist (a new kind joins SFT and RL without changing that set)."""
    kinds = set(data.NO_TOOL_KINDS)
    assert kinds == set(data.NO_TOOL_SPLITS["sft"]) == set(data.NO_TOOL_SPLITS["rl"])
    assert set(data.SEEN_NO_TOOL_KINDS) < kinds
    for split in ("sft", "rl"):
        for kind in kinds:
            assert all(data.NO_TOOL_SPLITS[split][kind][lang] for lang in data.LANGS), (split, kind)


def test_the_shipped_sets_are_what_the_generator_makes(built):
    # the other files come from their own random streams, so a small SFT set gives the same held-out sets
    for name in ("eval_toolcall.jsonl", "eval_toolcall_seen.jsonl", "eval_toolcall_dev.jsonl"):
        with open(f"dataset/{name}", encoding="utf-8") as f:
            assert [json.loads(line) for line in f] == built[name], name


def test_held_out_numbers_never_reach_train_prompts(built):
    def typed_numbers(text):
        # a minus right after a digit or ")" is an operator, elsewhere a sign: -18 °C is not 18; full-width
        # digits and points read as ASCII (typing noise): ３２０．５２ is 320.52, not 320 and 52
        pattern = r"(?:(?<![\d)])-)?\d+(?:,\d{3})*(?:\.\d+)?"
        return {float(x.replace(",", "")) for x in re.findall(pattern, unicodedata.normalize("NFKC", text))}

    train = set()
    for r in built["sft_agent.jsonl"]:
        train |= typed_numbers(next(m["content"] for m in r["conversations"] if m["role"] == "user"))
    for r in built["agent_rl.jsonl"]:
        train |= typed_numbers(r["conversations"][1]["content"])
    held = set()
    for r in built["eval_toolcall.jsonl"] + built["eval_toolcall_seen.jsonl"]:
        held |= {x for x in typed_numbers(r["prompt"]) if abs(x) > data.ALWAYS_TRAIN}
    assert held and not held & train


def test_the_development_set_asks_in_rl_wordings_with_train_numbers(built):
    """The development set has the held-out set's skills and sizes, but RL phrasings (no_tool questions of the
    RL split, every kind) and train numbers: choosing among cold-start runs on it reads nothing held out."""
    dev, evals = built["eval_toolcall_dev.jsonl"], built["eval_toolcall.jsonl"]
    count = lambda rows, skill: sum(r["skill"] == skill for r in rows)  # noqa: E731
    assert all(count(dev, s) == count(evals, s) for s in set(data.EVAL_SKILLS) | {"no_tool"})
    held_out = {r["prompt"] for r in evals + built["eval_toolcall_seen.jsonl"]}
    sft = {m["content"] for r in built["sft_agent.jsonl"] for m in r["conversations"] if m["role"] == "user"}
    assert not {r["prompt"] for r in dev} & (held_out | sft)
    rl_questions = {p[0] for kind in data.NO_TOOL_SPLITS["rl"].values() for lang in data.LANGS for p in kind[lang]}
    no_tool = [r["prompt"] for r in dev if r["skill"] == "no_tool"]
    assert no_tool and set(no_tool) <= rl_questions
    numbers = [float(x.replace(",", "")) for r in dev for x in re.findall(r"\d+(?:,\d{3})*(?:\.\d+)?", r["prompt"])]
    assert len(numbers) > 400
    assert not [x for x in numbers if x == int(x) and x > data.ALWAYS_TRAIN and data.is_eval_number(int(x))]


def test_wilson_interval_on_hand_made_counts():
    lo, hi = wilson_interval(8, 10)
    assert (round(lo, 3), round(hi, 3)) == (0.490, 0.943)
    assert wilson_interval(0, 20)[0] == 0.0 and 0.15 < wilson_interval(0, 20)[1] < 0.17
    assert wilson_interval(20, 20)[1] == 1.0
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    ok = CaseResult("q", "single", ["2"], ["calculate_math"], [], ["2"], "2")
    bad = CaseResult("q", "single", ["3"], ["calculate_math"], [], ["x"], "x")
    s = summarize([ok] * 8 + [bad] * 2)
    assert s["task_completion_ci95"] == pytest.approx([0.490, 0.943], abs=1e-3)


def test_paired_difference_on_hand_made_reports():
    d = paired_difference([True] * 50 + [False] * 50, [True] * 45 + [False] * 5 + [True] * 25 + [False] * 25)
    assert (d.won, d.lost, d.before, d.after) == (25, 5, 50, 70)
    assert d.diff == pytest.approx(0.20)
    # Agresti-Min: w=25.5, l=5.5, m=102 -> centre 20/102, half 1.96*sqrt(31 - 400/102)/102
    half = 1.96 * math.sqrt(31 - 400 / 102) / 102
    assert d.ci95 == pytest.approx((20 / 102 - half, 20 / 102 + half))
    assert d.ci95[0] > 0
    same = paired_difference([True, False] * 10, [True, False] * 10)
    assert same.diff == 0 and same.ci95[0] < 0 < same.ci95[1]
    before = [{"prompt": str(i), "category": "single", "skill": "math", "completed": i < 5, "calls": []}
              for i in range(10)]
    after = [dict(c, completed=i < 8) for i, c in enumerate(before)]
    cmp = compare(before, after)
    assert cmp.paired["all"].won == 3 and cmp.paired["skill:math"].lost == 0


def test_calculator_and_direction_metrics():
    want_math = [{"name": "calculate_math", "arguments": {"expression": "12*34"}, "result": {"result": "408"}}]
    right = CaseResult("q", "single", ["408"], ["calculate_math"],
                       [{"name": "calculate_math", "arguments": {"expression": "34 * 12"}, "result": {"result": "408"}}],
                       [], "408", expect_calls=want_math)
    wrong = CaseResult("q", "single", ["408"], ["calculate_math"],
                       [{"name": "calculate_math", "arguments": {"expression": "12*43"}, "result": {"result": "516"}}],
                       [], "516", expect_calls=want_math)
    assert calc_result_ok(right) is True and calc_result_ok(wrong) is False
    assert calc_result_ok(CaseResult("q", "no_tool", [], [], [], [], "")) is None
    want_unit = [{"name": "unit_converter", "arguments": {"value": 5, "from_unit": "km", "to_unit": "miles"},
                  "result": {"value": 5, "from_unit": "km", "to_unit": "miles", "result": 3.1069}}]
    reversed_result = {"value": 5, "from_unit": "miles", "to_unit": "km", "result": 8.0467}
    swapped = CaseResult("q", "single", ["3.1069"], ["unit_converter"],
                         [{"name": "unit_converter", "arguments": {"value": 5, "from_unit": "英里", "to_unit": "公里"},
                           "result": reversed_result}], [], "", expect_calls=want_unit)
    assert wrong_direction_calls(swapped) == (1, 1)
    s = summarize([right, wrong, swapped])
    assert s["calc_result_accuracy"] == 0.5 and s["wrong_direction_rate"] == 1.0


def test_quantity_frames_ask_for_an_amount_and_a_count_alike(monkeypatch):
    """The quantity templates are every frame around every phrase of a table, in SFT only. SFT asks for a
    plain amount and for a count of items in the same frames, and each prompt carries the numbers its
    calculator call multiplies. RL and held-out prompts never take a quantity template, nor SFT prompts by
    default, and one that shares a phrasing with another split is an error that names its table."""
    import random

    from dataset import agent_phrasings as ph

    for name, phrases in ph.QUANTITY_PHRASES.items():
        table = data.TEMPLATE_TABLES[name]
        assert not {"rl_quantity", "eval_quantity"} & set(table)
        for lang in data.LANGS:
            want = [f.replace("{x}", p) for f in ph.QUANTITY_FRAMES[lang] for p in phrases[lang]]
            assert table["sft_quantity"][lang] == want and want, (name, lang)

    ctx = data.Ctx(random.Random(0), "sft", "train", quantity_rate=0.3)
    frames = {f: framed_pattern(f.replace("{x}", "{q}")) for lang in data.LANGS for f in ph.QUANTITY_FRAMES[lang]}
    asked = {"chain_money": set(), "chain_price": set()}
    for name, make in (("chain_money", data.make_chain_money), ("chain_price", data.make_chain_price)):
        for i in range(300):
            sample = make(ctx, data.LANGS[i % 2])
            factors = sample.steps[1].calls[0].args["expression"].split("*")
            assert len(factors) == (2 if name == "chain_money" else 3), sample.user
            digits = sample.user.replace(",", "")
            assert all(f in digits for f in factors[:-1]), (sample.user, factors)  # the rate is the tool's
            asked[name] |= {f for f, p in frames.items() if p.fullmatch(sample.user.strip())}
    assert asked["chain_money"] & asked["chain_price"]

    cases = (("rl", "train", 0.3), ("eval", "eval", 0.3), ("sft", "eval", 0.3), ("sft", "train", 0.0))
    for phrasing, pool, rate in cases:  # RL, held-out, seen set, SFT by default
        other = data.Ctx(random.Random(1), phrasing, pool, rate)
        for name in ph.QUANTITY_PHRASES:
            table = data.TEMPLATE_TABLES[name]
            for lang in data.LANGS:
                only = set(table["sft_quantity"][lang]) - set(table["sft"][lang])  # some are SFT templates too
                drawn = {other.template(table, lang) for _ in range(200)}
                assert drawn and only and not drawn & only, (phrasing, pool, rate, name)

    with pytest.raises(SystemExit):  # argparse's error: names the flag and the range on stderr
        data.parse_args(["--quantity_rate", "1.5"])
    unit = data.TEMPLATE_TABLES["unit"]
    leaked = {**unit["sft_quantity"], "en": unit["sft_quantity"]["en"] + [unit["rl"]["en"][0]]}
    monkeypatch.setitem(data.TEMPLATE_TABLES, "unit", {**unit, "sft_quantity": leaked})
    with pytest.raises(data.DataCheckError, match=r"template table unit \(en\)"):
        data.check_phrasings()


def test_stated_numbers_are_the_questions_and_the_expression_copies_them():
    """--state_numbers: a chained calculator turn first writes the question's numbers in the user's order
    (1,250 as 1250), and its expression multiplies exactly those, then the rate; the value is the one the
    canonical order gives. Off (the default), the turns and expressions are the shipped ones."""
    import random

    on = data.Ctx(random.Random(3), "sft", "train", state_numbers=True)
    off = data.Ctx(random.Random(3), "sft", "train")
    makers = (data.make_chain_money, data.make_chain_price, data.make_chain_total)
    reordered = 0
    for i in range(600):
        make, lang = makers[i % 3], data.LANGS[(i // 3) % 2]
        a, b = make(on, lang), make(off, lang)
        assert a.user == b.user and a.gt == b.gt  # the same draws: only the turn's words and order change
        step = next(s for s in a.steps if s.calls[0].name == "calculate_math")
        plain = next(s for s in b.steps if s.calls[0].name == "calculate_math")
        assert plain.say == "" and step.say, a.user
        listed = step.say.split(":", 1)[1].split(";")[0].rstrip("。.").replace("、", ",").replace(" ", "")
        factors = step.calls[0].args["expression"].split("*")
        assert listed.split(",") == data.numbers_in(a.user) == factors[:len(listed.split(","))], a.user
        reordered += factors != plain.calls[0].args["expression"].split("*")
        if make is not data.make_chain_total:
            assert f"{factors[-1]}" in step.say and len(factors) == len(listed.split(",")) + 1
    assert reordered  # some users write the count before the price


def test_state_numbers_2_lists_a_single_calculator_calls_numbers_and_changes_nothing_else():
    """--state_numbers 2: a single calculator call's turn first writes the numbers the user typed ("2的10次方":
    2, 10), each of them in the expression; the draws, the user's words and the call are those of 1."""
    import random

    two = data.Ctx(random.Random(4), "sft", "train", state_numbers=2)
    one = data.Ctx(random.Random(4), "sft", "train", state_numbers=1)
    listed_any = 0
    for i in range(400):
        lang = data.LANGS[i % 2]
        a, b = data.make_math_single(two, lang), data.make_math_single(one, lang)
        assert a.user == b.user and a.gt == b.gt and a.steps[0].calls == b.steps[0].calls
        assert b.steps[0].say == ""
        say, expression = a.steps[0].say, a.steps[0].calls[0].args["expression"]
        if not say:
            continue
        listed_any += 1
        numbers = say.split(":", 1)[1].rstrip("。.").replace("、", ",").replace(" ", "").split(",")
        assert all(n in expression for n in numbers), (a.user, say, expression)
    assert listed_any == 400  # digits or, for numbers written in words, the operands
    chained = data.make_chain_price(two, "en")
    assert chained.steps[1].say.startswith("Numbers in the question")  # 2 includes 1


def test_state_numbers_3_names_each_numbers_role_and_changes_nothing_else():
    """--state_numbers 3: a price or total request's turn writes each number after its role ("count 36, price
    446", in the user's order), the role of the number the template put there; everything else, the
    expression included, is what mode 2 writes."""
    import random

    three = data.Ctx(random.Random(5), "sft", "train", state_numbers=3)
    two = data.Ctx(random.Random(5), "sft", "train", state_numbers=2)
    roles = {"price": ("price", "count"), "total": ("each", "count")}
    makers = {"price": data.make_chain_price, "total": data.make_chain_total}
    count_first = 0
    for i in range(400):
        kind, lang = ("price", "total")[i % 2], data.LANGS[(i // 2) % 2]
        a, b = makers[kind](three, lang), makers[kind](two, lang)
        assert a.user == b.user and a.gt == b.gt and [s.calls for s in a.steps] == [s.calls for s in b.steps]
        step = next(s for s in a.steps if s.calls[0].name == "calculate_math")
        plain = next(s for s in b.steps if s.calls[0].name == "calculate_math")
        words = {data.ROLE_WORDS[r][0 if lang == "zh" else 1]: r for r in roles[kind]}
        listed = step.say.split(":", 1)[1].split(";")[0].strip().rstrip("。.").replace("、", ", ").split(", ")
        labelled = [item.split(" ") for item in listed]
        assert [n for _, n in labelled] == data.numbers_in(b.user), (a.user, step.say)
        # each word names the number the generator drew for that role (values: [price or each, count])
        assert {words[w]: int(n) for w, n in labelled} == dict(zip(roles[kind], a.values)), (a.user, step.say)
        unlabelled = step.say
        for word, n in labelled:
            unlabelled = unlabelled.replace(f"{word} {n}", n, 1)
        assert unlabelled == plain.say
        count_first += words[labelled[0][0]] == "count"
    assert 0 < count_first < 400  # both orders occur, and each keeps its roles


def test_max_count_widens_the_training_counts_only(tmp_path):
    """--max_count: the chained price and total requests of the SFT split count up to it, never a
    held-out number; the RL prompts and the held-out sets are the same files whatever it is."""
    import random

    wide = data.Ctx(random.Random(5), "sft", "train", max_count=99)
    narrow = data.Ctx(random.Random(5), "sft", "train")
    counts = {"wide": [], "narrow": []}
    for i in range(300):
        make, lang = (data.make_chain_price, data.make_chain_total)[i % 2], data.LANGS[(i // 2) % 2]
        for name, ctx in (("wide", wide), ("narrow", narrow)):
            sample = make(ctx, lang)
            assert str(sample.values[1]) in sample.user
            counts[name].append(sample.values[1])  # [price or quantity, count]
    assert max(counts["narrow"]) <= data.MAX_COUNT < max(counts["wide"]) <= 99
    assert not any(data.is_eval_number(n) for n in counts["wide"] + counts["narrow"])
    files = ["agent_rl.jsonl", "eval_toolcall.jsonl", "eval_toolcall_seen.jsonl"]
    for most in (40, 99):
        data.main(["--out_dir", str(tmp_path / str(most)), "--max_count", str(most), "--only", *files])
    for name in files:
        assert (tmp_path / "40" / name).read_bytes() == (tmp_path / "99" / name).read_bytes()
    with pytest.raises(SystemExit):
        data.parse_args(["--max_count", "1"])


def test_numbers_in_reads_separators_and_decimals():
    assert data.numbers_in("1,250 USD, and 3.5 kg; 12个") == ["1250", "3.5", "12"]
    assert data.in_user_order("每样462澳元,共33样", [33, 462]) == ["462", "33"]
    assert data.in_user_order("2 of 462 at 2", [2, 462]) == ["2", "462"]  # a third number: as given


def test_word_topics_are_no_tool_questions_drawn_only_when_asked(monkeypatch):
    """--word_topics: SFT and RL no_tool questions also ask about topics that hold a tool's word ("天气谚语"), with
    that tool offered and no call, each in its split's templates; off (the default) none is drawn. A word topic
    that is an eval topic is refused."""
    import random

    word = {q for lang in data.LANGS for q, *_ in data.NO_TOOL_WORD_SPLITS["sft"][lang]}
    on = data.Ctx(random.Random(5), "sft", "train", word_topics=True)
    off = data.Ctx(random.Random(5), "sft", "train")
    drawn_on = [data.make_no_tool(on, data.LANGS[i % 2]) for i in range(800)]
    drawn_off = [data.make_no_tool(off, data.LANGS[i % 2]) for i in range(800)]
    hits = [s for s in drawn_on if s.user in word]
    assert 50 < len(hits) < 160  # weight 15 of 115
    assert not any(s.user in word for s in drawn_off)
    for s in hits:
        assert s.steps == [] and s.answer and len(s.mention) == 1
    assert {s.mention[0] for s in hits} == set(data.TOOL_NAMES)  # every tool's words are asked about
    rl_word = {q for lang in data.LANGS for q, *_ in data.NO_TOOL_WORD_SPLITS["rl"][lang]}
    assert rl_word and not rl_word & word  # RL prompts take them in RL templates
    rl = data.Ctx(random.Random(5), "rl", "train", word_topics=True)
    assert any(data.make_no_tool(rl, data.LANGS[i % 2]).user in rl_word for i in range(200))
    evals = {t.lower() for lang in data.LANGS for t in data.no_tool_eval_questions(lang)}
    assert not word & evals
    zh = data.NO_TOOL_WORD_TOPICS["zh"]
    monkeypatch.setitem(data.NO_TOOL_WORD_TOPICS, "zh", zh + [("闰年", "闰年有366天。", "time")])
    with pytest.raises(data.DataCheckError, match=r"闰年"):
        data.check_phrasings()


def test_typing_noise_changes_the_request_never_what_the_call_needs():
    """--typing_noise: a share of train requests typed in a hurry; numbers keep their digits (full-width ones
    are the same digits), the words of the call's arguments keep their letters, the held-out sets never
    change, and 0 draws nothing (the shipped data has 0.3)."""
    import random

    ctx = data.Ctx(random.Random(5), "sft", "train")
    changed = 0
    for i in range(300):
        sample = data.make_sample(ctx, ["single", "parallel", "chained", "no_tool"][i % 4], data.LANGS[i % 2])
        noisy = data.typing_noise(sample, random.Random(i))
        changed += noisy != sample.user
        digits = lambda text: re.findall(r"\d+", unicodedata.normalize("NFKC", text))  # noqa: E731
        assert digits(noisy) == digits(sample.user), (sample.user, noisy)
        for word in data._keep_words(sample):
            if re.search(rf"(?<![a-z]){word}(?![a-z])", sample.user.lower()):
                assert word in noisy.lower(), (word, sample.user, noisy)
    assert changed > 200  # a Chinese request without Latin letters or digits can come through unchanged
    assert data.NOISE["full_width"]("3.5公里?", None, None) == "３．５公里？"
    assert data.NOISE["no_punctuation"]("Hi, what's 1,250.5 km in miles?", None, None) == \
        "Hi whats 1,250.5 km in miles"


def test_typing_noise_leaves_the_held_out_sets_alone(tmp_path):
    data.main(["--out_dir", str(tmp_path), "--typing_noise", "0.5", "--n_sft", "60", "--n_sft_val", "10",
               "--n_rl", "40", "--n_rl_pool", "40"])
    for name in ("eval_toolcall.jsonl", "eval_toolcall_seen.jsonl", "eval_toolcall_dev.jsonl"):
        assert (tmp_path / name).read_bytes() == open(f"dataset/{name}", "rb").read(), name
    rl = [json.loads(line)["conversations"][1]["content"] for line in open(tmp_path / "agent_rl.jsonl")]
    assert any(p != p.lower() for p in rl) and any(p == p.lower() and re.search("[a-z]", p) for p in rl)
