"""Readers of the Mamba-2 model types and their hybrids with attention (issue 14 item 3):
mamba2, granitemoehybrid, nemotron_h, falcon_h1.  Same contract as :mod:`.families`: a reader
maps one config dict to Model fields; the keys are listed in ``docs/architecture/hf-import.md``.

A Mamba-2 mixer is one ``recurrent`` layer (DESIGN.md §4b): its in/out projections, its
vectors (convolution, ``dt_bias``, ``A_log``, ``D``, gated RMSNorm), a fixed state per sequence
of ``d_in·N + (d_in + 2gN)(K − 1)`` elements and ``6·d_in·N + 2·conv_dim·K`` update FLOPs per
token.  Where a model's blocks hold a mixer or a feed-forward block but not both (Nemotron-H)
or both mixers side by side (Falcon-H1), the Model counts mixers as layers and leaves the
feed-forward block out of ``mlp_free_layers`` of them: no count, byte or FLOP depends on which.
"""

from __future__ import annotations

from typing import Any

from ... import formulas as f
from ..._json_limits import shown
from .families import activation_of, core_fields, moe_fields
from .reader import REQUIRED_KEYS, ConfigReader

_MAMBA_KINDS = {"mamba": "recurrent", "attention": "full"}


def _mamba2_mixer(r: ConfigReader, hidden: int, inner: int, heads: int, groups: int, state: int, kernel: int,
                  conv_bias: bool, gated_norm: bool = True) -> dict[str, Any]:
    """The recurrent-layer fields of one Mamba-2 mixer of ``heads`` heads over ``inner`` channels."""
    if inner % heads:
        raise r.error("num_heads", f"{heads} SSM heads do not divide the SSM width {inner}")
    conv_dim = inner + 2 * groups * state
    return {
        "recurrent_matrix_parameters": int(f.mamba2_matrix_parameters(hidden, inner, groups, state, heads)),
        # conv1d weight (+ bias), dt_bias, A_log, D, the gated RMSNorm of width d_in
        "recurrent_vector_parameters": conv_dim * kernel + conv_dim * conv_bias + 3 * heads + inner * gated_norm,
        "recurrent_state_elements": int(f.mamba2_state_elements(inner, groups, state, kernel)),
        "recurrent_flops_per_token": 6 * inner * state + 2 * conv_dim * kernel,
        "recurrent_heads": heads,  # one (d_in / H) x N state per SSM head
    }


def _no_projection_bias(r: ConfigReader, *keys: str) -> None:
    for key in keys:
        if r.boolean(key, False):
            raise r.error(key, "Mamba-2 projection biases are not supported (expected false)")


def _head_dim(r: ConfigReader, key: str, inner: int, heads: int) -> int:
    """An SSM head width that may be the string "auto" (``inner // heads``)."""
    value = r.config.get(key)
    if value is None or value == "auto":
        return inner // heads
    width: int = r.integer(key, minimum=1)
    return width


