"""
An OpenAI-compatible HTTP server for a MiniMind checkpoint, with tool calls; it also speaks the part of SGLang's
native API that RL rollouts use, so `train_agent.py --rollout_engine sglang` can run against it.

    POST /v1/chat/completions   messages (incl. assistant tool_calls and tool messages), tools, temperature, top_p,
                                max_tokens, stream, open_thinking / chat_template_kwargs
    GET  /v1/models             every checkpoint served (--weight agent full_sft serves two)
    GET  /v1/tools              the tool world's schemas and an example request per tool
    POST /v1/tools/execute      {"name", "arguments"} -> the tool world's result (execute_tool), for a client
                                that runs the tool loop itself, as the chat page does
    GET  /                      the chat page: ask, watch each call and its result, read the answer
    POST /generate              SGLang's: input_ids (one list or a batch) or text, sampling_params (one dict or one
                                per prompt), return_logprob -> output_ids, text, meta_info (finish_reason,
                                prompt_tokens, completion_tokens, output_token_logprobs)
    POST /update_weights_from_disk   {"model_path": dir} -> {"success", "message"}: new weights, between requests
    GET  /get_model_info

The model writes <tool_call> blocks; the server returns them as OpenAI `tool_calls` (finish_reason "tool_calls"),
thinking as `reasoning_content`, and `usage`. Streaming is SSE: chat.completion.chunk objects, tool calls as
delta.tool_calls entries with an index, then `data: [DONE]`. Bad requests get a 400 with an OpenAI-style error.
/generate samples with the trainer's own code (TorchRolloutEngine.sample, sample_next), so its log-probs are
under softmax(logits / T), as SGLang's are.

Run:
    python scripts/serve_openai_api.py --weight agent            # http://127.0.0.1:8998/v1
    python scripts/serve_openai_api.py --weight agent full_sft   # and the chat page at http://127.0.0.1:8998/
Then any OpenAI client works, e.g.:
    python scripts/eval_toolcall.py --backend api --api_base_url http://127.0.0.1:8998/v1
Or, standing in for an SGLang server, RL rollouts:
    python scripts/serve_openai_api.py --weight full_sft --port 30000 --allow_weight_updates
    python trainer/train_agent.py --rollout_engine sglang --sglang_base_url http://127.0.0.1:30000
With --api_key KEY (or $MINIMIND_API_KEY) every endpoint but /health wants `Authorization: Bearer KEY`.
"""
import argparse
import asyncio
import contextlib
import hmac
import json
import os
import re
import sys
import threading
import time
import uuid
import weakref
from typing import Any, Literal

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from starlette.background import BackgroundTask
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from safetensors import SafetensorError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from dataset.lm_dataset import LONE_SURROGATE, clean_text, clean_value, encode, render
from model.model_minimind import load_model_dir, weight_path
from trainer.fast_engine import KVBuffer, TorchRolloutEngine
from trainer.rollout_engine import sample_next
from trainer.train_agent import TOOLS, execute_tool, parse_tool_call_body
from trainer.trainer_utils import (
    TOKENIZER_DIR, add_model_args, autocast, default_dtype, init_model, model_source, resolve_device,
)

MAX_BODY_BYTES = 1 << 20  # 1 MiB of JSON is far more than any sane chat request
MAX_JSON_DEPTH = 64  # a body nested deeper is refused before it is parsed (the parser recurses)
MAX_GENERATE_PROMPTS = 256  # prompts one /generate call may carry
MIN_TEMPERATURE = 1e-4  # below this, logits / T overflow: sampling is greedy
MAX_STOP_STRINGS = 4  # as OpenAI
# config.json fields that must equal the served model's before a weight update builds anything from them
SHAPE_FIELDS = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                "num_key_value_heads")
CHAT_PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "chat.html")
# one request per tool for the chat page to offer (the last: a chained request, call -> result -> next call)
EXAMPLES = {
    "calculate_math": "What is 1234 * 56?",
    "unit_converter": "把 42 公里换算成英里",
    "get_current_weather": "北京现在天气怎么样?",
    "get_current_time": "What time is it in Tokyo right now?",
    "get_exchange_rate": "How many CNY is one USD worth today?",
    "translate_text": "请把“机器学习很有趣”翻译成英文",
    "chained": "我有 200 美元,按现在的汇率能换多少人民币?",
}


# ----------------------------------------------------------------------------------------------------------
# request schema (unknown fields are ignored, as OpenAI clients send many)


class FunctionCall(BaseModel):
    name: str
    arguments: str | dict = "{}"


class ToolCall(BaseModel):
    id: str | None = None
    type: str = "function"
    function: FunctionCall


class Message(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | list | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    reasoning_content: str | None = None


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")
    model: str | None = None
    messages: list[Message] = Field(min_length=1)
    tools: list[dict[str, Any]] | None = None
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    open_thinking: bool | None = None
    chat_template_kwargs: dict[str, Any] | None = None
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)
    stop: str | list[str] | None = None
    n: int = Field(default=1, ge=1)
    tool_choice: str | dict[str, Any] | None = None


class BadRequest(ValueError):
    pass


class GenerateRequest(BaseModel):
    """SGLang's /generate, the fields this server uses (others are ignored)."""
    model_config = ConfigDict(extra="ignore")
    text: str | list[str] | None = None
    input_ids: Any = None  # list[int] or list[list[int]], checked by hand for a precise message
    sampling_params: Any = None  # one dict for every prompt, or one per prompt
    return_logprob: bool | list[bool] = False
    stream: bool = False


