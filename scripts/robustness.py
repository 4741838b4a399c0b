"""
The robustness suite: the held-out requests again, each under one change a person makes when typing, and the
share of the solved requests that stay solved.

    python scripts/robustness.py --weight agent --out robustness.json
    python scripts/robustness.py --weight full_sft --changes lower_case typo --cases dataset/eval_natural.jsonl

Every other flag is eval_toolcall.py's (model, dtype, batch size, decoding). A change never touches what the
answer depends on: the text to translate, the numbers, and the names the tools are called with keep their
letters; a request the change leaves as it was (no English word to misspell, nothing to lower-case) is not
counted for that change. The model sees the changed text as it is: robustness has to come from the model.
The changes are written here, apart from the generator's typing noise (make_agent_data.py --typing_noise), on
purpose: what measures the model must not be the code that makes its data.
"""
import argparse
import json
import os
import random
import re
import sys
import time
import unicodedata

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from scripts import eval_toolcall
from trainer.evaluation import case_completed

CJK = re.compile(r"[\u4e00-\u9fff]")
WORD = re.compile(r"[A-Za-z]{4,}")
# sentence punctuation, ASCII and full-width; a dot or comma between digits is a number's, and stays
PUNCTUATION = re.compile(r"[.,](?!\d)|(?<!\d)[.,]|[!?;:\"'“”‘’，。！？；：、《》「」…~]")
FULL_WIDTH = {**{chr(c): chr(c + 0xFEE0) for c in range(ord("0"), ord("9") + 1)},
              **{c: chr(ord(c) + 0xFEE0) for c in ",.?!:;()%"}}
LEAD_INS = {"en": ["Quick one before my meeting.", "Hope your day is going well!", "Okay, next thing:"],
            "zh": ["问你个事儿。", "我正在安排明天的行程，", "还有一个问题，"]}
THANKS = {"en": ["Thanks a lot!", "ty", "Cheers, appreciate it."], "zh": ["多谢！", "谢啦", "辛苦了"]}
ENDS = tuple("?!.。？！")
# one word said in the other language, as bilingual people type
SWITCH = {"en": {"weather": "天气", "time": "时间", "rate": "汇率", "translate": "翻译", "London": "伦敦",
                 "Tokyo": "东京", "Paris": "巴黎", "Sydney": "悉尼", "dollars": "美元", "pounds": "磅",
                 "miles": "英里"},
          "zh": {"天气": "weather", "汇率": "exchange rate", "时间": "time", "几点": "what time", "北京": "Beijing",
                 "上海": "Shanghai", "翻译": "translate", "美元": "USD", "人民币": "RMB", "公里": "km",
                 "英里": "miles", "公斤": "kg", "计算": "calculate", "等于": "equals"}}


def language(text: str) -> str:
    return "zh" if CJK.search(text) else "en"


def protected_words(case) -> set:
    """Lower-cased words the answer depends on: every string in the expected calls and in the gt."""
    def strings(x):
        if isinstance(x, str):
            yield x
        elif isinstance(x, dict):
            for v in x.values():
                yield from strings(v)
        elif isinstance(x, list):
            for v in x:
                yield from strings(v)
    return {w.lower() for s in strings([case["expect_calls"], case["gt"]]) for w in re.findall(r"[A-Za-z]+", s)}


def swap_letters(text: str, case, rng, times: int):
    keep = protected_words(case)
    for _ in range(times):
        words = [m for m in WORD.finditer(text) if m.group().lower() not in keep]
        words = [m for m in words if len(set(m.group()[1:-1])) > 1]
        if not words:
            return text
        m = rng.choice(words)
        w = m.group()
        i = rng.choice([i for i in range(1, len(w) - 2) if w[i] != w[i + 1]] or [1])
        text = text[:m.start()] + w[:i] + w[i + 1] + w[i] + w[i + 2:] + text[m.end():]
    return text


