"""
Datasets: PretrainDataset (plain text, stage 1), SFTDataset (cold-start supervised fine-tuning),
PreferenceDataset (pairs of the model's own trajectories, for DPO) and AgentRLDataset (prompts for agent RL).

PretrainDataset reads {"text": "..."} lines (scripts/make_pretrain_data.py) and packs them into blocks.
The other two read the design's JSONL format, one conversation per line:
    {"conversations": [{"role": "system", "content": "...", "tools": "<JSON list of tool schemas>"},
                       {"role": "user", "content": "..."},
                       {"role": "assistant", "content": "...", "tool_calls": [...]},
                       {"role": "tool", "content": "..."}, ...],
     "gt": ["9472"]}                      # AgentRLDataset only
A malformed line raises ValueError naming the file, the line number and the field.
"""
import hashlib
import json
import re
import random
from dataclasses import dataclass

import torch
from jinja2 import TemplateError
from torch.utils.data import Dataset, Sampler

VALID_ROLES = {"system", "user", "assistant", "tool"}
CONTROL_TOKENS = ("<|im_start|>", "<|im_end|>", "<|endoftext|>")  # only the chat template writes these
MAX_LINE_BYTES = 4 << 20  # a data line longer than this is a broken file, not a conversation


LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # half of a UTF-16 pair: no UTF-8 text can hold one
SPELLED_CONTROL = re.compile(r"<\|(im_start|im_end|endoftext)\|>")


def clean_text(text: str) -> str:
    """Text from outside the chat template (a tool's output, a request's words, a model's call arguments) made
    safe to render and tokenize: a lone surrogate, which the tokenizer cannot take, becomes U+FFFD, and a
    control token spelled out in it loses its bars (<|im_start|> -> <im_start>), so it reads as text and can
    never open or close a turn."""
    return SPELLED_CONTROL.sub(r"<\1>", LONE_SURROGATE.sub("\ufffd", text))


def clean_value(value):
    """clean_text on every string in a JSON value (keys too)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_value(k): clean_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_value(v) for v in value]
    return value


def text_problem(text: str):
    """Why a data file's text cannot be trained or evaluated on as it is, or None."""
    forged = SPELLED_CONTROL.search(text)
    if forged:
        return f"holds the control token {forged.group()}"
    bad = LONE_SURROGATE.search(text)
    if bad:
        return f"holds a lone surrogate (\\u{ord(bad.group()):04x}) at character {bad.start()}"
    return None


class DataError(ValueError):
    """A bad line in a data file; the message names file, line and field."""


def _fail(path, lineno, field, problem):
    raise DataError(f"{path}:{lineno}: field '{field}': {problem}")


def read_jsonl(path, skip_bad_lines=False, stats=None):
    """Yield (line number, parsed object) for every non-empty line.

    A line that is not a JSON object raises DataError, or, with skip_bad_lines, is counted in
    stats["skipped"] and skipped.
    """
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            try:
                if len(raw) > MAX_LINE_BYTES:
                    raise DataError(f"{path}:{lineno}: a line of {len(raw):,} bytes "
                                    f"(at most {MAX_LINE_BYTES:,})")
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise DataError(f"{path}:{lineno}: not UTF-8 (byte {e.start})") from None
                if lineno == 1:
                    line = line.removeprefix("\ufeff")  # a byte-order mark some editors write
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    raise DataError(f"{path}:{lineno}: invalid JSON: {e.msg} (column {e.colno})") from None
                except RecursionError:
                    raise DataError(f"{path}:{lineno}: invalid JSON: nested too deeply") from None
                if not isinstance(record, dict):
                    _fail(path, lineno, "<line>", f"expected a JSON object, got {type(record).__name__}")
            except DataError:
                if not skip_bad_lines:
                    raise
                if stats is not None:
                    stats["skipped"] = stats.get("skipped", 0) + 1
                continue
            yield lineno, record