def _mamba2(r: ConfigReader) -> dict[str, Any]:
    """Mamba-2: every layer a Mamba-2 mixer (no attention, no MLP) after one RMSNorm."""
    hidden = r.integer("hidden_size", minimum=1)
    inner = r.integer("expand", default=2, minimum=1) * hidden
    heads = r.integer("num_heads", minimum=1)
    head_dim = r.integer("head_dim", default=inner // heads, minimum=1)
    if heads * head_dim != inner:
        raise r.error("num_heads", f"num_heads x head_dim = {heads * head_dim} != expand x hidden_size = {inner}")
    _no_projection_bias(r, "use_bias")
    layers = r.integer("num_hidden_layers", minimum=1)
    return {
        "num_layers": layers, "hidden_size": hidden, "num_heads": 1, "num_kv_heads": 1, "head_dim": 1,
        "intermediate_size": 0, "vocab_size": r.integer("vocab_size", minimum=1),
        "tie_word_embeddings": r.boolean("tie_word_embeddings", False), "norms_per_layer": 1,
        "layer_types": ("recurrent",) * layers,
        **_mamba2_mixer(r, hidden, inner, heads, r.integer("n_groups", default=1, minimum=1),
                        r.integer("state_size", default=128, minimum=1), r.integer("conv_kernel", default=4, minimum=1),
                        r.boolean("use_conv_bias", True)),
    }


def _granitemoehybrid(r: ConfigReader) -> dict[str, Any]:
    """Granite 4.0 hybrid: ``layer_types`` of mamba / attention (no positional embedding), every
    layer with a feed-forward block: ``num_local_experts`` routed experts of
    ``intermediate_size`` plus a shared MLP of ``shared_intermediate_size`` (dense models: the
    shared MLP only); untied embeddings unless the config ties them (GraniteMoeHybridConfig's
    default; granite-4.0-h-small's config ties them)."""
    fields = core_fields(r, tie=True)
    activation_of(r, "hidden_act")
    layers, d = fields["num_layers"], fields["hidden_size"]
    raw = r.get("layer_types", ["mamba"] * layers)  # GraniteMoeHybridConfig: none -> every layer Mamba-2
    if not isinstance(raw, list) or len(raw) != layers or any(not isinstance(k, str) or k not in _MAMBA_KINDS
                                                              for k in raw):
        raise r.error("layer_types", f"expected {layers} of mamba / attention, got {shown(raw)}")
    bias = r.boolean("attention_bias", False)
    fields.update(qkv_bias=bias, o_bias=bias)
    if "mamba" in raw:
        inner = r.integer("mamba_expand", default=2, minimum=1) * d
        heads = r.integer("mamba_n_heads", default=128, minimum=1)
        if heads * _head_dim(r, "mamba_d_head", inner, heads) != inner:
            raise r.error("mamba_d_head", f"mamba_n_heads x mamba_d_head != mamba_expand x hidden_size = {inner}")
        _no_projection_bias(r, "mamba_proj_bias")
        fields.update(layer_types=tuple(_MAMBA_KINDS[k] for k in raw), **_mamba2_mixer(
            r, d, inner, heads, r.integer("mamba_n_groups", default=1, minimum=1),
            r.integer("mamba_d_state", default=256, minimum=1), r.integer("mamba_d_conv", default=4, minimum=1),
            r.boolean("mamba_conv_bias", True)))
    shared = r.integer("shared_intermediate_size", minimum=0)
    fields.update(moe_fields(r, layers, r.integer("num_local_experts", default=0, minimum=0),
                       r.integer("num_experts_per_tok", default=1, minimum=1), r.integer("intermediate_size", minimum=1),
                       shared, lambda i: True, shared))
    return fields


def _nemotron_h(r: ConfigReader) -> dict[str, Any]:
    """Nemotron-H: ``hybrid_override_pattern`` (or ``layers_block_type``) of one block per character, each after one
    RMSNorm: ``M`` a Mamba-2 mixer, ``*`` attention, ``-`` a plain squared-ReLU MLP of
    ``intermediate_size``, ``E`` an MoE of squared-ReLU experts with a shared expert.  The
    Model's layers are the mixer blocks (Mamba-2 first, then attention); the MLP and MoE blocks
    go with the first of them (dense first) and the remaining ``mlp_free_layers`` have none."""
    pattern, key = _nemotron_blocks(r)
    mamba, attention, dense, moe = (pattern.count(c) for c in "M*-E")
    if mamba + attention == 0 or dense + moe > mamba + attention:
        raise r.error(key, f"{dense + moe} feed-forward blocks for {mamba + attention} mixer blocks: at most one "
                           "feed-forward block per mixer is supported")
    config = dict(r.config, num_hidden_layers=mamba + attention)
    fields = core_fields(ConfigReader(config, r.source), tie=False, kv_heads=REQUIRED_KEYS)
    activation_of(r, "mlp_hidden_act")
    d = fields["hidden_size"]
    bias = r.boolean("attention_bias", False)
    fields.update(qkv_bias=bias, o_bias=bias, mlp_gated=False, mlp_bias=r.boolean("mlp_bias", False),
                  layer_types=("recurrent",) * mamba + ("full",) * attention,
                  mlp_free_layers=mamba + attention - dense - moe)
    if mamba:
        heads = r.integer("mamba_num_heads", minimum=1)
        _no_projection_bias(r, "use_bias")
        # NemotronHConfig renames the older mamba_* keys on load (mamba_n_groups -> n_groups, ...)
        fields.update(_mamba2_mixer(
            r, d, heads * r.integer("mamba_head_dim", minimum=1), heads,
            r.integer("mamba_n_groups", "n_groups", default=8, minimum=1),
            r.integer("ssm_state_size", default=128, minimum=1),
            r.integer("mamba_d_conv", "conv_kernel", default=4, minimum=1),
            r.boolean("mamba_conv_bias", r.boolean("use_conv_bias", True))))
    if moe:
        if r.config.get("moe_latent_size") is not None:
            raise r.error("moe_latent_size", "latent MoE projections are not supported (expected null)")
        width = r.integer("moe_intermediate_size", minimum=1)
        shared = r.integer("moe_shared_expert_intermediate_size", default=0, minimum=0)
        fields.update(moe_fields(r, fields["num_layers"], r.integer("n_routed_experts", minimum=1),
                           r.integer("num_experts_per_tok", minimum=1), width,
                           r.integer("intermediate_size", minimum=1) if dense else 0,
                           lambda i: i >= dense, shared * r.integer("n_shared_experts", default=1, minimum=0)))
        fields["first_dense_layers"] = dense
    else:
        fields["intermediate_size"] = r.integer("intermediate_size", minimum=1) if dense else 0
    return fields


#: NemotronHConfig ``layers_block_type`` names -> the characters of ``hybrid_override_pattern``.
_NEMOTRON_BLOCKS = {"linear_attention": "M", "mamba": "M", "full_attention": "*", "attention": "*", "mlp": "-",
                    "moe": "E"}


def _nemotron_blocks(r: ConfigReader) -> tuple[str, str]:
    """Nemotron-H's blocks as a pattern of M, *, - and E, and the key it came from:
    ``hybrid_override_pattern`` (the released configs), else ``layers_block_type`` (what
    NemotronHConfig saves), else the class default (one block of each kind)."""
    pattern = r.config.get("hybrid_override_pattern")
    if pattern is not None:
        blocks = r.integer("num_hidden_layers", default=len(pattern) if isinstance(pattern, str) else 0, minimum=1)
        if not isinstance(pattern, str) or len(pattern) != blocks or set(pattern) - set("M*-E"):
            raise r.error("hybrid_override_pattern",
                          f"expected {blocks} characters of M, *, - and E, got {shown(pattern)}")
        return pattern, "hybrid_override_pattern"
    key = "layers_block_type" if r.config.get("layers_block_type") is not None else "layer_types"
    raw = r.get(key, ["linear_attention", "moe", "full_attention", "mlp"])
    if not isinstance(raw, list) or not raw or any(not isinstance(k, str) or k not in _NEMOTRON_BLOCKS for k in raw):
        raise r.error(key, f"expected a list of {', '.join(_NEMOTRON_BLOCKS)}, got {shown(raw)}")
    return "".join(_NEMOTRON_BLOCKS[k] for k in raw), key


def _falcon_h1(r: ConfigReader) -> dict[str, Any]:
    """Falcon-H1: attention and a Mamba-2 mixer side by side in every layer, then a SwiGLU MLP.
    The Model holds the ``num_hidden_layers`` attention layers with their MLPs and as many
    Mamba-2 layers without one (``mlp_free_layers``); the two mixers of a layer share its input
    RMSNorm, which the Mamba-2 layers count once more (``num_hidden_layers`` × d, < 0.01%)."""
    layers = r.integer("num_hidden_layers", minimum=1)
    fields = core_fields(r, tie=False, kv_heads=REQUIRED_KEYS)
    activation_of(r, "hidden_act")
    d = fields["hidden_size"]
    inner = r.integer("mamba_d_ssm", default=r.integer("mamba_expand", default=2, minimum=1) * d, minimum=1)
    heads = r.integer("mamba_n_heads", default=128, minimum=1)
    if heads * _head_dim(r, "mamba_d_head", inner, heads) != inner:
        raise r.error("mamba_d_head", f"mamba_n_heads x mamba_d_head != mamba_d_ssm = {inner}")
    _no_projection_bias(r, "mamba_proj_bias", "projectors_bias")
    bias = r.boolean("attention_bias", False)
    fields.update(
        num_layers=2 * layers, qkv_bias=bias, o_bias=bias, mlp_bias=r.boolean("mlp_bias", False),
        intermediate_size=r.integer("intermediate_size", minimum=1), mlp_free_layers=layers,
        layer_types=("full",) * layers + ("recurrent",) * layers, norms_per_layer=2,
        **_mamba2_mixer(r, d, inner, heads, r.integer("mamba_n_groups", default=1, minimum=1),
                        r.integer("mamba_d_state", default=256, minimum=1), r.integer("mamba_d_conv", default=4, minimum=1),
                        r.boolean("mamba_conv_bias", True), gated_norm=r.boolean("mamba_rms_norm", False)),
    )
    return fields


#: model_type -> reader (merged into :data:`.families.READERS`).
HYBRID_READERS = {
    "mamba2": _mamba2,
    "granitemoehybrid": _granitemoehybrid,
    "nemotron_h": _nemotron_h,
    "falcon_h1": _falcon_h1,
}
