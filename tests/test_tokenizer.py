"""The shipped tokenizer and chat template: fixed ids, single-token tags, prefix stability, SFT labels."""
import json

import pytest

from dataset.lm_dataset import encode, encode_sft_conversation, render
from trainer.train_agent import TOOLS, execute_tool
from trainer.trainer_utils import load_tokenizer


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


def conversation():
    """A multi-turn tool conversation: parallel calls, a chained call, reasoning on the last turn."""
    w1 = execute_tool("get_current_weather", {"location": "北京"})
    w2 = execute_tool("get_current_weather", {"location": "Tokyo"})
    conv = execute_tool("unit_converter", {"value": 28, "from_unit": "celsius", "to_unit": "fahrenheit"})

    def call(i, name, args):
        return {"id": f"call_{i}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}

    return [
        {"role": "system", "content": "你是一个有用的AI助手。"},
        {"role": "user", "content": "北京和东京天气如何?北京的气温换成华氏度是多少?"},
        {"role": "assistant", "content": "",
         "tool_calls": [call(0, "get_current_weather", {"location": "北京"}),
                        call(1, "get_current_weather", {"location": "Tokyo"})]},
        {"role": "tool", "tool_call_id": "call_0", "content": json.dumps(w1, ensure_ascii=False)},
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(w2, ensure_ascii=False)},
        {"role": "assistant", "content": "再换算一下。",
         "tool_calls": [call(2, "unit_converter", {"value": 28, "from_unit": "celsius", "to_unit": "fahrenheit"})]},
        {"role": "tool", "tool_call_id": "call_2", "content": json.dumps(conv, ensure_ascii=False)},
        {"role": "assistant", "content": "北京晴,28°C(82.4°F);东京晴,12°C。",
         "reasoning_content": "两个城市的天气和换算结果都有了。"},
    ]


def test_fixed_special_ids_and_single_token_tags(tok):
    assert len(tok) == 6400
    assert (tok.pad_token_id, tok.bos_token_id, tok.eos_token_id) == (0, 1, 2)
    assert tok.convert_ids_to_tokens([0, 1, 2]) == ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    for tag in ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]:
        ids = encode(tok, tag)
        assert len(ids) == 1, tag
        assert tok.decode(ids, skip_special_tokens=True) == tag  # tags are not "special": they survive
    text = '<tool_call>\n{"name": "calculate_math", "arguments": {"expression": "2*3"}}\n</tool_call><|im_end|>'
    assert tok.decode(encode(tok, text), skip_special_tokens=True) == text.replace("<|im_end|>", "")


def test_template_renders_tools_calls_and_merged_tool_turns(tok):
    messages = conversation()
    text = render(tok, messages, TOOLS)
    assert text.startswith("<|im_start|>system\n你是一个有用的AI助手。\n\n# Tools\n")
    assert text.count("<tools>") == 1
    for tool in TOOLS:
        assert json.dumps(tool, ensure_ascii=False) in text
    assert '<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "北京"}}\n</tool_call>\n' \
           '<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "Tokyo"}}\n</tool_call>' in text
    # the two consecutive tool messages share one tool turn
    assert text.count("<|im_start|>tool\n") == 2
    assert "</tool_response>\n<tool_response>\n" in text
    assert "再换算一下。\n<tool_call>\n" in text
    assert "<think>\n两个城市的天气和换算结果都有了。\n</think>\n\n北京晴" in text
    # no tools: plain system block
    plain = render(tok, messages[:2])
    assert plain.startswith("<|im_start|>system\n你是一个有用的AI助手。<|im_end|>\n") and "<tools>" not in plain


def test_generation_prompt_and_open_thinking(tok):
    messages = conversation()[:2]
    closed = render(tok, messages, TOOLS, add_generation_prompt=True)
    opened = render(tok, messages, TOOLS, add_generation_prompt=True, open_thinking=True)
    assert closed.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert opened.endswith("<|im_start|>assistant\n<think>\n")


def test_template_is_prefix_stable_in_text_and_tokens(tok):
    messages = conversation()
    full = render(tok, messages, TOOLS)
    full_ids = encode(tok, full)
    for k, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        thinking = bool(message.get("reasoning_content"))
        prompt = render(tok, messages[:k], TOOLS, add_generation_prompt=True, open_thinking=thinking)
        assert full.startswith(prompt), k
        # and in token space: the prompt's ids are a prefix of the whole conversation's ids
        prompt_ids = encode(tok, prompt)
        assert full_ids[:len(prompt_ids)] == prompt_ids, k


def test_sft_labels_cover_exactly_assistant_turns_and_their_im_end(tok):
    messages = conversation()
    ids, labels = encode_sft_conversation(tok, messages, TOOLS)
    assert ids == encode(tok, render(tok, messages, TOOLS))  # piecewise tokenization == whole
    assert len(ids) == len(labels)
    # the labelled spans, decoded, are exactly each assistant turn's text after the generation prompt
    spans, cur = [], []
    for i, lab in zip(ids, labels):
        if lab != -100:
            assert lab == i
            cur.append(i)
        elif cur:
            spans.append(tok.decode(cur))
            cur = []
    if cur:
        spans.append(tok.decode(cur))
    assert spans == [
        '<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "北京"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "Tokyo"}}\n</tool_call><|im_end|>',
        '再换算一下。\n<tool_call>\n{"name": "unit_converter", "arguments": '
        '{"value": 28, "from_unit": "celsius", "to_unit": "fahrenheit"}}\n</tool_call><|im_end|>',
        # the thinking turn learns its reasoning too (its prompt only opens "<think>\n")
        "两个城市的天气和换算结果都有了。\n</think>\n\n北京晴,28°C(82.4°F);东京晴,12°C。<|im_end|>",
    ]
    n_im_end_labelled = sum(1 for i, lab in zip(ids, labels) if lab == tok.eos_token_id)
    assert n_im_end_labelled == 3  # every assistant turn's <|im_end|>, no other turn's


def test_decision_tokens_are_each_answers_first_token_and_every_tool_call(tok):
    """--decision_weight scales these: the first token after each think block and each <tool_call>."""
    import torch

    from dataset.lm_dataset import decision_mask, decision_weights, sft_collate

    messages = conversation()
    ids, labels = encode_sft_conversation(tok, messages, TOOLS)
    no_tool = [messages[0], {"role": "user", "content": "你好"}, {"role": "assistant", "content": "你好!"}]
    batch = [(ids, labels), encode_sft_conversation(tok, no_tool, TOOLS)]
    input_ids, label_ids = sft_collate(batch)
    mask = decision_mask(input_ids, label_ids, tok)
    picked = [[tok.decode([int(t)]) for t in row[m]] for row, m in zip(input_ids, mask)]
    # turn 1: two parallel calls; turn 2: a preamble, then its call (its first token "再" decides too);
    # turn 3: the reasoning is not a decision, the answer's first token after </think> is
    first_answer = tok.decode(encode(tok, "北京晴")[:1])
    assert picked[0] == ["<tool_call>", "<tool_call>", tok.decode(encode(tok, "再")[:1]), "<tool_call>",
                         first_answer]
    assert picked[1] == [tok.decode(encode(tok, "你好!")[:1])]  # the no-call answer's first token
    assert not (mask & (label_ids == -100)).any()  # only tokens the model writes
    weights = decision_weights(input_ids, label_ids, tok, 5.0)
    assert torch.equal(weights == 5.0, mask) and bool((weights[~mask] == 1.0).all())
