"""Compute precision per format and tensor group (issue 21 item 1).

Each FLOP group runs at its own precision and the compute times add: the weight matrices at
the weight format's, routed experts at the expert format's, attention at the KV format's.
GGML block formats multiply on int8 (llama.cpp MMQ) where the device has an int8 peak.
"""

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode import Accelerator, decode_floor

H100_BF16, H100_FP8, H100_INT8 = 989.5e12, 1979e12, 1979e12  # dense, hardware_specs/nvidia/h100-sxm.toml


def test_deepseek_v3_attends_its_bf16_cache_at_bf16_and_multiplies_fp8_weights_at_fp8():
    r = decode_floor("deepseek-v3", "h100-sxm", batch=1, context=4096)
    # the checkpoint keeps its router and lm_head in bf16 (quantization_config), the KV cache is bf16
    assert r.compute_precisions == {"attention": "fp8", "mlp": "fp8", "shared_experts": "fp8", "router": "bf16",
                                    "experts": "fp8", "lm_head": "bf16", "attention_scores": "bf16"}
    # by hand: 2 FLOPs per matrix parameter a token uses (36,624,596,992 in all; the router
    # 58 · 7168 · 256 = 106,430,464 and the lm_head 129,280 · 7168 = 926,679,040 in bf16);
    # MLA absorbed attention 2·B·H_q·(2 r_kv + d_rope)·T·L
    bf16_matrices = 58 * 7168 * 256 + 129_280 * 7168
    fp8_matrices = 36_624_596_992 - bf16_matrices
    attention = 2 * 1 * 128 * (2 * 512 + 64) * 4096 * 61
    assert float(r.flops) == 2 * 36_624_596_992 + attention
    expected = 2 * fp8_matrices / H100_FP8 + (2 * bf16_matrices + attention) / H100_BF16  # 36.0 + 72.4 µs
    assert float(r.compute_time_s) == pytest.approx(expected, rel=1e-12)
    assert float(r.compute_time_s) == pytest.approx(108.39e-6, rel=1e-4)  # was 72.18 µs, all at fp8
    # the effective peak is FLOPs / compute time, and the ridge that peak over the bandwidth
    assert float(r.peak_flops) == pytest.approx(float(r.flops) / expected, rel=1e-12)
    assert float(r.ridge_point) == pytest.approx(float(r.peak_flops) / 3.35e12, rel=1e-12)
    assert r.compute_precision == (
        "fp8 (attention projections, mlp, shared experts, routed experts), bf16 (router, lm_head, attention scores)")


def test_an_fp8_cache_attends_at_fp8():
    r = decode_floor(rd.load_model("deepseek-v3", weights="fp8").with_precision(kv="fp8"), "h100-sxm",
                     batch=1, context=4096)  # every group in fp8
    assert r.compute_precision == "fp8" and r.peak_flops == H100_FP8


def test_gpt_oss_mxfp4_experts_run_at_fp4_or_fp8_and_the_rest_at_bf16():
    model = rd.load_model("gpt-oss-120b")
    g = model.parameter_groups
    routed = model.num_moe_layers * model.num_experts_per_token * g["expert_matrix"]  # 36 layers · 4 experts
    h100 = decode_floor(model, "h100-sxm", batch=8, context=0)
    assert h100.compute_precisions == {"attention": "bf16", "router": "bf16", "experts": "fp8", "lm_head": "bf16",
                                       "attention_scores": "bf16"}
    rest = model.matmul_parameters_per_token - routed
    expected = 2 * 8 * rest / H100_BF16 + 2 * 8 * routed / H100_FP8
    assert float(h100.compute_time_s) == pytest.approx(expected, rel=1e-12)
    b200 = decode_floor(model, "b200", batch=8, context=0)
    assert b200.compute_precisions["experts"] == "fp4"
    assert float(b200.compute_time_s) == pytest.approx(2 * 8 * rest / 2250e12 + 2 * 8 * routed / 9000e12, rel=1e-12)


@pytest.mark.parametrize("weights", ["q4_0", "q8_0"])
def test_ggml_formats_compute_on_int8_twice_the_bf16_peak(weights):
    bf16 = decode_floor("llama-3.1-8b", "h100-sxm", batch=1024, context=0)
    ggml = decode_floor(rd.load_model("llama-3.1-8b", weights=weights), "h100-sxm", batch=1024, context=0)
    assert {ggml.compute_precisions[g] for g in ("attention", "mlp", "lm_head")} == {"int8"}
    assert float(ggml.flops) == float(bf16.flops)
    # at T = 0 there is no attention: every FLOP at the int8 peak, half the bf16 compute time
    assert float(ggml.compute_time_s) == pytest.approx(float(bf16.compute_time_s) * H100_BF16 / H100_INT8, rel=1e-12)
    assert float(ggml.compute_time_s) == pytest.approx(float(bf16.compute_time_s) / 2, rel=1e-12)


