"""One reader per ``model_type``: its keys -> Model fields.

The config a reader sees is the published config over its transformers class's defaults
(:mod:`.class_defaults`); a reader's own defaults cover what the class derives (``head_dim`` =
d / H_q, ``num_key_value_heads`` = H_q) and configs without a class entry (GGUF metadata).
The keys each family reads are listed in ``docs/architecture/hf-import.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ..._json_limits import shown
from .reader import REQUIRED_KEYS, ConfigReader

# -- pieces shared by the families -------------------------------------------------------------

_ACTIVATIONS = frozenset({"silu", "swish", "gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu_python",
                          "quick_gelu", "relu", "relu2", "tanh"})
_LAYER_KINDS = {"full_attention": "full", "sliding_attention": "sliding"}


def activation_of(r: ConfigReader, *keys: str) -> None:
    """Reject an activation we do not know (its name, not its cost, is checked: no FLOPs counted)."""
    for key in keys:
        value = r.config.get(key)
        if value is not None:
            if not isinstance(value, str) or value not in _ACTIVATIONS:
                raise r.error(key, f"unsupported activation {shown(value)}; supported: {', '.join(sorted(_ACTIVATIONS))}")
            return


def core_fields(r: ConfigReader, tie: bool, kv_heads: Any = "mha", head_dim: Any = "derived") -> dict[str, Any]:
    """Sizes common to the rotary decoder families.

    ``kv_heads``: "mha" (absent key means H_q), an int default, or ``REQUIRED_KEYS``;
    ``head_dim``: "derived" (absent means d / H_q), an int default, or ``REQUIRED_KEYS``.
    """
    hidden = r.integer("hidden_size", minimum=1)
    heads = r.integer("num_attention_heads", minimum=1)
    if head_dim == "derived":
        head_dim = hidden // heads if hidden % heads == 0 else REQUIRED_KEYS
    return {
        "num_layers": r.integer("num_hidden_layers", minimum=1),
        "hidden_size": hidden,
        "num_heads": heads,
        "num_kv_heads": r.integer("num_key_value_heads", default=heads if kv_heads == "mha" else kv_heads, minimum=1),
        "head_dim": r.integer("head_dim", default=head_dim, minimum=1),
        "vocab_size": r.integer("vocab_size", minimum=1),
        "tie_word_embeddings": r.boolean("tie_word_embeddings", tie),
        "max_position_embeddings": r.integer("max_position_embeddings", default=None, minimum=1),
    }


def _window(r: ConfigReader, default: int | None) -> int | None:
    """``sliding_window``: the family default when absent, no window when null."""
    if "sliding_window" not in r.config:
        return default
    window: int | None = r.integer("sliding_window", default=None, minimum=1)
    return window


def layer_pattern(num_layers: int, every: int) -> list[str]:
    """Every ``every``-th layer global, the others sliding (HF: ``(i + 1) % every``)."""
    return ["sliding" if (i + 1) % every else "full" for i in range(num_layers)]


def attention_layers(r: ConfigReader, num_layers: int, window: int | None,
                      default: list[str] | None = None, read_key: bool = True) -> dict[str, Any]:
    """``sliding_window`` and ``layer_types`` fields.  Without a window every layer attends
    globally (as in transformers); without a pattern every layer slides."""
    raw = r.config.get("layer_types") if read_key else None
    if raw is not None:
        if not isinstance(raw, list) or len(raw) != num_layers:
            raise r.error("layer_types",
                          f"expected a list of {num_layers} attention kinds (num_hidden_layers), got {shown(raw)}")
        for i, kind in enumerate(raw):
            if not isinstance(kind, str) or kind not in _LAYER_KINDS:
                raise r.error(f"layer_types[{i}]",
                              f"unsupported attention kind {shown(kind)}; supported: {', '.join(_LAYER_KINDS)}")
        types = [_LAYER_KINDS[kind] for kind in raw]
    else:
        types = default if default is not None else ["sliding"] * num_layers
    if window is None or "sliding" not in types:
        return {}
    return {"sliding_window": window, "layer_types": tuple(types)}


def _qwen_attention_layers(r: ConfigReader, num_layers: int) -> dict[str, Any]:
    """Qwen: a window only with ``use_sliding_window``; layers from ``max_window_layers`` on slide."""
    if not r.boolean("use_sliding_window", False):
        return {}
    window = _window(r, None)
    if window is None:
        return {}
    first = r.integer("max_window_layers", minimum=0)
    return attention_layers(r, num_layers, window, ["full" if i < first else "sliding" for i in range(num_layers)])


def moe_fields(r: ConfigReader, num_layers: int, num_experts: int, per_token: int, expert_width: int,
         dense_width: int, is_moe_layer: Callable[[int], bool], shared_width: int = 0) -> dict[str, Any]:
    """MoE fields; a stack without MoE layers is a dense model of width ``dense_width``."""
    moe_layers = sum(bool(is_moe_layer(i)) for i in range(num_layers)) if num_experts else 0
    if moe_layers == 0:
        return {"intermediate_size": dense_width}
    if not 1 <= per_token <= num_experts:
        raise r.error("num_experts_per_tok", f"must be in [1, {num_experts}] (the routed experts), got {per_token}")
    dense_layers = num_layers - moe_layers
    return {
        "num_experts": num_experts,
        "num_experts_per_token": per_token,
        "moe_intermediate_size": expert_width,
        "shared_expert_intermediate_size": shared_width,
        "first_dense_layers": dense_layers,
        "intermediate_size": dense_width if dense_layers else 0,
    }



def llama_shapes(r: ConfigReader, tie: bool, mlp_bias: bool = True) -> dict[str, Any]:
    """Llama's keys: the core sizes, ``intermediate_size``, ``hidden_act``, ``attention_bias``
    on q/k/v/o and (``mlp_bias=True``) ``mlp_bias``; the families built on them add their own."""
    fields = core_fields(r, tie=tie)
    fields["intermediate_size"] = r.integer("intermediate_size", minimum=1)
    activation_of(r, "hidden_act")
    bias = r.boolean("attention_bias", False)
    fields.update(qkv_bias=bias, o_bias=bias)
    if mlp_bias:
        fields["mlp_bias"] = r.boolean("mlp_bias", False)
    return fields


# -- readers, one per model_type ---------------------------------------------------------------

def _llama(r: ConfigReader) -> dict[str, Any]:
    """Llama: GQA with rotary embeddings, SwiGLU MLP, RMSNorm; optional biases."""
    return llama_shapes(r, tie=False)


def _mistral(r: ConfigReader) -> dict[str, Any]:
    """Mistral: as Llama without biases; every layer slides (MistralConfig window 4096)."""
    fields = core_fields(r, tie=False, kv_heads=8)
    fields["intermediate_size"] = r.integer("intermediate_size", minimum=1)
    activation_of(r, "hidden_act")
    fields.update(attention_layers(r, fields["num_layers"], _window(r, 4096), read_key=False))
    return fields


def _mixtral(r: ConfigReader) -> dict[str, Any]:
    """Mixtral: every layer MoE, experts of width ``intermediate_size``; no shared expert."""
    fields = core_fields(r, tie=False, kv_heads=8)
    activation_of(r, "hidden_act")
    layers = fields["num_layers"]
    experts = r.integer("num_local_experts", default=8, minimum=1)
    fields.update(moe_fields(r, layers, experts, r.integer("num_experts_per_tok", default=2, minimum=1),
                       r.integer("intermediate_size", minimum=1), 0, lambda i: True))
    fields.update(attention_layers(r, layers, _window(r, None)))
    return fields


def _qwen(r: ConfigReader, generation: int, moe: bool) -> dict[str, Any]:
    """Qwen2 / Qwen2-MoE / Qwen3 / Qwen3-MoE (and the text models of Qwen2.5-VL and Qwen3-VL).

    Qwen2: q, k, v projections with bias, o without (Qwen2-MoE: ``qkv_bias``).  Qwen3: per-head
    q/k RMSNorm, ``attention_bias`` (false); ``head_dim`` from the class (Qwen3Config: 128) or
    d / H_q (Qwen3MoeConfig has no such field).  MoE: layer i is sparse unless listed in
    ``mlp_only_layers`` or off ``decoder_sparse_step``; Qwen2-MoE adds one gated shared expert
    per MoE layer.
    """
    fields = core_fields(r, tie=False, kv_heads=REQUIRED_KEYS)
    activation_of(r, "hidden_act")
    if generation == 2:
        fields.update(qkv_bias=r.boolean("qkv_bias", True) if moe else True, o_bias=False)
    else:
        bias = r.boolean("attention_bias", False)
        fields.update(qkv_bias=bias, o_bias=bias, qk_norm=True)
    if moe:
        dense_only = set(r.integer_list("mlp_only_layers"))
        step = r.integer("decoder_sparse_step", default=1, minimum=1)
        shared = r.integer("shared_expert_intermediate_size", minimum=0) if generation == 2 else 0
        fields.update(moe_fields(
            r, fields["num_layers"], r.integer("num_experts", "num_local_experts", minimum=0),
            r.integer("num_experts_per_tok", minimum=1), r.integer("moe_intermediate_size", minimum=1),
            r.integer("intermediate_size", minimum=0), lambda i: i not in dense_only and (i + 1) % step == 0, shared,
        ))
    else:
        fields["intermediate_size"] = r.integer("intermediate_size", minimum=1)
    fields.update(_qwen_attention_layers(r, fields["num_layers"]))
    return fields


def _gemma_common(r: ConfigReader, norms_per_layer: int) -> dict[str, Any]:
    fields = core_fields(r, tie=True, kv_heads=REQUIRED_KEYS, head_dim=REQUIRED_KEYS)
    fields["intermediate_size"] = r.integer("intermediate_size", minimum=1)
    activation_of(r, "hidden_activation", "hidden_act")  # GeGLU: gated
    bias = r.boolean("attention_bias", False)
    fields.update(qkv_bias=bias, o_bias=bias, norms_per_layer=norms_per_layer)
    return fields


def _gemma(r: ConfigReader) -> dict[str, Any]:
    """Gemma: GeGLU, explicit head_dim (16 x 256 = 4096 for d = 3072), tied embeddings."""
    return _gemma_common(r, norms_per_layer=2)


def _gemma2(r: ConfigReader) -> dict[str, Any]:
    """Gemma 2: four norms per layer; even layers slide (window 4096), odd layers global."""
    fields = _gemma_common(r, norms_per_layer=4)
    layers = fields["num_layers"]
    fields.update(attention_layers(r, layers, _window(r, 4096), layer_pattern(layers, 2)))
    return fields


def _gemma3_text(r: ConfigReader) -> dict[str, Any]:
    """Gemma 3 (text): Gemma 2 plus q/k norms; every ``sliding_window_pattern``-th layer global."""
    fields = _gemma_common(r, norms_per_layer=4)
    fields["qk_norm"] = True
    layers = fields["num_layers"]
    every = r.integer("sliding_window_pattern", default=6, minimum=1)
    fields.update(attention_layers(r, layers, _window(r, 4096), layer_pattern(layers, every)))
    return fields


def _phi3(r: ConfigReader) -> dict[str, Any]:
    """Phi-3: fused qkv and gate_up projections (same counts as separate); every layer slides."""
    fields = llama_shapes(r, tie=False, mlp_bias=False)
    fields.update(attention_layers(r, fields["num_layers"], _window(r, None)))
    return fields


def mlp_layer_kinds(r: ConfigReader, layers: int) -> list[bool] | None:
    """``mlp_layer_types`` ("dense" / "sparse" per layer) as MoE flags; None when absent."""
    raw = r.config.get("mlp_layer_types")
    if raw is None:
        return None
    kinds = {"dense": False, "sparse": True}
    if not isinstance(raw, list) or len(raw) != layers or any(not isinstance(k, str) or k not in kinds for k in raw):
        raise r.error("mlp_layer_types", f"expected {layers} of dense / sparse (num_hidden_layers), got {shown(raw)}")
    return [kinds[k] for k in raw]


def deepseek_fields(r: ConfigReader, first_dense_default: Any = REQUIRED_KEYS) -> dict[str, Any]:
    """DeepSeek-V2/V3 and the MLA families built on them: multi-head latent attention, dense
    first layers (``mlp_layer_types``, else ``first_k_dense_replace``, else
    ``first_dense_default``; MoE on every ``moe_layer_freq``-th layer after them), shared +
    routed experts.  ``q_lora_rank`` null means an uncompressed query."""
    if r.boolean("attention_bias", False):
        raise r.error("attention_bias", "MLA projections with biases are not supported (expected false)")
    hidden = r.integer("hidden_size", minimum=1)
    heads = r.integer("num_attention_heads", minimum=1)
    layers = r.integer("num_hidden_layers", minimum=1)
    nope, rope = r.integer("qk_nope_head_dim", minimum=1), r.integer("qk_rope_head_dim", minimum=1)
    activation_of(r, "hidden_act")
    fields: dict[str, Any] = {
        "num_layers": layers, "hidden_size": hidden, "num_heads": heads,
        # nominal: MLA caches one latent per token, not num_key_value_heads heads
        "num_kv_heads": heads, "head_dim": nope + rope,
        "vocab_size": r.integer("vocab_size", minimum=1),
        "tie_word_embeddings": r.boolean("tie_word_embeddings", False),
        "max_position_embeddings": r.integer("max_position_embeddings", default=None, minimum=1),
        "kv_lora_rank": r.integer("kv_lora_rank", minimum=1),
        "q_lora_rank": r.integer("q_lora_rank", default=0, minimum=0),
        "qk_nope_head_dim": nope, "qk_rope_head_dim": rope,
        "v_head_dim": r.integer("v_head_dim", minimum=1),
    }
    kinds = mlp_layer_kinds(r, layers)
    if kinds is None:
        first_dense = r.integer("first_k_dense_replace", default=first_dense_default, minimum=0)
        every = r.integer("moe_layer_freq", default=1, minimum=1)
        kinds = [i >= first_dense and i % every == 0 for i in range(layers)]
    width = r.integer("moe_intermediate_size", minimum=1)
    shared = r.integer("n_shared_experts", default=0, minimum=0) * width
    fields.update(moe_fields(
        r, layers, r.integer("n_routed_experts", minimum=0), r.integer("num_experts_per_tok", minimum=1), width,
        r.integer("intermediate_size", minimum=0), kinds.__getitem__, shared,
    ))
    return fields


def _gpt_oss(r: ConfigReader) -> dict[str, Any]:
    """gpt-oss: every layer MoE (experts and router with biases), alternating 128-token windows."""
    fields = core_fields(r, tie=False, kv_heads=8, head_dim=64)
    activation_of(r, "hidden_act")
    bias = r.boolean("attention_bias", True)
    layers = fields["num_layers"]
    fields.update(qkv_bias=bias, o_bias=bias, mlp_bias=True)
    fields.update(moe_fields(
        r, layers, r.integer("num_local_experts", "num_experts", minimum=1),
        r.integer("num_experts_per_tok", "experts_per_token", minimum=1),
        r.integer("intermediate_size", minimum=1), 0, lambda i: True,
    ))
    fields.update(attention_layers(r, layers, _window(r, 128), layer_pattern(layers, 2)))
    return fields


def _opt(r: ConfigReader) -> dict[str, Any]:
    """OPT: multi-head attention, LayerNorms, biases everywhere, plain ReLU MLP, learned positions
    (``max_position_embeddings`` + 2 offset rows)."""
    hidden = r.integer("hidden_size", minimum=1)
    heads = r.integer("num_attention_heads", minimum=1)
    projection = r.integer("word_embed_proj_dim", default=hidden, minimum=1)
    if projection != hidden:
        raise r.error("word_embed_proj_dim", f"{projection} != hidden_size {hidden}: "
                                             "OPT's project_in/project_out embeddings are not supported")
    if hidden % heads:
        raise r.error("num_attention_heads", f"{heads} does not divide hidden_size {hidden}")
    activation_of(r, "activation_function")
    positions = r.integer("max_position_embeddings", minimum=1)
    bias = r.boolean("enable_bias", True)
    return {
        "num_layers": r.integer("num_hidden_layers", minimum=1), "hidden_size": hidden,
        "num_heads": heads, "num_kv_heads": heads, "head_dim": hidden // heads,
        "intermediate_size": r.integer("ffn_dim", minimum=1), "vocab_size": r.integer("vocab_size", minimum=1),
        "mlp_gated": False, "qkv_bias": bias, "o_bias": bias, "mlp_bias": bias,
        "tie_word_embeddings": r.boolean("tie_word_embeddings", True),
        "norm_type": "layer", "norms_per_layer": 2 if r.boolean("layer_norm_elementwise_affine", True) else 0,
        "position_embedding_rows": positions + 2, "max_position_embeddings": positions,
    }


def _gpt2(r: ConfigReader) -> dict[str, Any]:
    """GPT-2: n_embd/n_layer/n_head/n_positions/n_inner keys, biases, LayerNorms, learned positions."""
    if r.boolean("add_cross_attention", False):
        raise r.error("add_cross_attention", "cross-attention layers are not supported (decoder-only models)")
    hidden = r.integer("n_embd", "hidden_size", minimum=1)
    heads = r.integer("n_head", "num_attention_heads", minimum=1)
    if hidden % heads:
        raise r.error("n_head", f"{heads} does not divide n_embd {hidden}")
    activation_of(r, "activation_function")
    positions = r.integer("n_positions", "max_position_embeddings", minimum=1)
    return {
        "num_layers": r.integer("n_layer", "num_hidden_layers", minimum=1), "hidden_size": hidden,
        "num_heads": heads, "num_kv_heads": heads, "head_dim": hidden // heads,
        "intermediate_size": r.integer("n_inner", default=4 * hidden, minimum=1),
        "vocab_size": r.integer("vocab_size", minimum=1),
        "mlp_gated": False, "qkv_bias": True, "o_bias": True, "mlp_bias": True,
        "tie_word_embeddings": r.boolean("tie_word_embeddings", True),
        "norm_type": "layer", "norms_per_layer": 2,
        "position_embedding_rows": positions, "max_position_embeddings": positions,
    }


#: model_type -> reader returning Model fields.  Extend here to support a new family.
READERS: dict[str, Callable[[ConfigReader], dict[str, Any]]] = {
    "llama": _llama,
    "mistral": _mistral,
    "mixtral": _mixtral,
    "qwen2": partial(_qwen, generation=2, moe=False),
    "qwen2_moe": partial(_qwen, generation=2, moe=True),
    "qwen3": partial(_qwen, generation=3, moe=False),
    "qwen3_moe": partial(_qwen, generation=3, moe=True),
    # the text models of the Qwen2.5-VL / Qwen3-VL wrappers (their own classes' defaults)
    "qwen2_5_vl_text": partial(_qwen, generation=2, moe=False),
    "qwen3_vl_text": partial(_qwen, generation=3, moe=False),
    "qwen3_vl_moe_text": partial(_qwen, generation=3, moe=True),
    "gemma": _gemma,
    "gemma2": _gemma2,
    "gemma3_text": _gemma3_text,
    "phi3": _phi3,
    "deepseek_v2": deepseek_fields,
    "deepseek_v3": deepseek_fields,
    "gpt_oss": _gpt_oss,
    "opt": _opt,
    "gpt2": _gpt2,
}
SUPPORTED_MODEL_TYPES = tuple(READERS)
