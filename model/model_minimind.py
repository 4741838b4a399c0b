"""
MiniMind: a small decoder-only causal LM in the Llama/Qwen3 family.

    pre-norm RMSNorm -> grouped-query attention (QK-norm, RoPE theta 1e6) -> SwiGLU MLP
    (or a mixture of experts)

It is a transformers `PreTrainedModel` + `GenerationMixin`, so `model.generate()` (greedy, sampling, KV cache)
and `save_pretrained` / `AutoModelForCausalLM.from_pretrained` work, and it also loads the MiniMind-style
`out/{weight}_{hidden_size}[_moe].pth` state dicts (see `load_minimind`). A dense MiniMind is also a Qwen3
model: `save_qwen3_dir` writes it as a transformers directory that serving engines such as SGLang
load natively.

Left-padded batches are handled on the fast path: positions come from the attention mask, and
`scaled_dot_product_attention` gets a boolean mask, so a padded row gives the same logits as the row alone.

Quick check:
    python -c "from model.model_minimind import *; m = MiniMindForCausalLM(MiniMindConfig()); print(m)"
"""
import contextlib
import errno
import glob
import json
import math
import os
import shutil
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from transformers import AutoConfig, AutoModelForCausalLM, GenerationMixin, PretrainedConfig, PreTrainedModel
from transformers.cache_utils import Cache, DynamicCache
from transformers.utils import ModelOutput

# Size presets. "cpu" is the default every script uses when no size flag is given (4.6M parameters); its
# cold-start SFT reaches the validation plateau in about an hour on a 2-core CPU (see README).
# "upstream" is the MiniMind size for GPU users.
MODEL_PRESETS = {
    "cpu": dict(hidden_size=256, num_hidden_layers=4),
    "upstream": dict(hidden_size=768, num_hidden_layers=8),
}
DEFAULT_HIDDEN_SIZE = MODEL_PRESETS["cpu"]["hidden_size"]
DEFAULT_NUM_LAYERS = MODEL_PRESETS["cpu"]["num_hidden_layers"]


class MiniMindConfig(PretrainedConfig):
    model_type = "minimind"

    vocab_size: int = 6400  # byte-level BPE trained by trainer/train_tokenizer.py
    hidden_size: int = DEFAULT_HIDDEN_SIZE  # width of the residual stream
    num_hidden_layers: int = DEFAULT_NUM_LAYERS  # transformer blocks
    num_attention_heads: int = 8  # query heads
    num_key_value_heads: int = 4  # key/value heads (grouped-query attention); must divide the query heads
    head_dim: int | None = None  # defaults to hidden_size // num_attention_heads
    intermediate_size: int | None = None  # SwiGLU width; defaults to 8/3 * hidden, rounded up to 64
    hidden_act: str = "silu"
    max_position_embeddings: int = 4096  # longest sequence the model is meant to see
    rope_theta: float = 1e6  # RoPE base frequency (DEFAULT_ROPE_THETA)
    inference_rope_scaling: bool = False  # YaRN with upstream MiniMind's parameters (YARN below)
    rms_norm_eps: float = 1e-6
    dropout: float = 0.0  # residual and attention dropout (training only)
    initializer_range: float = 0.02  # std of the normal init of linear and embedding weights
    tie_word_embeddings: bool = True  # lm_head shares the embedding matrix
    use_cache: bool = True
    # --- mixture of experts (off by default); the defaults are upstream MiniMind's layout, so its MoE
    # checkpoints load as they are ---
    use_moe: bool = False
    num_experts: int = 4  # routed experts per layer
    num_experts_per_tok: int = 1  # experts each token is sent to
    n_shared_experts: int = 0  # experts every token always uses
    norm_topk_prob: bool = True  # renormalise the top-k router weights to sum to 1
    router_aux_loss_coef: float = 5e-4  # weight of the load-balancing loss returned as `aux_loss`
    # --- special tokens (fixed by the tokenizer) ---
    pad_token_id: int | None = 0  # <|endoftext|>
    bos_token_id: int | None = 1  # <|im_start|>
    eos_token_id: int | list[int] | None = 2  # <|im_end|>

    def __post_init__(self, **kwargs):
        if self.head_dim is None:
            self.head_dim = self.hidden_size // self.num_attention_heads
        if self.intermediate_size is None:
            self.intermediate_size = 64 * math.ceil(self.hidden_size * 8 / 3 / 64)
        if self.num_attention_heads % self.num_key_value_heads != 0:
            raise ValueError(
                f"num_attention_heads ({self.num_attention_heads}) must be a multiple of "
                f"num_key_value_heads ({self.num_key_value_heads})"
            )
        if self.use_moe and not 0 < self.num_experts_per_tok <= self.num_experts:
            raise ValueError(
                f"num_experts_per_tok ({self.num_experts_per_tok}) must be in "
                f"1..num_experts ({self.num_experts})"
            )
        super().__post_init__(**kwargs)