def tool_call_problem(call):
    """What is wrong with one assistant tool call ({"function": {"name", "arguments"}} or {"name",
    "arguments"}), or None."""
    fn = call.get("function", call) if isinstance(call, dict) else None
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
        return "expected {'function': {'name': str, 'arguments': {...}}}"
    arguments = fn.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (json.JSONDecodeError, RecursionError):
            return "arguments is not valid JSON"
    if not isinstance(arguments, dict):
        return "arguments must be a JSON object"
    return None


def texts_of(message: dict):
    """(field, text) for every string of a message the template writes: content, reasoning, tool calls' names
    and arguments (string or object form), tool schemas."""
    def walk(field, value):
        if isinstance(value, str):
            yield field, value
        elif isinstance(value, dict):
            for k, v in value.items():
                yield from walk(f"{field}.{k}", v)
                yield from walk(f"{field}.{k}(key)", k)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                yield from walk(f"{field}[{i}]", v)
    for field in ("content", "reasoning_content", "tool_calls", "tools"):
        yield from walk(field, message.get(field))


def parse_conversation(record, path, lineno):
    """Validate `conversations` and split off the tools: returns (messages, tools or None)."""
    conversations = record.get("conversations")
    if not isinstance(conversations, list) or not conversations:
        _fail(path, lineno, "conversations", "missing or not a non-empty list")
    messages = []
    tools = None
    for i, message in enumerate(conversations):
        where = f"conversations[{i}]"
        if not isinstance(message, dict):
            _fail(path, lineno, where, "expected an object")
        role = message.get("role")
        if not isinstance(role, str) or role not in VALID_ROLES:
            _fail(path, lineno, f"{where}.role", f"unknown role {role!r}")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            _fail(path, lineno, f"{where}.content", "expected a string")
        # a control token would be encoded as a real turn boundary (a message that writes its own roles); a
        # lone surrogate cannot be tokenized at all
        try:
            problems = [(field, text_problem(text)) for field, text in texts_of(message)]
        except RecursionError:
            _fail(path, lineno, where, "nested too deeply")
        for field, problem in problems:
            if problem:
                _fail(path, lineno, f"{where}.{field}", problem)
        message = dict(message)
        if role == "system" and "tools" in message:
            raw = message.pop("tools")
            if isinstance(raw, str):
                try:
                    raw = json.loads(raw) if raw.strip() else []
                except json.JSONDecodeError as e:
                    _fail(path, lineno, f"{where}.tools", f"not valid JSON: {e.msg}")
                except RecursionError:
                    _fail(path, lineno, f"{where}.tools", "JSON nested too deeply")
            if not isinstance(raw, list):
                _fail(path, lineno, f"{where}.tools",
                      "expected a list of tool schemas or a JSON string of one")
            tools = raw
            for field, text in texts_of({"tools": tools}):
                problem = text_problem(text)
                if problem:
                    _fail(path, lineno, f"{where}.{field}", problem)
        if role == "assistant" and message.get("tool_calls") is not None:
            if not isinstance(message["tool_calls"], list):
                _fail(path, lineno, f"{where}.tool_calls", "expected a list")
            for j, call in enumerate(message["tool_calls"]):
                problem = tool_call_problem(call)
                if problem:
                    _fail(path, lineno, f"{where}.tool_calls[{j}]", problem)
        if message.get("reasoning_content") is not None and not isinstance(message["reasoning_content"], str):
            _fail(path, lineno, f"{where}.reasoning_content", "expected a string")
        messages.append(message)
    return messages, tools


# ----------------------------------------------------------------------------------------------------------
# chat template helpers shared by the trainers


def render(tokenizer, messages, tools=None, add_generation_prompt=False, open_thinking=False) -> str:
    return tokenizer.apply_chat_template(
        messages, tools=tools or None, tokenize=False,
        add_generation_prompt=add_generation_prompt, open_thinking=open_thinking,
    )


