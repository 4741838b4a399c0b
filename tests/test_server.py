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

    def __init__(self, tok, first="我查一下。" + CALL):
        super().__init__()
        self.tok, self.first = tok, first
        self.config = MiniMindConfig()
        self.script, self.pos = [], 0

    def forward(self, input_ids, cache=None, use_cache=False, logits_to_keep=0, **kwargs):
        if input_ids.shape[1] > 1:  # prefill: choose the script
            prompt = self.tok.decode(input_ids[0].tolist())
            text = ANSWER if "<tool_response>" in prompt else self.first
            self.script, self.pos = encode(self.tok, text) + [self.tok.eos_token_id], 0
        logits = torch.full((1, 1, 6400), -1e4)
        logits[0, 0, self.script[min(self.pos, len(self.script) - 1)]] = 0.0
        self.pos += 1
        return type("Out", (), {"logits": logits})()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(model, tok, **options):
    """The app on a free loopback port, in a thread (weight updates allowed unless options say otherwise)."""
    port = free_port()
    app = create_app(model, tok, "minimind", **{"allow_weight_updates": True, **options})
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
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


@pytest.mark.parametrize("first, content", [("\n" + CALL + "\n" + CALL + "\n", None),
                                            (" 我查一下。 \n" + CALL + "\n\n好了 \n" + CALL, "我查一下。 \n\n\n好了")])
def test_streamed_content_adds_up_to_the_non_streamed_content(tok, first, content):
    """A client sends the reply back as the next request's assistant message: the whitespace a model writes
    around and between its calls must not reach the streamed content when the non-streamed one drops it, or
    the two clients render different prompts for the next turn."""
    server, url = serve(ScriptedLM(tok, first), tok)
    try:
        client = OpenAI(base_url=url, api_key="none", max_retries=0)
        whole = client.chat.completions.create(model="minimind", messages=weather_messages(), tools=TOOLS[2:3])
        streamed, calls = [], 0
        for chunk in client.chat.completions.create(model="minimind", messages=weather_messages(),
                                                    tools=TOOLS[2:3], stream=True):
            delta = chunk.choices[0].delta
            streamed.append(delta.content or "")
            calls += len(delta.tool_calls or [])
    finally:
        server.should_exit = True
    assert whole.choices[0].message.content == content and len(whole.choices[0].message.tool_calls) == 2
    assert "".join(streamed) == (content or "") and calls == 2


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


def test_streaming_tokens_on_packed_weights_are_the_same(tok):
    """The streaming path samples on the engine's packed bf16 weights: the same tokens as without them."""
    from trainer.fast_engine import PackedLinears

    if not PackedLinears.supported("cpu", "bfloat16"):
        pytest.skip("no oneDNN bf16 linear here")
    from scripts.serve_openai_api import Generator

    torch.manual_seed(0)
    model = MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2)).eval()
    packed = Generator(model, tok, "cpu", "bfloat16")
    plain = Generator(model, tok, "cpu", "bfloat16")
    plain.engine.packed = None
    assert packed.engine.packed is not None
    prompt = encode(tok, "<|im_start|>user\n北京天气如何?<|im_end|>\n<|im_start|>assistant\n")
    for temperature, seed in ((0.0, None), (1.0, 7)):
        a = list(packed.tokens(prompt, 20, temperature, 1.0, seed=seed))
        b = list(plain.tokens(prompt, 20, temperature, 1.0, seed=seed))
        assert a == b and len(a) > 0
    assert packed.engine.packed.version is not None  # it did run on packed weights
    assert not any({"forward", "qkv", "gate_up"} & set(vars(m)) for m in model.modules())


# --- hardening: malformed requests get a 4xx with a message; concurrent requests never mix state ----------