class SamplingParams(BaseModel):
    """SGLang's sampling parameters, the ones this server implements (others are ignored)."""
    model_config = ConfigDict(extra="ignore")
    max_new_tokens: int = Field(default=128, ge=0)
    temperature: float = Field(default=1.0, ge=0.0)  # 0 = greedy
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    top_k: int = -1
    stop: str | list[str] | None = None
    stop_token_ids: list[int] | None = None
    ignore_eos: bool = False
    skip_special_tokens: bool = True
    no_stop_trim: bool = False


class ToolRequest(BaseModel):
    name: str = Field(min_length=1, max_length=100)
    arguments: str | dict[str, Any] = "{}"


class UpdateWeightsRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")
    model_path: str = Field(min_length=1)


def text_of(content, where: str) -> str:
    """A message's content as text: a string, or the text of its content parts (others are left out)."""
    if isinstance(content, list):
        texts = []
        for j, part in enumerate(content):
            if not isinstance(part, dict):
                raise BadRequest(f"{where}[{j}]: expected a content part object")
            if part.get("type") == "text":
                if not isinstance(part.get("text"), str):
                    raise BadRequest(f"{where}[{j}].text: expected a string")
                texts.append(part["text"])
        content = "".join(texts)
    content = content or ""
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequest(f"{where}: not valid Unicode (a lone surrogate such as \\ud800)") from None
    return content


def json_depth(value, limit: int) -> int:
    """How deep `value` nests (lists and dicts), counted up to limit + 1 without recursion."""
    depth, stack = 0, [(value, 1)]
    while stack and depth <= limit:
        item, d = stack.pop()
        if isinstance(item, (dict, list)):
            depth = max(depth, d)
            stack.extend((v, d + 1) for v in (item.values() if isinstance(item, dict) else item))
    return depth


