"""The OpenAI-compatible server, driven by the real `openai` client over loopback."""
import json
import os
import socket
import threading
import time

import pytest
import torch
import uvicorn
from openai import BadRequestError, OpenAI

from dataset.lm_dataset import encode
from model.model_minimind import MiniMindConfig, MiniMindForCausalLM, load_minimind
from scripts import eval_toolcall
from scripts.serve_openai_api import StreamParser, create_app
from trainer.train_agent import TOOLS
from trainer.trainer_utils import load_tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALL = '<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "北京"}}\n</tool_call>'
ANSWER = "北京现在晴,28°C。"


class ScriptedLM(torch.nn.Module):
    """A stand-in LM that greedily writes a fixed text: a weather call, or, once the prompt holds a tool
    response, the answer. It reads the prompt at prefill and then walks its script one token per step."""

    def __init__(self, tok):
        super().__init__()
        self.tok = tok
        self.config = MiniMindConfig()
        self.script, self.pos = [], 0

    def forward(self, input_ids, cache=None, use_cache=False, logits_to_keep=0, **kwargs):
        if input_ids.shape[1] > 1:  # prefill: choose the script
            prompt = self.tok.decode(input_ids[0].tolist())
            text = ANSWER if "<tool_response>" in prompt else "我查一下。" + CALL
            self.script, self.pos = encode(self.tok, text) + [self.tok.eos_token_id], 0
        logits = torch.full((1, 1, 6400), -1e4)
        logits[0, 0, self.script[min(self.pos, len(self.script) - 1)]] = 0.0
        self.pos += 1
        return type("Out", (), {"logits": logits})()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(model, tok):
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(model, tok, "minimind"), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}/v1"


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


@pytest.fixture(scope="module")
def scripted(tok):
    server, url = serve(ScriptedLM(tok), tok)
    yield OpenAI(base_url=url, api_key="none", max_retries=0)
    server.should_exit = True


def weather_messages():
    return [{"role": "user", "content": "北京今天天气怎么样?"}]


def test_models_endpoint(scripted):
    assert [m.id for m in scripted.models.list().data] == ["minimind"]


def test_tool_call_non_streaming_then_final_answer(scripted):
    r = scripted.chat.completions.create(model="minimind", messages=weather_messages(), tools=TOOLS[2:3])
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "我查一下。"
    (call,) = choice.message.tool_calls
    assert call.type == "function" and call.id.startswith("call_")
    assert call.function.name == "get_current_weather"
    assert json.loads(call.function.arguments) == {"location": "北京"}
    assert r.usage.completion_tokens > 0 and r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    follow = weather_messages() + [
        {"role": "assistant", "content": choice.message.content, "tool_calls": [call.model_dump()]},
        {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"temperature": "28°C"})},
    ]
    r2 = scripted.chat.completions.create(model="minimind", messages=follow, tools=TOOLS[2:3])
    assert r2.choices[0].finish_reason == "stop"
    assert r2.choices[0].message.content == ANSWER and not r2.choices[0].message.tool_calls


def test_tool_call_streaming(scripted):
    stream = scripted.chat.completions.create(model="minimind", messages=weather_messages(), tools=TOOLS[2:3],
                                              stream=True, stream_options={"include_usage": True})
    content, calls, finish, usage, ids = "", [], None, None, set()
    for chunk in stream:
        ids.add(chunk.id)
        assert chunk.object == "chat.completion.chunk" and chunk.model == "minimind"
        if chunk.usage:
            usage = chunk.usage
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        content += delta.content or ""
        for tc in delta.tool_calls or []:
            calls.append((tc.index, tc.function.name, json.loads(tc.function.arguments)))
        finish = chunk.choices[0].finish_reason or finish
    assert len(ids) == 1
    assert content == "我查一下。"
    assert calls == [(0, "get_current_weather", {"location": "北京"})]
    assert finish == "tool_calls" and usage.completion_tokens > 0


def test_malformed_requests_get_400(scripted):
    with pytest.raises(BadRequestError):
        scripted.chat.completions.create(model="minimind", messages=[{"role": "tool", "content": "x"}])
    with pytest.raises(BadRequestError):
        scripted.chat.completions.create(model="minimind", messages=weather_messages(), max_tokens=-3)
    with pytest.raises(BadRequestError):
        scripted.chat.completions.create(model="minimind", messages=[{"role": "wizard", "content": "x"}])


def test_stream_parser_holds_back_partial_tags():
    parser = StreamParser(thinking=True)
    pieces = []
    for piece in ["想一", "想</thi", "nk>\n\n好的<tool", "_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>"]:
        pieces += parser.feed(piece)
    pieces += parser.feed("", final=True)
    assert pieces == [("reasoning", "想一"), ("reasoning", "想"), ("content", "好的"),
                      ("tool_call", {"name": "a", "arguments": {}})]


def eval_args(**kw):
    argv = ["--save_dir", "unused", "--device", "cpu", "--dtype", "float32", "--max_gen_len", "24"]
    for k, v in kw.items():
        argv += [f"--{k}"] if v is True else [f"--{k}", str(v)]
    return eval_toolcall.parse_args(argv)


def same_behaviour(model, tok, argv):
    local = eval_toolcall.run_local(model, tok, [dict(c) for c in eval_toolcall.DEFAULT_CASES], eval_args(**argv))
    server, url = serve(model, tok)
    try:
        api = eval_toolcall.run_api([dict(c) for c in eval_toolcall.DEFAULT_CASES],
                                    eval_args(backend="api", api_base_url=url, **argv))
        api_stream = eval_toolcall.run_api([dict(c) for c in eval_toolcall.DEFAULT_CASES],
                                           eval_args(backend="api", api_base_url=url, stream=True, **argv))
    finally:
        server.should_exit = True
    for a, b, c in zip(local, api, api_stream):
        assert a.called_tools == b.called_tools == c.called_tools, a.prompt
        assert a.final_answer == b.final_answer == c.final_answer, a.prompt
    return local


def test_api_backend_equals_local_backend_on_a_tiny_model(tok):
    torch.manual_seed(0)
    model = MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2)).eval()
    same_behaviour(model, tok, {})


def test_api_backend_equals_local_backend_on_the_shipped_checkpoint(tok):
    path = os.path.join(ROOT, "out", "full_sft_256.pth")
    if not os.path.exists(path):
        pytest.skip("no shipped checkpoint")
    model = load_minimind(path, MiniMindConfig()).eval()
    local = same_behaviour(model, tok, {"max_gen_len": 96})
    assert sum(bool(r.calls) for r in local) >= 4  # it really exercises tool calls