def test_ggml_fallback_chain_int8_then_fp16_then_none():
    fp16_only = Accelerator(name="fp16-only", memory_bandwidth=1e12, memory_capacity=8e10,
                            peak_flops={"fp16": 2e14, "bf16": 1e14})
    r = decode_floor(rd.load_model("llama-3.1-8b", weights="q4_0"), fp16_only, batch=64, context=0)
    assert r.compute_precisions["mlp"] == "fp16" and r.group_peak_flops["mlp"] == 2e14
    apple = decode_floor(rd.load_model("llama-3.1-8b", weights="q4_0"), "m5-max", batch=64, context=0)
    assert not apple.compute_bounded and float(apple.compute_time_s) == 0


def test_single_precision_models_keep_their_numbers_bit_for_bit():
    r = decode_floor("llama-3.1-8b", "h100-sxm", batch=[1, 64, 4096], context=[[0], [4096]])
    assert r.compute_precision == "bf16" and r.peak_flops == H100_BF16
    assert isinstance(r.peak_flops, float) and isinstance(r.ridge_point, float)
    np.testing.assert_array_equal(r.compute_time_s, r.flops / H100_BF16)


@pytest.mark.parametrize("model, weights, device", [
    ("llama-3.1-8b", "fp8", "h100-sxm"), ("llama-3.1-8b", "q4_0", "a100-80gb-sxm"),
    ("deepseek-v3", None, "h100-sxm"), ("gpt-oss-20b", None, "h100-sxm"), ("gpt-oss-120b", None, "b200"),
])
def test_critical_batch_stays_exact_with_summed_compute_time(model, weights, device):
    spec = rd.load_model(model, weights=weights)
    contexts = np.array([0.0, 64.0, 256.0])
    critical = decode_floor(spec, device, batch=1, context=contexts).critical_batch
    for b, t in zip(critical, contexts):
        if not np.isfinite(b):
            continue
        at = decode_floor(spec, device, batch=b, context=t)
        assert float(at.compute_time_s) == pytest.approx(float(at.memory_time_s), rel=1e-9)
        below = decode_floor(spec, device, batch=0.99 * b, context=t)
        assert str(below.bound) == "memory"


def test_bound_is_intensity_against_the_effective_ridge():
    r = decode_floor("deepseek-v3", "h100-sxm", batch=[1, 256, 4096, 16384], context=[[0], [2048], [32768]])
    assert r.ridge_point.shape == r.shape
    compute_bound = r.arithmetic_intensity >= r.ridge_point
    np.testing.assert_array_equal(compute_bound, r.bound == "compute")
    # the effective peak depends on the context only (every FLOP group is linear in B)
    assert np.all(r.peak_flops == r.peak_flops[:, :1])


@pytest.mark.parametrize("weights, precision", [
    ("q4_k", "int8"), ("q6_k", "int8"), ("iq2_xxs", "int8"), ("iq4_xs", "int8"), ("iq4_nl", "int8"),
    ("iq1_m", "fp16"), ("tq1_0", "fp16"), ("tq2_0", "fp16"),
])
def test_ggml_types_compute_as_llama_cpp_mmq_does(weights, precision):
    # mmq.cu ggml_cuda_should_use_mmq: K-quants and i-quants but iq1_m multiply on int8; the
    # others are dequantised to fp16
    fmt = rd.get_format(weights)
    assert fmt.compute_precision == precision
    assert fmt.compute_fallbacks == (("int8", "fp16", "bf16") if precision == "int8" else ("fp16", "bf16"))


def test_q4_k_m_prefill_on_the_int8_peak():
    # Llama-3.1-8B Q4_K_M, 4096 prompt tokens on an RTX 4090: every weight group mixes MMQ types
    # (q4_k, q6_k), so the matrices run at the int8 peak; was bf16 (372.7 ms), now 113.2 ms
    m = rd.load_model("llama-3.1-8b", weights="Q4_K_M")
    assert {m.group_format(g).compute_precision for g in ("attention", "mlp", "lm_head")} == {"int8"}
    r = rd.prefill_floor(m, "rtx-4090", prompt=4096)
    assert float(r.ttft_s) == pytest.approx(0.11318, rel=1e-4)
