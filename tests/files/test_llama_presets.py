"""Every llama-quantize preset, counted by hand on bundled models (issue 28 item 3).

The rules are llama.cpp's ``llama_tensor_get_type`` (src/llama-quant.cpp); the hand counts below
follow them tensor category by tensor category.
"""

from __future__ import annotations

import pytest

import roofline_decode as rd
from roofline_decode.formats.ggml_types import GGML_TYPES
from roofline_decode.formats.llama_presets import FTYPE_NAMES, MIXTURES
from roofline_decode.formats.llama_quant import mixture_formats, mixture_tensor_types

# Llama-3.1-8B: d 4096, 32 layers, 32 query / 8 KV heads of 128 (GQA 4), d_ff 14336, V 128256, untied
D, L, KV, FF, V = 4096, 32, 1024, 14336, 128256
SQUARE, NARROW, WIDE, TABLE = D * D, D * KV, D * FF, V * D
NORMS = (2 * L + 1) * D * 4  # attn_norm, ffn_norm per layer and output_norm, f32


def _b(kind: str, elements: int) -> int:
    return GGML_TYPES[kind].tensor_bytes(elements)


def _llama_8b(embd: str, out: str, q: str, k: str, v: str, o: str, gate_up: str, down: list[str]) -> int:
    per_layer = _b(q, SQUARE) + _b(k, NARROW) + _b(v, NARROW) + _b(o, SQUARE) + 2 * _b(gate_up, WIDE)
    return _b(embd, TABLE) + _b(out, TABLE) + L * per_layer + sum(_b(t, WIDE) for t in down) + NORMS


FIRST_EIGHTH = ["x"] * 4 + ["y"] * 28  # i < n_layer / 8 = 4


def _first(a: str, b: str) -> list[str]:
    return [a if t == "x" else b for t in FIRST_EIGHTH]


HAND = {
    # plain presets: the default type everywhere, the output q6_k (Q8_0 keeps q8_0)
    "Q6_K": _llama_8b("q6_k", "q6_k", "q6_k", "q6_k", "q6_k", "q6_k", "q6_k", ["q6_k"] * L),
    "Q8_0": _llama_8b("q8_0", "q8_0", "q8_0", "q8_0", "q8_0", "q8_0", "q8_0", ["q8_0"] * L),
    "Q3_K_S": _llama_8b("q3_k", "q6_k", "q3_k", "q3_k", "q3_k", "q3_k", "q3_k", ["q3_k"] * L),
    "Q5_K_S": _llama_8b("q5_k", "q6_k", "q5_k", "q5_k", "q5_k", "q5_k", "q5_k", ["q5_k"] * L),
    # Q2_K: attn_v q4_k (GQA >= 4), ffn_down and attn_output q3_k
    "Q2_K": _llama_8b("q2_k", "q6_k", "q2_k", "q2_k", "q4_k", "q3_k", "q2_k", ["q3_k"] * L),
    # Q2_K_S: attn_v q4_k (GQA >= 4), ffn_down q4_k in the first eighth
    "Q2_K_S": _llama_8b("q2_k", "q6_k", "q2_k", "q2_k", "q4_k", "q2_k", "q2_k", _first("q4_k", "q2_k")),
    # Q3_K_L: attn_v, attn_output and ffn_down q5_k
    "Q3_K_L": _llama_8b("q3_k", "q6_k", "q3_k", "q3_k", "q5_k", "q5_k", "q3_k", ["q5_k"] * L),
    # IQ2_XXS: attn_v q4_k (GQA >= 4), ffn_down q2_k in the first eighth, token_embd q2_k, output q5_k
    "IQ2_XXS": _llama_8b("q2_k", "q5_k", "iq2_xxs", "iq2_xxs", "q4_k", "iq2_xxs", "iq2_xxs",
                         _first("q2_k", "iq2_xxs")),
    # IQ1_S: as IQ2_XXS but attn_output iq2_xxs
    "IQ1_S": _llama_8b("q2_k", "q5_k", "iq1_s", "iq1_s", "q4_k", "iq2_xxs", "iq1_s", _first("q2_k", "iq1_s")),
    # IQ2_M (default iq2_s): its wide type is iq3_s; token_embd iq3_s
    "IQ2_M": _llama_8b("iq3_s", "q5_k", "iq2_s", "iq2_s", "q4_k", "iq3_s", "iq2_s", _first("iq3_s", "iq2_s")),
    # IQ3_XXS (imatrix): attn_v q4_k, attn_q/attn_k iq2_s, attn_output iq3_s, token_embd iq3_s, output q5_k
    "IQ3_XXS": _llama_8b("iq3_s", "q5_k", "iq2_s", "iq2_s", "q4_k", "iq3_s", "iq3_xxs", ["iq3_xxs"] * L),
    # IQ4_XS (no imatrix): attn_v q5_k (GQA >= 4), ffn_down q5_k in the first eighth
    "IQ4_XS": _llama_8b("iq4_xs", "q6_k", "iq4_xs", "iq4_xs", "q5_k", "iq4_xs", "iq4_xs", _first("q5_k", "iq4_xs")),
    # TQ1_0: token_embd q4_k, output q6_k
    "TQ1_0": _llama_8b("q4_k", "q6_k", "tq1_0", "tq1_0", "tq1_0", "tq1_0", "tq1_0", ["tq1_0"] * L),
}