def encode(tokenizer, text: str) -> list:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def encode_sft_conversation(tokenizer, messages, tools=None):
    """Token ids and labels for one conversation: labels = ids on assistant turns (each through its
    <|im_end|>), -100 elsewhere. The text is cut at turn edges (always after a newline or a tag) and each
    piece tokenized alone, which the tokenizer guarantees gives the same ids as tokenizing the whole text.

    A turn with reasoning_content is learned after "<think>\\n" (the model writes its reasoning); a turn
    without is learned after the pre-filled empty think block, as at inference.
    """
    full = render(tokenizer, messages, tools)
    spans = []  # (start, end) character spans the model must learn
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        thinking = bool(message.get("reasoning_content"))
        prompt = render(tokenizer, messages[:i], tools, add_generation_prompt=True, open_thinking=thinking)
        upto = render(tokenizer, messages[:i + 1], tools)
        if not full.startswith(prompt) or not upto.endswith("<|im_end|>\n"):
            raise ValueError(f"chat template is not prefix-stable at message {i}")
        spans.append((len(prompt), len(upto) - 1))  # keep <|im_end|>, drop the newline after it
    ids, labels, pos = [], [], 0
    for start, end in spans:
        context = encode(tokenizer, full[pos:start])
        answer = encode(tokenizer, full[start:end])
        ids += context + answer
        labels += [-100] * len(context) + answer
        pos = end
    tail = encode(tokenizer, full[pos:])
    ids += tail
    labels += [-100] * len(tail)
    return ids, labels


class PretrainDataset(Dataset):
    """{"text": ...} lines -> fixed-length blocks of token ids, for next-token prediction on every token.

    Each document is tokenized and followed by the end-of-text token; the stream of all documents is cut into
    blocks of `block_size` (the last partial block is dropped), so no compute goes to padding.
    """

    def __init__(self, path, tokenizer, block_size=512, skip_bad_lines=False):
        self.stats = {"skipped": 0, "documents": 0}
        texts = []
        for lineno, record in read_jsonl(path, skip_bad_lines, self.stats):
            text = record.get("text")
            if not isinstance(text, str) or not text.strip():
                if not skip_bad_lines:
                    _fail(path, lineno, "text", "missing or not a non-empty string")
                self.stats["skipped"] += 1
                continue
            texts.append(text)
        self.stats["documents"] = len(texts)
        eot = tokenizer.convert_tokens_to_ids("<|endoftext|>")
        stream = []
        for start in range(0, len(texts), 4096):  # the fast tokenizer encodes a batch in parallel
            for ids in tokenizer(texts[start:start + 4096], add_special_tokens=False)["input_ids"]:
                stream += ids + [eot]
        n_blocks = len(stream) // block_size
        if n_blocks == 0:
            raise DataError(f"{path}: {len(stream)} tokens, fewer than one block of {block_size}")
        blocks = torch.tensor(stream[:n_blocks * block_size], dtype=torch.long)
        self.blocks = blocks.view(n_blocks, block_size)
        self.stats["tokens"] = n_blocks * block_size

    def __len__(self):
        return len(self.blocks)

    def __getitem__(self, i):
        return self.blocks[i]


class SFTDataset(Dataset):
    """Conversations -> (input_ids, labels), tokenized once at load time."""

    def __init__(self, path, tokenizer, max_length=1024, skip_bad_lines=False):
        self.samples = []
        self.stats = {"skipped": 0, "truncated": 0}
        for lineno, record in read_jsonl(path, skip_bad_lines, self.stats):
            try:
                messages, tools = parse_conversation(record, path, lineno)
                if not any(m["role"] == "assistant" for m in messages):
                    _fail(path, lineno, "conversations", "no assistant message to learn from")
            except DataError:
                if not skip_bad_lines:
                    raise
                self.stats["skipped"] += 1
                continue
            try:
                ids, labels = encode_sft_conversation(tokenizer, messages, tools)
            except (ValueError, TypeError, TemplateError) as e:
                if not skip_bad_lines:
                    raise DataError(f"{path}:{lineno}: field 'conversations': the chat template cannot "
                                    f"render it ({e})") from None
                self.stats["skipped"] += 1
                continue
            if len(ids) > max_length:
                self.stats["truncated"] += 1
                ids, labels = ids[:max_length], labels[:max_length]
            if all(label == -100 for label in labels):  # cut before its first assistant token
                self.stats["no_labels"] = self.stats.get("no_labels", 0) + 1
                continue
            self.samples.append((ids, labels))
        if not self.samples:
            raise DataError(f"{path}: no conversation to learn from ({self.stats})")

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        return self.samples[i]

    def lengths(self):
        return [len(ids) for ids, _ in self.samples]


