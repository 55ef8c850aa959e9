"""Readers of the MoE model types of issue 28: MiniMax-M2, Qwen3.5-MoE, GLM-5 (``glm_moe_dsa``) and
GLM-4.7-Flash (``glm4_moe_lite``).  Same contract as :mod:`.families`: a reader maps one config
dict (over its class's defaults) to Model fields; the keys are listed in
``docs/architecture/hf-import.md``.  Kimi-K2 (``kimi_k2``) needs no reader of its own: its
``architectures`` name ``DeepseekV3ForCausalLM`` (:mod:`.model_types`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._json_limits import shown
from .families import activation_of, core_fields, deepseek_fields, moe_fields
from .families_more import gated_deltanet_layers, sparse_attention_fields
from .reader import REQUIRED_KEYS, ConfigReader

#: MiniMax-M2 ``qk_norm_type`` -> the Model's ``qk_norm_scope``.
_QK_NORM_SCOPES = {"per_layer": "projection", "per_head": "head"}


def _minimax_m2(r: ConfigReader) -> dict[str, Any]:
    """MiniMax-M2 (M2, M2.1, M2.5, M2.7): GQA with an explicit ``head_dim``; every layer an MoE of
    ``num_local_experts`` experts of ``intermediate_size`` (top ``num_experts_per_tok``, a
    sigmoid router with a score-correction bias), no shared expert; RMSNorms on q and k over the
    whole projections (``use_qk_norm``, ``qk_norm_type`` "per_layer").  Partial rotary
    (``rotary_dim``) changes no count; the MTP modules (``num_mtp_modules``) are not part of
    decoding.  MiniMax-01's lightning-attention layers (``attn_type_list`` 0) are refused."""
    fields = core_fields(r, tie=False, kv_heads=REQUIRED_KEYS, head_dim=REQUIRED_KEYS)
    activation_of(r, "hidden_act")
    layers = fields["num_layers"]
    kinds = r.config.get("attn_type_list")
    if kinds is not None and (not isinstance(kinds, list) or len(kinds) != layers or any(k != 1 for k in kinds)):
        raise r.error("attn_type_list", f"expected {layers} entries of 1 (full attention; lightning-attention "
                                        f"layers, 0, are not supported), got {shown(kinds)}")
    if r.config.get("sliding_window") is not None:
        raise r.error("sliding_window", f"sliding-window layers are not supported (expected null), got "
                                        f"{shown(r.config['sliding_window'])}")
    if r.integer("shared_intermediate_size", default=0, minimum=0):
        raise r.error("shared_intermediate_size", "shared experts are not supported (expected 0)")
    scope = r.get("qk_norm_type", "per_layer")
    if not isinstance(scope, str) or scope not in _QK_NORM_SCOPES:
        raise r.error("qk_norm_type", f"expected one of {', '.join(_QK_NORM_SCOPES)}, got {shown(scope)}")
    fields.update(qk_norm=r.boolean("use_qk_norm", True), qk_norm_scope=_QK_NORM_SCOPES[scope])
    fields.update(moe_fields(
        r, layers, r.integer("num_local_experts", "num_experts", minimum=0), r.integer("num_experts_per_tok", minimum=1),
        r.integer("intermediate_size", minimum=1), 0, lambda i: True,
    ))
    return fields


def _qwen3_5_moe(r: ConfigReader) -> dict[str, Any]:
    """Qwen3.5-MoE (text model of ``qwen3_5_moe``): the Gated DeltaNet / gated-attention stack of
    Qwen3-Next (:func:`~.families_more.gated_deltanet_layers`), an MoE on every layer (no dense
    layers: Qwen3_5MoeTextConfig has no ``intermediate_size``) with one gated shared expert of
    ``shared_expert_intermediate_size``."""
    fields = core_fields(r, tie=False, kv_heads=REQUIRED_KEYS, head_dim=REQUIRED_KEYS)
    activation_of(r, "hidden_act")
    layers = fields["num_layers"]
    fields.update(gated_deltanet_layers(r, layers, fields["hidden_size"]))
    fields.update(moe_fields(
        r, layers, r.integer("num_experts", minimum=0), r.integer("num_experts_per_tok", minimum=1),
        r.integer("moe_intermediate_size", minimum=1), 0, lambda i: True,
        r.integer("shared_expert_intermediate_size", minimum=0),
    ))
    return fields


def _glm_moe_dsa(r: ConfigReader) -> dict[str, Any]:
    """GLM-5 (``glm_moe_dsa``): DeepSeek-V3's multi-head latent attention and MoE (dense layers from
    ``mlp_layer_types`` or ``first_k_dense_replace``) with DeepSeek sparse attention on every
    layer (:func:`~.families_more.sparse_attention_fields`); the MTP layer
    (``num_nextn_predict_layers``) is not part of decoding."""
    fields = deepseek_fields(r)
    fields.update(sparse_attention_fields(r, fields["num_layers"]))
    return fields


def _glm4_moe_lite(r: ConfigReader) -> dict[str, Any]:
    """GLM-4.7-Flash (``glm4_moe_lite``): multi-head latent attention and DeepSeek-style MoE.  Dense
    layers from ``mlp_layer_types``; Glm4MoeLiteConfig's default is one dense layer, then MoE
    (``first_k_dense_replace``, which the published config also states, is read when the list is
    absent)."""
    return deepseek_fields(r, first_dense_default=1)


#: model_type -> reader (merged into :data:`.families.READERS`).
MOE_READERS: dict[str, Callable[[ConfigReader], dict[str, Any]]] = {
    "minimax_m2": _minimax_m2,
    "qwen3_5_moe_text": _qwen3_5_moe,
    "glm_moe_dsa": _glm_moe_dsa,
    "glm4_moe_lite": _glm4_moe_lite,
}