def raw_post(url, body: bytes, headers=None, chunked=False):
    """POST raw bytes (the openai client cannot send broken JSON); returns (status, parsed body or text)."""
    import http.client
    from urllib.parse import urlparse

    u = urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    headers = {"Content-Type": "application/json", **(headers or {})}
    if chunked:
        conn.putrequest("POST", u.path)
        for k, v in {**headers, "Transfer-Encoding": "chunked"}.items():
            conn.putheader(k, v)
        conn.endheaders()
        for i in range(0, len(body), 65536):
            piece = body[i:i + 65536]
            try:
                conn.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break  # the server refused the body early
        else:
            conn.send(b"0\r\n\r\n")
    else:
        conn.request("POST", u.path, body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read().decode("utf-8", "replace")
    conn.close()
    try:
        return resp.status, json.loads(data)
    except json.JSONDecodeError:
        return resp.status, data


def test_malformed_flood_and_concurrent_requests(tok):
    torch.manual_seed(0)
    model = MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2)).eval()
    server, url = serve(model, tok)
    chat_url = url + "/chat/completions"
    user = [{"role": "user", "content": "你好"}]
    call = {"id": "c1", "type": "function", "function": {"name": "calculate_math", "arguments": "{oops"}}

    def body(**kw):
        return json.dumps({"model": "minimind", "messages": user, "max_tokens": 8, **kw}).encode()

    malformed = {
        "invalid JSON": b'{"messages": [',
        "JSON that is not an object": b"[1, 2]",
        "empty body": b"",
        "no messages": json.dumps({"model": "minimind"}).encode(),
        "empty messages": body(messages=[]),
        "messages not a list": body(messages="hi"),
        "message without role": body(messages=[{"content": "x"}]),
        "unknown role": body(messages=[{"role": "wizard", "content": "x"}]),
        "content of a wrong type": body(messages=[{"role": "user", "content": 42}]),
        "temperature of a wrong type": body(temperature="hot"),
        "temperature out of range": body(temperature=5),
        "top_p of zero": body(top_p=0),
        "negative max_tokens": body(max_tokens=-3),
        "max_tokens of a wrong type": body(max_tokens="many"),
        "tool message without a call": body(messages=[{"role": "tool", "content": "x"}]),
        "tool-call arguments not JSON": body(messages=user + [
            {"role": "assistant", "content": None, "tool_calls": [call]}]),
        "tools not a list": body(tools="calculate_math"),
        "tool without a name": body(tools=[{"type": "function", "function": {}}]),
        "stream of a wrong type": body(stream=[1]),
        "longer than the context": body(messages=[{"role": "user", "content": "天气" * 6000}]),
    }
    try:
        for what, raw in malformed.items():
            status, reply = raw_post(chat_url, raw)
            assert 400 <= status < 500, (what, status, reply)
            assert isinstance(reply, dict) and reply["error"]["message"], (what, reply)
        big = body(messages=[{"role": "user", "content": "x" * (2 << 20)}])
        for chunked in (False, True):  # with a Content-Length, and streamed without one
            status, reply = raw_post(chat_url, big, chunked=chunked)
            assert status == 413 and reply["error"]["message"], (chunked, reply)

        client = OpenAI(base_url=url, api_key="none", max_retries=0)
        prompts = [f"第{i}个问题:{w}" for i, w in enumerate(["天气", "汇率", "时间", "翻译", "计算", "单位",
                                                              "北京", "东京"])]

        def ask(prompt):
            r = client.chat.completions.create(model="minimind", messages=[{"role": "user", "content": prompt}],
                                               tools=TOOLS, temperature=0, max_tokens=24)
            m = r.choices[0].message
            return m.content, [(c.function.name, c.function.arguments) for c in m.tool_calls or []]

        alone = [ask(p) for p in prompts]
        together = [None] * len(prompts)

        def worker(i):
            together[i] = ask(prompts[i])

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(prompts))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert together == alone  # each concurrent answer is what the request gets alone
        status, reply = raw_post(url + "/models", b"{}")  # wrong method: 405, still in the OpenAI shape
        assert status == 405 and reply["error"]["message"]
        assert client.models.list().data[0].id == "minimind"  # still healthy
        assert ask(prompts[0]) == alone[0]
    finally:
        server.should_exit = True


class SlowLM(torch.nn.Module):
    """A tiny model that never ends a turn and takes 20 ms a token: a stream only stops when it is freed."""

    def __init__(self, tok):
        super().__init__()
        torch.manual_seed(0)
        self.inner = MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2)).eval()
        self.config, self.eos = self.inner.config, tok.eos_token_id
        self.calls = 0

    def forward(self, input_ids, **kwargs):
        time.sleep(0.02)
        self.calls += 1
        out = self.inner(input_ids, **kwargs)
        out.logits[..., self.eos] = -1e9
        return out


