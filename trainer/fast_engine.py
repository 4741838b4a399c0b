"""
The engines the trainer runs. TorchRolloutEngine samples what trainer/rollout_engine.ReferenceRolloutEngine
samples (the same tokens and log-probs: tests/test_engines.py), with the CPU's fast paths: a KV cache written
in place, a prompt's num_generations copies prefilled once and attended to as one copy, a trajectory's next
turn prefilled from the K/V of its last, linears prepacked for oneDNN's bf16 kernels. Its
compute_per_token_logps runs a prompt that the rows of a training micro-batch share once. Mechanism: skip it
on a first reading. create_rollout_engine picks the engine: this one, or an SGLang server
(trainer/sglang_engine.py).
"""
import contextlib
import functools
import threading
import time
from dataclasses import dataclass

import torch
from torch import nn

from trainer.rollout_engine import RolloutEngine, RolloutResult, logps_of, row_budgets, sample_next
from trainer.rollout_engine import compute_per_token_logps as plain_per_token_logps
from trainer.sglang_engine import SGLangRolloutEngine
from trainer.trainer_utils import autocast


class SharedPrefixCache:
    """The keys and values of a prefix that every row of a batch shares, for training forwards. The first
    forward (the prefix, one row) fills it; in the next (each row's own tokens) every layer attends to the
    prefix expanded to the batch, then to the rows' tokens. Gradients flow back into the prefix through the
    expansion, summed over the rows: the same gradient as running the prefix in every row."""

    def __init__(self):
        self.keys, self.values = [], []

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.keys[layer_idx].shape[2] if layer_idx < len(self.keys) else 0

    def update(self, k, v, layer_idx: int):
        if layer_idx == len(self.keys):  # the prefix's own forward
            self.keys.append(k)
            self.values.append(v)
            return k, v
        rows = k.shape[0]
        past_k = self.keys[layer_idx].expand(rows, -1, -1, -1)
        past_v = self.values[layer_idx].expand(rows, -1, -1, -1)
        return torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)



def compute_per_token_logps(model, input_ids, n_keep: int, attention_mask=None, temperature: float = 1.0,
                            shared_prefix: int = 0, prefix_model=None):
    """Log-prob of each of the last n_keep tokens given everything before it: (B, T) -> (B, n_keep), as
    trainer/rollout_engine.compute_per_token_logps, with one fast path.

    shared_prefix: the first shared_prefix tokens are the same in every row (a prompt's G samples): they go
    through the model once, and the rows' own tokens attend to them (SharedPrefixCache). Needs rows without
    padding on the left (attention_mask None) and shared_prefix <= T - n_keep - 1.
    prefix_model: what the prefix goes through (default: model). Under DDP, the module DDP wraps: DDP wants
    one forward of its own per backward, and the prefix's gradient reaches the same parameters either way.
    """
    if n_keep <= 0 or shared_prefix <= 0:
        return plain_per_token_logps(model, input_ids, n_keep, attention_mask, temperature)
    if attention_mask is not None or shared_prefix > input_ids.shape[1] - n_keep - 1:
        raise ValueError(f"a shared prefix of {shared_prefix} needs rows without an attention mask and "
                         f"at most {input_ids.shape[1] - n_keep - 1} tokens before the first kept one")
    cache = SharedPrefixCache()
    prefix_model = prefix_model or model
    prefix_model(input_ids[:1, :shared_prefix], cache=cache, use_cache=True, return_logits=False)
    logits = model(input_ids[:, shared_prefix:], cache=cache, use_cache=True,
                   logits_to_keep=n_keep + 1).logits
    return logps_of(logits[:, :-1], input_ids[:, -n_keep:], temperature)


@dataclass
class ForwardRecord:
    """One forward of TorchRolloutEngine's sampling loop, for benchmarks (engine.forwards, when a list)."""
    kind: str  # "prefill" or "decode"
    rows: int  # batch rows the forward ran (padding rows and rows that have stopped included)
    new_tokens: int  # query positions per row (padded), 1 for a decoding step
    kv_len: int  # key positions per row after the forward (padded): what attention reads
    real_tokens: int  # query positions that are real tokens of running rows
    seconds: float



def round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