# ----------------------------------------------------------------------------------------------------------
# building blocks


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        # normalise in fp32 for stability, return in the input dtype
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return (x32 * self.weight.float()).to(x.dtype)


# YaRN as upstream MiniMind configures it (inference_rope_scaling=True): a context trained at 2,048 stretched
# 16 times. Dimension i keeps its frequency when it turns more than beta_fast times within the original
# context, is slowed by `factor` when it turns less than beta_slow times, and is interpolated between.
YARN = {"factor": 16, "original_max_position_embeddings": 2048, "beta_fast": 32, "beta_slow": 1,
        "attention_factor": 1.0}


def rope_frequencies(head_dim: int, theta: float, yarn: dict | None = None, max_positions: int = 0):
    """The rotation frequency of each of the head_dim/2 dimension pairs, with YaRN's scaling when given
    (and when max_positions exceeds the original context, as upstream applies it)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    if yarn is None or max_positions <= yarn["original_max_position_embeddings"]:
        return inv_freq
    original = yarn["original_max_position_embeddings"]

    def dim_turning(turns):  # the (fractional) pair index whose wave fits `turns` times into the context
        return head_dim * math.log(original / (turns * 2 * math.pi)) / (2 * math.log(theta))

    low = max(math.floor(dim_turning(yarn["beta_fast"])), 0)
    high = min(math.ceil(dim_turning(yarn["beta_slow"])), head_dim // 2 - 1)
    ramp = ((torch.arange(head_dim // 2).float() - low) / max(high - low, 1e-3)).clamp(0, 1)
    return inv_freq * (1 - ramp + ramp / yarn["factor"])


def rope_cos_sin(position_ids, inv_freq, scale: float = 1.0):
    """cos/sin tables for the given positions: (B, T) -> two (B, T, head_dim) tensors.

    Computed on the fly (it is tiny next to the matmuls), so there are no buffers to rebuild after loading.
    """
    freqs = position_ids.float()[..., None] * inv_freq.to(position_ids.device)  # (B, T, head_dim/2)
    emb = torch.cat([freqs, freqs], dim=-1)  # (B, T, head_dim)
    return emb.cos() * scale, emb.sin() * scale


def apply_rope(x, cos, sin):
    """x: (B, H, T, hd); cos/sin: (B, T, hd). Rotates the two halves of each head (Llama convention)."""
    cos = cos.unsqueeze(1).to(x.dtype)
    sin = sin.unsqueeze(1).to(x.dtype)
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class Attention(nn.Module):
    def __init__(self, config: MiniMindConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        self.n_heads = config.num_attention_heads
        self.n_kv_heads = config.num_key_value_heads
        self.head_dim = config.head_dim
        self.dropout = config.dropout
        self.q_proj = nn.Linear(config.hidden_size, self.n_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, self.n_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(config.hidden_size, self.n_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.n_heads * self.head_dim, config.hidden_size, bias=False)
        # QK-norm (Qwen3): RMSNorm over each head's query and key before RoPE keeps attention logits bounded
        self.q_norm = RMSNorm(self.head_dim, config.rms_norm_eps)
        self.k_norm = RMSNorm(self.head_dim, config.rms_norm_eps)

    def qkv(self, x):
        """The query, key and value projections of x (one method, so that a sampling engine can run the three
        as one fused matmul: see trainer/fast_engine.PackedLinears)."""
        return self.q_proj(x), self.k_proj(x), self.v_proj(x)

    def forward(self, x, cos, sin, attn_mask, cache: Cache | None):
        B, T, _ = x.shape
        hd = self.head_dim
        q, k, v = self.qkv(x)
        q = self.q_norm(q.view(B, T, self.n_heads, hd)).transpose(1, 2)  # (B, H, T, hd)
        k = self.k_norm(k.view(B, T, self.n_kv_heads, hd)).transpose(1, 2)  # (B, Hkv, T, hd)
        v = v.view(B, T, self.n_kv_heads, hd).transpose(1, 2)  # (B, Hkv, T, hd)
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)
        if hasattr(cache, "attend"):
            # a cache that computes the attention itself: the rollout engine's, whose rows share prompts
            # (trainer/fast_engine.SharedPromptCache); attn_mask covers the rows' own positions
            y = cache.attend(q, k, v, attn_mask, self.layer_idx)  # (B, H, T, hd)
            return self.o_proj(y.transpose(1, 2).reshape(B, T, self.n_heads * hd))
        if cache is not None:
            k, v = cache.update(k, v, self.layer_idx)  # (B, Hkv, S, hd), S = past + T
        if self.n_kv_heads != self.n_heads and T == 1:
            # decoding one token: the query heads that share a key/value head become its "query positions"
            # (no causal order among them), so K/V are read as they are instead of copied per query head;
            # the same result, several times faster on CPU
            rep = self.n_heads // self.n_kv_heads
            y = F.scaled_dot_product_attention(
                q.reshape(B, self.n_kv_heads, rep, hd), k, v,
                attn_mask=attn_mask,  # (B, 1, 1, S) or None: the same for every query head
                dropout_p=self.dropout if self.training else 0.0,
            )  # (B, Hkv, rep, hd)
            return self.o_proj(y.reshape(B, 1, self.n_heads * hd))
        if self.n_kv_heads != self.n_heads:
            # expanding K/V keeps SDPA on its fused CPU kernel (enable_gqa falls back to the math path)
            rep = self.n_heads // self.n_kv_heads
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        # attn_mask None means plain causal attention with no padding and no cache offset
        y = F.scaled_dot_product_attention(
            q, k, v,
            attn_mask=attn_mask,
            is_causal=attn_mask is None and T > 1,
            dropout_p=self.dropout if self.training else 0.0,
        )  # (B, H, T, hd)
        y = y.transpose(1, 2).reshape(B, T, self.n_heads * self.head_dim)
        return self.o_proj(y)


class FeedForward(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x))."""

    def __init__(self, hidden_size: int, intermediate_size: int):
        super().__init__()
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def gate_up(self, x):
        """The two input projections (one method, so that a sampling engine can fuse them, as qkv)."""
        return self.gate_proj(x), self.up_proj(x)

    def forward(self, x):
        gate, up = self.gate_up(x)
        return self.down_proj(F.silu(gate) * up)


