"""decode_floor and sweep: hand-derived values, published figures, broadcasting, laws."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode import Accelerator, InvalidValueError, RECORD_KEYS, decode_floor, sweep
from roofline_decode.floors.peaks import NO_COMPUTE_PEAK
from roofline_decode.floors.results import EXTRA_RECORD_KEYS

TERA = Accelerator(name="1 TB/s", memory_bandwidth=1e12, memory_capacity=80e9, peak_flops={"bf16": 1e15})
# The Scaling Book's TPU v5e: 1.97e14 bf16 FLOP/s, 8.2e11 B/s
TPU_V5E = Accelerator(name="TPU v5e (Scaling Book)", memory_bandwidth=8.2e11, memory_capacity=16e9,
                      peak_flops={"bf16": 1.97e14})


def test_llama2_7b_batch1_hand_derived():
    r = decode_floor("llama-2-7b", TERA, batch=1, context=0)
    # all parameters but the 32000 x 4096 input table, plus the one gathered row, 2 B each
    weights = (6_738_415_616 - 32000 * 4096 + 4096) * 2
    assert float(r.weight_bytes) == weights
    assert float(r.kv_read_bytes) == 0
    assert float(r.kv_write_bytes) == 2 * 32 * 128 * 2 * 32  # one token, K and V, 32 layers
    assert float(r.step_time_s) == pytest.approx((weights + float(r.kv_write_bytes)) / 1e12)
    # matmul FLOPs: 2 per matrix parameter (lm_head included, embedding gather not)
    assert float(r.flops) == 2 * (32 * (4 * 4096**2 + 3 * 4096 * 11008) + 32000 * 4096)


def test_kv_read_is_linear_in_context_and_batch():
    r = decode_floor("llama-3.1-70b", TERA, batch=[[1], [4]], context=[0, 1000, 2000])
    per_token = 327_680
    np.testing.assert_array_equal(r.kv_read_bytes, np.array([[0, 1000, 2000], [0, 4000, 8000]]) * per_token)


def test_scaling_book_critical_batch_about_240():
    # Austin et al., "How to Scale Your Model" (2025), inference chapter: B_crit ~ 240 for v5e bf16
    r = decode_floor("llama-3.1-8b", TPU_V5E, batch=1, context=0)
    assert 235 < float(r.critical_batch) < 250
    assert TPU_V5E.ridge_point("bf16") == pytest.approx(240.24, rel=1e-3)


def test_critical_batch_separates_memory_and_compute_bound():
    r0 = decode_floor("llama-3.1-8b", "h100-sxm", batch=1, context=0)
    b_star = float(r0.critical_batch)
    below = decode_floor("llama-3.1-8b", "h100-sxm", batch=np.floor(b_star), context=0)
    above = decode_floor("llama-3.1-8b", "h100-sxm", batch=np.ceil(b_star), context=0)
    assert str(below.bound) == "memory" and str(above.bound) == "compute"


def test_long_context_makes_compute_bound_unreachable():
    # Each sequence's KV read costs more time than its FLOPs at 32k context on an H100
    r = decode_floor("llama-3.1-8b", "h100-sxm", batch=1, context=32768)
    assert np.isinf(r.critical_batch)


def test_h100_batch1_is_memory_bound_and_about_5ms():
    r = decode_floor("llama-3.1-8b", "h100-sxm", batch=1, context=4096)
    assert str(r.bound) == "memory"
    assert float(r.step_time_s) == pytest.approx(float(r.bytes_total) / 3.35e12)
    assert 4e-3 < float(r.step_time_s) < 6e-3


def test_mistral_sliding_window_caps_kv_read():
    r = decode_floor("mistral-7b-v0.1", TERA, batch=1, context=[4096, 100_000])
    assert r.kv_read_bytes[0] == r.kv_read_bytes[1]


def test_broadcasting_and_records():
    r = decode_floor("llama-3.1-8b", "a100-80gb-sxm", batch=[[1], [8], [64]], context=[512, 4096])
    assert r.shape == (3, 2)
    records = r.to_records()
    assert len(records) == 6
    assert all(tuple(rec) == RECORD_KEYS + EXTRA_RECORD_KEYS for rec in records)
    assert records[0]["batch"] == 1 and records[0]["context"] == 512
    np.testing.assert_allclose(r.tokens_per_s, r.batch / r.step_time_s)
    np.testing.assert_allclose(r.per_sequence_tokens_per_s, 1 / r.step_time_s)


def test_breakdown_adds_up():
    r = decode_floor("qwen2.5-7b", "h100-sxm", batch=[1, 16], context=2048)
    parts = r.breakdown()
    np.testing.assert_allclose(sum(parts["bytes"].values()), r.bytes_total)
    np.testing.assert_allclose(sum(parts["flops"].values()), r.flops)


def test_sweep_matches_decode_floor():
    result = sweep(["llama-3.1-8b", "qwen2.5-7b"], ["a100-80gb-sxm", "h100-sxm"], batch=[1, 32], context=[0, 8192])
    assert len(result) == 4 and len(result.to_records()) == 16
    single = decode_floor("qwen2.5-7b", "h100-sxm", batch=[[1], [32]], context=[0, 8192])
    np.testing.assert_allclose(result[3].step_time_s, single.step_time_s)


def test_table_and_html_render():
    r = decode_floor("llama-3.1-8b", "h100-sxm", batch=[1, 8], context=4096)
    text = str(r)
    assert "step ms" in text and "Llama-3.1-8B" in text and "memory" in text
    assert "<table>" in r._repr_html_()


def test_sparse_uses_sparse_peak():
    dense = decode_floor("llama-3.1-8b", "h100-sxm", batch=1024, context=0)
    sparse = decode_floor("llama-3.1-8b", "h100-sxm", batch=1024, context=0, sparse=True)
    assert float(sparse.compute_time_s) == pytest.approx(float(dense.compute_time_s) / 2)


def test_device_without_published_peak_keeps_memory_bound():
    apple = rd.load_accelerator("m5-max")
    r = decode_floor("llama-3.1-8b", apple, batch=[1, 4096], context=0)
    np.testing.assert_array_equal(r.compute_time_s, 0)
    assert list(r.bound) == ["memory", "memory"]
    # not defined (NaN), never +inf: inf means "memory-bound at any batch" on a device with a peak
    assert np.isnan(r.peak_flops) and np.isnan(r.ridge_point) and np.isnan(r.critical_batch).all()
    assert r.compute_precision == NO_COMPUTE_PEAK
    assert r.notes == ("no compute peak published for m5-max (bf16 weights): compute time not bounded, "
                       "the floor is the memory time",)


def test_sparse_falls_back_to_the_dense_peak_and_says_so():
    # the MI300X publishes no sparse peak: before, sparse=True used an infinite peak (2.94 ms,
    # "memory"); the dense peak gives 47.0 ms, compute-bound
    dense = decode_floor("llama-3.1-8b", "mi300x", batch=4096, context=0)
    sparse = decode_floor("llama-3.1-8b", "mi300x", batch=4096, context=0, sparse=True)
    assert float(sparse.step_time_s) == float(dense.step_time_s)
    assert round(float(sparse.step_time_s) * 1e3, 1) == 47.0 and str(sparse.bound) == "compute"
    assert sparse.notes == ("no sparse bf16 peak published for mi300x: the dense bf16 peak is used",)
    assert dense.notes == ()
    # with a sparse peak published, no note
    assert decode_floor("llama-3.1-8b", "h100-sxm", batch=4096, context=0, sparse=True).notes == ()


def test_precision_fallback_is_noted():
    r = decode_floor(rd.load_model("llama-3.1-8b", weights="fp8"), "a100-80gb-sxm")
    assert r.compute_precision == "bf16"
    assert r.notes == ("fp8_e4m3 weights compute in bf16: no fp8 peak published for a100-80gb-sxm",)


@pytest.mark.parametrize(
    "kwargs, field",
    [(dict(batch=-1), "batch"), (dict(batch=0), "batch"), (dict(batch=float("nan")), "batch"),
     (dict(context=-5), "context"), (dict(context=float("inf")), "context"), (dict(batch=[]), "batch"),
     (dict(batch="many"), "batch")],
)
def test_bad_grid_values_raise_invalid_value(kwargs, field):
    with pytest.raises(InvalidValueError) as info:
        decode_floor("llama-3.1-8b", "h100-sxm", **kwargs)
    assert str(info.value).startswith(field)


# --- laws (hypothesis) ------------------------------------------------------------------------
MODELS = ["llama-2-7b", "llama-3.1-8b", "mistral-7b-v0.1", "qwen2.5-7b"]
batches = st.integers(1, 4096)
contexts = st.integers(0, 200_000)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MODELS), batches, batches, contexts)
def test_step_time_non_decreasing_in_batch(model, b1, b2, t):
    lo, hi = sorted((b1, b2))
    r = decode_floor(model, "h100-sxm", batch=[lo, hi], context=t)
    assert r.step_time_s[0] <= r.step_time_s[1]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MODELS), batches, contexts, contexts)
def test_step_time_non_decreasing_in_context(model, b, t1, t2):
    lo, hi = sorted((t1, t2))
    r = decode_floor(model, "h100-sxm", batch=b, context=[lo, hi])
    assert r.step_time_s[0] <= r.step_time_s[1]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(MODELS), batches, contexts,
       st.sampled_from(["q4_0", "int4-g32", "fp8", "int8", "bf16", "fp32"]), st.sampled_from(["fp8", "bf16", "fp32"]))
def test_more_bytes_per_element_never_faster(model, b, t, weights, kv):
    base = rd.load_model(model, weights=weights, kv=kv)
    wider = base.with_precision(weights="fp32", kv="fp32")
    # keep the compute precision fixed so only bytes change
    gpu = Accelerator(name="flat", memory_bandwidth=2e12, memory_capacity=1e11,
                      peak_flops={p: 5e14 for p in ("fp32", "bf16", "fp16", "fp8", "fp4")})
    assert decode_floor(wider, gpu, b, t).step_time_s >= decode_floor(base, gpu, b, t).step_time_s


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MODELS), batches, contexts, st.floats(1e11, 1e13), st.floats(1.0, 10.0))
def test_more_bandwidth_is_never_slower(model, b, t, bandwidth, factor):
    slow = Accelerator(name="slow", memory_bandwidth=bandwidth, memory_capacity=1e11, peak_flops={"bf16": 5e14},
                       plausibility_checks=False)  # a law of the arithmetic, up to 1e14 B/s
    fast = slow.replace(name="fast", memory_bandwidth=bandwidth * factor)
    assert decode_floor(model, fast, b, t).step_time_s <= decode_floor(model, slow, b, t).step_time_s


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MODELS), batches, contexts)
def test_tokens_per_second_is_batch_over_step(model, b, t):
    r = decode_floor(model, "mi300x", b, t)
    assert float(r.tokens_per_s) == pytest.approx(b / float(r.step_time_s), rel=1e-12)
    assert float(r.step_time_s) == max(float(r.memory_time_s), float(r.compute_time_s))


def test_critical_batch_past_the_vocabulary():
    # A tiny vocabulary: the embedding gather saturates at B = V, after which each sequence
    # adds only its KV bytes, and the step can still turn compute-bound.
    model = rd.Model(name="tiny-vocab", num_layers=1, hidden_size=256, num_heads=1, num_kv_heads=1, head_dim=32,
                     intermediate_size=256, vocab_size=1000, mlp_gated=False, norms_per_layer=0, sliding_window=16,
                     weight_format="fp8", kv_format="fp32")
    device = Accelerator(name="d", memory_bandwidth=5e10, memory_capacity=8e9, peak_flops={"fp8": 8.2e13})
    b_star = float(decode_floor(model, device, 1, 0).critical_batch)
    assert 1000 < b_star < np.inf
    r = decode_floor(model, device, batch=[b_star * 0.999, b_star * 1.001], context=0)
    assert list(r.bound) == ["memory", "compute"]


def test_moe_critical_batch_with_most_experts_untouched():
    """An MoE whose critical batch lies where only ~150 of 256 experts are read (issue 22).

    The bundled MoE models reach B* with nearly every expert touched, so the bisection's upper
    bracket (every expert read) is already B*; here it is not (385 vs 226.7), and a bisection
    stopped early misses B* by up to 385 / 2**halvings.

    Hand derivation, bf16 weights and KV (2 B), context 0, one layer, d = 64, one query and
    one KV head of d_h = 64, V = 512, E = 256 experts of width d_e = 1024 (gated), k = 1:

    * streamed parameters: q, k, v, o 4·64·64 = 16384; norms 2·64 + final 64 = 192; router
      64·256 = 16384; lm_head 512·64 = 32768; total 65728 -> 131456 B;
    * one expert 3·64·1024 = 196608 parameters -> 393216 B, read U(B) = 256·(1 − (255/256)^B)
      times (DESIGN.md §4);
    * per sequence: its gathered embedding row 64·2 = 128 B and its new K and V 2·64·2 = 256 B;
    * FLOPs = 2·B·(16384 + 16384 + 196608 + 32768) = 524288·B (context 0: no attention scores).

    On a device with ridge F / BW = 2 FLOP/B the step is compute-bound iff FLOPs >= 2·bytes:
    524288·B >= 2·(131456 + 393216·U(B) + 384·B), i.e.
    g(B) = 261760·B − 131456 − 393216·256·(1 − (255/256)^B) >= 0.
    g is convex with g(0) < 0, so it has one root, found by bisecting g (in plain Python,
    200 halvings of [1, 1000]): B* = 226.7326164917551, where U(B*) = 150.6 experts.
    """
    model = rd.Model(name="unsaturated-moe", num_layers=1, hidden_size=64, num_heads=1, num_kv_heads=1, head_dim=64,
                     intermediate_size=0, vocab_size=512, num_experts=256, num_experts_per_token=1,
                     moe_intermediate_size=1024)
    # a small SoC: 50 GB/s, 100 GFLOP/s bf16, ridge 2 FLOP/B
    device = Accelerator(name="ridge-2", memory_bandwidth=5e10, memory_capacity=8e9, peak_flops={"bf16": 1e11})
    b_star = 226.7326164917551

    def g(b):
        return 261760 * b - 131456 - 393216 * 256 * (1 - (255 / 256) ** b)

    assert abs(g(b_star)) < 1e-6 * 261760 * b_star  # the hand value solves the hand equation
    assert 256 * (1 - (255 / 256) ** b_star) == pytest.approx(150.6, abs=0.05)  # far from all 256
    # the hand terms are the library's terms
    one = decode_floor(model, device, batch=1, context=0)
    u1 = 1.0  # U(1) = k
    assert float(one.weight_bytes) == 131456 + 393216 * u1 + 128
    assert float(one.kv_write_bytes) == 256 and float(one.flops) == 524288
    assert device.ridge_point("bf16") == 2.0

    r = decode_floor(model, device, batch=[b_star * (1 - 1e-6), b_star * (1 + 1e-6)], context=0)
    assert float(r.critical_batch[0]) == pytest.approx(b_star, rel=1e-9)
    assert list(r.bound) == ["memory", "compute"]