class KVBuffer:
    """The KV cache of the sampling loop. Each layer's keys and values live in one buffer with room to grow,
    and new positions are written in place; a DynamicCache concatenates, copying the whole cache at every
    step, which on CPU costs more than the model's matmuls. The interface MiniMind uses: update(),
    get_seq_length(); and reorder_cache() to pick batch rows. `room`: free positions to leave after the first
    write (the prefill), enough for every token the loop will add."""

    def __init__(self, room: int):
        self.room = room
        self.keys, self.values, self.lengths = [], [], []

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.lengths[layer_idx] if layer_idx < len(self.lengths) else 0

    def update(self, k, v, layer_idx: int):
        """Append k, v (B, kv_heads, T, head_dim) to the layer; returns all its keys and values so far."""
        if layer_idx == len(self.keys):
            shape = (k.shape[0], k.shape[1], k.shape[2] + self.room, k.shape[3])
            self.keys.append(k.new_empty(shape))
            self.values.append(v.new_empty(shape))
            self.lengths.append(0)
        start = self.lengths[layer_idx]
        end = start + k.shape[2]
        if end > self.keys[layer_idx].shape[2]:  # out of room: double it (the rollout loop never is)
            for buffers in (self.keys, self.values):
                old = buffers[layer_idx]
                grown = old.new_empty((*old.shape[:2], 2 * end, old.shape[3]))
                grown[:, :, :start] = old[:, :, :start]
                buffers[layer_idx] = grown
        self.keys[layer_idx][:, :, start:end] = k
        self.values[layer_idx][:, :, start:end] = v
        self.lengths[layer_idx] = end
        return self.keys[layer_idx][:, :, :end], self.values[layer_idx][:, :, :end]

    def reorder_cache(self, index):
        """Keep batch rows `index` (in that order). A buffer mostly room copies only its written positions."""
        for buffers in (self.keys, self.values):
            for layer, old in enumerate(buffers):
                n = self.lengths[layer]
                if 2 * n > old.shape[2]:  # one copy of everything beats two of the written part
                    buffers[layer] = old.index_select(0, index)
                    continue
                buffers[layer] = old.new_empty((len(index), *old.shape[1:]))
                buffers[layer][:, :, :n] = old[:, :, :n].index_select(0, index)

    def row(self, i: int, positions):
        """Row i's keys and values at `positions`, per layer: [(K, V)], each (kv_heads, len, head_dim)."""
        return [(k[i][:, positions], v[i][:, positions]) for k, v in zip(self.keys, self.values)]


def attention_with_lse(q, k, v, bias):
    """softmax(q k^T / sqrt(hd) + bias) v, and each query's log-sum-exp of its scores: (out, lse), shapes
    (B, H, L, hd) and (B, H, L). bias: additive, q's dtype, broadcast to (B, H, L, S). On CPU one fused kernel
    (SDPA's flash kernel, which returns the log-sum-exp), elsewhere the formula."""
    if q.device.type == "cpu":
        return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=bias)
    scores = (q.float() @ k.float().transpose(-1, -2)) * q.shape[-1] ** -0.5 + bias.float()
    lse = scores.logsumexp(-1)
    return ((scores - lse[..., None]).exp() @ v.float()).to(q.dtype), lse


def additive_mask(allowed, dtype):
    """A boolean mask (True = may attend) as an additive one: 0 where allowed, -inf elsewhere."""
    bias = torch.zeros(allowed.shape, dtype=dtype, device=allowed.device)
    return bias.masked_fill_(~allowed, float("-inf"))