class MoEFeedForward(nn.Module):
    """Top-k routed experts plus always-on shared experts, with a Switch-style load-balancing loss."""

    def __init__(self, config: MiniMindConfig):
        super().__init__()
        self.top_k = config.num_experts_per_tok
        self.num_experts = config.num_experts
        self.norm_topk_prob = config.norm_topk_prob
        self.gate = nn.Linear(config.hidden_size, config.num_experts, bias=False)
        self.experts = nn.ModuleList(
            [FeedForward(config.hidden_size, config.intermediate_size) for _ in range(config.num_experts)]
        )
        self.shared_experts = nn.ModuleList(
            [FeedForward(config.hidden_size, config.intermediate_size)
             for _ in range(config.n_shared_experts)]
        )

    def forward(self, x):
        B, T, C = x.shape
        flat = x.reshape(-1, C)  # (N, C), N = B*T
        probs = F.softmax(self.gate(flat).float(), dim=-1)  # (N, E)
        topk_w, topk_idx = probs.topk(self.top_k, dim=-1)  # (N, k)
        if self.norm_topk_prob:
            topk_w = topk_w / topk_w.sum(-1, keepdim=True)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            token_idx, slot = (topk_idx == e).nonzero(as_tuple=True)
            if token_idx.numel() == 0:
                continue
            w = topk_w[token_idx, slot].unsqueeze(-1).to(flat.dtype)
            out.index_add_(0, token_idx, (expert(flat[token_idx]) * w).to(out.dtype))
        for expert in self.shared_experts:
            out = out + expert(flat)
        # load balance: E * sum_e(fraction of routed slots to e * mean router prob of e); 1.0 when uniform
        fraction = F.one_hot(topk_idx, self.num_experts).float().sum(1).mean(0) / self.top_k  # (E,)
        aux_loss = self.num_experts * (fraction * probs.mean(0)).sum()
        return out.view(B, T, C), aux_loss


class MiniMindBlock(nn.Module):
    def __init__(self, config: MiniMindConfig, layer_idx: int):
        super().__init__()
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.self_attn = Attention(config, layer_idx)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.use_moe = config.use_moe
        if config.use_moe:
            self.mlp = MoEFeedForward(config)
        else:
            self.mlp = FeedForward(config.hidden_size, config.intermediate_size)
        self.resid_dropout = nn.Dropout(config.dropout)

    def forward(self, x, cos, sin, attn_mask, cache):
        x = x + self.resid_dropout(self.self_attn(self.input_layernorm(x), cos, sin, attn_mask, cache))
        h = self.post_attention_layernorm(x)
        if self.use_moe:
            h, aux_loss = self.mlp(h)
        else:
            h, aux_loss = self.mlp(h), None
        return x + self.resid_dropout(h), aux_loss


