"""llama-quantize's presets and the type each rule of ``llama_tensor_get_type`` gives a tensor.

Source: ``src/llama-quant.cpp`` of llama.cpp (https://github.com/ggml-org/llama.cpp, read
2026-12-01 at commit 007dbbf): ``llama_ftype_get_default_type`` (the preset's default type),
``llama_tensor_get_type_impl`` (the per-tensor rules), ``tensor_type_fallback`` (row lengths
that are not whole blocks) and ``tensor_requires_imatrix``; the preset names are those of
``QUANT_OPTIONS`` in ``tools/quantize/quantize.cpp``, and :data:`FTYPE_NAMES` the strings of
``llama_model_ftype_name`` (``src/llama-model-loader.cpp``) that llama-bench prints as ``type``.
The rules are re-expressed here as tables and one function, not copied.

Simplifications (stated once):

* Falcon's own branches (``arch == LLM_ARCH_FALCON``) and BailingMoE-3's MXFP4_MOE test are not
  modelled; no bundled model has those architectures;
* the importance matrix: presets whose types llama-quantize refuses to write without one
  (``tensor_requires_imatrix``: IQ1_*, IQ2_*, IQ3_XXS, Q2_K_S) take the ``has_imatrix`` branches,
  every other preset the branches without one (llama-quantize's default, no ``--imatrix``);
* ``LLM_TYPE_70B`` is recognised as 80 layers of width 8192 (the Llama-2/3 70B shape);
* user overrides (``--output-tensor-type``, ``--token-embedding-type``, ``--tensor-type``,
  ``--pure``) are not modelled: a GGUF's own header gives those files exactly (files/gguf.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from .ggml_types import GGML_TYPES

__all__ = ["MIXTURES", "FTYPE_NAMES", "IMATRIX_PRESETS", "FALLBACK_TYPES", "QuantModel", "TensorSite",
           "preset_tensor_type", "use_more_bits"]

#: preset -> its default GGML type (``llama_ftype_get_default_type``); the preset names are
#: llama-quantize's (``QUANT_OPTIONS``), upper case.
MIXTURES: dict[str, str] = {
    "Q4_0": "q4_0", "Q4_1": "q4_1", "Q5_0": "q5_0", "Q5_1": "q5_1", "Q8_0": "q8_0",
    "Q2_K": "q2_k", "Q2_K_S": "q2_k", "Q3_K_S": "q3_k", "Q3_K_M": "q3_k", "Q3_K_L": "q3_k",
    "Q4_K_S": "q4_k", "Q4_K_M": "q4_k", "Q5_K_S": "q5_k", "Q5_K_M": "q5_k", "Q6_K": "q6_k",
    "IQ1_S": "iq1_s", "IQ1_M": "iq1_m", "IQ2_XXS": "iq2_xxs", "IQ2_XS": "iq2_xs",
    "IQ2_S": "iq2_xs", "IQ2_M": "iq2_s",  # sic: IQ2_S files default to iq2_xs, IQ2_M to iq2_s
    "IQ3_XXS": "iq3_xxs", "IQ3_XS": "iq3_s", "IQ3_S": "iq3_s", "IQ3_M": "iq3_s",
    "IQ4_NL": "iq4_nl", "IQ4_XS": "iq4_xs", "TQ1_0": "tq1_0", "TQ2_0": "tq2_0",
    "MXFP4_MOE": "mxfp4",
}

#: ``llama_model_ftype_name`` (what llama-bench prints as ``type`` and in ``model_type``) ->
#: preset.  IQ3_M prints as "IQ3_S mix - 3.66 bpw"; Q2_K as "Q2_K - Medium".
FTYPE_NAMES: dict[str, str] = {
    "Q4_0": "Q4_0", "Q4_1": "Q4_1", "Q5_0": "Q5_0", "Q5_1": "Q5_1", "Q8_0": "Q8_0",
    "MXFP4 MoE": "MXFP4_MOE",
    "Q2_K - Medium": "Q2_K", "Q2_K - Small": "Q2_K_S",
    "Q3_K - Small": "Q3_K_S", "Q3_K - Medium": "Q3_K_M", "Q3_K - Large": "Q3_K_L",
    "Q4_K - Small": "Q4_K_S", "Q4_K - Medium": "Q4_K_M",
    "Q5_K - Small": "Q5_K_S", "Q5_K - Medium": "Q5_K_M", "Q6_K": "Q6_K",
    "TQ1_0 - 1.69 bpw ternary": "TQ1_0", "TQ2_0 - 2.06 bpw ternary": "TQ2_0",
    "IQ2_XXS - 2.0625 bpw": "IQ2_XXS", "IQ2_XS - 2.3125 bpw": "IQ2_XS",
    "IQ2_S - 2.5 bpw": "IQ2_S", "IQ2_M - 2.7 bpw": "IQ2_M",
    "IQ3_XS - 3.3 bpw": "IQ3_XS", "IQ3_XXS - 3.0625 bpw": "IQ3_XXS",
    "IQ1_S - 1.5625 bpw": "IQ1_S", "IQ1_M - 1.75 bpw": "IQ1_M",
    "IQ4_NL - 4.5 bpw": "IQ4_NL", "IQ4_XS - 4.25 bpw": "IQ4_XS",
    "IQ3_S - 3.4375 bpw": "IQ3_S", "IQ3_S mix - 3.66 bpw": "IQ3_M",
}

#: Presets llama-quantize writes only with an importance matrix (their types require one).
IMATRIX_PRESETS = frozenset({"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ3_XXS", "Q2_K_S"})

#: A type whose block does not divide the row length -> the type llama.cpp takes instead
#: (``tensor_type_fallback``); F16 when that one does not divide it either.
FALLBACK_TYPES: dict[str, str] = {
    **dict.fromkeys(("iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq4_xs"), "iq4_nl"),
    **dict.fromkeys(("q2_k", "q3_k", "tq1_0", "tq2_0"), "q4_0"),
    "q4_k": "q5_0", "q5_k": "q5_1", "q6_k": "q8_0",
}

# preset groups the rules name
_LOW_IQ = frozenset({"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M"})  # the 1-2 bit i-quants
_OUTPUT_Q5_K = _LOW_IQ | {"IQ3_XXS"}
_EMBD = {"IQ2_XXS": "q2_k", "IQ2_XS": "q2_k", "IQ1_S": "q2_k", "IQ1_M": "q2_k", "IQ2_S": "iq3_s",
         "IQ2_M": "iq3_s", "IQ3_XXS": "iq3_s", "TQ1_0": "q4_k", "TQ2_0": "q4_k"}
_OUT_8_EXPERTS = frozenset({"Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M",
                            "IQ3_S", "IQ3_M", "IQ4_XS"})
_OUT = {"Q2_K": "q3_k", "IQ3_XXS": "iq3_s", "Q3_K_M": "q4_k", "Q3_K_L": "q5_k", "IQ3_M": "q4_k"}


@dataclass(frozen=True)
class QuantModel:
    """What ``llama_tensor_get_type`` reads of the model: hparams and the file's tensor list."""

    n_gqa: int          # n_head / n_head_kv
    n_expert: int       # hparams.n_expert (0 for a dense model)
    n_layer: int        # n_layer_all: the n_ffn_down/n_ffn_gate/n_ffn_up of the rules
    n_attn_v: int       # attn_v-like tensors in the file (attn_v, attn_qkv, attn_kv_b)
    is_70b: bool
    tied: bool          # no output.weight: token_embd is quantised as the output