class SharedPromptCache:
    """The KV cache of a sampling batch whose rows share prompts (a prompt's G samples, on every turn).

    Two levels: the keys and values of each distinct prompt once (`prefix`: per layer (K, V), each
    (groups, kv_heads, P, head_dim), left padded, `prefix_mask` (groups, P) 1 on real positions), and each
    row's own tokens after its prompt in a KVBuffer. `group[i]` is row i's prompt. The model calls attend()
    in place of its attention: each query attends to its prompt and to its row's own tokens separately, and
    the two halves are merged by their log-sum-exp, which is exactly softmax attention over both
    ("cascade" attention). The prompt half runs once per prompt for all its rows' queries (one matrix
    product against K/V read once), a prompt's cache is never copied to its rows, and picking rows
    (reorder_cache) moves only their own tokens. Positions: a row's own tokens continue after its prompt's
    real length (positions()).
    """

    def __init__(self, prefix, prefix_mask, prefix_keys, group, room: int):
        self.prefix, self.prefix_mask, self.prefix_keys = prefix, prefix_mask, prefix_keys
        self.own = KVBuffer(room)
        self.kept_prefix = {}  # group -> its prompt's real K/V per layer, for TorchRolloutEngine.keep_row
        self.own_bias = (None, None)  # ((the model's mask of a forward, T, S, dtype), its additive form)
        self.set_rows(group)

    def set_rows(self, group):
        """Row i belongs to prompt group[i]; prompts no row uses are dropped."""
        groups = group.tolist()
        used = sorted(set(groups))
        if len(used) < self.prefix_mask.shape[0]:
            index = torch.tensor(used, device=group.device)
            self.prefix = [(k.index_select(0, index), v.index_select(0, index)) for k, v in self.prefix]
            self.prefix_mask = self.prefix_mask.index_select(0, index)
            self.prefix_keys = [self.prefix_keys[g] for g in used]
            self.kept_prefix = {used.index(g): kv for g, kv in self.kept_prefix.items() if g in used}
            new = {g: n for n, g in enumerate(used)}
            groups = [new[g] for g in groups]
        slots, count = [], {}
        for g in groups:  # row i is the slots[i]-th row of its prompt
            slots.append(count.get(g, 0))
            count[g] = slots[-1] + 1
        self.rows_per_group = max(count.values())
        self.group = torch.tensor(groups, device=group.device)
        self.slot = torch.tensor(slots, device=group.device)
        self.prefix_lengths = self.prefix_mask.sum(-1)
        self.prefix_bias = None  # made in the queries' dtype at the first attend()

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.own.get_seq_length(layer_idx)  # the model's mask and positions cover own positions only

    def reorder_cache(self, index):
        self.own.reorder_cache(index)
        self.set_rows(self.group.index_select(0, index))

    def positions(self, own_mask, q_len: int):
        """Position ids (B, q_len) of the last q_len own positions: after the prompt's real tokens."""
        pos = (own_mask.long().cumsum(-1)[:, -q_len:] - 1).clamp(min=0)
        return pos + self.prefix_lengths.index_select(0, self.group)[:, None]

    def context_length(self, own_mask) -> int:
        """Key positions per row (padded) that attention reads: the prompt's and the row's own."""
        return self.prefix_mask.shape[1] + own_mask.shape[1]

    def attend(self, q, k, v, attn_mask, layer_idx: int):
        """q (B, H, T, hd); k, v (B, Hkv, T, hd): the new tokens; attn_mask: the model's boolean mask over
        own positions, (B | 1, 1, T, S), or None (plain causal). Returns the output (B, H, T, hd)."""
        B, H, T, hd = q.shape
        kv_heads = k.shape[1]
        rep = H // kv_heads
        k_own, v_own = self.own.update(k, v, layer_idx)
        # the rep query heads that share a key/value head are one block of rep * T query rows: K/V read as is
        q = q.reshape(B, kv_heads, rep * T, hd)
        S = k_own.shape[2]
        key = (attn_mask, T, S, q.dtype)  # the model passes one mask object to every layer of a forward
        cached = self.own_bias[0]
        if cached is None or cached[0] is not attn_mask or cached[1:] != key[1:]:
            allowed = attn_mask
            if allowed is None:  # causal among the new tokens
                allowed = torch.ones(T, S, dtype=torch.bool, device=q.device).tril(S - T)[None, None]
            if T > 1:  # query row r * T + t is token t
                allowed = allowed.repeat(1, 1, rep, 1)
            self.own_bias = (key, additive_mask(allowed, q.dtype))
        out_own, lse_own = attention_with_lse(q, k_own.to(q.dtype), v_own.to(q.dtype), self.own_bias[1])
        # the prompt half: the queries of each prompt's rows side by side, (groups, kv_heads, R * rep * T, hd)
        G, R = self.prefix_mask.shape[0], self.rows_per_group
        if self.prefix_bias is None or self.prefix_bias.dtype != q.dtype:
            self.prefix_bias = additive_mask(self.prefix_mask.bool()[:, None, None, :], q.dtype)
        grouped = q.new_zeros(G, R, kv_heads, rep * T, hd)
        grouped[self.group, self.slot] = q
        grouped = grouped.transpose(1, 2).reshape(G, kv_heads, R * rep * T, hd)
        k_pre, v_pre = self.prefix[layer_idx]
        out_pre, lse_pre = attention_with_lse(grouped, k_pre.to(q.dtype), v_pre.to(q.dtype), self.prefix_bias)
        out_pre = out_pre.view(G, kv_heads, R, rep * T, hd).transpose(1, 2)[self.group, self.slot]
        lse_pre = lse_pre.view(G, kv_heads, R, rep * T).transpose(1, 2)[self.group, self.slot]
        # softmax over both halves: each half's output weighted by its share of the total exp-sum
        weight = torch.sigmoid(lse_pre - lse_own)[..., None]
        out = out_own + (out_pre - out_own) * weight.to(q.dtype)
        return out.reshape(B, H, T, hd)

    def prompt_kv(self, g: int):
        """Prompt g's K/V at its real positions, per layer: [(K, V)], each (kv_heads, length, head_dim)."""
        if g not in self.kept_prefix:
            positions = self.prefix_mask[g].bool().nonzero().flatten()
            self.kept_prefix[g] = [(k[g][:, positions], v[g][:, positions]) for k, v in self.prefix]
        return self.kept_prefix[g]