def to_template_messages(req: ChatRequest):
    """OpenAI messages -> the chat template's messages; checks what the schema cannot. Every string the
    template will write (content, reasoning, calls, tool schemas, a named tool_choice) goes through clean_text:
    a spelled-out <|im_start|> in a tool's output or a tool's description is text, not a turn."""
    try:
        json.dumps([[m.model_dump() for m in req.messages], req.tools, req.tool_choice],
                   ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequest("the request holds text that is not valid Unicode (a lone surrogate)") from None
    messages, open_calls = [], set()
    for i, m in enumerate(req.messages):
        content = text_of(m.content, f"messages[{i}].content")
        msg = {"role": m.role, "content": None if content is None else clean_text(content)}
        if m.role == "assistant":
            if m.reasoning_content:
                msg["reasoning_content"] = clean_text(m.reasoning_content)
            if m.tool_calls:
                calls = []
                for call in m.tool_calls:
                    args = call.function.arguments
                    if isinstance(args, str):
                        try:
                            parsed = json.loads(args) if args.strip() else {}
                        except (json.JSONDecodeError, RecursionError):
                            raise BadRequest(f"messages[{i}].tool_calls: arguments of {call.function.name!r} "
                                             "is not valid JSON") from None
                    else:
                        parsed = args
                    if not isinstance(parsed, dict):
                        raise BadRequest(f"messages[{i}].tool_calls: arguments must be a JSON object")
                    if json_depth(parsed, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
                        raise BadRequest(f"messages[{i}].tool_calls: arguments nested deeper than "
                                         f"{MAX_JSON_DEPTH} levels")
                    function = {"name": clean_text(call.function.name), "arguments": clean_value(parsed)}
                    calls.append({"type": "function", "function": function})
                    open_calls.add(call.id)
                msg["tool_calls"] = calls
        if m.role == "tool" and not open_calls:
            raise BadRequest(f"messages[{i}]: a tool message must follow an assistant message with tool_calls")
        messages.append(msg)
    if req.tools is not None:
        for j, tool in enumerate(req.tools):
            if not isinstance(tool.get("function"), dict) or not isinstance(tool["function"].get("name"), str):
                raise BadRequest(f"tools[{j}]: expected {{'type': 'function', 'function': {{'name': ...}}}}")
        req.tools = clean_value(req.tools)
    req.tool_choice = clean_value(req.tool_choice)
    return messages


# ----------------------------------------------------------------------------------------------------------
# generation: token by token, with the tool-call/thinking structure parsed as it streams


class WeightsLock:
    """Any number of generations at once (readers), or one weight update (the writer) once they have all
    finished. An update that is waiting goes before new generations, so a steady stream cannot starve it."""

    def __init__(self):
        self.cond = threading.Condition()
        self.readers = 0
        self.writing = False
        self.writers_waiting = 0

    @contextlib.contextmanager
    def read(self):
        with self.cond:
            self.cond.wait_for(lambda: not self.writing and self.writers_waiting == 0)
            self.readers += 1
        try:
            yield
        finally:
            with self.cond:
                self.readers -= 1
                self.cond.notify_all()

    @contextlib.contextmanager
    def write(self):
        with self.cond:
            self.writers_waiting += 1
            self.cond.wait_for(lambda: not self.writing and self.readers == 0)
            self.writers_waiting -= 1
            self.writing = True
        try:
            yield
        finally:
            with self.cond:
                self.writing = False
                self.cond.notify_all()


class Busy(Exception):
    """Every generation slot is taken and the queue is full: the request is refused with a 503."""


class Lease:
    """A generation slot, released once whichever way its request ends."""

    def __init__(self, semaphore):
        self.semaphore, self.held = semaphore, True

    def release(self):
        if self.held:
            self.held = False
            self.semaphore.release()


class Admission:
    """Who may generate: `running` generations at once and `queued` more waiting, in the event loop, where a
    waiting request holds no worker thread; past that, Busy (a 503 with Retry-After). A generation needs a
    worker thread for each token; as threads are only ever taken by admitted generations, the ones running can
    always finish, however many requests arrive."""

    def __init__(self, running: int, queued: int):
        self.semaphore = asyncio.Semaphore(running)
        self.queued, self.waiting = queued, 0

    async def lease(self) -> Lease:
        if self.semaphore.locked() and self.waiting >= self.queued:
            raise Busy()
        self.waiting += 1
        try:
            await self.semaphore.acquire()
        finally:
            self.waiting -= 1
        return Lease(self.semaphore)


class Generator:
    """Owns the model; each request gets its own KV cache, so concurrent requests never share state. Requests
    are admitted (Admission) before they take a worker thread. Weight updates wait for the generations in
    flight and hold new ones back (WeightsLock)."""

    def __init__(self, model, tokenizer, device, dtype, max_concurrent=2, model_path="", max_queue=32):
        self.model, self.tokenizer, self.device, self.dtype = model.eval(), tokenizer, device, dtype
        self.context_len = model.config.max_position_embeddings
        self.admission = Admission(max_concurrent, max_queue)
        self.slots = threading.Semaphore(max_concurrent)
        self.weights = WeightsLock()
        self.model_path = model_path  # what /get_model_info reports; the last directory loaded
        self.weight_version = 0  # weight updates so far
        self.engine = TorchRolloutEngine(self.model, tokenizer.eos_token_id, tokenizer.pad_token_id, device, dtype)

    @torch.no_grad()
    def tokens(self, prompt_ids, max_new_tokens, temperature, top_p, seed=None):
        """Yield sampled token ids until EOS (not yielded) or the budget; holds a concurrency slot meanwhile."""
        eos = self.tokenizer.eos_token_id
        gen = torch.Generator().manual_seed(seed) if seed is not None else None
        with self.slots, self.weights.read():
            cache = KVBuffer(room=max_new_tokens)
            ids = torch.tensor([prompt_ids], device=self.device)
            for _ in range(max_new_tokens):
                # per token: the generator may resume on another thread, and autocast is per thread. With the
                # engine's packed weights autocast has no weights left to cast, so entering it costs little
                with autocast(self.device, self.dtype), self.engine.packed_weights():
                    logits = self.model(ids, cache=cache, use_cache=True, logits_to_keep=1).logits[:, -1]
                token, _ = sample_next(logits, temperature, top_p, generator=gen)
                t = int(token[0])
                if t == eos:
                    return
                yield t
                ids = token[:, None]

    def sample(self, prompt_ids, budgets, temperature, top_p, stop_ids):
        """One batched sampling call of the trainer's engine (RolloutResult), holding a slot and the weights."""
        with self.slots, self.weights.read():
            return self.engine.sample(prompt_ids, budgets, temperature, top_p, stop_ids)

    def load_weights(self, path: str):
        """Load a transformers directory (Qwen3 or MiniMind layout) of the same shape into the served model.
        Everything is read and checked first, so a bad directory leaves the model as it was (ValueError); its
        config.json is checked against the served shape before any model is built from it."""
        with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
            try:
                config = json.load(f)
            except (json.JSONDecodeError, RecursionError):
                raise ValueError("config.json is not JSON") from None
        if not isinstance(config, dict):
            raise ValueError(f"config.json holds a {type(config).__name__}, not an object")
        for field in SHAPE_FIELDS:
            served = getattr(self.model.config, field)
            if field in config and config[field] != served:
                raise ValueError(f"config.json: {field} is {str(config[field])[:40]}, not the served model's "
                                 f"shape ({field} {served})")
        new_state = load_model_dir(path).state_dict()
        state = self.model.state_dict()
        if set(new_state) != set(state):
            missing, extra = sorted(set(state) - set(new_state)), sorted(set(new_state) - set(state))
            raise ValueError(f"{path}: the weights do not fit the served model: missing {missing[:5]}, "
                             f"unexpected {extra[:5]}")
        for name, value in new_state.items():
            if value.shape != state[name].shape:
                raise ValueError(f"{path}: {name} has shape {tuple(value.shape)}, the served model "
                                 f"{tuple(state[name].shape)}")
        with self.weights.write():
            self.model.load_state_dict(new_state)
            self.model_path = path
            self.weight_version += 1


class StreamParser:
    """Turns the model's text into OpenAI pieces as it arrives: reasoning (inside an open think block),
    content, and complete tool calls. A tag that may still be forming is held back until it is decided."""

    TAGS = ("<tool_call>", "</think>")

    def __init__(self, thinking: bool):
        self.thinking = thinking  # the prompt opened "<think>\n": text is reasoning until </think>
        self.buffer = ""
        self.in_call = False
        self.calls = []

    def feed(self, text: str, final: bool = False):
        """Returns a list of (kind, value): ("reasoning", str), ("content", str), ("tool_call", dict)."""
        self.buffer += text
        out = []
        while self.buffer:
            if self.in_call:
                end = self.buffer.find("</tool_call>")
                if end < 0:
                    if final:  # an unclosed call: give it back as text
                        out.append(("content", "<tool_call>" + self.buffer))
                        self.buffer = ""
                    break
                body = self.buffer[:end]
                call = parse_tool_call_body(body.strip())
                self.buffer = self.buffer[end + len("</tool_call>"):]
                self.in_call = False
                if call is not None:
                    self.calls.append(call)
                    out.append(("tool_call", call))
                else:  # not a usable call: the client sees what the model wrote
                    self._emit(out, "<tool_call>" + body + "</tool_call>")
                continue
            tag = "</think>" if self.thinking else "<tool_call>"
            pos = self.buffer.find(tag)
            if pos >= 0:
                self._emit(out, self.buffer[:pos])
                self.buffer = self.buffer[pos + len(tag):]
                if self.thinking:
                    self.thinking = False
                    self.buffer = self.buffer.lstrip("\n")
                else:
                    self.in_call = True
                continue
            keep = 0 if final else self._partial_tag_len(tag)
            self._emit(out, self.buffer[:len(self.buffer) - keep])
            self.buffer = self.buffer[len(self.buffer) - keep:]
            break
        return out

    def _partial_tag_len(self, tag):
        for k in range(min(len(tag) - 1, len(self.buffer)), 0, -1):
            if self.buffer.endswith(tag[:k]):
                return k
        return 0

    def _emit(self, out, text):
        if not text:
            return
        kind = "reasoning" if self.thinking else "content"
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + text)
        else:
            out.append((kind, text))


def tool_call_json(call, index):
    """A call the model wrote, in OpenAI's shape; what it wrote stays text a client can read (a lone
    surrogate it spelled as an escape becomes U+FFFD)."""
    return {"index": index, "id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
            "function": {"name": clean_text(call["name"]),
                         "arguments": clean_text(json.dumps(call["arguments"], ensure_ascii=False))}}


# ----------------------------------------------------------------------------------------------------------
# SGLang's native /generate: token ids in, token ids and log-probs out


def generation_prompts(req: GenerateRequest, tokenizer, vocab_size: int):
    """(prompts as lists of ids, whether the request was a single prompt), with each id checked."""
    if (req.input_ids is None) == (req.text is None):
        raise BadRequest("input_ids or text: give exactly one of them")
    if req.stream:
        raise BadRequest("stream: this server's /generate does not stream")
    if req.text is not None:
        single = isinstance(req.text, str)
        for i, text in enumerate([req.text] if single else req.text):
            if LONE_SURROGATE.search(text):  # raw prompts: control tokens are theirs to write
                raise BadRequest(f"text{'' if single else f'[{i}]'}: not valid Unicode (a lone surrogate)")
        prompts = [encode(tokenizer, t) for t in ([req.text] if single else req.text)]
        for i, prompt in enumerate(prompts):
            if not prompt:
                raise BadRequest("text: empty" if single else f"text[{i}]: empty")
        return prompts, single
    ids = req.input_ids
    single = isinstance(ids, list) and not any(isinstance(t, list) for t in ids)
    batch = [ids] if single else ids
    if not isinstance(batch, list) or not batch:
        raise BadRequest("input_ids: expected a list of token ids or a non-empty list of such lists")
    for i, prompt in enumerate(batch):
        where = "input_ids" if single else f"input_ids[{i}]"
        if not isinstance(prompt, list) or not prompt:
            raise BadRequest(f"{where}: expected a non-empty list of token ids")
        for j, t in enumerate(prompt):
            if not isinstance(t, int) or isinstance(t, bool) or not 0 <= t < vocab_size:
                raise BadRequest(f"{where}[{j}]: {t!r} is not a token id in 0..{vocab_size - 1}")
    return batch, single


def per_prompt(value, n: int, field: str, kind=dict) -> list:
    """One value for every prompt, or a list of exactly n values."""
    if isinstance(value, list):
        if len(value) != n:
            raise BadRequest(f"{field}: {len(value)} entries for {n} prompts")
        return value
    return [kind() if value is None else value for _ in range(n)]


def sampling_params_of(raw, i: int) -> SamplingParams:
    where = f"sampling_params[{i}]" if i >= 0 else "sampling_params"
    if not isinstance(raw, dict):
        raise BadRequest(f"{where}: expected an object")
    try:
        params = SamplingParams.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(p) for p in first.get("loc", []))
        raise BadRequest(f"{where}.{field}: {first.get('msg', 'invalid value')}") from None
    if params.top_k != -1:
        raise BadRequest(f"{where}.top_k: only -1 (off) is supported, got {params.top_k}")
    if params.stop:
        raise BadRequest(f"{where}.stop: stop strings are not supported; use stop_token_ids")
    if params.temperature < MIN_TEMPERATURE:  # logits / 1e-300 overflow: greedy, as the chat route does
        params.temperature = 0.0
    return params