# ----------------------------------------------------------------------------------------------------------
# masks and positions


def build_attention_mask(attention_mask, past_len: int, q_len: int, device):
    """Boolean SDPA mask (B, 1, T, S), True = may attend; None when plain causal attention is exact.

    attention_mask: (B, S) with 1 on real tokens and 0 on padding, S = past_len + q_len (the generate()
    convention: it covers the cached tokens too). Each query also sees itself, so a padding query never has an
    all-False row (which would make SDPA return NaN); its output is never used.
    """
    if attention_mask is None or bool(attention_mask.all()):
        if past_len == 0 or q_len == 1:
            return None  # is_causal=True for the prompt; a single new token may see everything cached
        attention_mask = torch.ones(1, past_len + q_len, dtype=torch.bool, device=device)
    S = past_len + q_len
    if attention_mask.shape[-1] != S:
        raise ValueError(f"attention_mask covers {attention_mask.shape[-1]} positions, expected {S}")
    if q_len == 1:  # one new token (decoding): every real position before it, and itself
        mask = attention_mask != 0
        mask[:, -1] = True
        return mask[:, None, None, :]
    q_pos = torch.arange(past_len, S, device=device)[:, None]  # (T, 1)
    k_pos = torch.arange(S, device=device)[None, :]  # (1, S)
    causal = k_pos <= q_pos  # (T, S)
    mask = causal[None] & attention_mask.bool()[:, None, :]  # (B, T, S)
    mask = mask | (k_pos == q_pos)[None]
    return mask[:, None]  # (B, 1, T, S)


def positions_from_mask(attention_mask, past_len: int, q_len: int, device):
    """Position ids (B, T) that skip left padding, so a padded row sees the same positions as alone."""
    if attention_mask is None:
        return torch.arange(past_len, past_len + q_len, device=device)[None]
    if q_len == 1:  # decoding: the number of real tokens before the new one
        return (attention_mask.sum(-1, keepdim=True) - 1).clamp(min=0)
    pos = attention_mask.long().cumsum(-1) - 1
    return pos.clamp(min=0)[:, past_len:past_len + q_len]


# ----------------------------------------------------------------------------------------------------------
# the model


@dataclass
class MiniMindCausalLMOutput(ModelOutput):
    loss: torch.Tensor | None = None
    aux_loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    # the KV cache; transformers also exposes it as `.past_key_values`
    cache: Cache | None = None


class MiniMindPreTrainedModel(PreTrainedModel):
    config_class = MiniMindConfig
    base_model_prefix = "model"
    _no_split_modules = ["MiniMindBlock"]
    supports_gradient_checkpointing = False

    def _init_weights(self, module):
        std = self.config.initializer_range
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=std)
        elif isinstance(module, RMSNorm):
            nn.init.ones_(module.weight)


class MiniMindModel(MiniMindPreTrainedModel):
    def __init__(self, config: MiniMindConfig):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.dropout = nn.Dropout(config.dropout)
        self.layers = nn.ModuleList([MiniMindBlock(config, i) for i in range(config.num_hidden_layers)])
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.post_init()

    def forward(self, input_ids, attention_mask=None, position_ids=None, cache=None):
        B, T = input_ids.shape
        past_len = cache.get_seq_length() if cache is not None else 0
        if position_ids is None:
            position_ids = positions_from_mask(attention_mask, past_len, T, input_ids.device)
        attn_mask = build_attention_mask(attention_mask, past_len, T, input_ids.device)
        yarn = YARN if self.config.inference_rope_scaling else None
        inv_freq = rope_frequencies(self.config.head_dim, self.config.rope_theta, yarn,
                                    self.config.max_position_embeddings)
        cos, sin = rope_cos_sin(position_ids, inv_freq, yarn["attention_factor"] if yarn else 1.0)
        x = self.dropout(self.embed_tokens(input_ids))  # (B, T, C)
        aux_losses = []
        for layer in self.layers:
            x, aux = layer(x, cos, sin, attn_mask, cache)
            if aux is not None:
                aux_losses.append(aux)
        aux_loss = torch.stack(aux_losses).sum() if aux_losses else None
        return self.norm(x), aux_loss