def _packed_linear(packed_weight, bias, x):
    """nn.Linear.forward with a prepacked bf16 weight: the same numbers as autocast's bf16 linear."""
    return torch.ops.mkldnn._linear_pointwise(x.to(torch.bfloat16), packed_weight, bias, "none", [], "")


def _packed_split(packed_weight, sizes, x):
    """Several linears of the same input as one matmul with their weights stacked: outputs split back."""
    return _packed_linear(packed_weight, None, x).split(sizes, dim=-1)


def _pack(weight):
    return torch.ops.mkldnn._reorder_linear_weight(weight.detach().to(torch.bfloat16), 1)


class PackedLinears:
    """The model's nn.Linear weights as bf16 copies in oneDNN's blocked layout, for sampling on CPU.

    Under autocast a bf16 linear casts its fp32 weight once per autocast context, and then oneDNN converts the
    plain weight to its blocked layout at every call. For the few rows of a decoding step that conversion is
    most of the matmul's time; with the weights packed once per weight update, a decoding step's matmuls take
    about half as long (2x faster at 1-8 rows, the same numbers: autocast computes this exact bf16 product).
    The projections that read the same input run as one matmul, as inference servers do: an attention's
    query, key and value (Attention.qkv), and a SwiGLU's gate and up (FeedForward.gate_up).

    applied() installs the packed forwards on the model's modules for the duration of a with-block and
    restores them after, also when several threads sample at once (the first one in installs, the last one
    out restores). On the way in, the weights are packed again if any has changed since (an optimizer step,
    load_state_dict: tensor._version); the weights must not change while a thread is inside.
    """

    def __init__(self, model):
        self.model = model
        self.lock = threading.Lock()
        self.users = 0
        self.version = None
        self.forwards = {}  # module -> {method name: its packed replacement}

    @staticmethod
    def supported(device: str, dtype: str) -> bool:
        if device != "cpu" or dtype != "bfloat16" or not torch.backends.mkldnn.is_available():
            return False
        try:  # the ops exist in CPU builds with oneDNN; check they run here
            w = torch.ops.mkldnn._reorder_linear_weight(torch.zeros(8, 8, dtype=torch.bfloat16), 1)
            x = torch.zeros(1, 8, dtype=torch.bfloat16)
            torch.ops.mkldnn._linear_pointwise(x, w, None, "none", [], "")
        except (AttributeError, RuntimeError):
            return False
        return True

    def linears(self):
        return [m for m in self.model.modules() if isinstance(m, nn.Linear)]

    FUSED = {"qkv": ("q_proj", "k_proj", "v_proj"), "gate_up": ("gate_proj", "up_proj")}  # method: linears

    @torch.no_grad()
    def pack(self):
        self.forwards, fused_parts = {}, set()
        for m in self.model.modules():
            for method, names in self.FUSED.items():
                parts = [getattr(m, name, None) for name in names]
                if hasattr(m, method) and all(isinstance(p, nn.Linear) and p.bias is None for p in parts):
                    weight = _pack(torch.cat([p.weight for p in parts]))
                    sizes = [p.out_features for p in parts]
                    self.forwards.setdefault(m, {})[method] = functools.partial(_packed_split, weight, sizes)
                    fused_parts.update(parts)
        for m in self.model.modules():
            if isinstance(m, nn.Linear) and m not in fused_parts:  # (the fused ones are never called alone)
                bias = m.bias.detach().to(torch.bfloat16) if m.bias is not None else None
                self.forwards[m] = {"forward": functools.partial(_packed_linear, _pack(m.weight), bias)}

    @contextlib.contextmanager
    def applied(self):
        with self.lock:
            if self.users == 0:
                version = [(id(m.weight), m.weight._version) for m in self.linears()]
                if version != self.version:
                    self.pack()
                    self.version = version
                for m, methods in self.forwards.items():
                    for name, fn in methods.items():
                        setattr(m, name, fn)  # an instance attribute, found before the class's method
            self.users += 1
        try:
            yield
        finally:
            with self.lock:
                self.users -= 1
                if self.users == 0:
                    for m, methods in self.forwards.items():
                        for name in methods:
                            delattr(m, name)  # the class's method again