def code_switch(text: str, case, rng):
    lang = language(text)
    keep = protected_words(case) | {s for c in case["expect_calls"] for s in c["arguments"].values()
                                    if isinstance(s, str)}
    options = [w for w in SWITCH[lang] if re.search(rf"(?<![A-Za-z]){re.escape(w)}(?![A-Za-z])", text)
               and not any(w in k or w.lower() == k for k in keep if isinstance(k, str))]
    if not options:
        return text
    word = rng.choice(options)
    other = SWITCH[lang][word]
    if lang == "en":
        return re.sub(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", other, text, count=1)
    text = text.replace(word, f" {other} ", 1)
    return re.sub(r"\s+([,，。?？!！、])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()


CHANGES = {
    "lower_case": lambda text, case, rng: text.lower(),
    "no_punctuation": lambda text, case, rng: re.sub(r"\s{2,}", " ", PUNCTUATION.sub("", text)).strip(),
    "one_typo": lambda text, case, rng: swap_letters(text, case, rng, 1),
    "two_typos": lambda text, case, rng: swap_letters(text, case, rng, 2),
    "full_width": lambda text, case, rng: "".join(FULL_WIDTH.get(c, c) for c in text),
    "lead_in": lambda text, case, rng: (rng.choice(LEAD_INS["en"]) + " " + text) if language(text) == "en"
    else rng.choice(LEAD_INS["zh"]) + text,
    "thank_you": lambda text, case, rng: text + (" " if language(text) == "en" else "" if text.endswith(ENDS)
                                                 else "，") + rng.choice(THANKS[language(text)]),
    "code_switch": code_switch,
}


def changed_cases(cases, name: str, seed: int) -> list:
    """(index, case with the changed prompt) for every case the change alters."""
    out = []
    for i, case in enumerate(cases):
        rng = random.Random(f"{seed}:{name}:{i}")
        prompt = CHANGES[name](case["prompt"], case, rng)
        if unicodedata.normalize("NFC", prompt) != case["prompt"]:
            out.append((i, {**case, "prompt": prompt}))
    return out


def kept_table(solved: list, changed: dict) -> dict:
    """Per change: cases changed, of them solved unchanged, and the share of those still solved."""
    table = {}
    for name, outcomes in changed.items():
        before = [i for i in outcomes if solved[i]]
        kept = sum(outcomes[i] for i in before)
        table[name] = {"changed": len(outcomes), "solved_before": len(before), "still_solved": kept,
                       "kept": kept / len(before) if before else float("nan"),
                       "solved_after_changed_only": sum(outcomes.values()) / len(outcomes) if outcomes else
                       float("nan")}
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                     add_help=False)
    parser.add_argument("--changes", nargs="+", choices=list(CHANGES), default=list(CHANGES))
    parser.add_argument("--out", default=None, help="write the table and every changed case's outcome as JSON")
    own, rest = parser.parse_known_args(argv)
    args = eval_toolcall.parse_args(rest)
    eval_toolcall.set_seed(args.seed)
    cases = eval_toolcall.load_cases(args.cases)
    variants = {name: changed_cases(cases, name, args.seed) for name in own.changes}
    everything = cases + [case for name in own.changes for _, case in variants[name]]
    t0 = time.time()
    weights = eval_toolcall.model_source(args)
    model, tokenizer = eval_toolcall.init_model(args, weights, args.save_dir, args.device)
    model.eval()
    results = eval_toolcall.run_local(model, tokenizer, everything, args)
    solved = [case_completed(r) for r in results]
    pos, changed, records = len(cases), {}, []
    for name in own.changes:
        changed[name] = {}
        for i, case in variants[name]:
            changed[name][i] = solved[pos]
            records.append({"change": name, "index": i, "prompt": case["prompt"], "solved_before": solved[i],
                            "solved": solved[pos], "final_answer": results[pos].final_answer,
                            "calls": results[pos].calls})
            pos += 1
    table = kept_table(solved[:len(cases)], changed)
    print(f"{weights} on {args.cases}: {sum(solved[:len(cases)])}/{len(cases)} solved as written "
          f"({len(everything)} rollouts, {time.time() - t0:.0f}s)")
    print(f"{'change':<16}{'changed':>9}{'solved':>8}{'still':>7}{'kept':>8}")
    for name, row in table.items():
        print(f"{name:<16}{row['changed']:>9}{row['solved_before']:>8}{row['still_solved']:>7}{row['kept']:>8.1%}")
    if own.out:
        with open(own.out, "w", encoding="utf-8") as f:
            json.dump({"model": weights, "cases_file": args.cases, "solved_as_written": sum(solved[:len(cases)]),
                       "cases": len(cases), "table": table, "changed": records}, f, ensure_ascii=False, indent=1)
        print(f"wrote {own.out}")
    return table


if __name__ == "__main__":
    main()