class MiniMindForCausalLM(MiniMindPreTrainedModel, GenerationMixin):
    _tied_weights_keys = {"lm_head.weight": "model.embed_tokens.weight"}

    def __init__(self, config: MiniMindConfig | None = None):
        config = config or MiniMindConfig()
        super().__init__(config)
        self.model = MiniMindModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()

    def get_input_embeddings(self):
        return self.model.embed_tokens

    def set_input_embeddings(self, value):
        self.model.embed_tokens = value

    def forward(
        self,
        input_ids: torch.LongTensor,
        attention_mask: torch.Tensor | None = None,
        past_key_values: Cache | None = None,
        use_cache: bool = False,
        logits_to_keep: int | torch.Tensor = 0,
        labels: torch.LongTensor | None = None,
        position_ids: torch.LongTensor | None = None,
        cache: Cache | None = None,
        return_logits: bool = True,
        label_weights: torch.Tensor | None = None,
        **kwargs,
    ) -> MiniMindCausalLMOutput:
        """
        input_ids: (B, T). attention_mask: (B, past + T), 1 = token, 0 = padding (left padding is fine).
        past_key_values / cache: a transformers `Cache` (both names accepted); created when use_cache is set.
        logits_to_keep: 0 = logits for every position, k = only the last k, or a tensor of positions.
        labels: (B, T) token ids, -100 = ignore; shifted inside, so labels = input_ids trains next-token.
        return_logits: False skips the full (B, T, vocab) logits when only the loss is wanted; the loss then
            runs the LM head on the labelled positions alone (in SFT most positions are prompt, not labels).
        label_weights: (B, T) floats aligned with labels: each label token's loss is scaled by its weight
            and the sum still divided by the number of label tokens (1 everywhere = the plain mean).
        Returns loss (LM loss + router aux loss for MoE), aux_loss, logits (B, T', vocab) and the cache.
        """
        cache = cache if cache is not None else past_key_values
        if use_cache and cache is None:
            cache = DynamicCache()
        hidden, aux_loss = self.model(input_ids, attention_mask, position_ids, cache)
        loss = None
        if labels is not None:
            shift_labels = labels[:, 1:].to(hidden.device)  # position t predicts token t+1
            keep = shift_labels != -100  # (B, T-1)
            picked = self.lm_head(hidden[:, :-1][keep]).float()  # (n_labels, V)
            if label_weights is None:
                loss = F.cross_entropy(picked, shift_labels[keep], reduction="sum")
            else:
                loss = F.cross_entropy(picked, shift_labels[keep], reduction="none")
                loss = (loss * label_weights[:, 1:].to(loss.device)[keep]).sum()
            loss = loss / keep.sum().clamp(min=1)
            if aux_loss is not None:
                loss = loss + self.config.router_aux_loss_coef * aux_loss
        logits = None
        if return_logits:
            if isinstance(logits_to_keep, int):
                hidden = hidden[:, -logits_to_keep:] if logits_to_keep > 0 else hidden
            else:
                hidden = hidden[:, logits_to_keep]
            logits = self.lm_head(hidden)  # (B, T', V)
        return MiniMindCausalLMOutput(
            loss=loss,
            aux_loss=aux_loss,
            logits=logits,
            cache=cache if use_cache else None,
        )


# exist_ok: this file is also the remote code of an exported directory (save_minimind_dir), which a process
# that has imported the project may load a second time
AutoConfig.register("minimind", MiniMindConfig, exist_ok=True)
AutoModelForCausalLM.register(MiniMindConfig, MiniMindForCausalLM, exist_ok=True)


# ----------------------------------------------------------------------------------------------------------
# MiniMind-style checkpoints: out/{weight}_{hidden_size}[_moe].pth


def weight_path(save_dir: str, weight: str, hidden_size: int, use_moe: bool) -> str:
    """{save_dir}/{weight}_{hidden_size}[_moe].pth. The name is a plain file name: a name with a folder in it
    ('../../x', '/abs/x') would read or write outside save_dir, and is refused."""
    if not weight or weight in (".", "..") or any(s in weight for s in ("/", os.sep, os.altsep or "/")):
        raise ValueError(f"weight name {weight!r}: give a plain name (no folders); files live in "
                         f"{save_dir!r}, set by --save_dir")
    return os.path.join(save_dir, f"{weight}_{hidden_size}{'_moe' if use_moe else ''}.pth")


class SaveError(OSError):
    """A checkpoint could not be written (a full disk, a lost mount); the file at its path is intact."""


