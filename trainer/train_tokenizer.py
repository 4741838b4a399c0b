"""
Train the project's tokenizer: a byte-level BPE with a 6400-token vocabulary, plus the tool chat template.

Writes model/tokenizer.json and model/tokenizer_config.json, loadable with
AutoTokenizer.from_pretrained("model").

Fixed ids: <|endoftext|> 0 (pad/unk), <|im_start|> 1 (bos), <|im_end|> 2 (eos). The tool and thinking tags
<tool_call> </tool_call> <tool_response> </tool_response> <think> </think> are single tokens (ids 3..8) that
are not "special", so they survive decode(skip_special_tokens=True).

Pre-tokenization is built for copying, the skill tool use needs most (an entity from the question into the
call's arguments, a value from the tool result into the answer): every Chinese character, every digit and
every newline is its own piece, and ASCII words are pieces of their own, apart from spaces and punctuation, so
"Paris", "北京" or "9472" are the same tokens in the question, the arguments, the result and the answer. Only a
JSON key keeps its quotes and colon (' {"location":' can be one token), which keeps tool schemas short.
Consequences the trainers rely on:
  - tokenize(a + b) == tokenize(a) + tokenize(b) whenever a ends with "\n" or a tag: the chat template puts
    such a boundary at every turn edge, so multi-turn ids can be appended instead of re-tokenized;
  - a value copied from one place to another is the same token ids.

The corpus is the project's own generated data (scripts/make_agent_data.py), rendered through the chat
template, plus the Chinese characters of GB2312 (taken from Python's codec), so nothing is downloaded.

Run:
    python trainer/train_tokenizer.py                  # train BPE + write the template
    python trainer/train_tokenizer.py --template_only  # rewrite only the template (tokenizer_config.json)
"""
import argparse
import json
import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# pre-tokenizer pieces, tried in this order at each position (BPE never merges across pieces)
KEY = r' ?[\[{]*"[A-Za-z_]+":'  # a JSON key with its quotes and colon: ' {"location":' can be one token
CJK_CHAR = r"[\u3400-\u9fff]"  # one Chinese character
WORD = r"[A-Za-z_]+"  # an ASCII word or identifier, never with the space before it: the same token everywhere
PUNCT = r" ?[^\sA-Za-z_\u3400-\u9fff]+"  # punctuation (digits are split off before this)

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TAG_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]

# The chat template (ChatML). Layout of one tool-using exchange, with open_thinking=False:
#
#   <|im_start|>system\n{system}\n\n# Tools\n<tools>\n{tool json}\n...</tools>\n...<|im_end|>\n
#   <|im_start|>user\n{question}<|im_end|>\n
#   <|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n{"name": ..., "arguments": {...}}\n
#       </tool_call><|im_end|>\n
#   <|im_start|>tool\n<tool_response>\n{result json}\n</tool_response><|im_end|>\n
#   <|im_start|>assistant\n<think>\n\n</think>\n\n{answer}<|im_end|>\n
#
# Assistant turns always carry a think block, so rendering is prefix-stable: messages[:k] + the generation
# prompt is a prefix of the full rendering. The generation prompt opens the think block ("<think>\n") when
# open_thinking=True and pre-fills an empty one otherwise. An assistant message whose content already starts
# with "<think>" (raw model output recorded by a rollout) is emitted verbatim. Consecutive tool messages share
# one tool turn.
CHAT_TEMPLATE = r"""
{%- set think_open = '<think>\n' -%}
{%- if messages and messages[0].role == 'system' -%}
    {%- set system_text = messages[0].content or '' -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set system_text = '' -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- if tools -%}
    {{- '<|im_start|>system\n' -}}
    {%- if system_text -%}{{- system_text + '\n\n' -}}{%- endif -%}
    {{- '# Tools\n<tools>\n' -}}
    {%- for tool in tools -%}{{- tool | tojson -}}{{- '\n' -}}{%- endfor -%}
    {{- '</tools>\nTo call a tool, write:\n<tool_call>\n'
        + '{"name": "<tool name>", "arguments": {<arguments as JSON>}}\n</tool_call><|im_end|>\n' -}}
{%- elif system_text -%}
    {{- '<|im_start|>system\n' + system_text + '<|im_end|>\n' -}}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- set content = message.content if message.content is string else '' -%}
    {%- if message.role == 'assistant' -%}
        {{- '<|im_start|>assistant\n' -}}
        {%- if content.startswith('<think>') -%}
            {{- content -}}
        {%- else -%}
            {%- set reasoning = message.reasoning_content if message.reasoning_content is string else '' -%}
            {%- if reasoning -%}
                {{- think_open + reasoning + '\n</think>\n\n' + content -}}
            {%- else -%}
                {{- think_open + '\n</think>\n\n' + content -}}
            {%- endif -%}
        {%- endif -%}
        {%- if message.tool_calls -%}
            {%- for call in message.tool_calls -%}
                {%- set fn = call.function if call.function is defined else call -%}
                {%- if content or not loop.first -%}{{- '\n' -}}{%- endif -%}
                {{- '<tool_call>\n{"name": ' + (fn.name | tojson) + ', "arguments": ' -}}
                {%- if fn.arguments is string -%}{{- fn.arguments -}}{%- else -%}{{- fn.arguments | tojson
                -}}{%- endif -%} {{- '}\n</tool_call>' -}}
            {%- endfor -%}
        {%- endif -%}
        {{- '<|im_end|>\n' -}}
    {%- elif message.role == 'tool' -%}
        {%- if loop.first or loop_messages[loop.index0 - 1].role != 'tool' -%}
            {{- '<|im_start|>tool\n' -}}
        {%- else -%}
            {{- '\n' -}}
        {%- endif -%}
        {%- if message.content is string -%}
            {{- '<tool_response>\n' + message.content + '\n</tool_response>' -}}
        {%- else -%}
            {{- '<tool_response>\n' + (message.content | tojson) + '\n</tool_response>' -}}
        {%- endif -%}
        {%- if loop.last or loop_messages[loop.index0 + 1].role != 'tool' -%}
            {{- '<|im_end|>\n' -}}
        {%- endif -%}
    {%- else -%}
        {{- '<|im_start|>' + message.role + '\n' + content + '<|im_end|>\n' -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|im_start|>assistant\n' -}}
    {%- if open_thinking is defined and open_thinking -%}
        {{- think_open -}}
    {%- else -%}
        {{- think_open + '\n</think>\n\n' -}}
    {%- endif -%}
{%- endif -%}
""".strip()