def mix_in(dataset: SFTDataset, replay: SFTDataset, ratio: float, seed: int = 0) -> dict:
    """Add conversations drawn (seeded, without replacement) from `replay` to `dataset` so that they make up
    `ratio` of the result: incremental SFT on new data that keeps rehearsing the old. Returns the counts."""
    if not 0 <= ratio < 1:
        raise ValueError(f"mix ratio must be in [0, 1), got {ratio}")
    n_new = len(dataset)
    want = round(ratio / (1 - ratio) * n_new)
    if want > len(replay):
        raise ValueError(f"mix ratio {ratio} needs {want} replay conversations, "
                         f"the replay set has {len(replay)}")
    picked = random.Random(seed).sample(range(len(replay)), want)
    dataset.samples += [replay[i] for i in picked]
    return {"new": n_new, "replay": want, "replay_share": want / max(1, n_new + want)}


def sft_collate(batch, pad_id=0):
    """Right-pad a batch: (input_ids, labels) lists -> (B, T) tensors; padding labels are -100.

    Right padding needs no attention mask for a causal model: real tokens never look right.
    """
    T = max(len(ids) for ids, _ in batch)
    input_ids = torch.full((len(batch), T), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), T), -100, dtype=torch.long)
    for i, (ids, lab) in enumerate(batch):
        input_ids[i, :len(ids)] = torch.tensor(ids)
        labels[i, :len(lab)] = torch.tensor(lab)
    return input_ids, labels


def decision_mask(input_ids, labels, tokenizer) -> torch.Tensor:
    """(B, T) bool: the label tokens where the model decides between calling a tool and writing text.

    They are the first token of every answer, right after its think block ("</think>\\n\\n", pre-filled or
    written), and every <tool_call> the model writes (a second call in a parallel turn, or a call after a
    preamble, is a decision too). SFT averages the loss over all label tokens, so these few positions,
    which decide whether a question gets a call at all, carry little of it; --decision_weight scales them.
    """
    call, think_end = tokenizer.convert_tokens_to_ids(["<tool_call>", "</think>"])
    newline = encode(tokenizer, "\n")
    if len(newline) != 1:
        raise ValueError(f"the tokenizer writes a newline as {len(newline)} tokens; expected 1")
    newline = newline[0]
    after_think = torch.zeros_like(labels, dtype=torch.bool)
    after_think[:, 3:] = ((input_ids[:, :-3] == think_end) & (input_ids[:, 1:-2] == newline)
                          & (input_ids[:, 2:-1] == newline))
    return (labels != -100) & ((input_ids == call) | after_think)


def decision_weights(input_ids, labels, tokenizer, weight: float) -> torch.Tensor:
    """(B, T) float loss weights: `weight` at the decision tokens (decision_mask), 1 elsewhere."""
    weights = torch.ones(labels.shape, dtype=torch.float32, device=labels.device)
    weights[decision_mask(input_ids, labels, tokenizer)] = weight
    return weights