def write_atomically(path: str, write, size_hint: int = 0):
    """write(file) into a temporary file beside `path`, fsync, then rename over `path`: a reader (or a resumed
    run) only ever sees a complete file, even if the process is killed mid-save. When the write fails, the
    temporary file is removed and SaveError names the path, the space it needed and the space left."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except (OSError, RuntimeError) as e:  # torch.save reports a short write as RuntimeError
        with contextlib.suppress(OSError):
            os.remove(tmp)
        free = shutil.disk_usage(folder).free
        full = isinstance(e, OSError) and e.errno == errno.ENOSPC or free < size_hint
        raise SaveError(f"could not write {path}: {e}; it needs about {size_hint / 2**20:.1f} MB and "
                        f"{free / 2**20:.1f} MB are free there" + (" (the disk is full)" if full else "")
                        + f"; the previous {os.path.basename(path)} is untouched") from e


def state_bytes(obj) -> int:
    """About how many bytes torch.save writes for obj (its tensors; the rest is small)."""
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(state_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(state_bytes(v) for v in obj)
    return 0


def save_minimind(model: MiniMindForCausalLM, path: str, dtype=torch.bfloat16):
    """Write the state dict (half precision by default, like upstream MiniMind) atomically: tmp file +
    rename. The keys are upstream's, lm_head.weight included (upstream's loaders expect it); tied to the
    embedding, it is the same tensor, stored once."""
    state = {k: v.detach().to("cpu", dtype) for k, v in model.state_dict().items() if k != "lm_head.weight"}
    if model.config.tie_word_embeddings:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    else:
        state["lm_head.weight"] = model.lm_head.weight.detach().to("cpu", dtype)
    write_atomically(path, lambda f: torch.save(state, f), state_bytes(state))
    write_rope_note(path, model.config.rope_theta)


# A state dict shows the model's shape but not its RoPE base, which the weights are trained for. A base other
# than upstream's is written beside the .pth ({stem}_config.json) and read back by load_minimind.
DEFAULT_ROPE_THETA = 1e6


def rope_note_path(path: str) -> str:
    return os.path.splitext(path)[0] + "_config.json"


def write_rope_note(path: str, rope_theta: float):
    note = rope_note_path(path)
    if rope_theta == DEFAULT_ROPE_THETA:
        if os.path.exists(note):  # an older run's note would describe other weights
            os.remove(note)
        return
    tmp = f"{note}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"rope_theta": rope_theta}, f)
    os.replace(tmp, note)


def saved_rope_theta(path: str, asked: float) -> float:
    """The RoPE base to load the .pth at path with: its note's when it has one (an error when the caller asked
    for another base than upstream's default, and not the saved one), else the one asked for."""
    note = rope_note_path(path)
    if not os.path.exists(note):
        return asked
    try:
        with open(note, encoding="utf-8") as f:
            saved = float(json.load(f)["rope_theta"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{note}: not a readable RoPE note ({e}); it should hold "
                         '{"rope_theta": <base>}') from None
    if asked not in (saved, DEFAULT_ROPE_THETA):
        raise ValueError(f"{path} was trained with rope_theta {saved:g} ({note}), not {asked:g}: drop "
                         f"--rope_theta or pass {saved:g}")
    return saved


def shape_from_state(state: dict) -> dict:
    """The config fields a state dict fixes by its shapes: width, depth, heads, MLP width, vocabulary, MoE."""
    layers = {int(k.split(".")[2]) for k in state if k.startswith("model.layers.")}
    vocab, hidden = state["model.embed_tokens.weight"].shape
    head_dim = state["model.layers.0.self_attn.q_norm.weight"].shape[0]
    shape = {"vocab_size": vocab, "hidden_size": hidden, "num_hidden_layers": max(layers) + 1,
             "head_dim": head_dim,
             "num_attention_heads": state["model.layers.0.self_attn.q_proj.weight"].shape[0] // head_dim,
             "num_key_value_heads": state["model.layers.0.self_attn.k_proj.weight"].shape[0] // head_dim}
    gate = "model.layers.0.mlp.gate_proj.weight"
    if gate in state:
        shape.update(use_moe=False, intermediate_size=state[gate].shape[0])
    else:
        experts = {int(k.split(".")[5]) for k in state if k.startswith("model.layers.0.mlp.experts.")}
        shared = {int(k.split(".")[5]) for k in state if k.startswith("model.layers.0.mlp.shared_experts.")}
        shape.update(use_moe=True, num_experts=len(experts), n_shared_experts=len(shared),
                     intermediate_size=state["model.layers.0.mlp.experts.0.gate_proj.weight"].shape[0])
    return shape


def load_minimind(path: str, config: MiniMindConfig) -> MiniMindForCausalLM:
    """Build a model and load a `.pth` state dict written by `save_minimind` (fp32 in memory). The shape
    (depth, heads, MLP width, ...) is read from the state dict, so a checkpoint loads whatever the flags
    say about it; `config` gives everything else."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"no checkpoint at {path}: train one first or pass --save_dir/--weight")
    state = torch.load(path, map_location="cpu", weights_only=True)
    state = {k: v.float() for k, v in state.items()}
    try:
        shape = shape_from_state(state)
    except (KeyError, IndexError, ValueError) as e:
        raise ValueError(f"{path} is not a MiniMind state dict (no {e})") from None
    shape["rope_theta"] = saved_rope_theta(path, config.rope_theta)
    config = MiniMindConfig(**{**config.to_dict(), **shape})
    model = MiniMindForCausalLM(config)
    state.setdefault("lm_head.weight", state["model.embed_tokens.weight"])
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise ValueError(
            f"{path} does not match the config (hidden_size={config.hidden_size}, "
            f"num_hidden_layers={config.num_hidden_layers}, use_moe={config.use_moe}): "
            f"missing {missing[:5]}, unexpected {unexpected[:5]}"
        )
    model.tie_weights()
    return model


# ----------------------------------------------------------------------------------------------------------
# transformers directories in the Qwen3 layout, for serving engines that know Qwen3 natively (SGLang, vLLM)
#
# A dense MiniMind is a Qwen3 model: the same modules under the same names (q_norm/k_norm on each head before
# RoPE, rotate-half RoPE, SwiGLU, tied embeddings). So the state dict is written unchanged and config.json
# names Qwen3ForCausalLM; transformers' Qwen3 gives the same logits (tests/test_sglang_engine.py checks it).

QWEN3_WEIGHTS = "model.safetensors"


def qwen3_rope(config: MiniMindConfig) -> dict:
    """RoPE as transformers' Qwen3 reads it. YaRN is written only where MiniMind applies it (the context
    longer than the original one), with attention_factor 1 as upstream sets it; transformers' ramp and
    correction range are the same formula as rope_frequencies (a test checks the logits)."""
    rope = {"rope_type": "default", "rope_theta": config.rope_theta}
    longer = config.max_position_embeddings > YARN["original_max_position_embeddings"]
    if config.inference_rope_scaling and longer:
        rope.update(rope_type="yarn", **YARN)
    return rope


def qwen3_config(config: MiniMindConfig, dtype: str = "bfloat16") -> dict:
    """config.json of the Qwen3 model equal to `config`. `dtype` is the precision a server should run in
    (SGLang's --dtype auto reads it); the weights themselves are written in fp32."""
    if config.use_moe:
        raise ValueError("a MoE MiniMind has no Qwen3 equivalent; only dense models can be exported")
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "vocab_size": config.vocab_size,
        "hidden_size": config.hidden_size,
        "intermediate_size": config.intermediate_size,
        "num_hidden_layers": config.num_hidden_layers,
        "num_attention_heads": config.num_attention_heads,
        "num_key_value_heads": config.num_key_value_heads,
        "head_dim": config.head_dim,
        "hidden_act": config.hidden_act,
        "max_position_embeddings": config.max_position_embeddings,
        "rms_norm_eps": config.rms_norm_eps,
        # both spellings: transformers 4 reads rope_theta, transformers 5 rope_parameters
        "rope_theta": config.rope_theta,
        "rope_parameters": qwen3_rope(config),
        "attention_bias": False,
        "attention_dropout": 0.0,
        "use_sliding_window": False,
        "sliding_window": None,
        "max_window_layers": config.num_hidden_layers,
        "tie_word_embeddings": config.tie_word_embeddings,
        "initializer_range": config.initializer_range,
        "bos_token_id": config.bos_token_id,
        "eos_token_id": config.eos_token_id,
        "pad_token_id": config.pad_token_id,
        "use_cache": True,
        "torch_dtype": dtype,
        "dtype": dtype,
    }


def _replace_file(path: str, write):
    """write(tmp_path), then rename over `path`: a reader sees the old file or the new one, never a part."""
    tmp = f"{path}.tmp.{os.getpid()}"
    write(tmp)
    os.chmod(tmp, 0o644)  # safetensors creates files 0600; a server running as another user must read them
    os.replace(tmp, path)


def save_qwen3_dir(model: MiniMindForCausalLM, path: str, dtype: str = "bfloat16"):
    """Write config.json and model.safetensors (fp32, tied lm_head left out) into `path`, each file
    atomically, so a server may load the directory while it is being rewritten for the next step."""
    from safetensors.torch import save_file

    config = qwen3_config(model.config, dtype)
    tied = model.config.tie_word_embeddings
    state = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in model.state_dict().items()
             if not (tied and k == "lm_head.weight")}
    os.makedirs(path, exist_ok=True)
    _replace_file(os.path.join(path, QWEN3_WEIGHTS),
                  lambda tmp: save_file(state, tmp, metadata={"format": "pt"}))

    def write_config(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2)

    _replace_file(os.path.join(path, "config.json"), write_config)


