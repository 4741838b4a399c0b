"""
Where the RL prompts come from and in which order: the default pool of RL-only phrasings, generated on first
use and again when its sources change; the prompt order of each epoch, weighted by category
(--category_weights). Read it when you bring your own prompts or change what a run draws.
"""
import hashlib
import math
import os
import random
import subprocess
import sys

from trainer.mock_world import (DEFAULT_TIMEZONE, EXCHANGE_RATES, LOCATION_HINTS, TIME_DATA, TRANSLATIONS,
                                UNIT_FACTORS, WEATHER_DATA)


DEFAULT_POOL = "dataset/agent_rl_pool.jsonl"


# the generator and the modules it draws requests from (besides the tool world)
POOL_SOURCES = ("scripts/make_agent_data.py", "dataset/agent_phrasings.py", "dataset/math_grammar.py",
                "dataset/no_tool_frames.py", "scripts/make_natural_set.py")


def pool_fingerprint(tools) -> str:
    """A hash of what the default pool is made from: the generator, its tables, the tool world."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = hashlib.sha256()
    for rel in POOL_SOURCES:
        with open(os.path.join(root, rel), "rb") as f:
            digest.update(f.read())
    world = (tools, WEATHER_DATA, LOCATION_HINTS, TIME_DATA, EXCHANGE_RATES, UNIT_FACTORS, TRANSLATIONS,
             DEFAULT_TIMEZONE)
    digest.update(repr(world).encode())
    return digest.hexdigest()


def ensure_pool(path: str, tools):
    """The default prompt pool is generated (deterministically, in seconds) rather than shipped: make it on
    first use by running the generator (a script, so the trainer imports nothing from scripts/), and again
    when a phrasing table, the generator or the tool world changed since (a stale pool would train on the
    old wordings without a word). Beside it, {path}.sources holds the fingerprint of its sources and the hash
    of the pool it made, so a pool written since by anything else (scripts/make_agent_data.py run on other
    tables) is made again too."""
    if os.path.normpath(path) != os.path.normpath(DEFAULT_POOL):
        return
    stamp, sources = path + ".sources", pool_fingerprint(tools)
    if os.path.exists(path):
        if os.path.exists(stamp):
            with open(stamp, encoding="utf-8") as f:
                if f.read().split() == [sources, file_sha256(path)]:
                    return
        print(f"{path} was made from other phrasings, generator or tool data: regenerating it")
    else:
        print(f"{path} missing: generating it with scripts/make_agent_data.py")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run([sys.executable, os.path.join(root, "scripts", "make_agent_data.py"), "--only",
                    os.path.basename(DEFAULT_POOL), "--out_dir", os.path.dirname(path) or "."], check=True)
    with open(stamp + ".tmp", "w", encoding="utf-8") as f:
        f.write(f"{sources} {file_sha256(path)}\n")
    os.replace(stamp + ".tmp", stamp)


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def parse_category_weights(text: str) -> dict:
    """'parallel=2,chained=2' -> {'parallel': 2.0, 'chained': 2.0}; categories not named weigh 1."""
    weights = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        name, sep, value = part.partition("=")
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--category_weights: {part!r} is not name=number") from None
        if not sep or not name.strip() or weights[name.strip()] <= 0:
            raise ValueError(f"--category_weights: {part!r} needs a category name and a weight > 0")
    return weights


def category_weights(args, categories, say: bool) -> dict:
    """--category_weights, with a warning for a category no prompt has (a typo, or data of its own)."""
    weights = parse_category_weights(args.category_weights)
    missing = sorted(set(weights) - set(categories))
    if missing and say:
        print(f"warning: --category_weights names {', '.join(missing)}, which no prompt of {args.data_path} "
              f"has (its categories: {', '.join(sorted(set(categories)))})")
    return weights


def epoch_batches(categories, batch_size: int, seed: int, epoch: int, weights: dict | None = None):
    """Every prompt once per epoch, in a seeded order. With category weights the order is a weighted shuffle
    (each prompt draws the key -log(u) / w and the smallest keys go first), so heavier categories come
    earlier and more often in any prefix of the epoch, e.g. a run stopped by --max_steps. Weights that name
    no category of the data leave the plain shuffle."""
    rng = random.Random(seed * 1000003 + epoch)
    present = set(categories)
    if not any(w != 1.0 for c, w in (weights or {}).items() if c in present):  # nothing to weigh: a shuffle
        order = list(range(len(categories)))
        rng.shuffle(order)
    else:
        keys = [-math.log(1.0 - rng.random()) / weights.get(c, 1.0) for c in categories]
        order = sorted(range(len(categories)), key=keys.__getitem__)
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