def generate_outputs(gen: Generator, req: GenerateRequest) -> dict | list:
    """Sample every prompt of a /generate request; returns SGLang-shaped outputs in prompt order. Prompts with
    the same temperature, top_p and stop ids are sampled in one batch."""
    tokenizer = gen.tokenizer
    prompts, single = generation_prompts(req, tokenizer, gen.model.config.vocab_size)
    n = len(prompts)
    if n > MAX_GENERATE_PROMPTS:
        raise BadRequest(f"{n} prompts in one call; send at most {MAX_GENERATE_PROMPTS} per call")
    raw_params = per_prompt(req.sampling_params, n, "sampling_params")
    params = [sampling_params_of(p, -1 if not isinstance(req.sampling_params, list) else i)
              for i, p in enumerate(raw_params)]
    want_logprobs = per_prompt(req.return_logprob, n, "return_logprob", kind=bool)
    budgets = []
    for i, (prompt, p) in enumerate(zip(prompts, params)):
        room = gen.context_len - len(prompt)
        if room <= 0:
            raise BadRequest(f"input_ids[{i}]: {len(prompt)} tokens; the model's context is {gen.context_len}")
        budgets.append(min(p.max_new_tokens, room))
    groups = {}
    for i, p in enumerate(params):
        stop_ids = set(p.stop_token_ids or []) | (set() if p.ignore_eos else {tokenizer.eos_token_id})
        groups.setdefault((p.temperature, p.top_p, frozenset(stop_ids)), []).append(i)
    results = [None] * n
    for (temperature, top_p, stop_ids), rows in groups.items():
        out = gen.sample([prompts[i] for i in rows], [budgets[i] for i in rows], temperature, top_p, stop_ids)
        for j, i in enumerate(rows):
            results[i] = (out.completion_ids[j], out.logps[j], out.finished[j])
    outputs = []
    for i, (ids, logps, finished) in enumerate(results):
        p = params[i]
        if finished:
            reason = {"type": "stop", "matched": ids[-1]}
        else:
            reason = {"type": "length", "length": len(ids)}
        text_ids = ids[:-1] if finished and not p.no_stop_trim else ids  # SGLang trims the matched stop token
        meta = {"id": uuid.uuid4().hex, "finish_reason": reason, "prompt_tokens": len(prompts[i]),
                "completion_tokens": len(ids), "cached_tokens": 0}
        if want_logprobs[i]:
            meta["output_token_logprobs"] = [[lp, t, None] for lp, t in zip(logps, ids)]
        outputs.append({"text": tokenizer.decode(text_ids, skip_special_tokens=p.skip_special_tokens),
                        "output_ids": ids, "meta_info": meta})
    return outputs[0] if single else outputs