def test_a_client_that_disconnects_mid_stream_frees_its_generation(tok):
    import http.client

    import gc

    model = SlowLM(tok)
    port = free_port()
    gc.disable()  # the slot must come back by design, not when the garbage collector happens to run
    app = create_app(model, tok, "minimind", max_concurrent=1)  # one slot: a leaked stream would block all
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        body = {"model": "minimind", "messages": [{"role": "user", "content": "hi"}], "stream": True,
                "max_tokens": 3000}  # a minute of generation if nobody stops it
        conn.request("POST", "/v1/chat/completions", body=json.dumps(body),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        assert resp.status == 200 and resp.read(6) == b"data: "
        conn.sock.shutdown(socket.SHUT_RDWR)  # the client goes away mid-stream
        conn.close()
        time.sleep(1.0)
        calls = model.calls
        time.sleep(0.5)
        assert model.calls - calls <= 1, "the abandoned generation kept running"
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=0, timeout=20)
        r = client.chat.completions.create(model="minimind", messages=[{"role": "user", "content": "hi"}],
                                           max_tokens=4)
        assert r.usage.completion_tokens == 4  # the slot was given back
    finally:
        gc.enable()
        server.should_exit = True


class FixedLM(ScriptedLM):
    """Writes `text` whatever the prompt (greedy, one token a step), and keeps the last prompt it read."""

    def __init__(self, tok, text):
        super().__init__(tok)
        self.text, self.prompt = text, ""

    def forward(self, input_ids, cache=None, use_cache=False, logits_to_keep=0, **kwargs):
        if input_ids.shape[1] > 1:
            self.prompt = self.tok.decode(input_ids[0].tolist())
            self.script, self.pos = encode(self.tok, self.text) + [self.tok.eos_token_id], 0
        logits = torch.full((1, 1, 6400), -1e4)
        logits[0, 0, self.script[min(self.pos, len(self.script) - 1)]] = 0.0
        self.pos += 1
        return type("Out", (), {"logits": logits})()


def test_tool_choice_none_required_and_named(tok):
    def ask(text, **kw):
        model = FixedLM(tok, text)
        server, url = serve(model, tok)
        try:
            client = OpenAI(base_url=url, api_key="none", max_retries=0)
            r = client.chat.completions.create(model="minimind", messages=weather_messages(), tools=TOOLS,
                                               temperature=0, max_tokens=60, **kw)
            return r.choices[0], model.prompt
        finally:
            server.should_exit = True

    choice, prompt = ask("晴。", tool_choice="none")
    assert "get_current_weather" not in prompt and choice.message.content == "晴。"  # no tool offered
    call = '<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "北京"}}\n</tool_call>'
    choice, _ = ask("我查一下。" + call, tool_choice="none")  # a call written anyway is not one
    assert choice.message.content == "我查一下。" and not choice.message.tool_calls
    assert choice.finish_reason == "stop"
    choice, _ = ask('{"name": "get_current_weather", "arguments": {"location": "北京"}}\n</tool_call>',
                    tool_choice="required")
    assert [c.function.name for c in choice.message.tool_calls] == ["get_current_weather"]
    assert choice.finish_reason == "tool_calls"
    named = {"type": "function", "function": {"name": "get_current_time"}}
    choice, prompt = ask('{"timezone": "Asia/Tokyo"}}\n</tool_call>', tool_choice=named)
    assert prompt.endswith('<tool_call>\n{"name": "get_current_time", "arguments": ')  # the call is opened
    call = choice.message.tool_calls[0].function
    assert call.name == "get_current_time" and json.loads(call.arguments) == {"timezone": "Asia/Tokyo"}
    with pytest.raises(BadRequestError):
        ask("x", tool_choice={"type": "function", "function": {"name": "no_such_tool"}})


def test_unknown_model_is_a_404_and_n_above_one_a_400(scripted):
    from openai import NotFoundError
    with pytest.raises(NotFoundError) as e:
        scripted.chat.completions.create(model="gpt-4o", messages=weather_messages())
    assert e.value.body["code"] == "model_not_found"
    with pytest.raises(BadRequestError, match="n=1"):
        scripted.chat.completions.create(model="minimind", messages=weather_messages(), n=2)


def test_a_json_syntax_error_says_so_without_a_byte_offset_for_a_field(tok):
    torch.manual_seed(0)
    server, url = serve(MiniMindForCausalLM(MiniMindConfig(hidden_size=64, num_hidden_layers=2)).eval(), tok)
    try:
        status, reply = raw_post(url + "/chat/completions", b'{"messages": [')
    finally:
        server.should_exit = True
    assert status == 400 and reply["error"]["param"] == "body"
    assert reply["error"]["message"].startswith("the request body is not valid JSON")