@dataclass
class KeptRow:
    """A row's K/V kept for the next call, per layer [(K, V)], each (kv_heads, length, head_dim): its
    prompt's, shared by the prompt's rows (None when the row's cache had one level), and its own after it."""
    prompt: tuple | None  # the prompt's token ids
    prompt_kv: list | None
    own_kv: list

    def full_kv(self):
        """The whole sequence's K/V per layer."""
        if self.prompt_kv is None:
            return self.own_kv
        return [(torch.cat([pk, ok], 1), torch.cat([pv, ov], 1))
                for (pk, pv), (ok, ov) in zip(self.prompt_kv, self.own_kv)]


class TorchRolloutEngine(RolloutEngine):
    """Batched sampling in this process with a KV cache: one prefill over the left-padded prompts, then one
    token per step for every row still running. Identical prompts (the num_generations copies of a prompt on
    the first turn) are prefilled once; with share_prompts (when at least two rows share each prompt on
    average) their rows then attend to the one copy of its K/V (SharedPromptCache), else the cache rows are
    copied.

    With reuse_prefix, the K/V of every row of a call are kept until the next call, and a new prompt that
    extends one of them (the next turn of a trajectory: the same context, the model's turn, the tool turn) is
    prefilled from there: only the new tokens go through the model, not the whole conversation again, and
    the rows of one first prompt go on sharing its K/V. Call update_policy after changing the weights (the
    trainer does, after every optimizer step): it drops the kept K/V, which belong to the old weights.
    """

    # Prefill lengths are padded up to a multiple of this. On CPU each new matmul shape costs a one-off kernel
    # setup (about 0.5 ms in oneDNN, several times the matmul itself at these sizes), and a prompt of every
    # length otherwise brings a new shape; a few padding tokens per row cost far less.
    PREFILL_MULTIPLE = 16

    def __init__(self, model, eos_token_id: int, pad_token_id: int, device: str = "cpu",
                 dtype: str = "float32", reuse_prefix: bool = False, pack_weights: bool = True,
                 share_prompts: bool = True):
        self.model = model
        self.eos_token_id = eos_token_id
        self.pad_token_id = pad_token_id
        self.device = device
        self.dtype = dtype
        self.reuse_prefix = reuse_prefix
        self.share_prompts = share_prompts
        self.kept = {}  # length -> {token ids: KeptRow}
        self.pack_weights = pack_weights and PackedLinears.supported(device, dtype)
        self.packed = PackedLinears(model) if self.pack_weights else None
        self.forwards = None  # a list: every forward of the sampling loop is recorded there (ForwardRecord)

    def packed_weights(self):
        """A context in which the model runs on the packed weights (nothing where packing is off)."""
        return self.packed.applied() if self.packed is not None else contextlib.nullcontext()

    def update_policy(self, model):
        self.kept = {}  # K/V computed with the old weights
        if self.pack_weights:  # packed from the new weights at the next call
            if model is self.model:
                self.packed.version = None  # (also when the version counters missed a change: dist.broadcast)
            else:
                self.packed = PackedLinears(model)
        self.model = model  # same process, same weights: nothing to copy

    def forward(self, kind: str, input_ids, attention_mask, cache, real_tokens: int):
        """The model's next-token logits (B, V) for the last position, the forward recorded when asked.
        attention_mask covers what the cache and input_ids hold (with a SharedPromptCache: the rows' own
        positions, which the cache places after their prompts)."""
        t0 = time.perf_counter()
        position_ids, kv_len = None, attention_mask.shape[1]
        if isinstance(cache, SharedPromptCache):
            position_ids = cache.positions(attention_mask, input_ids.shape[1])
            kv_len = cache.context_length(attention_mask)
        logits = self.model(input_ids, attention_mask=attention_mask, position_ids=position_ids, cache=cache,
                            use_cache=True, logits_to_keep=1).logits[:, -1]
        if self.forwards is not None:
            if self.device.startswith("cuda"):
                torch.cuda.synchronize()
            B, T = input_ids.shape
            self.forwards.append(ForwardRecord(kind, B, T, kv_len, real_tokens, time.perf_counter() - t0))
        return logits

    def longest_kept_prefix(self, prompt):
        """(n, KeptRow) of the longest kept sequence that is a proper prefix of prompt, or (0, None)."""
        for n in sorted(self.kept, reverse=True):
            if n < len(prompt):
                kv = self.kept[n].get(tuple(prompt[:n]))
                if kv is not None:
                    return n, kv
        return 0, None

    def left_pad(self, prompt_ids):
        """(input_ids, attention_mask), both (B, T), T the longest prompt rounded up to PREFILL_MULTIPLE;
        padding on the left."""
        T = round_up(max(len(p) for p in prompt_ids), self.PREFILL_MULTIPLE)
        input_ids = torch.full((len(prompt_ids), T), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(prompt_ids), T), dtype=torch.long)
        for i, p in enumerate(prompt_ids):
            input_ids[i, T - len(p):] = torch.tensor(p, dtype=torch.long)
            attention_mask[i, T - len(p):] = 1
        return input_ids.to(self.device), attention_mask.to(self.device)

    def shares(self, groups: int, rows: int) -> bool:
        """Whether rows of `groups` prompts sample from a SharedPromptCache: two rows a prompt or more."""
        return self.share_prompts and 2 * groups <= rows

    def prefill(self, prompt_ids, room: int):
        """(logits of the next token (B, V), attention mask, cache with `room` positions to grow). Runs inside
        sample()'s autocast context. Each distinct prompt goes through the model once (the G copies of a
        prompt, and trajectories that sampled the same turn, get the same logits and cache), and from its
        longest kept prefix when there is one."""
        first_row = {}
        source = [first_row.setdefault(tuple(p), len(first_row)) for p in prompt_ids]  # row -> distinct row
        distinct = [list(p) for p in first_row]
        B = len(prompt_ids)
        matches = [self.longest_kept_prefix(p) for p in distinct] if self.kept else []
        if matches and all(n and kv.prompt is not None for n, kv in matches) and \
                self.shares(len({kv.prompt for _, kv in matches}), B):
            logits, attention_mask, cache = self.prefill_shared_after_kept(distinct, matches, room)
        elif any(n for n, _ in matches):
            cache = KVBuffer(room)
            logits, attention_mask = self.prefill_after_kept(distinct, matches, cache)
        else:
            input_ids, attention_mask = self.left_pad(distinct)
            shared = self.shares(len(distinct), B)
            cache = KVBuffer(0 if shared else room)
            logits = self.forward("prefill", input_ids, attention_mask, cache, sum(map(len, distinct)))
            if shared:  # the distinct prompts' K/V become the shared level; the rows' own level starts empty
                prompts = list(zip(cache.keys, cache.values))
                cache = SharedPromptCache(prompts, attention_mask, [tuple(p) for p in distinct],
                                          torch.arange(len(distinct), device=self.device), room)
                attention_mask = attention_mask[:, :0]
        if len(distinct) < B:
            index = torch.tensor(source, device=self.device)
            cache.reorder_cache(index)  # (distinct, ...) -> (B, ...)
            logits, attention_mask = logits.index_select(0, index), attention_mask.index_select(0, index)
        return logits, attention_mask, cache

    def left_padded_kv(self, rows, width: int):
        """Several rows' kept K/V (each [(K, V)] a layer, (kv_heads, n_i, head_dim); None for none) in one
        tensor a layer, left padded to `width`: ([(K, V)], each (rows, kv_heads, width, head_dim), mask
        (rows, width) with 1 on real positions)."""
        ref = next(row for row in rows if row)
        heads, head_dim, dtype = ref[0][0].shape[0], ref[0][0].shape[2], ref[0][0].dtype
        layers = [tuple(torch.zeros(len(rows), heads, width, head_dim, dtype=dtype, device=self.device)
                        for _ in range(2)) for _ in ref]
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            for (keys, values), (k, v) in zip(layers, row or []):
                keys[i, :, width - k.shape[1]:], values[i, :, width - k.shape[1]:] = k, v
            if row:
                mask[i, width - row[0][0].shape[1]:] = 1
        return layers, mask.to(self.device)

    def new_tokens(self, prompt_ids, starts):
        """(input_ids, attention_mask), both (B, S): each prompt from starts[i] on, left padded to the
        longest, rounded up to PREFILL_MULTIPLE."""
        return self.left_pad([p[n:] for p, n in zip(prompt_ids, starts)])

    def prefill_after_kept(self, prompt_ids, matches, cache):
        """prefill() for rows that continue kept sequences, into a one-level cache. Row i's cache is its kept
        K/V (n_i positions, left padded to the longest), then its new tokens (left padded to the longest):
        padding in the middle is masked out, and positions come from the mask, so every real token sits where
        it would alone."""
        starts = [n for n, _ in matches]
        past, past_mask = self.left_padded_kv([kv.full_kv() if n else None for n, kv in matches], max(starts))
        input_ids, new_mask = self.new_tokens(prompt_ids, starts)
        for layer_idx, (k, v) in enumerate(past):
            cache.update(k, v, layer_idx)
        attention_mask = torch.cat([past_mask, new_mask], dim=1)
        real = sum(len(p) - n for p, n in zip(prompt_ids, starts))
        return self.forward("prefill", input_ids, attention_mask, cache, real), attention_mask

    def prefill_shared_after_kept(self, prompt_ids, matches, room: int):
        """prefill() for rows that continue kept two-level sequences (every row has one): the kept prompts
        become the shared level of a new SharedPromptCache, each row's own kept K/V (left padded to the
        longest) and its new tokens (left padded) its own level."""
        groups = {}  # a prompt's ids -> its group
        group = [groups.setdefault(kv.prompt, len(groups)) for _, kv in matches]
        prompt_kv = {g: kv.prompt_kv for g, (_, kv) in zip(group, matches)}
        width = round_up(max(map(len, groups)), self.PREFILL_MULTIPLE)
        prefix, prefix_mask = self.left_padded_kv([prompt_kv[g] for g in range(len(groups))], width)
        own = [kv.own_kv for _, kv in matches]
        past, past_mask = self.left_padded_kv(own, max(k.shape[1] for (k, _), *_ in own))
        starts = [n for n, _ in matches]
        input_ids, new_mask = self.new_tokens(prompt_ids, starts)
        cache = SharedPromptCache(prefix, prefix_mask, list(groups), torch.tensor(group, device=self.device),
                                  room + input_ids.shape[1])
        if past_mask.shape[1] > 0:
            for layer_idx, (k, v) in enumerate(past):
                cache.own.update(k, v, layer_idx)
        attention_mask = torch.cat([past_mask, new_mask], dim=1)
        real = sum(len(p) - n for p, n in zip(prompt_ids, starts))
        return self.forward("prefill", input_ids, attention_mask, cache, real), attention_mask, cache

    @staticmethod
    def keep_row(kept: dict, prompt, completion, mask_row, cache, j: int):
        """Keep batch row j's K/V for the next call. Its real positions (mask 1) hold the prompt and every
        sampled token but the last, which was never fed back (in a SharedPromptCache: after its prompt)."""
        covered = tuple(prompt) + tuple(completion[:-1])
        positions = mask_row.bool().nonzero().flatten()
        if isinstance(cache, SharedPromptCache):
            g = int(cache.group[j])
            prompt_kv = cache.prompt_kv(g)
            own = cache.own.row(j, positions) if cache.own.keys else [
                (k[:, :0], v[:, :0]) for k, v in prompt_kv]  # (no forward has written its own level yet)
            row = KeptRow(cache.prefix_keys[g], prompt_kv, own)
            n = len(row.prompt) + len(positions)
        else:
            row, n = KeptRow(None, None, cache.row(j, positions)), len(positions)
        if n == len(covered):  # (always; otherwise the next turn prefills it from scratch)
            kept.setdefault(len(covered), {})[covered] = row

    def rollout(self, prompt_ids, max_new_tokens, temperature=1.0, top_p=1.0, max_length=None):
        budgets = row_budgets(prompt_ids, max_new_tokens, max_length)
        return self.sample(prompt_ids, budgets, temperature, top_p, {self.eos_token_id})

    @torch.no_grad()
    def sample(self, prompt_ids, budgets, temperature: float, top_p: float, stop_ids) -> RolloutResult:
        """The sampling loop: row i gets at most budgets[i] new tokens and stops after any id in stop_ids
        (its `finished` is then True). The server's /generate calls this with per-request budgets."""
        B = len(prompt_ids)
        result = RolloutResult([[] for _ in range(B)], [[] for _ in range(B)], [False] * B)
        if B == 0 or max(budgets) <= 0:
            return result
        was_training = self.model.training
        self.model.eval()
        # one autocast context for the whole loop: autocast keeps the low-precision copies of the weights it
        # makes for the duration of a context, so they are cast once per call instead of once per token
        with autocast(self.device, self.dtype), self.packed_weights():
            logits, attention_mask, cache = self.prefill(prompt_ids, max(budgets))
            # batch row j samples for prompt rows[j]; finished rows are dropped from the batch
            rows = list(range(B))
            # per batch row, a Python list: the loop reads it row by row
            running = [budgets[i] > 0 for i in rows]
            kept = {}
            for _ in range(max(budgets)):
                token, logp = sample_next(logits, temperature, top_p)
                tokens, logps = token.tolist(), logp.tolist()  # one copy per step, not one per row
                for j, i in enumerate(rows):
                    if not running[j]:
                        continue
                    result.completion_ids[i].append(tokens[j])
                    result.logps[i].append(logps[j])
                    if tokens[j] in stop_ids:
                        result.finished[i] = True
                        running[j] = False
                    elif len(result.completion_ids[i]) >= budgets[i]:
                        running[j] = False
                if not any(running):
                    break
                if 4 * sum(running) <= 3 * len(rows):  # a quarter of the batch has stopped: stop computing it
                    for j, i in enumerate(rows):
                        if self.reuse_prefix and not running[j]:
                            self.keep_row(kept, prompt_ids[i], result.completion_ids[i],
                                          attention_mask[j], cache, j)
                    live = torch.tensor([j for j in range(len(rows)) if running[j]], device=self.device)
                    cache.reorder_cache(live)
                    attention_mask, token = attention_mask.index_select(0, live), token.index_select(0, live)
                    rows = [rows[j] for j in live.tolist()]
                    running = [True] * len(rows)
                # rows that stopped are fed padding, masked out
                running_mask = torch.tensor(running, device=self.device)
                token = torch.where(running_mask, token, torch.full_like(token, self.pad_token_id))
                attention_mask = torch.cat([attention_mask, running_mask.long()[:, None]], dim=1)
                logits = self.forward("decode", token[:, None], attention_mask, cache, sum(running))
            if self.reuse_prefix:
                for j, i in enumerate(rows):
                    self.keep_row(kept, prompt_ids[i], result.completion_ids[i], attention_mask[j], cache, j)
                self.kept = kept
        if was_training:
            self.model.train()
        return result


def create_rollout_engine(engine_type: str, model, eos_token_id: int, pad_token_id: int, device="cpu",
                          dtype="float32", base_url: str | None = None, weights_dir: str | None = None,
                          timeout: float = 600.0) -> RolloutEngine:
    """"torch": sample in this process. "sglang": an SGLang server at base_url, the policy written to
    weights_dir for it after every optimizer step."""
    if engine_type == "torch":
        return TorchRolloutEngine(model, eos_token_id, pad_token_id, device, dtype, reuse_prefix=True)
    if engine_type == "sglang":
        if base_url is None or weights_dir is None:
            raise ValueError("the sglang rollout engine needs base_url and weights_dir")
        return SGLangRolloutEngine(model, eos_token_id, base_url, weights_dir, dtype, timeout)
    raise ValueError(f"unknown rollout engine {engine_type!r}: this version provides 'torch' and 'sglang'")