class LengthGroupedSampler(Sampler):
    """Batches of similar length (little padding), in random order; deterministic for a given seed and epoch.

    Indices are shuffled, cut into windows of `window` batches, sorted by length inside each window, split
    into batches, and the batches shuffled.
    """

    def __init__(self, lengths, batch_size, seed=0, window=64):
        self.lengths = lengths
        self.batch_size = batch_size
        self.seed = seed
        self.window = window
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def batches(self):
        rng = random.Random(self.seed * 1000003 + self.epoch)
        order = list(range(len(self.lengths)))
        rng.shuffle(order)
        span = self.batch_size * self.window
        batches = []
        for w in range(0, len(order), span):
            chunk = sorted(order[w:w + span], key=lambda i: self.lengths[i])
            batches += [chunk[b:b + self.batch_size] for b in range(0, len(chunk), self.batch_size)]
        rng.shuffle(batches)
        return batches

    def __iter__(self):
        return iter(self.batches())

    def __len__(self):
        return -(-len(self.lengths) // self.batch_size)


def tokenizer_fingerprint(tokenizer) -> str:
    """A short hash of the vocabulary: token ids are valid only with the tokenizer that made them."""
    vocab = json.dumps(sorted(tokenizer.get_vocab().items()), ensure_ascii=False)
    return hashlib.sha256(vocab.encode("utf-8")).hexdigest()[:16]


@dataclass
class PreferencePair:
    """A right (chosen) and a failed (rejected) trajectory of one prompt, as sampled: the ids after the
    prompt, with mask 1 on the tokens the model wrote and 0 on the tool results the rollout put in."""
    prompt: str
    category: str
    reason: str  # why the rejected one failed (scripts/rejection_sample.py's verdict)
    prompt_ids: list
    chosen_ids: list
    chosen_mask: list
    rejected_ids: list
    rejected_mask: list


class PreferenceDataset(Dataset):
    """The pairs scripts/rejection_sample.py --pairs_out writes, one JSON object per line:
        {"prompt", "category", "reason", "tokenizer", "prompt_ids",
         "chosen": {"ids", "mask", "text"}, "rejected": {"ids", "mask", "text"}}
    The ids must come from the tokenizer given (its fingerprint); each side needs a model-written token.
    """

    def __init__(self, path, tokenizer, skip_bad_lines=False):
        self.pairs = []
        self.stats = {"skipped": 0}
        fingerprint, vocab = tokenizer_fingerprint(tokenizer), len(tokenizer)
        for lineno, record in read_jsonl(path, skip_bad_lines, self.stats):
            try:
                self.pairs.append(self.parse_pair(record, path, lineno, fingerprint, vocab))
            except DataError:
                if not skip_bad_lines:
                    raise
                self.stats["skipped"] += 1
        if not self.pairs:
            raise DataError(f"{path}: no preference pairs ({self.stats})")

    @staticmethod
    def parse_pair(record, path, lineno, fingerprint, vocab) -> PreferencePair:
        if record.get("tokenizer") != fingerprint:
            _fail(path, lineno, "tokenizer", f"{record.get('tokenizer')!r}: made with another tokenizer than "
                                             f"this model's ({fingerprint})")

        def token_ids(value, field):
            if not isinstance(value, list) or not all(type(t) is int and 0 <= t < vocab for t in value):
                _fail(path, lineno, field, f"expected a list of token ids in [0, {vocab})")
            return value

        prompt_ids = token_ids(record.get("prompt_ids"), "prompt_ids")
        if not prompt_ids:
            _fail(path, lineno, "prompt_ids", "empty")
        sides = []
        for name in ("chosen", "rejected"):
            entry = record.get(name)
            if not isinstance(entry, dict):
                _fail(path, lineno, name, "expected an object with 'ids' and 'mask'")
            ids = token_ids(entry.get("ids"), f"{name}.ids")
            mask = entry.get("mask")
            if not isinstance(mask, list) or len(mask) != len(ids) or any(m not in (0, 1) for m in mask):
                _fail(path, lineno, f"{name}.mask", "expected 0/1 values, one per id")
            if not any(mask):
                _fail(path, lineno, f"{name}.mask", "no token written by the model")
            sides += [ids, mask]
        if sides[0] == sides[2]:
            _fail(path, lineno, "rejected.ids", "the same as chosen.ids")
        text = {k: record.get(k, "") for k in ("prompt", "category", "reason")}
        for k, v in text.items():
            if not isinstance(v, str):
                _fail(path, lineno, k, "expected a string")
        return PreferencePair(text["prompt"], text["category"] or "default", text["reason"], prompt_ids,
                              *sides)

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        return self.pairs[i]


class AgentRLDataset(Dataset):
    """RL prompts: each item is {"messages": conversations[:-1], "tools": [...], "gt": [...], ...}.

    The last conversation turn is the reference assistant answer; it is dropped, because the policy has to
    find its own answer by rollout. `category` and `expect_tools` (the tool names a correct solution calls, []
    when no tool is needed) are passed through when present; they feed the reward guards and the metrics.
    `known_tools`, when given, rejects tool schemas the tool world cannot execute.
    """

    def __init__(self, path, known_tools=None, skip_bad_lines=False):
        self.items = []
        self.stats = {"skipped": 0}
        for lineno, record in read_jsonl(path, skip_bad_lines, self.stats):
            try:
                self.items.append(self.parse_item(record, path, lineno, known_tools))
            except DataError:
                if not skip_bad_lines:
                    raise
                self.stats["skipped"] += 1
        if not self.items:  # 0 steps would "train" and overwrite the output with the start weights
            raise DataError(f"{path}: no RL prompts ({self.stats})")

    @staticmethod
    def parse_item(record, path, lineno, known_tools=None):
        """One RL prompt row -> an item; a bad field raises DataError naming file, line and field."""
        messages, tools = parse_conversation(record, path, lineno)
        if len(messages) < 2 or messages[-1]["role"] != "assistant":
            _fail(path, lineno, "conversations", "must end with the reference assistant turn")
        if not any(m["role"] == "user" for m in messages[:-1]):
            _fail(path, lineno, "conversations", "no user turn")
        gt = record.get("gt")
        if not isinstance(gt, list) or not all(isinstance(g, str) for g in gt):
            _fail(path, lineno, "gt", "missing or not a list of strings")
        if any(not g.strip() for g in gt):  # "" is in every answer: full GT reward for anything
            _fail(path, lineno, "gt", "an empty string")
        category = record.get("category", "default")
        if not isinstance(category, str) or not category:
            _fail(path, lineno, "category", "expected a non-empty string")
        tools = tools or []
        for j, tool in enumerate(tools):
            fn = tool.get("function") if isinstance(tool, dict) else None
            name = fn.get("name") if isinstance(fn, dict) else None
            if not isinstance(name, str):
                _fail(path, lineno, f"tools[{j}]", "not an OpenAI function schema with a name")
            if known_tools is not None and name not in known_tools:
                _fail(path, lineno, f"tools[{j}]", f"unknown tool {name!r}")
        expect_tools = record.get("expect_tools")
        if expect_tools is not None and not (
                isinstance(expect_tools, list) and all(isinstance(t, str) for t in expect_tools)):
            _fail(path, lineno, "expect_tools", "expected a list of tool names")
        offered = {tool["function"]["name"] for tool in tools}
        for name in expect_tools or []:
            if name not in offered:
                _fail(path, lineno, "expect_tools", f"{name!r} is not one of the row's tools")
        if expect_tools and not gt:
            _fail(path, lineno, "gt", "empty on a tool task: nothing to check the answer against")
        return {
            "messages": messages[:-1],
            "reference": messages[-1],  # the reference answer: not shown to the policy
            "tools": tools,
            "gt": gt,
            "category": category,
            "expect_tools": expect_tools,
        }

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def agent_collate(batch):
    """Keep RL items as plain lists (no tensors until the rollout)."""
    return {key: [item[key] for item in batch] for key in batch[0]}