@dataclass(frozen=True)
class TensorSite:
    """One 2-D/3-D weight: its category, row length, whether it is an expert stack (ne[2] > 1),
    the running attn_v count, the running ffn_down count and its feed-forward layer index."""

    category: str
    ncols: int
    stacked: bool = False
    i_attn_v: int = 0
    i_ffn_down: int = 0
    i_layer: int = 0


def use_more_bits(i: int, n: int) -> bool:
    """llama.cpp's "more bits" layers: the first and last eighth and every third between."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def preset_tensor_type(preset: str, site: TensorSite, m: QuantModel) -> str:
    """The GGML type ``llama_tensor_get_type`` gives one tensor under ``preset`` (before the
    row-length fallback of :data:`FALLBACK_TYPES`, which the caller applies)."""
    p, new, cat = preset, MIXTURES[preset], site.category
    imatrix = p in IMATRIX_PRESETS
    if cat == "output" or (cat == "token_embd" and m.tied):
        if p == "MXFP4_MOE" or site.ncols % GGML_TYPES[new].block_size:
            return "q8_0"
        if p in _OUTPUT_Q5_K:
            return "q5_k"
        return new if new == "q8_0" else "q6_k"
    if p == "MXFP4_MOE":  # expert stacks in mxfp4, every other weight in q8_0
        return "mxfp4" if site.stacked else "q8_0"
    if cat == "token_embd":
        return _EMBD.get(p, new)
    n, i = m.n_layer, site.i_layer
    if p in _LOW_IQ:
        wide = "iq3_s" if p in ("IQ2_S", "IQ2_M") else "q2_k"
        if cat == "attn_v":
            return "q4_k" if m.n_gqa >= 4 or m.n_expert >= 4 else wide
        if cat == "attn_k" and m.n_expert == 8:
            return "q4_k"
        if cat == "ffn_down":
            return wide if site.i_ffn_down < n // 8 else new
        if cat == "attn_output":
            if m.n_expert == 8:
                return "q5_k"
            return {"IQ1_S": "iq2_xxs", "IQ1_M": "iq2_xxs", "IQ2_S": "iq3_s", "IQ2_M": "iq3_s"}.get(p, new)
        return new
    if cat == "attn_v":
        return _attn_v(p, new, site.i_attn_v, m, imatrix)
    if cat in ("attn_k", "attn_q"):
        if cat == "attn_k" and m.n_expert == 8:
            return "q8_0"
        return {"IQ3_XS": "iq3_xxs", "IQ3_XXS": "iq2_s"}.get(p, new)
    if cat == "ffn_down":
        return _ffn_down(p, new, i, n, m, imatrix)
    if cat == "attn_output":
        if m.n_expert == 8:
            return "q5_k" if p in _OUT_8_EXPERTS else new
        return _OUT.get(p, new)
    if cat in ("ffn_gate", "ffn_up") and p == "IQ3_XS" and n // 8 <= i < 7 * n // 8:
        return "iq3_xxs"
    return new


def _attn_v(p: str, new: str, i: int, m: QuantModel, imatrix: bool) -> str:
    gqa4 = m.n_gqa >= 4
    if p == "Q2_K":
        new = "q4_k" if gqa4 else "q3_k"
    elif p == "Q2_K_S" and gqa4:
        new = "q4_k"
    elif p == "IQ3_XXS":
        new = "q4_k" if gqa4 else ("iq3_xxs" if imatrix else "iq3_s")
    elif p in ("IQ3_XS", "IQ3_S") and gqa4:
        new = "q4_k"
    elif p == "IQ3_M":
        new = "q4_k"
    elif p == "Q3_K_M":
        new = "q5_k" if i < 2 else "q4_k"
    elif p == "Q3_K_L":
        new = "q5_k"
    elif p in ("IQ4_NL", "IQ4_XS") and gqa4:
        new = "q5_k"
    elif p in ("Q4_K_M", "Q5_K_M") and use_more_bits(i, m.n_attn_v):
        new = "q6_k"
    elif p == "Q4_K_S" and i < 4:
        new = "q5_k"
    if m.is_70b and new in ("q3_k", "q4_k"):
        new = "q5_k"
    return "q8_0" if m.n_expert == 8 else new


def _ffn_down(p: str, new: str, i: int, n: int, m: QuantModel, imatrix: bool) -> str:
    if p == "Q2_K":
        return "q3_k"
    if p == "Q2_K_S":
        return "q4_k" if i < n // 8 else new
    if p == "IQ3_XXS" and not imatrix:
        return "q4_k" if i < n // 8 else "q3_k"
    if p == "Q3_K_M":
        return "q5_k" if i < n // 16 else "q4_k"
    if p == "IQ3_M":
        return "q4_k" if i < n // 8 or (m.n_expert == 8 and use_more_bits(i, n)) else new
    if p == "Q3_K_L":
        return "q5_k"
    if p in ("Q4_K_M", "Q5_K_M"):
        return "q6_k" if use_more_bits(i, n) else new
    if p in ("IQ4_NL", "IQ4_XS"):
        return "q5_k" if i < n // 8 and not imatrix else new
    if p == "Q4_K_S":
        return "q5_k" if i < n // 8 else new
    return new  # Q4_0/Q5_0's rule needs an importance matrix
