"""GGML block types and llama.cpp mixtures (issue 14 item 2)."""

from __future__ import annotations

import pytest

import roofline_decode as rd
from roofline_decode.errors import InvalidValueError
from roofline_decode.formats.ggml_types import GGML_TYPES
from roofline_decode.formats.llama_quant import gguf_tensor_layout, mixture_tensor_types
from roofline_decode.formats import get_format

GiB = 2**30


@pytest.mark.parametrize("name, block, nbytes, bits", [
    # ggml/src/ggml-common.h (llama.cpp): sizeof(block_*) and QK_K = 256; bpw as in its comments
    ("q4_1", 32, 20, 5.0), ("q5_0", 32, 22, 5.5), ("q5_1", 32, 24, 6.0),
    ("q2_k", 256, 84, 2.625), ("q3_k", 256, 110, 3.4375), ("q4_k", 256, 144, 4.5),
    ("q5_k", 256, 176, 5.5), ("q6_k", 256, 210, 6.5625),
    ("iq1_s", 256, 50, 1.5625), ("iq1_m", 256, 56, 1.75), ("iq2_xxs", 256, 66, 2.0625),
    ("iq2_xs", 256, 74, 2.3125), ("iq2_s", 256, 82, 2.5625), ("iq3_xxs", 256, 98, 3.0625),
    ("iq3_s", 256, 110, 3.4375), ("iq4_nl", 32, 18, 4.5), ("iq4_xs", 256, 136, 4.25),
    ("tq1_0", 256, 54, 1.6875), ("tq2_0", 256, 66, 2.0625), ("mxfp4", 32, 17, 4.25),
    ("q4_0", 32, 18, 4.5), ("q8_0", 32, 34, 8.5),
])
def test_ggml_block_sizes(name, block, nbytes, bits):
    t = GGML_TYPES[name]
    assert (t.block_size, t.type_size, t.bits_per_element) == (block, nbytes, bits)
    assert get_format(name.upper()).bits_per_element == bits


def test_layout_counts_every_parameter_once():
    for model_id in rd.list_models():
        m = rd.load_model(model_id)
        layout = gguf_tensor_layout(m)
        for group, count in m.group_parameters.items():
            assert sum(t.elements for t in layout if t.group == group) == count, (model_id, group)


@pytest.mark.parametrize("model_id, preset, gib", [
    # TheBloke/Llama-2-7B-GGUF: llama-2-7b.Q4_0.gguf 3.83 GB = 3.56 GiB, Q8_0 7.16 GB = 6.67 GiB
    ("llama-2-7b", "Q4_0", 3.56), ("llama-2-7b", "Q8_0", 6.67),
    # QuantFactory / bartowski Meta-Llama-3-8B(-Instruct) Q4_K_M: 4.92 GB = 4.58 GiB (3.1-8B: same shapes)
    ("llama-3.1-8b", "Q4_K_M", 4.58),
])
def test_published_gguf_sizes(model_id, preset, gib):
    m = rd.load_model(model_id, weights=preset)
    assert m.weight_bytes / GiB == pytest.approx(gib, abs=0.005)


def test_q4_k_m_layout_of_llama_3_8b():
    types = mixture_tensor_types("Q4_K_M", rd.load_model("llama-3.1-8b"))
    # use_more_bits over 32 layers: 0-3, 28-31 and every third from 6: 6, 9, ..., 27 -> 16 layers
    more = [i for i in range(32) if types[f"blk.{i}.attn_v.weight"] == "q6_k"]
    assert more == [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31]
    assert [i for i in range(32) if types[f"blk.{i}.ffn_down.weight"] == "q6_k"] == more
    assert types["token_embd.weight"] == "q4_k" and types["output.weight"] == "q6_k"
    assert types["blk.0.attn_norm.weight"] == "f32" and types["blk.7.attn_q.weight"] == "q4_k"


def test_preset_reads_per_step_by_group():
    m = rd.load_model("llama-3.1-8b", weights="Q4_K_M")
    r = rd.decode_floor(m, "h100-sxm", batch=1, context=0)
    layout = gguf_tensor_layout(m)
    types = mixture_tensor_types("Q4_K_M", m, layout)
    total = sum(GGML_TYPES[types[t.name]].tensor_bytes(t.elements) for t in layout)
    embed = GGML_TYPES["q4_k"].tensor_bytes(128256 * 4096)
    # everything but the embedding table, plus one q4_k row of 4096 (16 blocks of 144 B)
    assert float(r.weight_bytes) == pytest.approx(total - embed + 16 * 144, rel=1e-12)


def test_fallback_for_rows_not_a_multiple_of_256():
    # gpt-oss: d = 2880 = 11.25 x 256: q4_k rows fall back to q5_0, q6_k to q8_0
    types = mixture_tensor_types("Q4_K_M", rd.load_model("gpt-oss-20b"))
    assert types["blk.1.attn_q.weight"] == "q5_0" and types["output.weight"] == "q8_0"


def test_lower_case_is_one_format_and_unknown_preset():
    assert rd.load_model("llama-2-7b", weights="q4_0").has_uniform_weights
    assert not rd.load_model("llama-2-7b", weights="Q4_0").has_uniform_weights
    with pytest.raises(InvalidValueError, match="Q4_K_M"):
        mixture_tensor_types("Q4_K_X", rd.load_model("llama-2-7b"))
