"""Per-tensor-group weight formats (issue 14 item 2, DESIGN.md §4b): bytes summed per group."""

from __future__ import annotations

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode import decode_floor
from roofline_decode.errors import InvalidValueError, RooflineError
from roofline_decode.formats import get_format
from roofline_decode.specs.model import WEIGHT_GROUPS


def test_group_parameters_add_up_to_the_parameter_count():
    for model_id in rd.list_models():
        m = rd.load_model(model_id)
        assert sum(m.group_parameters.values()) == m.parameter_count, model_id
        assert sum(m.streamed_groups.values()) == m.streamed_parameters, model_id


def test_one_format_for_every_group_is_the_single_format():
    m = rd.load_model("llama-3.1-8b")
    uniform = m.with_precision(weights={g: "q8_0" for g in WEIGHT_GROUPS})
    assert uniform.weight_format.name == "bf16" and not uniform.has_uniform_weights  # default unused
    assert uniform.weight_bytes == m.with_precision(weights="q8_0").weight_bytes
    a = decode_floor(uniform, "h100-sxm", batch=[1, 64], context=4096)
    b = decode_floor(m.with_precision(weights="q8_0"), "h100-sxm", batch=[1, 64], context=4096)
    np.testing.assert_array_equal(a.weight_bytes, b.weight_bytes)
    np.testing.assert_array_equal(a.critical_batch, b.critical_batch)


def test_gpt_oss_q8_0_attention_with_mxfp4_experts_by_hand():
    # ggml-org's gpt-oss GGUFs: experts in MXFP4 (4.25 bit), the rest in q8_0 (8.5 bit)
    m = rd.load_model("gpt-oss-20b", weights={"default": "q8_0", "experts": "mxfp4"})
    g = m.group_parameters
    resident = (m.parameter_count - g["experts"]) * 8.5 / 8 + g["experts"] * 4.25 / 8
    assert m.weight_bytes == pytest.approx(resident, rel=1e-15)
    r = decode_floor(m, "h100-sxm", batch=1, context=0)
    expert = m.expert_parameters * m.num_moe_layers * m.num_experts_per_token
    read = (m.streamed_parameters + m.hidden_size) * 8.5 / 8 + expert * 4.25 / 8
    assert float(r.weight_bytes) == pytest.approx(read, rel=1e-15)


def test_bf16_embedding_and_lm_head_around_q4_0_by_hand():
    m = rd.load_model("llama-3.1-8b", weights={"default": "q4_0", "embedding": "bf16", "lm_head": "bf16"})
    V, d = 128256, 4096
    r = decode_floor(m, "h100-sxm", batch=8, context=1024)
    rest = m.streamed_parameters - V * d
    assert float(r.weight_bytes) == rest * 4.5 / 8 + V * d * 2 + 8 * d * 2
    parts = r.breakdown()["bytes"]
    assert float(parts["lm_head"]) == V * d * 2 and float(parts["embedding"]) == 8 * d * 2
    assert sum(float(v) for v in parts.values()) == pytest.approx(float(r.bytes_total), rel=1e-14)
    assert m.weight_bytes == rest * 4.5 / 8 + 2 * V * d * 2
    assert "embedding bf16" in str(m)


def test_tied_lm_head_follows_the_embedding_format():
    m = rd.load_model("gemma-2-9b", weights={"default": "q4_0", "embedding": "q8_0"})
    assert m.group_format("lm_head").name == "q8_0"
    assert m.group_parameters["lm_head"] == 0
    with pytest.raises(RooflineError, match="tied"):
        rd.load_model("gemma-2-9b", weights={"embedding": "q8_0", "lm_head": "q4_0"})


def test_dict_updates_the_groups_it_names_and_a_string_replaces_all():
    m = rd.load_model("gpt-oss-20b")  # mxfp4 experts from quantization_config
    kept = m.with_precision(weights={"attention": "q8_0"})
    assert kept.group_format("experts").name == "mxfp4" and kept.group_format("attention").name == "q8_0"
    assert kept.group_format("lm_head").name == "bf16"
    assert m.with_precision(weights="q4_0").group_formats == {g: get_format("q4_0") for g in WEIGHT_GROUPS}


def test_bad_group_names_the_group():
    with pytest.raises(InvalidValueError, match="attn"):
        rd.load_model("llama-3.1-8b", weights={"attn": "q8_0"})
    with pytest.raises(RooflineError, match="tensor_formats"):
        rd.Model(name="x", num_layers=1, hidden_size=8, num_heads=1, num_kv_heads=1, head_dim=8,
                 intermediate_size=8, vocab_size=8, tensor_formats={"mlp": "q9_9"})


def test_symbolic_twin_agrees_with_per_group_formats():
    from roofline_decode.symbolic.derived import model_values, step_expressions

    m = rd.load_model("mixtral-8x7b", weights={"default": "q4_0", "lm_head": "q8_0", "experts": "q4_0"})
    batch, context = np.array([[1.0], [4.0], [300.0]]), np.array([0.0, 100.0])
    got = step_expressions(moe=True)["weight_bytes_read"].evaluate(model_values(m), batch=batch, context=context)
    r = decode_floor(m, "h100-sxm", batch=batch, context=context)
    np.testing.assert_allclose(got, r.weight_bytes, rtol=1e-12)