# ----------------------------------------------------------------------------------------------------------
# the app


def error_response(status, message, param=None, kind="invalid_request_error", code=None):
    return JSONResponse(status_code=status, content={"error": {"message": clean_text(message), "type": kind,
                                                               "param": param, "code": code}})


def tool_choice_of(req: ChatRequest) -> tuple:
    """(the tools to render, text the reply is forced to start with) for OpenAI's tool_choice: "none" offers
    no tool, "auto" (the default) lets the model choose, "required" opens a call, and
    {"type": "function", "function": {"name": N}} opens a call of N."""
    choice = req.tool_choice
    if choice is None or choice == "auto":
        return req.tools, ""
    if choice == "none":
        return None, ""
    if not req.tools:
        raise BadRequest("tool_choice: there are no tools to choose from")
    if choice == "required":
        return req.tools, "<tool_call>\n"
    function = choice.get("function") if isinstance(choice, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str) or name not in {t["function"]["name"] for t in req.tools}:
        raise BadRequest("tool_choice: 'none', 'auto', 'required' or {'type': 'function', 'function': "
                         "{'name': one of the tools}}")
    return req.tools, "<tool_call>\n" + json.dumps({"name": name}, ensure_ascii=False)[:-1] + ', "arguments": '



JSON_TOKEN = re.compile(rb'[\[\]{}]|"(?:[^"\\]|\\.)*"')


def body_depth(body: bytes, limit: int) -> int:
    """How deep a JSON body nests, read from its brackets (strings skipped), up to limit + 1: one regex scan,
    so a body nested 100,000 deep is refused before a recursive parser sees it."""
    depth = deepest = 0
    for match in JSON_TOKEN.finditer(body):
        c = match.group(0)[:1]
        if c in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                break
        elif c in (b"]", b"}"):
            depth -= 1
    return deepest


