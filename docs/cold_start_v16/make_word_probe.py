"""A probe of no_tool questions about subjects that hold a tool's word, on topics that are neither train
(NO_TOOL_TOPICS, NO_TOOL_WORD_TOPICS) nor held-out v2 topics, in v2's eval-only templates. It checks that
--word_topics teaches "a question about the subject needs no call", not the listed topics. Written once,
before any --word_topics model was evaluated; 60 cases.

    python -m docs.cold_start_v16.make_word_probe    # -> docs/cold_start_v16/word_probe.jsonl
"""
import json
import os
import random

from dataset.agent_phrasings import NO_TOOL_EVAL_TEMPLATES, TOOL_NAMES, TOOL_TOPICS

TOPICS = {  # (topic, the tool whose word it holds)
    "zh": [("天气对心情的影响", "weather"), ("气温和海拔的关系", "weather"), ("时间的本质", "time"),
           ("钟表的发展", "time"), ("世界各地的货币", "rate"), ("纸币的防伪", "rate"),
           ("英制单位为什么还在用", "unit"), ("温度的本质", "unit"), ("翻译中的误会", "translate"),
           ("古代的计算工具", "math")],
    "en": [("how weather affects mood", "weather"), ("why temperature drops with altitude", "weather"),
           ("the nature of time", "time"), ("the history of clocks", "time"),
           ("currencies around the world", "rate"), ("counterfeit money", "rate"),
           ("why the US still uses miles", "unit"), ("what temperature really is", "unit"),
           ("things lost in translation", "translate"), ("ancient calculating tools", "math")],
}


def main():
    rng = random.Random(16)
    rows = []
    for lang, topics in TOPICS.items():
        for topic, subject in topics:
            for template in NO_TOOL_EVAL_TEMPLATES[lang]:
                others = rng.sample([t for t in TOOL_NAMES if t != TOOL_TOPICS[subject]], rng.randint(1, 3))
                tools = others + [TOOL_TOPICS[subject]]
                rng.shuffle(tools)
                rows.append({"prompt": template.format(topic=topic), "tools": tools, "gt": [],
                             "expect_tools": [], "category": "no_tool", "skill": "no_tool", "expect_calls": []})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "word_probe.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    print(f"wrote {len(rows)} cases to {path}")


if __name__ == "__main__":
    main()
