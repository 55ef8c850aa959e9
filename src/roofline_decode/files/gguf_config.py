"""A GGUF file's metadata as a Hugging Face style config dict, every value checked on the way.

The architecture comes from ``general.architecture`` and its ``<arch>.block_count``,
``.embedding_length``, ``.feed_forward_length``, ``.attention.head_count(_kv)``,
``.attention.key_length``, ``.expert_*`` ... keys (llama.cpp's names, ``src/llama-arch.cpp``);
the config is then read by the same family readers as a config.json.  Each value is checked
here (an integer of a GGUF integer type, within the Model's bounds; a per-block array of one
entry per block) so that every error names the ``.gguf`` file and the GGUF key, never the
config key it becomes; :func:`gguf_error` renames what the Model still refuses.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .untrusted import MAX_LAYERS, MAX_SIZE, SkippedArray, shown

if TYPE_CHECKING:
    from .gguf import GgufHeader

__all__ = ["ARCHITECTURES", "GgufMetadata", "gguf_config", "gguf_error"]

#: GGUF general.architecture -> Hugging Face model_type.
ARCHITECTURES = {
    "llama": "llama", "mistral": "mistral", "qwen2": "qwen2", "qwen3": "qwen3", "qwen2moe": "qwen2_moe",
    "qwen3moe": "qwen3_moe", "gemma": "gemma", "gemma2": "gemma2", "gemma3": "gemma3_text", "phi3": "phi3",
    "deepseek2": "deepseek_v3", "gpt-oss": "gpt_oss", "gpt2": "gpt2",
    "olmo": "olmo", "olmo2": "olmo2", "granite": "granite", "command-r": "cohere", "cohere2": "cohere2",
    "starcoder2": "starcoder2", "smollm3": "smollm3", "phi2": "phi", "falcon": "falcon",
    "mamba2": "mamba2", "qwen3next": "qwen3_next", "granitehybrid": "granitemoehybrid", "glm4moe": "glm4_moe",
    "falcon-h1": "falcon_h1", "nemotron_h": "nemotron_h", "nemotron_h_moe": "nemotron_h",
    "jamba": "jamba", "llama4": "llama4_text", "gptj": "gptj",
}

_REQUIRED = object()


class GgufMetadata:
    """Typed access to a GGUF header's ``<arch>.*`` keys; errors name the file and the key."""

    def __init__(self, header: GgufHeader):
        self.meta, self.path = header.metadata, header.path
        arch = self.meta.get("general.architecture")
        if not isinstance(arch, str) or arch not in ARCHITECTURES:
            got = f"unsupported architecture {arch!r}" if isinstance(arch, str) else f"expected a string, got {shown(arch)}"
            raise ConfigError(self.path, "general.architecture", f"{got}; supported: {', '.join(sorted(ARCHITECTURES))}")
        self.arch = arch
        self.blocks = 1  # block_count, once read

    def key(self, name: str) -> str:
        return f"{self.arch}.{name}"

    def error(self, name: str, problem: str) -> ConfigError:
        return ConfigError(self.path, self.key(name), problem)

    def raw(self, name: str) -> Any:
        return self.meta.get(self.key(name))

    def _whole(self, name: str, value: Any, minimum: int, maximum: int, where: str = "") -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            raise self.error(name, f"{where}expected an integer from {minimum:,} to {maximum:,}, got {shown(value)}")
        return value

    def integer(self, name: str, default: Any = _REQUIRED, minimum: int = 0, maximum: int = MAX_SIZE) -> Any:
        """One integer (``default`` when absent; required without one)."""
        value = self.raw(name)
        if value is None:
            if default is _REQUIRED:
                raise self.error(name, "required metadata key is missing")
            return default
        return self._whole(name, value, minimum, maximum)

    def per_block(self, name: str, minimum: int = 0, maximum: int = MAX_SIZE, scalar: bool = True) -> list[int] | None:
        """One integer per block: a per-block array, or one integer for every block (when
        ``scalar``); None when the key is absent."""
        value = self.raw(name)
        if value is None:
            return None
        if not isinstance(value, list):
            if not scalar:
                raise self.error(name, f"expected one entry per block ({self.blocks:,}), got {shown(value)}")
            return [self._whole(name, value, minimum, maximum)] * self.blocks
        if isinstance(value, SkippedArray) or len(value) != self.blocks:
            raise self.error(name, f"expected one integer or one per block ({self.blocks:,} entries), got {shown(value)}")
        return [self._whole(name, v, minimum, maximum, f"entry {i}: ") for i, v in enumerate(value)]

    def widest(self, name: str, default: Any = _REQUIRED, minimum: int = 0) -> Any:
        """An integer, or the largest entry of a per-block array (OpenELM-style per-layer
        widths are not supported beyond their maximum)."""
        if not isinstance(self.raw(name), list):
            return self.integer(name, default, minimum)
        widths = self.per_block(name)
        assert widths is not None
        if max(widths) < minimum:
            raise self.error(name, f"expected an entry >= {minimum}, got {shown(self.raw(name))} of at most {max(widths)}")
        return max(widths)


