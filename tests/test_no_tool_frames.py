"""No-call questions in the frames people ask in (make_agent_data.py --no_tool_frames 1): no frame is close to
an eval phrasing, no subject is an eval subject, and the questions reach SFT and RL as no-call conversations."""
import difflib
import json
import re

import scripts.make_agent_data as data
from dataset.agent_phrasings import (LANGS, NO_TOOL_EVAL_TEMPLATES, NO_TOOL_EVAL_TOPICS, NO_TOOL_FRAME_SPLITS,
                                     NO_TOOL_TOPICS, TEMPLATE_TABLES)
from dataset.no_tool_frames import ASK_FRAMES, MORE_TOPICS
from scripts.make_pretrain_data import text_numbers

NEAR = 0.7  # difflib's ratio at which a frame counts as a copy of an eval phrasing


def core(template: str) -> str:
    return data.normalized(re.sub(r"\{[a-z_0-9]+\}", " ", template))


def test_no_frame_is_close_to_an_eval_phrasing():
    for lang in LANGS:
        evals = [core(t) for t in NO_TOOL_EVAL_TEMPLATES[lang]]
        evals += [core(t) for table in TEMPLATE_TABLES.values() for t in table["eval"][lang]]
        for frame in ASK_FRAMES[lang]:
            assert frame.count("{topic}") == 1, frame
            ratio = max(difflib.SequenceMatcher(None, core(frame), e).ratio() for e in evals)
            assert ratio < NEAR, (frame, ratio)


def test_no_subject_is_held_out_or_names_an_eval_number():
    for lang in LANGS:
        held_out = {data.normalized(t) for t in NO_TOOL_EVAL_TOPICS[lang]}
        taught = {data.normalized(t) for t, *_ in NO_TOOL_TOPICS[lang]}
        for name, answer in MORE_TOPICS[lang]:
            assert data.normalized(name) not in held_out | taught, name
            assert not [x for x in text_numbers(answer) if data.is_eval_number(x)], (name, answer)


def test_the_frames_are_carved_into_sft_and_rl():
    for lang in LANGS:
        sft = {q for q, *_ in NO_TOOL_FRAME_SPLITS["sft"][lang]}
        rl = {q for q, *_ in NO_TOOL_FRAME_SPLITS["rl"][lang]}
        assert len(rl) > 3000 and len(sft) > 4 * len(rl) * 0.9 and not sft & rl
    data.check_phrasings()  # and no question of theirs is a phrasing of another split


def test_frame_questions_reach_the_data_as_no_call_conversations(tmp_path):
    data.main(["--out_dir", str(tmp_path), "--only", "sft_agent_val.jsonl", "agent_rl.jsonl", "--n_sft_val", "300",
               "--n_rl", "300", "--no_tool_frames", "1"])
    questions = {lang: {q for split in NO_TOOL_FRAME_SPLITS.values() for q, *_ in split[lang]} for lang in LANGS}
    every = questions["zh"] | questions["en"]
    val = [json.loads(line) for line in open(tmp_path / "sft_agent_val.jsonl", encoding="utf-8")]
    asked = [r for r in val if r["category"] == "no_tool" and r["conversations"][1]["content"] in every]
    assert asked and all("tool_calls" not in m for r in asked for m in r["conversations"])
    rl = [json.loads(line) for line in open(tmp_path / "agent_rl.jsonl", encoding="utf-8")]
    rl_questions = {q for lang in LANGS for q, *_ in NO_TOOL_FRAME_SPLITS["rl"][lang]}
    drawn = [r for r in rl if r["conversations"][1]["content"] in rl_questions]
    assert drawn and all(r["gt"] == [] and r["expect_tools"] == [] for r in drawn)