def save_minimind_dir(model: MiniMindForCausalLM, path: str, dtype: str = "bfloat16"):
    """A transformers directory in MiniMind's own layout (any shape, MoE included) that loads anywhere with
    AutoModelForCausalLM.from_pretrained(path, trust_remote_code=True): config.json names this file as the
    remote code (auto_map), and the file is copied beside the weights."""
    import shutil

    os.makedirs(path, exist_ok=True)
    module = os.path.splitext(os.path.basename(__file__))[0]
    model.config.auto_map = {"AutoConfig": f"{module}.MiniMindConfig",
                             "AutoModelForCausalLM": f"{module}.MiniMindForCausalLM"}
    model.config.dtype = dtype
    try:
        model.save_pretrained(path)
    finally:
        del model.config.auto_map
    shutil.copyfile(__file__, os.path.join(path, f"{module}.py"))


def load_qwen3_dir(path: str) -> MiniMindForCausalLM:
    """A MiniMind (fp32) from a Qwen3-layout directory written by save_qwen3_dir (or any dense Qwen3 of the
    same shape family with tied embeddings)."""
    from safetensors.torch import load_file

    with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    if cfg.get("model_type") != "qwen3":
        raise ValueError(f"{path}/config.json: model_type is {cfg.get('model_type')!r}, expected 'qwen3'")
    if cfg.get("attention_bias") or cfg.get("use_sliding_window"):
        raise ValueError(f"{path}/config.json: attention_bias and sliding windows are not part of MiniMind")
    rope = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
    yarn = rope.get("rope_type", rope.get("type", "default")) == "yarn"
    if yarn and any(rope.get(k) != v for k, v in YARN.items()):
        raise ValueError(f"{path}/config.json: YaRN {rope} is not MiniMind's ({YARN})")
    if not yarn and rope.get("rope_type", rope.get("type", "default")) != "default":
        raise ValueError(f"{path}/config.json: rope type {rope.get('rope_type')!r} is not MiniMind's")
    config = MiniMindConfig(
        inference_rope_scaling=yarn,
        vocab_size=cfg["vocab_size"], hidden_size=cfg["hidden_size"],
        intermediate_size=cfg["intermediate_size"],
        num_hidden_layers=cfg["num_hidden_layers"], num_attention_heads=cfg["num_attention_heads"],
        num_key_value_heads=cfg["num_key_value_heads"], head_dim=cfg.get("head_dim"),
        max_position_embeddings=cfg.get("max_position_embeddings", 4096),
        rope_theta=cfg.get("rope_theta", rope.get("rope_theta", 1e6)),
        rms_norm_eps=cfg.get("rms_norm_eps", 1e-6),
        tie_word_embeddings=cfg.get("tie_word_embeddings", True),
    )
    files = sorted(glob.glob(os.path.join(path, "*.safetensors")))
    if not files:
        raise FileNotFoundError(f"{path}: no *.safetensors weights")
    state = {}
    for file in files:
        state.update({k: v.float() for k, v in load_file(file).items()})
    if config.tie_word_embeddings:
        state.setdefault("lm_head.weight", state.get("model.embed_tokens.weight"))
    model = MiniMindForCausalLM(config)
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise ValueError(f"{path}: weights do not match config.json: missing {missing[:5]}, "
                         f"unexpected {unexpected[:5]}")
    model.tie_weights()
    return model


def load_model_dir(path: str) -> MiniMindForCausalLM:
    """A transformers directory: the Qwen3 layout (save_qwen3_dir) or MiniMind's own (save_pretrained)."""
    with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
        model_type = json.load(f).get("model_type")
    if model_type == "qwen3":
        return load_qwen3_dir(path)
    if model_type != "minimind":
        raise ValueError(f"{path}/config.json: model_type {model_type!r} is neither 'minimind' nor 'qwen3'")
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)


def count_parameters(model: nn.Module) -> int:
    """Unique parameters (the tied lm_head counted once)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
