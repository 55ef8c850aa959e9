"""Readers of the second wave of model types (issue 14 item 3): recurrent hybrids, chunked and
sparse attention, and more dense families.  Same contract as :mod:`.families`: a reader maps
one config dict to Model fields; the keys are listed in ``docs/architecture/hf-import.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import formulas as f
from ..._json_limits import shown
from .families import activation_of, attention_layers, core_fields, deepseek_fields, llama_shapes, moe_fields, layer_pattern
from .reader import REQUIRED_KEYS, ConfigReader


def _olmo2(r: ConfigReader) -> dict[str, Any]:
    """OLMo 2: Llama shapes with norms after attention and MLP (no input norm) and q/k RMSNorms
    over the full projection width (H·d_h and H_kv·d_h, also with GQA: OLMo-2-32B)."""
    fields = llama_shapes(r, tie=False, mlp_bias=False)
    fields.update(qk_norm=True, qk_norm_scope="projection")
    return fields


def _granite(r: ConfigReader) -> dict[str, Any]:
    """Granite: Llama shapes with scaling multipliers (no parameters); also SmolLM3 (Llama shapes,
    some layers without RoPE: no parameter change).  Tying from the config, else the class default
    (GraniteConfig: untied; SmolLM3Config: tied)."""
    return llama_shapes(r, tie=True)


def _cohere(r: ConfigReader, generation: int) -> dict[str, Any]:
    """Cohere (Command R) and Cohere2 (Command R7B / A): attention and MLP in parallel after one
    LayerNorm without bias; tied embeddings.  Cohere2 slides on three of every four layers."""
    fields = llama_shapes(r, tie=True, mlp_bias=False)
    fields["norms_per_layer"] = 1
    if r.boolean("use_qk_norm", False):
        raise r.error("use_qk_norm", "per-head q/k LayerNorms of Command R+ are not supported (expected false)")
    if generation == 2:
        layers = fields["num_layers"]
        every = r.integer("sliding_window_pattern", default=4, minimum=1)
        window = r.integer("sliding_window", default=4096, minimum=1)
        fields.update(attention_layers(r, layers, window, layer_pattern(layers, every)))
    return fields


def _gptj(r: ConfigReader) -> dict[str, Any]:
    """GPT-J: attention and MLP in parallel after one LayerNorm; no attention biases; plain MLP
    with biases; rotary on ``rotary_dim`` channels; untied lm_head (its bias of V is left out)."""
    hidden = r.integer("n_embd", "hidden_size", minimum=1)
    heads = r.integer("n_head", "num_attention_heads", minimum=1)
    if hidden % heads:
        raise r.error("n_head", f"{heads} does not divide n_embd {hidden}")
    activation_of(r, "activation_function")
    return {
        "num_layers": r.integer("n_layer", "num_hidden_layers", minimum=1), "hidden_size": hidden,
        "num_heads": heads, "num_kv_heads": heads, "head_dim": hidden // heads,
        "intermediate_size": r.integer("n_inner", default=4 * hidden, minimum=1),
        "vocab_size": r.integer("vocab_size", minimum=1), "mlp_gated": False, "mlp_bias": True,
        "tie_word_embeddings": r.boolean("tie_word_embeddings", False), "norm_type": "layer", "norms_per_layer": 1,
        "max_position_embeddings": r.integer("n_positions", default=None, minimum=1),
    }


def _falcon(r: ConfigReader) -> dict[str, Any]:
    """Falcon: fused query_key_value (multi-query, or ``num_kv_heads`` groups with
    ``new_decoder_architecture``), plain 4d GELU MLP, LayerNorms, tied embeddings; parallel
    attention with one norm (7B) or two (``new_decoder_architecture``: 40B, 180B)."""
    hidden = r.integer("hidden_size", minimum=1)
    heads = r.integer("num_attention_heads", "n_head", minimum=1)
    new = r.boolean("new_decoder_architecture", False)
    if new:  # FalconConfig: n_head_kv None -> num_attention_heads
        kv = r.integer("num_kv_heads", "n_head_kv", default=heads, minimum=1)
    else:
        kv = 1 if r.boolean("multi_query", True) else heads
    if not r.boolean("parallel_attn", True) and not new:
        norms = 2
    else:
        norms = 2 if new else 1
    bias = r.boolean("bias", False)
    if r.boolean("alibi", False):
        raise r.error("alibi", "ALiBi Falcon variants (RW-1B) are not supported (expected false)")
    return {
        "num_layers": r.integer("num_hidden_layers", "n_layer", minimum=1), "hidden_size": hidden,
        "num_heads": heads, "num_kv_heads": kv, "head_dim": hidden // heads,
        "intermediate_size": r.integer("ffn_hidden_size", default=4 * hidden, minimum=1),
        "vocab_size": r.integer("vocab_size", minimum=1), "mlp_gated": False,
        "qkv_bias": bias, "o_bias": bias, "mlp_bias": bias, "norm_type": "layer", "norms_per_layer": norms,
        "tie_word_embeddings": r.boolean("tie_word_embeddings", True),
        "max_position_embeddings": r.integer("max_position_embeddings", default=None, minimum=1),
    }


def _glm4_moe(r: ConfigReader) -> dict[str, Any]:
    """GLM-4.5 (glm4_moe): GQA with q/k/v biases, ``first_k_dense_replace`` dense layers, then
    routed + ``n_shared_experts`` shared experts of ``moe_intermediate_size``; the MTP layer
    (``num_nextn_predict_layers``) is not part of decoding."""
    fields = core_fields(r, tie=False, kv_heads=REQUIRED_KEYS, head_dim="derived")
    activation_of(r, "hidden_act")
    fields.update(qkv_bias=r.boolean("attention_bias", False), o_bias=False, qk_norm=r.boolean("use_qk_norm", False))
    first = r.integer("first_k_dense_replace", default=1, minimum=0)
    width = r.integer("moe_intermediate_size", minimum=1)
    fields.update(moe_fields(
        r, fields["num_layers"], r.integer("n_routed_experts", minimum=0), r.integer("num_experts_per_tok", minimum=1),
        width, r.integer("intermediate_size", minimum=0), lambda i: i >= first,
        r.integer("n_shared_experts", default=1, minimum=0) * width,
    ))
    return fields


def gated_deltanet_layers(r: ConfigReader, layers: int, hidden: int) -> dict[str, Any]:
    """The hybrid stack of Qwen3-Next and Qwen3.5: gated full-attention layers (q/k norms, a
    sigmoid output gate: q_proj twice as wide) on every ``full_attention_interval``-th layer (4)
    or where ``layer_types`` says ``full_attention``, Gated DeltaNet layers (``linear_num_key_heads``
    × ``linear_key_head_dim`` keys, ``linear_num_value_heads`` × ``linear_value_head_dim``
    values, a ``linear_conv_kernel_dim`` convolution) in the others."""
    raw = r.config.get("layer_types")
    if raw is not None:
        kinds = {"linear_attention": "recurrent", "full_attention": "full"}
        if not isinstance(raw, list) or len(raw) != layers or any(not isinstance(k, str) or k not in kinds for k in raw):
            raise r.error("layer_types", f"expected {layers} of linear_attention / full_attention, got {shown(raw)}")
        types = [kinds[k] for k in raw]
    else:
        every = r.integer("full_attention_interval", default=4, minimum=1)
        types = ["full" if (i + 1) % every == 0 else "recurrent" for i in range(layers)]
    hk, dk = r.integer("linear_num_key_heads", minimum=1), r.integer("linear_key_head_dim", minimum=1)
    hv, dv = r.integer("linear_num_value_heads", minimum=1), r.integer("linear_value_head_dim", minimum=1)
    kernel = r.integer("linear_conv_kernel_dim", default=4, minimum=1)
    conv_dim = 2 * hk * dk + hv * dv
    return dict(
        qk_norm=True, attention_output_gate=r.boolean("attn_output_gate", True), layer_types=tuple(types),
        recurrent_matrix_parameters=int(f.gated_deltanet_matrix_parameters(hidden, hk, dk, hv, dv)),
        recurrent_vector_parameters=conv_dim * kernel + 2 * hv + dv,  # conv1d, A_log, dt_bias, gated norm
        recurrent_state_elements=int(f.gated_deltanet_state_elements(hk, dk, hv, dv, kernel)),
        recurrent_flops_per_token=8 * hv * dk * dv + 2 * conv_dim * kernel,
        recurrent_heads=hv,  # one d_k x d_v delta-rule state per value head
    )


def _qwen3_next(r: ConfigReader) -> dict[str, Any]:
    """Qwen3-Next: three Gated DeltaNet layers for every gated full-attention layer
    (:func:`gated_deltanet_layers`), high-sparsity MoE with one gated shared expert."""
    fields = core_fields(r, tie=False, kv_heads=REQUIRED_KEYS, head_dim=REQUIRED_KEYS)
    activation_of(r, "hidden_act")
    layers = fields["num_layers"]
    fields.update(gated_deltanet_layers(r, layers, fields["hidden_size"]))
    dense_only = set(r.integer_list("mlp_only_layers"))
    step = r.integer("decoder_sparse_step", default=1, minimum=1)
    fields.update(moe_fields(
        r, layers, r.integer("num_experts", minimum=0), r.integer("num_experts_per_tok", minimum=1),
        r.integer("moe_intermediate_size", minimum=1), r.integer("intermediate_size", minimum=0),
        lambda i: i not in dense_only and (i + 1) % step == 0,
        r.integer("shared_expert_intermediate_size", minimum=0),
    ))
    return fields


def _llama4(r: ConfigReader) -> dict[str, Any]:
    """Llama 4 (text): chunked local attention on the rotary layers (``no_rope_layers`` 1, three
    of four; the others attend globally), MoE on every ``interleave_moe_layer_step``-th layer
    with one shared expert of ``intermediate_size``; dense layers of ``intermediate_size_mlp``."""
    fields = core_fields(r, tie=False, kv_heads=REQUIRED_KEYS, head_dim=REQUIRED_KEYS)
    activation_of(r, "hidden_act")
    layers = fields["num_layers"]
    rope = r.config.get("no_rope_layers")
    if rope is None or rope == []:  # Llama4TextConfig: no_rope_layer_interval (4)
        every = r.integer("no_rope_layer_interval", "nope_layer_interval", default=4, minimum=1)
        rope = [int((i + 1) % every != 0) for i in range(layers)]
    if not isinstance(rope, list) or len(rope) != layers or any(flag not in (0, 1) for flag in rope):
        raise r.error("no_rope_layers", f"expected a list of {layers} flags (0 or 1), got {shown(rope)}")
    chunk = r.integer("attention_chunk_size", default=None, minimum=1)
    if chunk is not None:
        fields.update(attention_chunk_size=chunk, layer_types=tuple("chunked" if flag else "full" for flag in rope))
    step = r.integer("interleave_moe_layer_step", default=1, minimum=1)
    moe_layers = r.config.get("moe_layers")
    if moe_layers is not None and not isinstance(moe_layers, list):
        raise r.error("moe_layers", f"expected a list of layer indices, got {shown(moe_layers)}")
    listed = set(r.integer_list("moe_layers")) if moe_layers is not None else None
    is_moe: Callable[[int], bool] = ((lambda i: i in listed) if listed is not None
                                     else (lambda i: (i + 1) % step == 0))
    width = r.integer("intermediate_size", minimum=1)
    fields.update(moe_fields(
        r, layers, r.integer("num_local_experts", minimum=0), r.integer("num_experts_per_tok", default=1, minimum=1),
        width, r.integer("intermediate_size_mlp", minimum=1), is_moe, width,
    ))
    if fields.get("num_experts"):
        fields["intermediate_size"] = r.integer("intermediate_size_mlp", minimum=1) if fields["first_dense_layers"] else 0
    fields["qk_norm"] = False  # llama4's qk norm is a parameter-free L2 norm
    return fields


def sparse_attention_fields(r: ConfigReader, layers: int) -> dict[str, Any]:
    """DeepSeek sparse attention on every layer: the top ``index_topk`` tokens chosen by a
    lightning indexer of ``index_n_heads`` × ``index_head_dim``.  Layers that reuse another
    layer's choice (GlmMoeDsaConfig ``indexer_types`` "shared", from ``index_topk_freq`` > 1 or
    ``index_topk_pattern``) are refused: each sparse layer here has an indexer of its own."""
    shared = r.config.get("indexer_types")
    if isinstance(shared, list) and "shared" in shared:
        raise r.error("indexer_types", "layers that reuse another layer's indexer ('shared') are not supported")
    if r.integer("index_topk_freq", default=1, minimum=1) > 1:
        raise r.error("index_topk_freq", "layers that reuse another layer's indexer are not supported (expected 1)")
    pattern = r.config.get("index_topk_pattern")
    if pattern is not None and (not isinstance(pattern, (str, list)) or any(p not in ("F", "full") for p in pattern)):
        raise r.error("index_topk_pattern", f"only full indexer layers (F) are supported, got {shown(pattern)}")
    return dict(layer_types=("sparse",) * layers, sparse_top_k=r.integer("index_topk", minimum=1),
                indexer_heads=r.integer("index_n_heads", minimum=1),
                indexer_head_dim=r.integer("index_head_dim", minimum=1))


def _deepseek_v32(r: ConfigReader) -> dict[str, Any]:
    """DeepSeek-V3.2: DeepSeek-V3 with DeepSeek sparse attention on every layer
    (:func:`sparse_attention_fields`)."""
    fields = deepseek_fields(r)
    fields.update(sparse_attention_fields(r, fields["num_layers"]))
    return fields


def _jamba(r: ConfigReader) -> dict[str, Any]:
    """Jamba: one attention layer every ``attn_layer_period`` (offset ``attn_layer_offset``), Mamba
    (v1) mixers in the others; MoE MLPs every ``expert_layer_period`` (offset
    ``expert_layer_offset``), dense SwiGLU MLPs in between."""
    fields = core_fields(r, tie=False, kv_heads=REQUIRED_KEYS)
    activation_of(r, "hidden_act")
    layers, d = fields["num_layers"], fields["hidden_size"]
    period, offset = r.integer("attn_layer_period", default=8, minimum=1), r.integer("attn_layer_offset", default=4)
    e_period = r.integer("expert_layer_period", default=2, minimum=1)
    e_offset = r.integer("expert_layer_offset", default=1)
    inner = r.integer("mamba_expand", default=2, minimum=1) * d
    state = r.integer("mamba_d_state", default=16, minimum=1)
    kernel = r.integer("mamba_d_conv", default=4, minimum=1)
    dt_rank = r.integer("mamba_dt_rank", default=-(-d // 16), minimum=1)
    if r.boolean("mamba_proj_bias", False):
        raise r.error("mamba_proj_bias", "Mamba projection biases are not supported (expected false)")
    fields.update(
        layer_types=tuple("full" if i % period == offset else "recurrent" for i in range(layers)),
        recurrent_matrix_parameters=int(f.mamba_matrix_parameters(d, inner, state, dt_rank)),
        # conv1d (+ bias), dt_proj bias, A_log, D, and Jamba's dt/B/C RMSNorms
        recurrent_vector_parameters=inner * kernel + inner * r.boolean("mamba_conv_bias", True) + inner
        + inner * state + inner + dt_rank + 2 * state,
        recurrent_state_elements=int(f.mamba_state_elements(inner, state, kernel)),
        recurrent_flops_per_token=6 * inner * state + 2 * inner * kernel,
        recurrent_heads=inner,  # no heads: each of the d_in channels has its own N-state SSM
    )
    width = r.integer("intermediate_size", minimum=1)
    fields.update(moe_fields(r, layers, r.integer("num_experts", default=16, minimum=0),
                       r.integer("num_experts_per_tok", default=2, minimum=1), width, width,
                       lambda i: i % e_period == e_offset))
    return fields


def _phi(r: ConfigReader) -> dict[str, Any]:
    """Phi-1/1.5/2: attention and MLP in parallel after one LayerNorm, biases on every projection,
    plain GELU MLP (fc1, fc2); untied lm_head (its bias of V is left out)."""
    fields = core_fields(r, tie=False)
    fields["intermediate_size"] = r.integer("intermediate_size", minimum=1)
    activation_of(r, "hidden_act")
    if r.boolean("qk_layernorm", False):
        raise r.error("qk_layernorm", "Phi q/k LayerNorms are not supported (expected false)")
    fields.update(mlp_gated=False, qkv_bias=True, o_bias=True, mlp_bias=True, norm_type="layer", norms_per_layer=1)
    return fields


def _starcoder2(r: ConfigReader) -> dict[str, Any]:
    """StarCoder2: GQA with biases (``use_bias``), two LayerNorms, plain GELU MLP (c_fc, c_proj),
    ``sliding_window`` on every layer (Starcoder2Config: none); tied embeddings by default."""
    fields = core_fields(r, tie=True)
    fields["intermediate_size"] = r.integer("intermediate_size", minimum=1)
    activation_of(r, "hidden_act")
    bias = r.boolean("use_bias", True)
    fields.update(mlp_gated=False, qkv_bias=bias, o_bias=bias, mlp_bias=bias, norm_type="layer")
    window = r.integer("sliding_window", default=None, minimum=1)
    if window is not None:
        fields.update(sliding_window=window, layer_types=("sliding",) * fields["num_layers"])
    return fields


def _olmo(r: ConfigReader) -> dict[str, Any]:
    """OLMo (v1): Llama shapes with non-parametric LayerNorms (no norm weights)."""
    fields = llama_shapes(r, tie=False, mlp_bias=False)
    fields["norms_per_layer"] = 0
    return fields


#: model_type -> reader (merged into :data:`.families.READERS`).
MORE_READERS: dict[str, Callable[[ConfigReader], dict[str, Any]]] = {
    "olmo2": _olmo2,
    "granite": _granite,
    "cohere": lambda r: _cohere(r, 1),
    "cohere2": lambda r: _cohere(r, 2),
    "gptj": _gptj,
    "falcon": _falcon,
    "glm4_moe": _glm4_moe,
    "qwen3_next": _qwen3_next,
    "llama4_text": _llama4,
    "deepseek_v32": _deepseek_v32,
    "phi": _phi,
    "starcoder2": _starcoder2,
    "smollm3": _granite,
    "olmo": _olmo,
    "jamba": _jamba,
}
