"""llama.cpp's tensor layout of a Model and its quantisation mixtures (Q4_K_M, IQ2_XXS, ...).

``llama-quantize`` does not store every tensor in the preset's type: it follows
``llama_tensor_get_type`` in ``src/llama-quant.cpp`` (llama.cpp,
https://github.com/ggml-org/llama.cpp).  The presets and their rules (attn_v, ffn_down,
attn_output, output/token_embd, experts; the GQA, expert-count and 70B conditions) are in
:mod:`roofline_decode.formats.llama_presets`, with what is simplified; this module lays out a
Model's tensors as the converter writes them, applies the rules tensor by tensor, and sums each
weight group's bytes:

* 1-D tensors (norms, biases) stay F32; ``ffn_gate_inp`` (the MoE router) is never quantised
  (F32 from the converter); the position embedding stays F16;
* a row length that is not a multiple of the chosen type's block falls back
  (:data:`~roofline_decode.formats.llama_presets.FALLBACK_TYPES`), to F16 if still not whole
  blocks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidValueError
from .ggml_types import GGML_TYPES
from .llama_presets import FALLBACK_TYPES, MIXTURES, QuantModel, TensorSite, preset_tensor_type
from .number_format import COMPUTE_PRECISIONS, NumberFormat
from .registry import format_of_type

if TYPE_CHECKING:
    from ..specs.model import Model

__all__ = ["TensorInfo", "gguf_tensor_layout", "MIXTURES", "mixture_tensor_types", "mixture_formats",
           "group_formats_from_tensors", "is_mixture"]


@dataclass(frozen=True)
class TensorInfo:
    """One tensor as GGUF stores it: name, shape (ne0 = row length first), weight group, layer."""

    name: str
    shape: tuple[int, ...]
    group: str
    layer: int = -1

    @property
    def elements(self) -> int:
        n = 1
        for dim in self.shape:
            n *= dim
        return n


def is_mixture(name: Any) -> bool:
    """True for a llama.cpp preset, named as llama-quantize's file types in upper case
    (``"Q4_K_M"``, ``"Q6_K"``, ``"Q4_0"``); lower-case names are single formats (``"q6_k"``)."""
    return isinstance(name, str) and name.strip() in MIXTURES


def gguf_tensor_layout(model: Model) -> list[TensorInfo]:
    """The tensors llama.cpp's converter writes for ``model`` (names as in GGUF).

    Their element counts per weight group equal :attr:`Model.group_parameters`.
    """
    d, L = model.hidden_size, model.num_layers
    hq, hkv, dh = model.num_heads, model.num_kv_heads, model.head_dim
    t: list[TensorInfo] = [TensorInfo("token_embd.weight", (d, model.vocab_size), "embedding")]
    if model.position_embedding_rows:
        t.append(TensorInfo("position_embd.weight", (d, model.position_embedding_rows), "embedding"))
    norm_parts = ("weight", "bias") if model.norm_type == "layer" else ("weight",)
    for i in range(L):
        b = f"blk.{i}."
        norm_names = ["attn_norm", "ffn_norm", "post_attention_norm", "post_ffw_norm"]
        norm_names += [f"norm_{k}" for k in range(4, model.norms_per_layer)]
        mlp_free = i >= L - model.mlp_free_layers
        names = norm_names[:model.norms_per_layer]
        if mlp_free:  # no feed-forward block, no feed-forward norm
            names = [n for n in names if n != "ffn_norm"] if "ffn_norm" in names else names[:-1]
        for name in names:
            t += [TensorInfo(f"{b}{name}.{part}", (d,), "norms", i) for part in norm_parts]
        recurrent = model.layer_types is not None and model.layer_types[i] == "recurrent"
        if recurrent:  # Mamba-2 / Gated DeltaNet mixer: its projections and its vectors
            t += [TensorInfo(f"{b}ssm_in.weight", (d, model.recurrent_matrix_parameters // d), "attention", i),
                  TensorInfo(f"{b}ssm_vectors.weight", (model.recurrent_vector_parameters,), "norms", i)]
        elif model.is_mla:
            rq, rkv = model.q_lora_rank, model.kv_lora_rank
            nope, rope, dv = model.qk_nope_head_dim, model.qk_rope_head_dim, model.v_head_dim
            if rq:
                t += [TensorInfo(f"{b}attn_q_a.weight", (d, rq), "attention", i),
                      TensorInfo(f"{b}attn_q_a_norm.weight", (rq,), "norms", i),
                      TensorInfo(f"{b}attn_q_b.weight", (rq, hq * (nope + rope)), "attention", i)]
            else:
                t.append(TensorInfo(f"{b}attn_q.weight", (d, hq * (nope + rope)), "attention", i))
            t += [TensorInfo(f"{b}attn_kv_a_mqa.weight", (d, rkv + rope), "attention", i),
                  TensorInfo(f"{b}attn_kv_a_norm.weight", (rkv,), "norms", i),
                  TensorInfo(f"{b}attn_kv_b.weight", (rkv, hq * (nope + dv)), "attention", i),
                  TensorInfo(f"{b}attn_output.weight", (hq * dv, d), "attention", i)]
            if model.o_bias:
                t.append(TensorInfo(f"{b}attn_output.bias", (d,), "norms", i))
        else:
            gate = 2 if model.attention_output_gate else 1
            t += [TensorInfo(f"{b}attn_q.weight", (d, gate * hq * dh), "attention", i),
                  TensorInfo(f"{b}attn_k.weight", (d, hkv * dh), "attention", i),
                  TensorInfo(f"{b}attn_v.weight", (d, hkv * dh), "attention", i),
                  TensorInfo(f"{b}attn_output.weight", (hq * dh, d), "attention", i)]
            if model.qkv_bias:
                t += [TensorInfo(f"{b}attn_{p}.bias", (h * dh,), "norms", i) for p, h in (("q", hq), ("k", hkv),
                                                                                          ("v", hkv))]
            if model.o_bias:
                t.append(TensorInfo(f"{b}attn_output.bias", (d,), "norms", i))
        if model.layer_types is not None and model.layer_types[i] == "sparse" and model.indexer_heads:
            hi, di = model.indexer_heads, model.indexer_head_dim
            t += [TensorInfo(f"{b}indexer.attn_q_b.weight", (model.q_lora_rank or d, hi * di), "attention", i),
                  TensorInfo(f"{b}indexer.attn_k.weight", (d, di), "attention", i),
                  TensorInfo(f"{b}indexer.proj.weight", (d, hi), "attention", i),
                  TensorInfo(f"{b}indexer.k_norm.weight", (di,), "norms", i),
                  TensorInfo(f"{b}indexer.k_norm.bias", (di,), "norms", i)]
        if model.qk_norm and not recurrent:  # per head (d_h) or over the whole projection (OLMo 2)
            wide = model.qk_norm_scope == "projection"
            t += [TensorInfo(f"{b}attn_q_norm.weight", (hq * dh if wide else dh,), "norms", i),
                  TensorInfo(f"{b}attn_k_norm.weight", (hkv * dh if wide else dh,), "norms", i)]
        if i < model.num_dense_mlp_layers:
            if model.intermediate_size:  # Mamba-2 layers have none
                t += _mlp(model, b, "", model.intermediate_size, "mlp", i)
        elif not mlp_free:
            e = model.num_experts
            t.append(TensorInfo(f"{b}ffn_gate_inp.weight", (d, e), "router", i))
            if model.mlp_bias:
                t.append(TensorInfo(f"{b}ffn_gate_inp.bias", (e,), "router", i))
            t += _mlp(model, b, "_exps", model.moe_intermediate_size, "experts", i, e)
            if model.shared_expert_intermediate_size:
                t += _mlp(model, b, "_shexp", model.shared_expert_intermediate_size, "shared_experts", i)
    t += [TensorInfo(f"output_norm.{part}", (d,), "norms") for part in norm_parts]
    if not model.tie_word_embeddings:
        t.append(TensorInfo("output.weight", (d, model.vocab_size), "lm_head"))
    return t


def _mlp(model: Model, prefix: str, suffix: str, width: int, group: str, layer: int, experts: int = 0) -> list[TensorInfo]:
    d, stack = model.hidden_size, ((experts,) if experts else ())
    names: tuple[tuple[str, tuple[int, int]], ...] = (("gate", (d, width)), ("up", (d, width)), ("down", (width, d)))
    if not model.mlp_gated:
        names = names[1:]
    out = [TensorInfo(f"{prefix}ffn_{n}{suffix}.weight", shape + stack, group, layer) for n, shape in names]
    if model.mlp_bias:
        out += [TensorInfo(f"{prefix}ffn_{n}{suffix}.bias", (shape[1],) + stack, group, layer) for n, shape in names]
    return out


def mixture_tensor_types(preset: str, model: Model, layout: list[TensorInfo] | None = None) -> dict[str, str]:
    """GGML type of every tensor of ``model`` quantised with a llama.cpp preset.

    Examples
    --------
    >>> from roofline_decode import load_model
    >>> types = mixture_tensor_types("Q4_K_M", load_model("llama-3.1-8b"))
    >>> types["output.weight"], types["blk.0.attn_v.weight"], types["blk.1.attn_v.weight"], types["blk.5.attn_v.weight"]
    ('q6_k', 'q6_k', 'q6_k', 'q4_k')
    """
    key = preset.strip().upper()
    if key not in MIXTURES:
        raise InvalidValueError("weights", preset, f"a llama.cpp preset: {', '.join(MIXTURES)}")
    layout = layout if layout is not None else gguf_tensor_layout(model)
    facts = QuantModel(
        n_gqa=model.num_heads // max(1, model.num_kv_heads), n_expert=model.num_experts if model.num_experts > 1 else 0,
        n_layer=model.num_layers, n_attn_v=sum(1 for t in layout if _category(t.name) == "attn_v"),
        is_70b=model.num_layers == 80 and model.hidden_size == 8192,  # llama.cpp's LLM_TYPE_70B
        tied=model.tie_word_embeddings)
    counts = {"attn_v": 0, "ffn_down": 0, "ffn_gate": 0, "ffn_up": 0}
    types: dict[str, str] = {}
    for tensor in layout:
        cat = _category(tensor.name)
        if len(tensor.shape) < 2 or tensor.name.endswith(".bias") or cat == "router":
            types[tensor.name] = "f32"
            continue
        if tensor.name == "position_embd.weight":
            types[tensor.name] = "f16"
            continue
        # feed-forward layer: parsed from the name for MoE models, a running count otherwise
        i_layer = tensor.layer if facts.n_expert > 1 and cat in counts else counts.get(cat, 0)
        site = TensorSite(cat, tensor.shape[0], len(tensor.shape) > 2 and tensor.shape[2] > 1,
                          counts["attn_v"], counts["ffn_down"], i_layer)
        new = preset_tensor_type(key, site, facts)
        if cat in counts:
            counts[cat] += 1
        if tensor.shape[0] % GGML_TYPES[new].block_size:
            new = FALLBACK_TYPES.get(new, new)
            if tensor.shape[0] % GGML_TYPES[new].block_size:
                new = "f16"
        types[tensor.name] = new
    return types


def _category(name: str) -> str:
    """``tensor_get_category`` of llama-quant.cpp (attn_qkv and attn_kv_b count as attn_v)."""
    if name == "output.weight":
        return "output"
    if name in ("token_embd.weight", "per_layer_token_embd.weight"):
        return "token_embd"
    if "ffn_gate_inp" in name:
        return "router"
    for part, cat in (("attn_qkv.weight", "attn_v"), ("attn_kv_b.weight", "attn_v"), ("attn_v.weight", "attn_v"),
                      ("attn_k.weight", "attn_k"), ("attn_q.weight", "attn_q"), ("attn_output.weight", "attn_output"),
                      ("ffn_up", "ffn_up"), ("ffn_gate", "ffn_gate"), ("ffn_down", "ffn_down")):
        if part in name:
            return cat
    return "other"


def group_formats_from_tensors(tensors: list[TensorInfo], types: dict[str, str], label: str) -> dict[str, NumberFormat]:
    """Effective NumberFormat of each weight group: its tensors' bytes over their elements."""
    totals: dict[str, list[int]] = {}
    kinds: dict[str, set[str]] = {}
    for tensor in tensors:
        kind = types[tensor.name]
        nbytes = GGML_TYPES[kind].tensor_bytes(tensor.elements)
        total = totals.setdefault(tensor.group, [0, 0])
        total[0] += nbytes
        total[1] += tensor.elements
        kinds.setdefault(tensor.group, set()).add(kind)
    formats: dict[str, NumberFormat] = {}
    for group, (nbytes, elements) in totals.items():
        if elements == 0:  # only empty tensors: nothing to weigh
            continue
        if len(kinds[group]) == 1:
            formats[group] = format_of_type(next(iter(kinds[group])))
            continue
        mix = ", ".join(sorted(kinds[group]))
        # the fastest compute class among the group's types, so the floor holds for every tensor
        fastest = max((format_of_type(k) for k in kinds[group]),
                      key=lambda f: COMPUTE_PRECISIONS.index(f.compute_precision))
        formats[group] = NumberFormat(
            name=f"{label}:{group}", bits_per_element=8 * nbytes / elements,
            compute_precision=fastest.compute_precision, fallbacks=fastest.compute_fallbacks,
            description=f"{label} {group} tensors in {mix}: {nbytes} B over {elements} elements",
        )
    return formats


def mixture_formats(preset: str, model: Model) -> dict[str, NumberFormat]:
    """Weight-group formats of ``model`` under a llama.cpp preset (``weights="Q4_K_M"``).

    Examples
    --------
    >>> from roofline_decode import load_model
    >>> f = mixture_formats("Q4_K_M", load_model("llama-3.1-8b"))
    >>> f["lm_head"].name, f["mlp"].bits_per_element, f["norms"].name
    ('q6_k', 4.84375, 'fp32')
    """
    layout = gguf_tensor_layout(model)
    return group_formats_from_tensors(layout, mixture_tensor_types(preset, model, layout), preset.strip().upper())