class BodyLimit:
    """ASGI middleware: a request body over max_bytes gets a 413 before the app sees it, whether it announces
    its length (Content-Length) or streams it (chunked). The body is read here and replayed to the app."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length", b"").decode("latin-1")
        if length.isdigit() and int(length) > self.max_bytes:
            return await error_response(413, f"request body larger than {self.max_bytes} bytes")(
                scope, receive, send)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                return await error_response(413, f"request body larger than {self.max_bytes} bytes")(
                    scope, receive, send)
            if not message.get("more_body", False):
                break
        body, replayed = b"".join(chunks), False
        if body_depth(body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            return await error_response(400, f"request body nested deeper than {MAX_JSON_DEPTH} levels")(
                scope, receive, send)

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for a disconnect, as the server would report it

        await self.app(scope, replay, send)


class Authorize:
    """ASGI middleware (a plain one: Starlette's BaseHTTPMiddleware would hide a client's disconnect from a
    stream): the API key check, and the gate on weight updates."""

    def __init__(self, app, api_key=None, allow_weight_updates=False):
        self.app, self.api_key, self.allow_weight_updates = app, api_key, allow_weight_updates

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "")
        if self.api_key and path != "/health":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, f"Bearer {self.api_key}".encode()):
                return await error_response(401, "missing or wrong API key (Authorization: Bearer ...)",
                                            kind="authentication_error")(scope, receive, send)
        if path == "/update_weights_from_disk" and not (self.api_key or self.allow_weight_updates):
            return await error_response(403, "weight updates are off: start the server with --api_key (and "
                                        "send it) or with --allow_weight_updates",
                                        kind="permission_error")(scope, receive, send)
        return await self.app(scope, receive, send)


def create_app(model, tokenizer, model_name="minimind", device="cpu", dtype="float32", max_concurrent=2,
               model_path="", api_key=None, allow_weight_updates=False, more_models=None, max_queue=32):
    """The app. With api_key, every endpoint but /health wants `Authorization: Bearer <api_key>`. Weight
    updates (POST /update_weights_from_disk loads any directory the server can read) need the key, or
    allow_weight_updates for a server only a trainer can reach. more_models: {name: (model, path)} served
    beside the first, chosen by the request's `model` (the SGLang routes use the first). Each model runs
    max_concurrent generations and queues max_queue more; past that a request gets a 503 at once."""
    gen = Generator(model, tokenizer, device, dtype, max_concurrent, model_path, max_queue)
    gens = {model_name: gen}
    for name, (other, path) in (more_models or {}).items():
        gens[name] = gen if other is model else \
            Generator(other, tokenizer, device, dtype, max_concurrent, path, max_queue)
    with open(CHAT_PAGE, encoding="utf-8") as f:
        chat_page = f.read()
    app = FastAPI(title="MiniMind OpenAI-compatible API")

    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)
    app.add_middleware(Authorize, api_key=api_key, allow_weight_updates=allow_weight_updates)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request, exc):  # 404, 405, ... in the OpenAI error shape too
        return error_response(exc.status_code, str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request, exc):
        first = exc.errors()[0] if exc.errors() else {}
        if first.get("type") == "json_invalid":  # its loc holds a byte offset, not a field
            ctx = first.get("ctx") or {}
            return error_response(400, f"the request body is not valid JSON ({ctx.get('error', 'decode error')} "
                                  f"at character {(first.get('loc') or [None, '?'])[-1]})", param="body")
        where = ".".join(str(p) for p in first.get("loc", []) if p != "body")
        return error_response(400, f"{where}: {first.get('msg', 'invalid request')}", param=where or None)

    @app.exception_handler(BadRequest)
    async def bad_request(request, exc):
        return error_response(400, str(exc))

    @app.exception_handler(Busy)
    async def busy(request, exc):
        response = error_response(503, "the server is busy: every generation slot is taken and the queue is "
                                  "full; retry in a moment", kind="server_error", code="overloaded")
        response.headers["Retry-After"] = "1"
        return response

    @app.get("/v1/models")
    def models():
        return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "minimind"}
                                           for name in gens]}

    @app.get("/")
    def page():
        return HTMLResponse(chat_page)

    @app.get("/v1/tools")
    def tools():
        return {"tools": TOOLS, "examples": EXAMPLES}

    @app.post("/v1/tools/execute")
    def run_tool(req: ToolRequest):
        arguments = req.arguments
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as e:
                raise BadRequest(f"arguments: not JSON ({e.msg} at character {e.pos})") from None
        t0 = time.perf_counter()
        result = execute_tool(req.name, arguments)  # never raises: failures come back as {"error", "hint"}
        return {"name": req.name, "result": result, "duration_ms": round((time.perf_counter() - t0) * 1000, 1),
                "content": json.dumps(result, ensure_ascii=False)}  # the tool message, as training writes it

    @app.get("/health")
    def health():
        return {"status": "ok"}

    @app.post("/generate")
    async def generate(req: GenerateRequest):
        lease = await gen.admission.lease()
        try:
            return await run_in_threadpool(generate_outputs, gen, req)
        finally:
            lease.release()

    @app.post("/update_weights_from_disk")
    def update_weights_from_disk(req: UpdateWeightsRequest):
        try:
            gen.load_weights(req.model_path)
        except OSError:  # one message whether the path is missing, unreadable or not a directory
            return JSONResponse(status_code=400, content={"success": False, "message": clean_text(
                f"{req.model_path}: not a model directory this server can read (config.json and weights)")})
        except (ValueError, KeyError, TypeError, SafetensorError) as e:  # nothing was loaded
            return JSONResponse(status_code=400, content={"success": False,
                                                          "message": clean_text(f"{req.model_path}: {e}")})
        return {"success": True, "message": f"loaded {req.model_path}", "num_paused_requests": 0}

    @app.get("/get_model_info")
    def model_info():
        return {"model_path": gen.model_path, "tokenizer_path": TOKENIZER_DIR, "is_generation": True,
                "weight_version": str(gen.weight_version)}

    @app.post("/v1/chat/completions")
    async def chat(req: ChatRequest, request: Request):
        gen = gens.get(req.model if req.model is not None else model_name)
        if gen is None:
            return error_response(404, f"The model '{req.model}' does not exist; this server serves "
                                  + ", ".join(f"'{n}'" for n in gens), param="model",
                                  kind="invalid_request_error", code="model_not_found")
        if req.n != 1:
            raise BadRequest(f"n: this server returns one choice per request (n=1), got {req.n}")
        messages = to_template_messages(req)
        stops = stop_strings(req.stop)
        tools, call_prefix = tool_choice_of(req)
        if req.tool_choice == "none":  # no tool is offered; a call the model opens anyway ends the reply
            stops = stops + ["<tool_call>"]
        kwargs = req.chat_template_kwargs or {}
        thinking = req.open_thinking if req.open_thinking is not None else kwargs.get("open_thinking", False)
        thinking = bool(thinking)
        # a long conversation takes a while to render and tokenize: on a worker thread, so the loop keeps
        # answering (/health, other requests) meanwhile
        prompt = await run_in_threadpool(render, tokenizer, messages, tools, add_generation_prompt=True,
                                         open_thinking=thinking)
        prompt_ids = await run_in_threadpool(encode, tokenizer, prompt + call_prefix)
        room = gen.context_len - len(prompt_ids)
        if room <= 0:
            raise BadRequest(f"the conversation is {len(prompt_ids)} tokens; the model's context is "
                             f"{gen.context_len}")
        asked = req.max_completion_tokens or req.max_tokens
        max_new = min(asked or room, room)
        rid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        name = req.model or model_name
        temperature = req.temperature if req.temperature >= MIN_TEMPERATURE else 0.0  # 1e-300: greedy
        lease = await gen.admission.lease()  # before any worker thread is taken; Busy: a 503
        token_stream = gen.tokens(prompt_ids, max_new, temperature, req.top_p, req.seed)
        if req.stream:
            include_usage = bool((req.stream_options or {}).get("include_usage"))
            chunks = sse_chunks(tokenizer, token_stream, stops, thinking, rid, created, name, len(prompt_ids),
                                max_new, include_usage, call_prefix)
            body = closing_stream(chunks, lease)
            weakref.finalize(body, lease.release)  # a response cancelled before its body started
            return StreamingResponse(body, media_type="text/event-stream", background=BackgroundTask(lease.release))
        try:
            ids = await collect_tokens(request, token_stream, stops, tokenizer)
        finally:
            lease.release()
        if ids is None:  # the client went away; nobody reads this
            return error_response(499, "client closed the request")
        return complete(tokenizer, ids, stops, thinking, rid, created, name, len(prompt_ids), max_new,
                        call_prefix)

    return app


async def closing_stream(chunks, lease=None):
    """Drive the (blocking) chunk generator from a worker thread, one chunk at a time, and close it as soon as
    the response ends for any reason: when the client disconnects, the server cancels this stream, and the
    generation and its concurrency slot are released right away (not whenever the garbage collector runs)."""
    try:
        while True:
            chunk = await run_in_threadpool(next, chunks, None)  # waits for the thread even when cancelled
            if chunk is None:
                return
            yield chunk
    finally:
        chunks.close()
        if lease is not None:
            lease.release()


def stop_strings(stop) -> list:
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    if len(stops) > MAX_STOP_STRINGS or not all(isinstance(s, str) and s for s in stops):
        raise BadRequest(f"stop: up to {MAX_STOP_STRINGS} non-empty strings")
    return stops


class StopText:
    """Cuts the generated text at the first stop string. Text is let through as it arrives, except a tail
    that could still become a stop string; `stopped` says when generation should end."""

    def __init__(self, stops):
        self.stops, self.held, self.stopped = stops, "", False
        self.keep = max((len(s) for s in stops), default=1) - 1

    def feed(self, text: str, final: bool = False) -> str:
        if self.stopped:
            return ""
        text = self.held + text
        cuts = [i for i in (text.find(s) for s in self.stops) if i >= 0]
        if cuts:
            self.stopped, self.held = True, ""
            return text[:min(cuts)]
        if final or not self.keep:
            self.held = ""
            return text
        self.held = text[-self.keep:]
        return text[:-self.keep]


async def collect_tokens(request, token_stream, stops, tokenizer) -> list | None:
    """The token ids of a non-streamed completion, generated on a worker thread one token at a time so that a
    client that went away stops the generation (None) and frees its slot; a stop string ends it too."""
    ids = []
    try:
        while True:
            token = await run_in_threadpool(next, token_stream, None)
            if token is None:
                return ids
            ids.append(token)
            if stops and cut_at_stop(tokenizer.decode(ids), stops)[1]:
                return ids
            if len(ids) % 16 == 0 and await request.is_disconnected():
                return None
    finally:
        token_stream.close()


def cut_at_stop(text: str, stops) -> tuple:
    """(text before the first stop string, whether one was found)."""
    cuts = [i for i in (text.find(s) for s in stops) if i >= 0]
    return (text[:min(cuts)], True) if cuts else (text, False)


def complete(tokenizer, ids, stops, thinking, rid, created, name, n_prompt, max_new, prefix=""):
    text, stopped = cut_at_stop(tokenizer.decode(ids), stops)
    text = prefix + text
    parser = StreamParser(thinking)
    pieces = parser.feed(text, final=True)
    content = "".join(v for k, v in pieces if k == "content").strip()
    reasoning = "".join(v for k, v in pieces if k == "reasoning").strip()
    message = {"role": "assistant", "content": content or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if parser.calls:
        message["tool_calls"] = [{k: v for k, v in tool_call_json(c, i).items() if k != "index"}
                                 for i, c in enumerate(parser.calls)]
    finish = "tool_calls" if parser.calls else ("length" if len(ids) >= max_new and not stopped else "stop")
    return {"id": rid, "object": "chat.completion", "created": created, "model": name,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": n_prompt, "completion_tokens": len(ids),
                      "total_tokens": n_prompt + len(ids)}}


def sse_chunks(tokenizer, token_stream, stops, thinking, rid, created, name, n_prompt, max_new,
               include_usage, prefix=""):
    def chunk(delta, finish=None):
        body = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": name,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

    def pieces(new, final=False):
        nonlocal n_calls
        for kind, value in parser.feed(new, final=final):
            if kind == "tool_call":
                yield chunk({"tool_calls": [tool_call_json(value, n_calls)]})
                n_calls += 1
                continue
            # the streamed text adds up to the non-streamed reply's, which is stripped: whitespace is held
            # back until text follows it (none before the first text, none after the last, e.g. the "\n"
            # between two calls), so a client that sends the reply back renders the same prompt either way
            value = held[kind] + value
            text = value.rstrip()
            held[kind] = value[len(text):]
            if not sent[kind]:
                text = text.lstrip()
            if text:
                sent[kind] = True
                yield chunk({"reasoning_content" if kind == "reasoning" else "content": text})

    held, sent = {"content": "", "reasoning": ""}, {"content": False, "reasoning": False}
    parser, stop = StreamParser(thinking), StopText(stops)
    ids, emitted_text, n_calls = [], "", 0
    yield chunk({"role": "assistant", "content": ""})
    try:
        yield from pieces(prefix)  # a reply forced to open a tool call (tool_choice)
        for token in token_stream:
            ids.append(token)
            text = tokenizer.decode(ids)
            if text.endswith("\ufffd"):
                continue  # a multi-byte character is not complete yet
            new, emitted_text = text[len(emitted_text):], text
            yield from pieces(stop.feed(new))
            if stop.stopped:
                break
        yield from pieces(stop.feed(tokenizer.decode(ids)[len(emitted_text):], final=True), final=True)
    except Exception as e:  # after the 200 is sent: an error event, then the end of the stream
        body = {"error": {"message": f"generation failed: {type(e).__name__}", "type": "server_error"}}
        yield f"data: {json.dumps(body)}\n\n"
        yield "data: [DONE]\n\n"
        return
    finally:
        token_stream.close()  # a client that went away frees its generation here
    finish = "tool_calls" if n_calls else ("length" if len(ids) >= max_new and not stop.stopped else "stop")
    yield chunk({}, finish)
    if include_usage:
        usage = {"prompt_tokens": n_prompt, "completion_tokens": len(ids), "total_tokens": n_prompt + len(ids)}
        body = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": name, "choices": [],
                "usage": usage}
        yield f"data: {json.dumps(body)}\n\n"
    yield "data: [DONE]\n\n"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="OpenAI-compatible server for a MiniMind checkpoint")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8998)
    parser.add_argument("--weight", nargs="+", default=["agent"],
                        help="out/{weight}_{hidden}[_moe].pth, or a .pth path; several: each served under its "
                             "name (the chat page offers them all)")
    parser.add_argument("--save_dir", default="out")
    parser.add_argument("--load_from", default=None, help="a transformers model directory instead of --weight")
    parser.add_argument("--model_name", default="minimind", help="the id the first model answers to")
    parser.add_argument("--max_concurrent", type=int, default=2, help="generations running at once, per model")
    parser.add_argument("--max_queue", type=int, default=32,
                        help="requests waiting for a generation slot, per model; more get a 503 with Retry-After")
    parser.add_argument("--api_key", default=os.environ.get("MINIMIND_API_KEY"),
                        help="require 'Authorization: Bearer <key>' (default: $MINIMIND_API_KEY; none: open)")
    parser.add_argument("--allow_weight_updates", action="store_true",
                        help="allow POST /update_weights_from_disk without a key (a server for a trainer)")
    add_model_args(parser)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default=None, choices=["float32", "bfloat16", "float16"])
    args = parser.parse_args(argv)
    args.device = resolve_device(args.device)
    args.dtype = args.dtype or default_dtype(args.device)
    return args


def served_name(weight: str) -> str:
    """The id a checkpoint is served under: its weight name, or a .pth file's name without the suffix."""
    return os.path.basename(weight)[:-4] if weight.endswith(".pth") else os.path.basename(weight.rstrip("/"))