@pytest.mark.parametrize("preset", sorted(HAND))
def test_preset_bytes_of_llama_3_1_8b_by_hand(preset):
    assert rd.load_model("llama-3.1-8b", weights=preset).weight_bytes == pytest.approx(HAND[preset], rel=1e-12)


def test_iq3_xs_gate_and_up_in_the_middle_layers():
    types = mixture_tensor_types("IQ3_XS", rd.load_model("llama-3.1-8b"))
    middle = [i for i in range(L) if types[f"blk.{i}.ffn_up.weight"] == "iq3_xxs"]
    assert middle == list(range(4, 28)) and types["blk.0.ffn_gate.weight"] == "iq3_s"
    assert types["blk.9.attn_v.weight"] == "q4_k" and types["blk.9.attn_k.weight"] == "iq3_xxs"


@pytest.mark.parametrize("preset", ["Q3_K_S", "Q4_K_M", "IQ3_M", "IQ4_XS"])
def test_eight_experts_take_q8_0_attn_v_and_q5_k_attn_output(preset):
    # Mixtral-8x7B: n_expert == 8 bumps attn_v and attn_k to q8_0, attn_output to q5_k
    types = mixture_tensor_types(preset, rd.load_model("mixtral-8x7b"))
    assert types["blk.3.attn_v.weight"] == types["blk.3.attn_k.weight"] == "q8_0"
    assert types["blk.3.attn_output.weight"] == "q5_k"


def test_low_iq_presets_with_eight_experts():
    types = mixture_tensor_types("IQ2_XXS", rd.load_model("mixtral-8x7b"))
    assert types["blk.3.attn_k.weight"] == "q4_k" and types["blk.3.attn_output.weight"] == "q5_k"
    assert types["blk.3.attn_v.weight"] == "q4_k"  # n_expert >= 4


def test_mxfp4_moe_of_gpt_oss():
    m = rd.load_model("gpt-oss-20b")
    types = mixture_tensor_types("MXFP4_MOE", m)
    assert types["blk.0.ffn_down_exps.weight"] == types["blk.0.ffn_up_exps.weight"] == "mxfp4"
    assert types["blk.0.attn_q.weight"] == types["token_embd.weight"] == types["output.weight"] == "q8_0"
    assert types["blk.0.ffn_gate_inp.weight"] == "f32"
    # the expert matrices: 32 experts x 24 layers x 3 x 2880 x 2880 at 17 B / 32 (+ f32 biases)
    experts = 24 * 32 * 3 * 2880 * 2880
    biases = 24 * 32 * (2 * 2880 + 2880)
    fmt = mixture_formats("MXFP4_MOE", m)["experts"]
    assert fmt.bits_per_element == pytest.approx((experts * 4.25 + biases * 32) / (experts + biases), rel=1e-12)


def test_every_preset_has_a_file_type_name():
    assert set(FTYPE_NAMES.values()) == set(MIXTURES)