# --- the chat page's routes: the tool world over HTTP, several checkpoints, malformed calls as text ---------

def test_the_chat_page_and_the_tool_routes(tok):
    import urllib.request

    server, url = serve(ScriptedLM(tok), tok, more_models={"agent": (ScriptedLM(tok), "a.pth")})
    root = url[:-len("/v1")]
    try:
        client = OpenAI(base_url=url, api_key="none", max_retries=0)
        assert [m.id for m in client.models.list().data] == ["minimind", "agent"]
        reply = client.chat.completions.create(model="agent", messages=weather_messages(), tools=TOOLS)
        assert reply.choices[0].message.tool_calls[0].function.name == "get_current_weather"

        def post(path, body):
            request = urllib.request.Request(root + path, json.dumps(body).encode(), method="POST",
                                             headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request) as r:
                    return r.status, json.loads(r.read())
            except urllib.error.HTTPError as e:
                return e.code, json.loads(e.read())

        status, body = post("/v1/tools/execute", {"name": "get_current_weather",
                                                   "arguments": '{"location": "Beijing"}'})
        assert status == 200 and body["result"]["temperature"] == "28°C" and body["duration_ms"] >= 0
        assert json.loads(body["content"]) == body["result"] and "28°C" in body["content"]  # as training writes it
        status, body = post("/v1/tools/execute", {"name": "rm_rf", "arguments": {}})
        assert status == 200 and body["result"]["error"].startswith("unknown tool")
        status, body = post("/v1/tools/execute", {"name": "calculate_math", "arguments": "{2+"})
        assert status == 400 and "arguments: not JSON" in body["error"]["message"]
        with urllib.request.urlopen(url + "/tools") as r:
            listed = json.loads(r.read())
        assert [t["function"]["name"] for t in listed["tools"]] == [t["function"]["name"] for t in TOOLS]
        assert set(listed["examples"]) >= {t["function"]["name"] for t in TOOLS}
        with urllib.request.urlopen(root + "/") as r:
            page = r.read().decode()
        assert r.headers["content-type"].startswith("text/html") and "/v1/tools/execute" in page
    finally:
        server.should_exit = True


def test_a_malformed_call_comes_back_as_text():
    parser = StreamParser(thinking=False)
    out = parser.feed('好<tool_call>{"name": "x", "arguments": [1]}</tool_call>再见', final=True)
    assert out == [("content", '好<tool_call>{"name": "x", "arguments": [1]}</tool_call>再见')]
    assert parser.calls == []


def test_a_flood_is_queued_or_refused_and_the_server_stays_up(tok):
    """100 requests at once on 2 slots and a queue of 8: each is answered (200) or refused at once (503 with
    Retry-After), /health answers within a second meanwhile, and the server serves normally afterwards.
    Before admission control, 41 such requests took every worker thread and the server never recovered."""
    import http.client

    server, url = serve(SlowLM(tok), tok, max_concurrent=2, max_queue=8)
    port = int(url.split(":")[2].split("/")[0])
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5})
    statuses, health = [], []

    def post(stream):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("POST", "/v1/chat/completions", body[:-1] + f', "stream": {json.dumps(stream)}}}',
                     {"Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        statuses.append((r.status, r.getheader("Retry-After")))
        conn.close()

    try:
        threads = [threading.Thread(target=post, args=(i % 2 == 0,)) for i in range(100)]
        for t in threads:
            t.start()
        for _ in range(3):
            t0 = time.perf_counter()
            urllib_health = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            urllib_health.request("GET", "/health")
            assert urllib_health.getresponse().status == 200
            health.append(time.perf_counter() - t0)
        for t in threads:
            t.join(timeout=120)
        assert len(statuses) == 100 and {s for s, _ in statuses} <= {200, 503}
        assert all(after == "1" for s, after in statuses if s == 503)
        assert sum(s == 200 for s, _ in statuses) >= 10 and max(health) < 1.0
        client = OpenAI(base_url=url, api_key="none", max_retries=0)
        assert client.chat.completions.create(model="minimind", messages=weather_messages(), max_tokens=3).choices
    finally:
        server.should_exit = True
