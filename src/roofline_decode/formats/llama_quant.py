"""llama.cpp's tensor layout of a Model and its quantisation mixtures (Q4_K_M, Q5_K_M, ...).

``llama-quantize`` does not store every tensor in the preset's type: it follows
``llama_tensor_get_type`` in ``src/llama-quant.cpp`` (llama.cpp,
https://github.com/ggml-org/llama.cpp, retrieved 2026-11-30).  The rules encoded here, for the
K-quant and legacy presets:

* 1-D tensors (norms, biases) stay F32; ``ffn_gate_inp`` (the MoE router) is never quantised
  (F32 from the converter); other unquantised 2-D tensors are F16;
* ``output.weight`` (and a tied ``token_embd``): q8_0 when its row length is not a multiple
  of the type's block or for Falcon, else q6_k unless the preset is Q8_0;
* attn_v (and fused qkv / MLA kv_b): Q3_K_M q5_k in the first two layers, q4_k after;
  Q4_K_M and Q5_K_M q6_k in the "more bits" layers (the first and last eighth and every third
  one between: ``i < n/8 or i >= 7n/8 or (i - n/8) % 3 == 2``); Q4_K_S q5_k in the first 4;
  a 70B model's q3_k/q4_k attn_v become q5_k; with 8 experts attn_v and attn_k are q8_0;
* ffn_down (dense, experts and shared experts): Q3_K_M q5_k in the first sixteenth, q4_k
  after; Q4_K_M and Q5_K_M q6_k in the "more bits" layers; Q4_K_S q5_k in the first eighth;
* attn_output: Q3_K_M q4_k; with 8 experts Q3_K_M, Q4_K_S, Q4_K_M q5_k;
* a row length that is not a multiple of 256 falls back (q4_k -> q5_0, q5_k -> q5_1,
  q6_k -> q8_0, q2_k/q3_k -> q4_0), and to F16 if still not whole blocks.

Importance-matrix variants and the i-quant presets are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidValueError
from .ggml_types import GGML_TYPES
from .number_format import NumberFormat
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


#: preset -> its default GGML type (``llama_model_quantize_impl``'s ftype switch).
MIXTURES: dict[str, str] = {
    "Q4_0": "q4_0", "Q4_1": "q4_1", "Q5_0": "q5_0", "Q5_1": "q5_1", "Q8_0": "q8_0",
    "Q2_K": "q2_k", "Q3_K_M": "q3_k", "Q4_K_S": "q4_k", "Q4_K_M": "q4_k",
    "Q5_K_S": "q5_k", "Q5_K_M": "q5_k", "Q6_K": "q6_k",
}


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


def _more_bits(i: int, n: int) -> bool:
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


_FALLBACK = {"q4_k": "q5_0", "q5_k": "q5_1", "q6_k": "q8_0", "q2_k": "q4_0", "q3_k": "q4_0",
             "iq4_xs": "iq4_nl", "tq1_0": "q4_0", "tq2_0": "q4_0"}


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
    default = MIXTURES[key]
    layout = layout if layout is not None else gguf_tensor_layout(model)
    n_expert = model.num_experts
    is_70b = model.num_layers == 80 and model.hidden_size == 8192  # llama.cpp's LLM_TYPE_70B
    n_v = sum(1 for t in layout if _category(t.name) == "attn_v")
    n_down = sum(1 for t in layout if _category(t.name) == "ffn_down")
    i_v = i_down = 0
    types: dict[str, str] = {}
    for tensor in layout:
        cat = _category(tensor.name)
        if len(tensor.shape) < 2 or tensor.name.endswith(".bias"):
            types[tensor.name] = "f32"
            continue
        if cat == "router":
            types[tensor.name] = "f32"
            continue
        if tensor.name == "position_embd.weight":
            types[tensor.name] = "f16"
            continue
        new = default
        if cat == "output" or (cat == "token_embd" and model.tie_word_embeddings):
            block = GGML_TYPES[new].block_size
            if tensor.shape[0] % block:
                new = "q8_0"
            elif new != "q8_0":
                new = "q6_k"
        elif cat == "attn_v":
            if key == "Q3_K_M":
                new = "q5_k" if i_v < 2 else "q4_k"
            elif key in ("Q4_K_M", "Q5_K_M") and _more_bits(i_v, n_v):
                new = "q6_k"
            elif key == "Q4_K_S" and i_v < 4:
                new = "q5_k"
            if is_70b and new in ("q3_k", "q4_k"):
                new = "q5_k"
            if n_expert == 8:
                new = "q8_0"
            i_v += 1
        elif cat == "attn_k":
            if n_expert == 8:
                new = "q8_0"
        elif cat == "ffn_down":
            i_layer, n_layer = (tensor.layer, n_down) if n_expert > 1 else (i_down, n_down)
            if key == "Q2_K":
                new = "q3_k"
            elif key == "Q3_K_M":
                new = "q5_k" if i_layer < n_layer // 16 else "q4_k"
            elif key in ("Q4_K_M", "Q5_K_M") and _more_bits(i_layer, n_layer):
                new = "q6_k"
            elif key == "Q4_K_S" and i_layer < n_layer // 8:
                new = "q5_k"
            i_down += 1
        elif cat == "attn_output":
            if n_expert == 8:
                if key in ("Q2_K", "Q3_K_M", "Q4_K_S", "Q4_K_M"):
                    new = "q5_k"
            elif key == "Q2_K":
                new = "q3_k"
            elif key == "Q3_K_M":
                new = "q4_k"
        block = GGML_TYPES[new].block_size
        if tensor.shape[0] % block:
            new = _FALLBACK.get(new, new)
            if tensor.shape[0] % GGML_TYPES[new].block_size:
                new = "f16"
        types[tensor.name] = new
    return types


def _category(name: str) -> str:
    if name == "output.weight":
        return "output"
    if name == "token_embd.weight":
        return "token_embd"
    if "ffn_gate_inp" in name:
        return "router"
    for part, cat in (("attn_qkv.weight", "attn_v"), ("attn_kv_b.weight", "attn_v"), ("attn_v.weight", "attn_v"),
                      ("attn_k.weight", "attn_k"), ("attn_q.weight", "attn_q"), ("attn_output.weight", "attn_output"),
                      ("ffn_down", "ffn_down")):
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
        formats[group] = NumberFormat(
            name=f"{label}:{group}", bits_per_element=8 * nbytes / elements, compute_precision="bf16",
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
