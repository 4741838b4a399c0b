"""
Rollouts from an SGLang server (or scripts/serve_openai_api.py, which speaks the same protocol) over HTTP:
POST /generate with token ids, and after every optimizer step the policy is written to disk and loaded by the
server with POST /update_weights_from_disk. The same contract as trainer/rollout_engine.RolloutEngine.
"""
import json
import os
import time
import urllib.error
import urllib.request

from model.model_minimind import save_qwen3_dir
from trainer.rollout_engine import RolloutEngine, RolloutResult, row_budgets


class SGLangError(RuntimeError):
    """The server could not be reached, or answered with an error; the message names the URL."""


RETRY_DELAYS = (0.5, 1.0, 2.0)  # seconds to wait before each new try after a failed connection


def _server_message(body: bytes) -> str:
    """The error text of a response body: SGLang's {"error": {"message"}}, {"message"}, or the raw text."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return body[:500].decode("utf-8", "replace")
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and "message" in error:
            return str(error["message"])
        if "message" in data:
            return str(data["message"])
    return json.dumps(data)[:500]


def post_json(url: str, payload: dict, timeout: float, retry_delays=RETRY_DELAYS):
    """POST `payload` as JSON and return the decoded JSON answer. A refused or dropped connection is tried
    again after each delay in retry_delays (the server may be starting or busy); an HTTP error status, a
    timeout and a non-JSON answer raise SGLangError at once."""
    data = json.dumps(payload).encode("utf-8")
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    for attempt in range(len(retry_delays) + 1):
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                body = response.read()
            break
        except urllib.error.HTTPError as e:  # the server answered, with an error status
            raise SGLangError(f"POST {url}: HTTP {e.code}: {_server_message(e.read())}") from None
        except TimeoutError:
            raise SGLangError(f"POST {url}: no answer within {timeout} s") from None
        except (urllib.error.URLError, ConnectionError) as e:  # refused, reset, dropped
            reason = getattr(e, "reason", e)
            if isinstance(reason, TimeoutError):
                raise SGLangError(f"POST {url}: no answer within {timeout} s") from None
            if attempt == len(retry_delays):
                raise SGLangError(f"POST {url}: cannot reach the server after {attempt + 1} tries "
                                  f"({reason}); is it running at that address?") from None
            time.sleep(retry_delays[attempt])
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise SGLangError(f"POST {url}: the answer is not JSON: {body[:200]!r}") from None


class SGLangRolloutEngine(RolloutEngine):
    """Rollouts from an SGLang server, token ids in and token ids out, through its native API:

        POST /generate  {"input_ids": [[...], ...], "sampling_params": [{...}, ...], "return_logprob": true}
            -> one {"output_ids", "meta_info": {"output_token_logprobs": [[logprob, id, null], ...],
                    "finish_reason": {"type": "stop" | "length", ...}, ...}} per prompt
        POST /update_weights_from_disk  {"model_path": dir}  -> {"success": bool, "message": str}

    Log-probs. SGLang returns, for each sampled token, log softmax(logits / T), the tempered distribution it
    sampled from, which is what compute_per_token_logps computes for training, so the first-update ratio is 1.
    Two conditions: the server must not run with SGLANG_RETURN_ORIGINAL_LOGPROB=1 (that returns the log-probs
    at T = 1), and top_p should stay 1 (some SGLang versions renormalise the log-prob over the top-p tokens;
    this trainer takes it under the full softmax). Greedy (T = 0) gives log-probs at T = 1 on both sides.

    Weights. update_policy() writes the policy as a Qwen3-layout transformers directory (save_qwen3_dir: fp32
    tensors, exact copies of the trainer's weights) and asks the server to load it, after every optimizer
    step, so no rollout uses stale weights. The server rounds them to the precision it runs in; config.json
    names the trainer's autocast dtype so that SGLang's --dtype auto picks the same one (see the README for
    --dtype). The directory must be readable by the server at the same path (same machine, or a shared disk).
    """

    def __init__(self, model, eos_token_id: int, base_url: str, weights_dir: str, dtype: str = "bfloat16",
                 timeout: float = 600.0, retry_delays=RETRY_DELAYS):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"--sglang_base_url must start with http:// or https://, got {base_url!r}")
        if model.config.use_moe:
            raise ValueError("the sglang engine exports the policy as Qwen3, "
                             "which has no MoE MiniMind equivalent")
        self.model = model
        self.eos_token_id = eos_token_id
        self.base_url = base_url.rstrip("/")
        self.weights_dir = os.path.abspath(weights_dir)
        self.dtype = dtype
        self.timeout = timeout
        self.retry_delays = retry_delays
        self.synced = False  # the server still holds whatever it was launched with

    def update_policy(self, model):
        self.model = model
        save_qwen3_dir(model, self.weights_dir, self.dtype)
        url = f"{self.base_url}/update_weights_from_disk"
        # flush_cache: prefixes cached under the old weights must not be reused
        # (servers without the field flush anyway)
        answer = post_json(url, {"model_path": self.weights_dir, "flush_cache": True}, self.timeout,
                           self.retry_delays)
        if not isinstance(answer, dict) or answer.get("success") is not True:
            raise SGLangError(f"POST {url}: the server did not load {self.weights_dir}: {answer}")
        self.synced = True

    def rollout(self, prompt_ids, max_new_tokens, temperature=1.0, top_p=1.0, max_length=None):
        if not self.synced:  # the first rollout: the server gets the trainer's starting (or resumed) weights
            self.update_policy(self.model)
        B = len(prompt_ids)
        result = RolloutResult([[] for _ in range(B)], [[] for _ in range(B)], [False] * B)
        budgets = row_budgets(prompt_ids, max_new_tokens, max_length)
        # a row with no budget gets nothing, as in the torch engine
        rows = [i for i in range(B) if budgets[i] > 0]
        if not rows:
            return result
        params = [{"max_new_tokens": budgets[i], "temperature": temperature, "top_p": top_p,
                   "stop_token_ids": [self.eos_token_id], "skip_special_tokens": False, "no_stop_trim": True}
                  for i in rows]
        payload = {"input_ids": [list(prompt_ids[i]) for i in rows], "sampling_params": params,
                   "return_logprob": True}
        url = f"{self.base_url}/generate"
        answer = post_json(url, payload, self.timeout, self.retry_delays)
        outputs = answer if isinstance(answer, list) else [answer]
        if len(outputs) != len(rows):
            raise SGLangError(f"POST {url}: {len(outputs)} outputs for {len(rows)} prompts")
        for i, out in zip(rows, outputs):
            ids, logps, finished = self._read_output(url, out, budgets[i])
            result.completion_ids[i], result.logps[i], result.finished[i] = ids, logps, finished
        return result

    def _read_output(self, url, out, budget):
        """(completion ids through EOS, their log-probs, finished) from one /generate output."""
        meta = out.get("meta_info") if isinstance(out, dict) else None
        if not isinstance(meta, dict) or "output_token_logprobs" not in meta:
            raise SGLangError(f"POST {url}: an output without meta_info.output_token_logprobs: "
                              f"{str(out)[:300]}")
        reason = meta.get("finish_reason") or {}
        kind = reason.get("type") if isinstance(reason, dict) else reason
        if kind not in ("stop", "length"):
            raise SGLangError(f"POST {url}: generation ended with finish_reason {reason}")
        # each entry is [logprob, token_id, text or null], one per generated token, the stop token included
        logps = [float(entry[0]) for entry in meta["output_token_logprobs"]]
        ids = [int(entry[1]) for entry in meta["output_token_logprobs"]]
        if "output_ids" in out and list(out["output_ids"]) != ids:
            raise SGLangError(f"POST {url}: output_ids and output_token_logprobs disagree")
        if len(ids) > budget:
            raise SGLangError(f"POST {url}: {len(ids)} tokens generated, max_new_tokens was {budget}")
        finished = kind == "stop" and bool(ids) and ids[-1] == self.eos_token_id
        return ids, logps, finished
