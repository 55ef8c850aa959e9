"""``Model``: a decoder-only LLM architecture plus the number formats it is served in.

This module holds the fields, their validation, the storage formats of the weight groups and
the constructors; what the fields imply (layer counts, parameter counts per group, weight and
KV bytes, the recurrent state) is derived by the ``ModelCounts`` base in
:mod:`roofline_decode.specs._model_counts`, whose arithmetic is in :mod:`roofline_decode.formulas`.
Layers come in two orthogonal kinds: attention (``full`` or ``sliding``, from ``layer_types``)
and feed-forward (dense for the first ``first_dense_layers`` layers of an MoE model, routed
experts after, none in the last ``mlp_free_layers``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, NonNegativeInt, PositiveInt, ValidationInfo, field_validator, model_validator

from ..errors import ConfigError, InvalidValueError, RooflineError, UnknownFormatError
from ..formats import NumberFormat, get_format
from ._base import Spec, field_name
from ._limits import MAX_LAYERS, MAX_SIZE
from ._model_counts import ModelCounts

__all__ = ["Model", "LayerType", "WEIGHT_GROUPS"]

LayerType = Literal["full", "sliding", "chunked", "sparse", "recurrent"]

#: Tensor groups that may carry their own storage format (DESIGN.md §4b, per-tensor formats).
#: ``norms`` holds the 1-D vectors of every layer (norm weights and attention biases, as in
#: ``parameter_groups["layer_vector"]``); ``mlp`` the dense MLPs with their biases;
#: ``router`` the MoE gates; ``experts`` the routed experts (``expert_weight_format``).
WEIGHT_GROUPS: tuple[str, ...] = (
    "embedding", "lm_head", "attention", "mlp", "experts", "shared_experts", "router", "norms",
)


class Model(ModelCounts, Spec):
    """A decoder-only transformer and its storage formats.

    Parameters
    ----------
    name : str
        Display name, e.g. ``"Llama-3.1-8B"``.
    num_layers, hidden_size, num_heads, num_kv_heads, head_dim, intermediate_size, vocab_size : int
        L, d, H_q, H_kv, d_h, d_ff (dense MLP width; 0 if every layer is MoE), V.
    mlp_gated : bool
        Gated MLP (SwiGLU/GeGLU: gate, up, down) or plain (up, down).
    qkv_bias, o_bias, mlp_bias : bool
        Whether those projections carry biases.
    tie_word_embeddings : bool
        lm_head shares the embedding matrix (counted once; still read in full every step).
    norm_type : {"rms", "layer"}
        RMSNorm (weight) or LayerNorm (weight and bias).
    norms_per_layer : int
        Norm vectors of width d per layer (2 for Llama, 4 for Gemma 2/3).
    qk_norm : bool
        Query and key norms (Qwen3, Gemma 3, OLMo 2).
    qk_norm_scope : {"head", "projection"}
        Width of those norms: ``"head"``, one weight vector of ``head_dim`` each for q and k,
        shared by the heads (Qwen3, Gemma 3); ``"projection"``, one over the whole query
        projection (H_q·d_h) and one over the key projection (H_kv·d_h) (OLMo 2, MiniMax-M2).
    position_embedding_rows : int
        Rows of a learned absolute position table (GPT-2: 1024; 0 for rotary models).
    sliding_window : int, optional
        Window W of sliding-window layers [tokens].
    layer_types : tuple of {"full", "sliding", "chunked", "sparse", "recurrent"}, optional
        Token mixer per layer; if omitted, every layer slides when ``sliding_window`` is set.
        ``chunked``: local attention within chunks of ``attention_chunk_size`` (Llama 4);
        ``sparse``: DeepSeek sparse attention over ``sparse_top_k`` selected tokens plus a
        lightning indexer of ``indexer_heads`` × ``indexer_head_dim``; ``recurrent``: a
        Mamba-2 or Gated DeltaNet mixer with ``recurrent_matrix_parameters`` and
        ``recurrent_vector_parameters`` per layer and a fixed state of
        ``recurrent_state_elements`` per sequence (``state_format``), updated with
        ``recurrent_flops_per_token`` (DESIGN.md §4b).
    recurrent_heads : int
        Independent parts of a recurrent layer's state, the most ways tensor parallelism splits
        it (``floors.parallel``): Gated DeltaNet's value heads (``linear_num_value_heads``: one
        d_k × d_v state each), Mamba-2's SSM heads, Mamba (v1)'s inner channels.  0 (not
        given): as many as there are devices.
    attention_output_gate : bool
        Attention layers carry a sigmoid output gate (Qwen3-Next: q_proj twice as wide).
    num_experts, num_experts_per_token, moe_intermediate_size : int
        Routed experts E, experts per token k, expert width (0 experts: a dense model).
    shared_expert_intermediate_size : int
        Total width of the always-active shared experts of each MoE layer.
    first_dense_layers : int
        Leading layers with a dense MLP of ``intermediate_size`` (DeepSeek first_k_dense_replace).
    mlp_free_layers : int
        Trailing layers without a feed-forward block (and without its norm, one of
        ``norms_per_layer``): Nemotron-H's mixer-only blocks, Falcon-H1's parallel SSM mixers.
        Which layers lack it changes no count, byte or FLOP.
    kv_lora_rank, q_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim : int
        Multi-head latent attention (MLA) when ``kv_lora_rank > 0``.
    weight_format, kv_format, activation_format : str or NumberFormat
        Storage formats; ``weight_format`` is the default of every weight group and
        ``expert_weight_format`` overrides the format of routed experts.
    tensor_formats : dict of str to str or NumberFormat
        Formats of other weight groups that differ from ``weight_format`` (keys from
        :data:`WEIGHT_GROUPS`; an ``"experts"`` key sets ``expert_weight_format``).  Weight
        bytes are summed per group with the group's format (DESIGN.md §4b).
    """

    name: str = Field(min_length=1)
    num_layers: PositiveInt
    hidden_size: PositiveInt
    num_heads: PositiveInt
    num_kv_heads: PositiveInt
    head_dim: PositiveInt
    intermediate_size: NonNegativeInt
    vocab_size: PositiveInt
    mlp_gated: bool = True
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    tie_word_embeddings: bool = False
    norm_type: Literal["rms", "layer"] = "rms"
    norms_per_layer: NonNegativeInt = 2
    qk_norm: bool = False
    qk_norm_scope: Literal["head", "projection"] = "head"
    position_embedding_rows: NonNegativeInt = 0
    max_position_embeddings: PositiveInt | None = None
    # layers other than full attention: sliding, chunked, sparse (with its indexer), recurrent
    sliding_window: PositiveInt | None = None
    layer_types: tuple[LayerType, ...] | None = None
    attention_chunk_size: PositiveInt | None = None
    sparse_top_k: PositiveInt | None = None
    indexer_heads: NonNegativeInt = 0
    indexer_head_dim: NonNegativeInt = 0
    # recurrent layers (Gated DeltaNet, Mamba): counts per layer, filled by the config readers
    recurrent_matrix_parameters: NonNegativeInt = 0
    recurrent_vector_parameters: NonNegativeInt = 0
    recurrent_state_elements: NonNegativeInt = 0
    recurrent_flops_per_token: NonNegativeInt = 0
    recurrent_heads: NonNegativeInt = 0
    attention_output_gate: bool = False  # a sigmoid gate on the attention output (Qwen3-Next)
    # mixture of experts, and layers with a dense MLP or none
    num_experts: NonNegativeInt = 0
    num_experts_per_token: NonNegativeInt = 0
    moe_intermediate_size: NonNegativeInt = 0
    shared_expert_intermediate_size: NonNegativeInt = 0
    first_dense_layers: NonNegativeInt = 0
    mlp_free_layers: NonNegativeInt = 0
    # multi-head latent attention (DeepSeek-V2/V3)
    kv_lora_rank: NonNegativeInt = 0
    q_lora_rank: NonNegativeInt = 0
    qk_rope_head_dim: NonNegativeInt = 0
    qk_nope_head_dim: NonNegativeInt = 0
    v_head_dim: NonNegativeInt = 0
    # storage formats
    weight_format: NumberFormat = Field(default="bf16", validate_default=True)
    kv_format: NumberFormat = Field(default="bf16", validate_default=True)
    activation_format: NumberFormat = Field(default="bf16", validate_default=True)
    state_format: NumberFormat = Field(default="bf16", validate_default=True)
    expert_weight_format: NumberFormat | None = None
    tensor_formats: dict[str, NumberFormat] = Field(default_factory=dict)
    source: str | None = None

    # -- validation ---------------------------------------------------------------------------
    @field_validator("*", mode="before")
    @classmethod
    def _plain_integers(cls, value: Any, info: ValidationInfo) -> Any:
        """A boolean is not a count (``num_layers=True``), and counts stay below the bounds of
        :data:`MAX_LAYERS` and :data:`MAX_SIZE`, so no product of them overflows a float."""
        if isinstance(value, bool) and cls.model_fields[field_name(info)].annotation is not bool:
            raise ValueError("expected a whole number, got a boolean")
        if isinstance(value, int) and not isinstance(value, bool):
            limit = MAX_LAYERS if info.field_name == "num_layers" else MAX_SIZE
            if value > limit:
                shown = f"an integer of {len(str(value))} digits" if value > 10**30 else str(value)
                raise ValueError(f"{shown} is beyond the largest accepted, {limit:,}")
        return value

    @field_validator("weight_format", "kv_format", "activation_format", "expert_weight_format", "state_format",
                     mode="before")
    @classmethod
    def _resolve_format(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None or isinstance(value, NumberFormat):
            return value
        if isinstance(value, dict):
            return NumberFormat(**value)
        return get_format(value, field=field_name(info))

    @field_validator("tensor_formats", mode="before")
    @classmethod
    def _resolve_tensor_formats(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise InvalidValueError("tensor_formats", value, f"a mapping of weight groups ({', '.join(WEIGHT_GROUPS)}) to formats")
        resolved: dict[str, NumberFormat] = {}
        for group, fmt in value.items():
            if group not in WEIGHT_GROUPS:
                raise InvalidValueError("tensor_formats", group, f"one of the weight groups {', '.join(WEIGHT_GROUPS)}")
            if isinstance(fmt, dict):
                fmt = NumberFormat(**fmt)
            resolved[group] = get_format(fmt, field=f"tensor_formats.{group}")
        return resolved

    @model_validator(mode="before")
    @classmethod
    def _experts_key(cls, data: Any) -> Any:
        """``tensor_formats={"experts": ...}`` is ``expert_weight_format``: one place for it."""
        if isinstance(data, dict) and isinstance(data.get("tensor_formats"), dict) and "experts" in data["tensor_formats"]:
            data = dict(data)
            groups = dict(data["tensor_formats"])
            data["expert_weight_format"] = groups.pop("experts")
            data["tensor_formats"] = groups
        return data

    @model_validator(mode="after")
    def _check_consistency(self) -> Model:
        problems: list[str] = []
        if self.num_heads % self.num_kv_heads:
            problems.append(f"num_heads={self.num_heads} must be a multiple of num_kv_heads={self.num_kv_heads}")
        if self.layer_types is not None:
            if len(self.layer_types) != self.num_layers:
                problems.append(f"layer_types has {len(self.layer_types)} entries, expected num_layers={self.num_layers}")
            if "sliding" in self.layer_types and self.sliding_window is None:
                problems.append("layer_types contains 'sliding' but sliding_window is not set")
            for kind, field in (("chunked", "attention_chunk_size"), ("sparse", "sparse_top_k")):
                if kind in self.layer_types and getattr(self, field) is None:
                    problems.append(f"layer_types contains {kind!r} but {field} is not set")
            if "recurrent" in self.layer_types and not self.recurrent_state_elements:
                problems.append("layer_types contains 'recurrent' but recurrent_state_elements is 0")
        if self.num_experts:
            if not 1 <= self.num_experts_per_token <= self.num_experts:
                problems.append(
                    f"num_experts_per_token={self.num_experts_per_token} must be in [1, num_experts={self.num_experts}]"
                )
            if self.moe_intermediate_size == 0:
                problems.append("moe_intermediate_size must be > 0 for an MoE model (num_experts > 0)")
            if self.first_dense_layers + self.mlp_free_layers >= self.num_layers:
                problems.append(f"first_dense_layers + mlp_free_layers = {self.first_dense_layers + self.mlp_free_layers}"
                                f" must be < num_layers={self.num_layers}")
        elif self.intermediate_size == 0 and self.num_recurrent_layers < self.num_layers - self.mlp_free_layers:
            problems.append("intermediate_size must be > 0 for a dense model (num_experts = 0)")
        if self.mlp_free_layers > self.num_layers:
            problems.append(f"mlp_free_layers={self.mlp_free_layers} must be <= num_layers={self.num_layers}")
        if self.mlp_free_layers and not self.norms_per_layer:
            problems.append("mlp_free_layers > 0 needs norms_per_layer >= 1 (a layer without a feed-forward block "
                            "lacks its norm)")
        if self.first_dense_layers and self.intermediate_size == 0:
            problems.append("first_dense_layers > 0 needs intermediate_size > 0")
        if self.kv_lora_rank and not (self.qk_rope_head_dim and self.qk_nope_head_dim and self.v_head_dim):
            problems.append("MLA (kv_lora_rank > 0) needs qk_rope_head_dim, qk_nope_head_dim and v_head_dim > 0")
        embedding, lm_head = self.tensor_formats.get("embedding"), self.tensor_formats.get("lm_head")
        if self.tie_word_embeddings and embedding is not None and lm_head is not None and embedding != lm_head:
            problems.append(f"tensor_formats: embedding ({embedding.name}) and lm_head ({lm_head.name}) are one tied "
                            "matrix and must share a format")
        if problems:
            raise ValueError("; ".join(problems))
        # a group stated in the default format is no exception to it
        object.__setattr__(self, "tensor_formats",
                           {g: fmt for g, fmt in self.tensor_formats.items() if fmt != self.weight_format})
        return self

    # -- precision ----------------------------------------------------------------------------
    def with_precision(self, weights: str | NumberFormat | dict[str, str | NumberFormat] | None = None,
                       kv: str | NumberFormat | None = None, activations: str | NumberFormat | None = None,
                       experts: str | NumberFormat | None = None) -> Model:
        """A copy served in other formats; ``None`` keeps a format as it is.

        ``weights`` as one format (a name or :class:`NumberFormat`) stores *every* weight group
        in it; a llama.cpp preset in upper case (``"Q4_K_M"``, ``"Q6_K"``, ``"Q4_0"``) gives each
        group the bytes of the tensor types llama-quantize picks
        (:mod:`roofline_decode.formats.llama_quant`); as a dict it updates the groups it names
        (keys from :data:`WEIGHT_GROUPS`, plus ``"default"`` for ``weight_format``) and keeps
        the others.

        Examples
        --------
        >>> from roofline_decode import load_model
        >>> load_model("llama-3.1-8b").with_precision(weights="q4_0", kv="fp8").kv_format.name
        'fp8_e4m3'
        >>> m = load_model("gpt-oss-20b").with_precision(weights={"default": "q8_0", "experts": "mxfp4"})
        >>> m.group_format("attention").name, m.group_format("experts").name
        ('q8_0', 'mxfp4')
        """
        changes: dict[str, Any] = {}
        if isinstance(weights, dict):
            changes.update(self._group_changes(weights))
        elif weights is not None:
            from ..formats.llama_quant import MIXTURES, is_mixture, mixture_formats

            if isinstance(weights, str) and is_mixture(weights):  # a llama.cpp preset: each tensor in the type
                groups = mixture_formats(weights, self)                 # llama-quantize picks
                changes.update(weight_format=MIXTURES[weights.strip()], expert_weight_format=groups.pop("experts", None),
                               tensor_formats=groups)
            else:
                fmt = weights
                if isinstance(weights, str):
                    try:
                        fmt = get_format(weights, field="weight_format")
                    except UnknownFormatError:  # the suggestions include llama.cpp's presets
                        from ..formats import list_formats

                        raise UnknownFormatError(weights, [*list_formats(), *MIXTURES], field="weight_format") from None
                changes.update(weight_format=fmt, tensor_formats={}, expert_weight_format=None)
        for field, value in (("kv_format", kv), ("activation_format", activations), ("expert_weight_format", experts)):
            if value is not None:
                changes[field] = value
        return self.replace(**changes)

    def _group_changes(self, weights: Mapping[str, str | NumberFormat]) -> dict[str, Any]:
        """Model fields for a ``{"default": ..., "<group>": ...}`` weights dict."""
        unknown = [key for key in weights if key != "default" and key not in WEIGHT_GROUPS]
        if unknown:
            raise InvalidValueError("weights", unknown[0], f"'default' or a weight group: {', '.join(WEIGHT_GROUPS)}")
        default = get_format(weights["default"], field="weights.default") if "default" in weights else self.weight_format
        # groups that followed the old default keep following the (new) default
        groups = {g: self.group_format(g) for g in WEIGHT_GROUPS
                  if g in self.tensor_formats or (g == "experts" and self.expert_weight_format is not None)}
        groups.update({g: get_format(v, field=f"weights.{g}") for g, v in weights.items() if g != "default"})
        return {"weight_format": default, "expert_weight_format": groups.pop("experts", None),
                "tensor_formats": groups}

    @property
    def routed_expert_format(self) -> NumberFormat:
        """Format of routed-expert weights (``expert_weight_format`` or ``weight_format``)."""
        return self.expert_weight_format or self.weight_format

    def group_format(self, group: str) -> NumberFormat:
        """Storage format of one weight group (a key of :data:`WEIGHT_GROUPS`).

        A tied lm_head is the embedding matrix: either key's format serves both.

        Examples
        --------
        >>> from roofline_decode import load_model
        >>> load_model("gpt-oss-20b").group_format("experts").name
        'mxfp4'
        """
        if group == "experts":
            return self.routed_expert_format
        if group not in WEIGHT_GROUPS:
            raise InvalidValueError("group", group, f"one of {', '.join(WEIGHT_GROUPS)}")
        fmt = self.tensor_formats.get(group)
        if fmt is None and self.tie_word_embeddings and group in ("embedding", "lm_head"):
            fmt = self.tensor_formats.get("lm_head" if group == "embedding" else "embedding")
        return fmt or self.weight_format

    @property
    def group_formats(self) -> dict[str, NumberFormat]:
        """Format of every weight group (keys of :data:`WEIGHT_GROUPS`)."""
        return {group: self.group_format(group) for group in WEIGHT_GROUPS}

    @property
    def has_uniform_weights(self) -> bool:
        """True when every weight group but the routed experts is in ``weight_format``."""
        return not self.tensor_formats

    @classmethod
    def from_hf_config(cls, config: str | Path | Mapping[str, Any], name: str | None = None,
                       **overrides: Any) -> Model:
        """Build a Model from a Hugging Face ``config.json`` (path, directory or dict), offline.

        The supported ``model_type`` values and the keys read are listed in
        ``docs/architecture/hf-import.md``; the reader
        (``roofline_decode.specs.hf_config.hf_config_fields``) only maps the config onto
        Model fields and never imports this module.

        Parameters
        ----------
        config : str, Path or mapping
            A config.json file, a directory holding one, or the parsed dict.
        name : str, optional
            Display name; defaults to the ``_roofline.name`` key of bundled configs, the
            ``_name_or_path`` key, or the file's folder name.
        **overrides
            Model fields to set on top of the config (e.g. ``weight_format="q4_0"``; stating
            ``weight_format`` also skips the config's ``quantization_config``).

        Returns
        -------
        Model
            The architecture, in the weight format the config's ``quantization_config`` states
            (bf16 without one) and a bf16 KV cache.

        Raises
        ------
        ConfigError
            Unreadable or malformed JSON, an unknown ``model_type`` (the message lists the
            supported ones), a missing required key (named with the file), a malformed value,
            or fields the Model rejects (with the file).

        Examples
        --------
        >>> m = Model.from_hf_config({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
        ...     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
        ...     "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2})
        >>> m.num_experts, m.num_moe_layers, m.moe_intermediate_size
        (8, 32, 14336)
        """
        from .hf_config import hf_config_fields  # on first use: keeps `import roofline_decode` light

        fields, source = hf_config_fields(config, name=name, **overrides)
        try:
            return cls(**fields)
        except RooflineError as exc:
            raise ConfigError(source, "(model)", str(exc)) from None

    def __str__(self) -> str:
        extra = "".join(f", {g} {fmt.name}" for g, fmt in self.tensor_formats.items())
        return f"{self.name} ({self.weight_format.name} weights{extra}, {self.kv_format.name} KV)"
