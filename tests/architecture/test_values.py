"""Published and hand-derived values of the architecture features (DESIGN.md §4)."""

from __future__ import annotations

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode import Accelerator, decode_floor
from roofline_decode import formulas as f

TERA = Accelerator(name="1 TB/s, 1 PFLOP/s", memory_bandwidth=1e12, memory_capacity=1e12,
                   peak_flops={"bf16": 1e15, "fp8": 2e15})


def test_deepseek_v3_mla_kv_bytes_per_token():
    # Issue 3 / DeepSeek-V2 paper §2.1.2: (kv_lora_rank 512 + rope 64) x 2 B x 61 layers
    m = rd.load_model("deepseek-v3", kv="bf16")
    assert m.kv_bytes_per_token == 61 * 576 * 2 == 70_272
    # treated as multi-head attention (128 heads of 192 + 128) it would be 71x larger
    mha = 61 * 128 * (192 + 128) * 2
    assert mha / m.kv_bytes_per_token == pytest.approx(71.1, abs=0.05)


def test_llama_3_1_70b_kv_bytes_per_token():
    # 80 layers x 2 (K, V) x 8 KV heads x 128 x 2 B (GQA: not 64 query heads)
    assert rd.load_model("llama-3.1-70b").kv_bytes_per_token == 327_680


def test_gemma_2_9b_kv_read_caps_sliding_layers():
    # 21 global layers read T positions, 21 sliding layers min(T, 4096); 8 KV heads x 256 x 2 x 2 B
    per_layer = 2 * 8 * 256 * 2
    r = decode_floor("gemma-2-9b", TERA, batch=2, context=[1000, 8192, 32768])
    expected = 2 * per_layer * np.array([42 * 1000, 21 * 8192 + 21 * 4096, 21 * 32768 + 21 * 4096])
    np.testing.assert_array_equal(r.kv_read_bytes, expected)
    # attention FLOPs follow the same positions: 4 B H_q d_h T_eff per layer
    attn = r.breakdown()["flops"]["attention_scores"]
    np.testing.assert_array_equal(attn, 4 * 2 * 16 * 256 * expected / (2 * per_layer))


def test_mistral_every_layer_slides():
    r = decode_floor("mistral-7b-v0.1", TERA, batch=1, context=[4096, 100_000])
    assert r.kv_read_bytes[0] == r.kv_read_bytes[1] == 4096 * 32 * 2 * 8 * 128 * 2


def test_mla_absorbed_attention_flops():
    # 2 B H_q T (2 r_kv + d_rope) per layer: DeepSeek-V3 at B = 1, T = 1000
    r = decode_floor("deepseek-v3", TERA, batch=1, context=1000)
    assert float(r.breakdown()["flops"]["attention_scores"]) == 2 * 128 * 1000 * (2 * 512 + 64) * 61


def test_mixtral_batch_one_reads_exactly_k_experts():
    m = rd.load_model("mixtral-8x7b")
    r = decode_floor(m, TERA, batch=1, context=0)
    expert = 3 * 4096 * 14336
    dense_part = m.parameter_count - 32 * 8 * expert - 32000 * 4096  # all but experts and input table
    assert float(r.weight_bytes) == 2 * (dense_part + 4096 + 32 * 2 * expert)
    # FLOPs use k = 2 experts per token at every batch
    r8 = decode_floor(m, TERA, batch=8, context=0)
    assert float(r8.flops) == 8 * float(r.flops)
    # bytes use U(8) = 8 (1 - (3/4)^8) = 7.199 experts per layer
    u8 = 8 * (1 - 0.75**8)
    assert float(r8.weight_bytes) == pytest.approx(2 * (dense_part + 8 * 4096 + 32 * u8 * expert))


def test_deepseek_v3_counts_shared_experts_and_dense_layers_every_step():
    m = rd.load_model("deepseek-v3", weights="bf16")
    parts = decode_floor(m, TERA, batch=1, context=0).breakdown()["bytes"]
    d, expert = 7168, 3 * 7168 * 2048
    dense_mlps, shared, routers = 3 * 3 * d * 18432, 58 * expert, 58 * d * 256
    assert float(parts["mlp_weights"]) == 2 * (dense_mlps + shared + routers + 58 * 8 * expert)


def test_gpt_oss_experts_are_read_in_mxfp4():
    m = rd.load_model("gpt-oss-120b")
    r = decode_floor(m, TERA, batch=1, context=0)
    expert = m.expert_parameters
    assert expert == 3 * 2880 * 2880 + 3 * 2880  # gate/up/down with biases
    routed = float(r.breakdown()["bytes"]["mlp_weights"]) - 2 * 36 * (2880 * 128 + 128)  # minus bf16 routers
    assert routed == pytest.approx(4.25 / 8 * 36 * 4 * expert)
    assert m.weight_bytes == pytest.approx(
        (m.parameter_count - 36 * 128 * expert) * 2 + 36 * 128 * expert * 4.25 / 8)


def test_expected_experts_touched_values():
    assert f.expected_experts_touched(256, 8, 1) == pytest.approx(8)
    assert float(f.expected_experts_touched(256, 8, 64)) == pytest.approx(256 * (1 - (248 / 256) ** 64))
    assert float(f.expected_experts_touched(8, 2, 10_000)) == pytest.approx(8)


@pytest.mark.parametrize("model_id", ["deepseek-v3", "mixtral-8x7b", "gpt-oss-20b", "qwen3-30b-a3b"])
def test_moe_critical_batch_by_bisection_separates_the_regimes(model_id):
    r = decode_floor(model_id, "h100-sxm", batch=1, context=0)
    b_star = float(r.critical_batch)
    assert np.isfinite(b_star) and b_star > 1
    around = decode_floor(model_id, "h100-sxm", batch=[b_star * 0.999, b_star * 1.001], context=0)
    assert list(around.bound) == ["memory", "compute"]


def test_sliding_layers_cap_the_resident_kv_cache():
    # Gemma-3-1B: 4 global layers keep T tokens, 22 sliding layers at most 512 (1 KV head of 256, bf16)
    m = rd.load_model("gemma-3-1b")
    m_kv = m.kv_bytes_per_token_per_layer
    assert m_kv == 2 * 1 * 256 * 2
    resident = f.kv_cache_bytes(3, 32768, m_kv, m.num_global_layers, m.num_sliding_layers, m.window)
    assert resident == 3 * m_kv * (4 * 32768 + 22 * 512)
    assert resident < f.kv_cache_bytes(3, 32768, m_kv, m.num_layers) / 5