def _vocabulary(m: GgufMetadata, shapes: dict[str, tuple[int, ...]], hidden: int) -> int:
    """The vocabulary: the rows of ``token_embd`` (ne1), which ``<arch>.vocab_size`` must match."""
    shape = shapes.get("token_embd.weight")
    if shape is None:
        raise ConfigError(m.path, "token_embd.weight", "required tensor is missing")
    if len(shape) != 2 or shape[0] != hidden or shape[1] < 1:
        raise ConfigError(m.path, "token_embd.weight", f"shape {list(shape)} (ne0 first) contradicts the metadata: "
                                                       f"expected [{hidden:,}, vocabulary >= 1] ({m.key('embedding_length')} "
                                                       f"= {hidden:,})")
    stated = m.integer("vocab_size", None, minimum=1)
    if stated is not None and stated != shape[1]:
        raise ConfigError(m.path, "token_embd.weight", f"shape {list(shape)} (ne0 first) contradicts the metadata: "
                                                       f"{shape[1]:,} rows but {m.key('vocab_size')} = {stated:,}")
    return shape[1]


def gguf_config(header: GgufHeader) -> tuple[dict[str, Any], GgufMetadata]:
    """A Hugging Face style config dict from the GGUF metadata and tensor shapes, and the
    checked metadata it came from."""
    m = GgufMetadata(header)
    arch = m.arch
    shapes = {name: shape for name, shape, _ in header.tensors}
    m.blocks = m.integer("block_count", minimum=1, maximum=MAX_LAYERS)
    hidden = m.integer("embedding_length", minimum=1)
    vocab = _vocabulary(m, shapes, hidden)
    heads = m.widest("attention.head_count", None, minimum=0) if arch == "mamba2" else \
        m.widest("attention.head_count", minimum=1)
    kv = m.widest("attention.head_count_kv", None) or heads
    if heads and kv and heads % kv:
        raise m.error("attention.head_count_kv", f"{kv} KV heads do not divide {m.key('attention.head_count')} = {heads}")
    config: dict[str, Any] = {
        "model_type": ARCHITECTURES[arch],
        "hidden_size": hidden,
        "num_hidden_layers": m.blocks,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "intermediate_size": m.widest("feed_forward_length", 0),
        "vocab_size": vocab,
        "max_position_embeddings": m.integer("context_length", None, minimum=1),
        "tie_word_embeddings": "output.weight" not in shapes,
    }
    key_length = m.integer("attention.key_length", None)
    if key_length:
        config["head_dim"] = key_length
    window = m.integer("attention.sliding_window", None)
    if window:
        config["sliding_window"] = window
    if "blk.0.attn_q.bias" in shapes:
        config["attention_bias"] = True
    experts = m.integer("expert_count", 0)
    if experts:
        config.update(num_experts_per_tok=m.integer("expert_used_count", minimum=1, maximum=experts),
                      num_experts=experts, num_local_experts=experts, n_routed_experts=experts,
                      moe_intermediate_size=m.integer("expert_feed_forward_length", 0) or config["intermediate_size"])
        if arch == "llama":
            config["model_type"] = "mixtral"
            config["intermediate_size"] = config["moe_intermediate_size"]
        shared = m.integer("expert_shared_feed_forward_length", 0)
        config["shared_expert_intermediate_size"] = shared * (m.integer("expert_shared_count", 0) or 1) if shared else 0
    if arch == "deepseek2":
        config.update(_mla(m))
        config.pop("head_dim", None)
    if arch in ("qwen3", "qwen3moe") and "head_dim" not in config:
        config["head_dim"] = hidden // heads
    if arch == "qwen2moe":
        config["shared_expert_intermediate_size"] = m.integer("expert_shared_feed_forward_length", 0)
    if arch in ("gemma2", "gemma3"):
        config.setdefault("head_dim", hidden // heads)
    if arch == "falcon":  # one KV head: Falcon-7B's multi-query layers; more: the new decoder (40B, 180B)
        config.update(multi_query=kv == 1, new_decoder_architecture=kv > 1, num_kv_heads=kv,
                      ffn_hidden_size=config["intermediate_size"] or None, bias="blk.0.attn_qkv.bias" in shapes)
    if arch == "glm4moe":  # block_count includes the MTP (NextN) layers, which do not decode
        config.update(num_hidden_layers=m.blocks - m.integer("nextn_predict_layers", 0, maximum=m.blocks - 1),
                      first_k_dense_replace=m.integer("leading_dense_block_count", 0, maximum=m.blocks),
                      n_shared_experts=m.integer("expert_shared_count", 0),
                      use_qk_norm="blk.0.attn_q_norm.weight" in shapes)
    if arch == "starcoder2":
        config["use_bias"] = "blk.0.attn_q.bias" in shapes
    if arch == "command-r":
        config["use_qk_norm"] = "blk.0.attn_q_norm.weight" in shapes
    if arch == "llama4":  # feed_forward_length: the dense layers; expert_feed_forward_length: experts and shared
        config.update(intermediate_size=m.integer("expert_feed_forward_length", minimum=1),
                      intermediate_size_mlp=m.widest("feed_forward_length", minimum=1),
                      interleave_moe_layer_step=m.integer("interleave_moe_layer_step", 1, minimum=1, maximum=m.blocks),
                      attention_chunk_size=m.integer("attention.chunk_size", None, minimum=1))
    if arch == "jamba":
        config.update(_jamba_layers(m, shapes, hidden))
    if arch in ("nemotron_h", "nemotron_h_moe"):
        config.update(_nemotron_pattern(m, shapes))
    if arch in ("mamba2", "qwen3next", "granitehybrid", "falcon-h1", "nemotron_h", "nemotron_h_moe"):
        config.update(_ssm_config(m, shapes, hidden))
    if arch == "granitehybrid":  # a per-layer head_count_kv: 0 marks the Mamba-2 layers
        kinds = m.per_block("attention.head_count_kv") or [kv] * m.blocks
        config.update(layer_types=["attention" if n else "mamba" for n in kinds], num_local_experts=experts,
                      intermediate_size=m.integer("expert_feed_forward_length", 0) or config["intermediate_size"],
                      shared_intermediate_size=m.integer("expert_shared_feed_forward_length", 0)
                      or config["intermediate_size"])
    if arch == "gptj":
        config.update(n_embd=hidden, n_layer=m.blocks, n_head=heads, n_inner=config["intermediate_size"] or None)
    if arch == "gpt2":
        positions = shapes.get("position_embd.weight")
        if positions is not None and (len(positions) != 2 or positions[0] != hidden or positions[1] < 1):
            raise ConfigError(m.path, "position_embd.weight", f"shape {list(positions)} (ne0 first) contradicts the "
                                                              f"metadata: expected [{hidden:,}, positions >= 1]")
        config.update(n_embd=hidden, n_layer=m.blocks, n_head=heads, n_inner=config["intermediate_size"],
                      n_positions=positions[1] if positions else config["max_position_embeddings"])
    return config, m


def _mla(m: GgufMetadata) -> dict[str, Any]:
    """DeepSeek's multi-head latent attention.  Files converted since llama.cpp's absorbed MLA
    (2025) state the per-head widths as ``key_length_mla`` / ``value_length_mla`` and give
    ``key_length`` the latent width (kv_lora_rank + rope); older files only ``key_length``."""
    rope = m.integer("rope.dimension_count", minimum=1)
    key = "attention.key_length_mla" if m.raw("attention.key_length_mla") is not None else "attention.key_length"
    value = "attention.value_length_mla" if m.raw("attention.value_length_mla") is not None else "attention.value_length"
    return dict(kv_lora_rank=m.integer("attention.kv_lora_rank", minimum=1),
                q_lora_rank=m.integer("attention.q_lora_rank", None) or None,
                qk_rope_head_dim=rope, qk_nope_head_dim=m.integer(key, minimum=rope + 1) - rope,
                v_head_dim=m.integer(value, minimum=1),
                first_k_dense_replace=m.integer("leading_dense_block_count", 0, maximum=m.blocks),
                n_shared_experts=m.integer("expert_shared_count", 0))


def _ssm_config(m: GgufMetadata, shapes: dict[str, tuple[int, ...]], hidden: int) -> dict[str, Any]:
    """The recurrent-mixer keys from llama.cpp's ``ssm.*`` metadata: Mamba-2 (``time_step_rank``
    = heads, ``group_count`` = groups, ``inner_size`` = d_in) or Gated DeltaNet (``group_count``
    = key heads, ``time_step_rank`` = value heads, ``state_size`` = head width)."""
    arch = m.arch
    inner, state, heads, groups, kernel = (m.integer(f"ssm.{key}", minimum=1) for key in (
        "inner_size", "state_size", "time_step_rank", "group_count", "conv_kernel"))
    if arch == "qwen3next":
        return {"linear_num_key_heads": groups, "linear_num_value_heads": heads, "linear_key_head_dim": state,
                "linear_value_head_dim": state, "linear_conv_kernel_dim": kernel,
                "full_attention_interval": m.integer("full_attention_interval", minimum=1, maximum=m.blocks)}
    if (inner % hidden and arch in ("mamba2", "granitehybrid")) or inner % heads:
        raise m.error("ssm.inner_size", f"{inner} is not a multiple of embedding_length {hidden} "
                                        f"and of ssm.time_step_rank {heads}")
    # a conv1d weight without a bias tensor: no bias (llama.cpp writes both when there is one)
    bias = "blk.0.ssm_conv1d.weight" not in shapes or "blk.0.ssm_conv1d.bias" in shapes
    if arch in ("nemotron_h", "nemotron_h_moe"):
        return {"mamba_num_heads": heads, "mamba_head_dim": inner // heads, "n_groups": groups,
                "ssm_state_size": state, "conv_kernel": kernel, "use_conv_bias": bias}
    if arch == "falcon-h1":  # attention and Mamba-2 side by side in each block
        return {"mamba_d_ssm": inner, "mamba_n_heads": heads, "mamba_d_head": inner // heads, "mamba_n_groups": groups,
                "mamba_d_state": state, "mamba_d_conv": kernel, "mamba_conv_bias": bias,
                "mamba_rms_norm": "blk.0.ssm_norm.weight" in shapes}
    if arch == "granitehybrid":
        return {"mamba_expand": inner // hidden, "mamba_n_heads": heads, "mamba_d_head": inner // heads,
                "mamba_n_groups": groups, "mamba_d_state": state, "mamba_d_conv": kernel, "mamba_conv_bias": bias}
    return {"expand": inner // hidden, "num_heads": heads, "head_dim": inner // heads, "n_groups": groups,
            "state_size": state, "conv_kernel": kernel, "use_conv_bias": bias}


def _jamba_layers(m: GgufMetadata, shapes: dict[str, tuple[int, ...]], hidden: int) -> dict[str, Any]:
    """Jamba's periods and offsets from llama.cpp's per-layer ``head_count_kv`` (attention where
    non-zero) and the router tensors (MoE layers), and its Mamba (v1) mixer from ``ssm.*``
    (``time_step_rank`` = dt rank)."""
    layers = m.blocks
    kv = m.per_block("attention.head_count_kv", scalar=False)
    if kv is None:
        raise m.error("attention.head_count_kv", f"expected one entry per layer ({layers}), got none")
    out: dict[str, Any] = {}
    for name, where in (("attn", [i for i in range(layers) if kv[i]]),
                        ("expert", [i for i in range(layers) if f"blk.{i}.ffn_gate_inp.weight" in shapes])):
        period = where[1] - where[0] if len(where) > 1 else layers
        if not where or where != list(range(where[0], layers, period)):
            raise ConfigError(m.path, m.key("attention.head_count_kv") if name == "attn" else "blk.*.ffn_gate_inp.weight",
                              f"{name} layers {where} are not every n-th layer from an offset")
        out.update({f"{name}_layer_period": period, f"{name}_layer_offset": where[0]})
    inner = m.integer("ssm.inner_size", minimum=1)
    if inner % hidden:
        raise m.error("ssm.inner_size", f"{inner} is not a multiple of embedding_length {hidden}")
    out.update(mamba_expand=inner // hidden, mamba_d_state=m.integer("ssm.state_size", minimum=1),
               mamba_d_conv=m.integer("ssm.conv_kernel", minimum=1), mamba_dt_rank=m.integer("ssm.time_step_rank", minimum=1),
               mamba_conv_bias="blk.0.ssm_conv1d.weight" not in shapes or "blk.0.ssm_conv1d.bias" in shapes)
    return out


def _nemotron_pattern(m: GgufMetadata, shapes: dict[str, tuple[int, ...]]) -> dict[str, Any]:
    """Nemotron-H's ``hybrid_override_pattern`` from llama.cpp's per-block arrays: KV heads mark
    attention (``*``), a feed-forward width an MLP (``-``), expert tensors an MoE (``E``), the
    rest Mamba-2 (``M``)."""
    blocks = m.blocks
    kv = m.per_block("attention.head_count_kv", scalar=False)
    if kv is None:
        raise m.error("attention.head_count_kv", f"expected one entry per block ({blocks}), got none")
    widths = m.per_block("feed_forward_length") if isinstance(m.raw("feed_forward_length"), list) else None
    widths = widths or [0] * blocks
    pattern = "".join("*" if kv[i] else "E" if f"blk.{i}.ffn_up_exps.weight" in shapes else "-" if widths[i] else "M"
                      for i in range(blocks))
    dense = [widths[i] for i in range(blocks) if pattern[i] == "-"]
    out: dict[str, Any] = {"hybrid_override_pattern": pattern, "intermediate_size": max(dense, default=0)}
    if "E" in pattern:
        out["moe_shared_expert_intermediate_size"] = m.integer("expert_shared_feed_forward_length", 0)
    return out


#: Hugging Face config key (or Model field) -> the GGUF key (after ``<arch>.``) it is read from.
_GGUF_KEYS = {
    **dict.fromkeys(("num_hidden_layers", "num_layers", "n_layer"), "block_count"),
    **dict.fromkeys(("hidden_size", "n_embd"), "embedding_length"),
    **dict.fromkeys(("num_attention_heads", "num_heads", "n_head"), "attention.head_count"),
    **dict.fromkeys(("num_key_value_heads", "num_kv_heads"), "attention.head_count_kv"),
    **dict.fromkeys(("intermediate_size", "n_inner", "ffn_hidden_size", "intermediate_size_mlp"),
                    "feed_forward_length"),
    **dict.fromkeys(("num_experts", "num_local_experts", "n_routed_experts"), "expert_count"),
    **dict.fromkeys(("num_experts_per_tok", "num_experts_per_token"), "expert_used_count"),
    **dict.fromkeys(("shared_expert_intermediate_size", "shared_intermediate_size",
                     "moe_shared_expert_intermediate_size"), "expert_shared_feed_forward_length"),
    "head_dim": "attention.key_length", "vocab_size": "vocab_size", "max_position_embeddings": "context_length",
    "sliding_window": "attention.sliding_window", "moe_intermediate_size": "expert_feed_forward_length",
    "kv_lora_rank": "attention.kv_lora_rank", "q_lora_rank": "attention.q_lora_rank",
    "qk_rope_head_dim": "rope.dimension_count", "v_head_dim": "attention.value_length",
    "first_k_dense_replace": "leading_dense_block_count", "first_dense_layers": "leading_dense_block_count",
    "attention_chunk_size": "attention.chunk_size",
}


def gguf_error(exc: ConfigError, m: GgufMetadata, overrides: dict[str, Any]) -> ConfigError:
    """An error the config reader or the Model raised on the config dict made from ``m``,
    renamed to the ``.gguf`` file and the GGUF key the value came from."""
    field = exc.field
    if field == "(model)":  # the Model refused its fields: the first one its message names
        named = re.search(r"Model\.(\w+)", exc.problem)
        field = named[1] if named else field
    if field in overrides:
        return ConfigError(m.path, field, exc.problem)
    key = _GGUF_KEYS.get(field)
    where = m.key(key) if key else f"{m.arch} metadata"
    return ConfigError(m.path, where, f"{exc.problem} (read as the config key {field})")