def build_app(args):
    """The app for parsed arguments: the first --weight (or --load_from) answers to --model_name and to its
    own name; every further --weight to its name."""
    first, *others = args.weight
    args.weight = first
    source = model_source(args)
    model, tokenizer = init_model(args, source, args.save_dir, args.device)
    if not os.path.isdir(source) and not source.endswith(".pth"):
        source = weight_path(args.save_dir, source, args.hidden_size, bool(args.use_moe))
    more = {served_name(first if not args.load_from else source): (model, source)}
    for weight in others:
        other, _ = init_model(args, weight, args.save_dir, args.device)
        path = weight if weight.endswith(".pth") else \
            weight_path(args.save_dir, weight, args.hidden_size, bool(args.use_moe))
        more[served_name(weight)] = (other, path)
    more.pop(args.model_name, None)
    app = create_app(model, tokenizer, args.model_name, args.device, args.dtype, args.max_concurrent, source,
                     args.api_key, args.allow_weight_updates, more, args.max_queue)
    return app, [args.model_name, *more]


def main(argv=None):
    import uvicorn

    args = parse_args(argv)
    app, names = build_app(args)
    print(f"serving {', '.join(names)} on http://{args.host}:{args.port}/v1; the chat page at "
          f"http://{args.host}:{args.port}/")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