def tokenizer_config(model_max_length: int) -> dict:
    """tokenizer_config.json: the special tokens, the tag tokens (not special) and the chat template."""
    added = {}
    for i, tok in enumerate(SPECIAL_TOKENS + TAG_TOKENS):
        added[str(i)] = {
            "content": tok, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False,
            "special": tok in SPECIAL_TOKENS,
        }
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "added_tokens_decoder": added,
        "bos_token": "<|im_start|>",
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "unk_token": "<|endoftext|>",
        "add_bos_token": False,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": model_max_length,
        "padding_side": "left",
        "chat_template": CHAT_TEMPLATE,
    }


def render(messages, tools=None, add_generation_prompt=False, open_thinking=False) -> str:
    """Render with the chat template without needing a trained tokenizer (used to build the corpus)."""
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(
        conversations=[messages], tools=tools, chat_template=CHAT_TEMPLATE,
        add_generation_prompt=add_generation_prompt, open_thinking=open_thinking,
    )
    return rendered[0]


def split_system_tools(conversations):
    """The design's data format keeps the tools on the system message as a JSON string (or a list); lift
    them out."""
    messages = [dict(m) for m in conversations]
    tools = None
    if messages and messages[0].get("role") == "system" and "tools" in messages[0]:
        tools = messages[0].pop("tools")
        if isinstance(tools, str):
            tools = json.loads(tools) if tools.strip() else None
    return messages, tools


def gb2312_chars(first_row: int, last_row: int):
    """The characters of GB2312 rows first_row..last_row, from Python's own codec (nothing downloaded)."""
    chars = []
    for hi in range(first_row, last_row + 1):
        for lo in range(0xA1, 0xFF):
            try:
                chars.append(bytes([hi, lo]).decode("gb2312"))
            except UnicodeDecodeError:
                continue
    return chars


def common_chinese_text():
    """GB2312's 3755 level-1 characters (the most common, listed twice so they win ties) and its 3008
    level-2 characters, one per line: once the data's own merges are taken, the rest of the vocabulary gives
    Chinese characters their own tokens, so a user's question in words the data never used still costs one
    token per character."""
    level1, level2 = gb2312_chars(0xB0, 0xD7), gb2312_chars(0xD8, 0xF7)
    return "\n".join(level1 + level1 + level2)


def iter_corpus(paths):
    yield common_chinese_text()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                record = json.loads(line)
                messages, tools = split_system_tools(record["conversations"])
                yield render(messages, tools)


def train_bpe(corpus_paths, vocab_size: int):
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split("\n", behavior="isolated"),
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.Split(Regex("|".join([KEY, CJK_CHAR, WORD, PUNCT, r"\s+"])), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS + TAG_TOKENS,  # reserves ids 0..8 in this order
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=True,
    )
    tokenizer.train_from_iterator(iter_corpus(corpus_paths), trainer=trainer)
    # the tags were reserved as specials; mark them ordinary so skip_special_tokens keeps them
    state = json.loads(tokenizer.to_str())
    for entry in state["added_tokens"]:
        entry["special"] = entry["content"] in SPECIAL_TOKENS
    return Tokenizer.from_str(json.dumps(state, ensure_ascii=False))


def main():
    parser = argparse.ArgumentParser(
        description="Train the byte-level BPE tokenizer and write the chat template")
    parser.add_argument("--data", nargs="+",
                        default=["dataset/sft_agent.jsonl", "dataset/agent_rl.jsonl"],
                        help="JSONL files with 'conversations' (the held-out eval set is never used)")
    parser.add_argument("--vocab_size", type=int, default=6400)
    parser.add_argument("--model_max_length", type=int, default=4096)
    parser.add_argument("--out_dir", default="model")
    parser.add_argument("--template_only", action="store_true", help="only rewrite tokenizer_config.json")
    args = parser.parse_args()

    os.makedirs(args.out_dir, exist_ok=True)
    if not args.template_only:
        tokenizer = train_bpe([os.path.join(ROOT, p) if not os.path.isabs(p) else p for p in args.data],
                              args.vocab_size)
        for i, tok in enumerate(SPECIAL_TOKENS + TAG_TOKENS):
            assert tokenizer.token_to_id(tok) == i, f"{tok} should have id {i}"
        tokenizer.save(os.path.join(args.out_dir, "tokenizer.json"))
        print(f"vocab size {tokenizer.get_vocab_size()}")
    with open(os.path.join(args.out_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_config(args.model_max_length), f, ensure_ascii=False, indent=2)
        f.write("\n")

    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(args.out_dir)
    demo = [{"role": "user", "content": "帮我算一下 256 乘以 37"}]
    text = tok.apply_chat_template(demo, add_generation_prompt=True, tokenize=False)
    ids = tok(text, add_special_tokens=False)["input_ids"]
    print(f"wrote {args.out_dir}/tokenizer.json and tokenizer_config.json")
    print(f"demo: {text!r} -> {len(ids)} tokens")


if __name__ == "__main__":
    main()
