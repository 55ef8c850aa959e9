"""Laws of the roofline itself: the floor, the bound flag, the critical batch, scaling."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from roofline_decode import decode_floor, symbolic

from .strategies import accelerators, batches, contexts, dense_models, models, storage_format

law = settings(max_examples=40, deadline=None)


@law
@given(models(), accelerators(), batches, contexts)
def test_step_is_the_max_of_memory_and_compute(model, device, b, t):
    r = decode_floor(model, device, b, t)
    assert r.memory_time_s <= r.step_time_s and r.compute_time_s <= r.step_time_s
    assert r.step_time_s == max(r.memory_time_s, r.compute_time_s)
    assert r.memory_time_s == r.bytes_total / device.memory_bandwidth
    assert r.bytes_total == r.weight_bytes + r.kv_read_bytes + r.kv_write_bytes


@law
@given(models(), accelerators(), batches, contexts)
def test_tokens_per_second_is_batch_over_step(model, device, b, t):
    r = decode_floor(model, device, b, t)
    assert r.tokens_per_s == pytest.approx(b / float(r.step_time_s), rel=1e-15)
    assert r.per_sequence_tokens_per_s == pytest.approx(1 / float(r.step_time_s), rel=1e-15)


@law
@given(models(), accelerators(), batches, contexts)
def test_intensity_below_ridge_iff_memory_bound(model, device, b, t):
    r = decode_floor(model, device, b, t)
    intensity, ridge = float(r.arithmetic_intensity), r.ridge_point
    assume(abs(intensity / ridge - 1) > 1e-9)  # an exact tie is decided by rounding
    assert (intensity < ridge) == (str(r.bound) == "memory")


@law
@given(models(), accelerators(), contexts, st.floats(0.01, 100.0))
def test_critical_batch_separates_the_bound(model, device, t, ratio):
    """Below B* the step is memory-bound and equals the memory time; above, compute time.
    B* = inf means memory-bound at every batch (the KV cache costs more than the FLOPs)."""
    critical = float(decode_floor(model, device, 1, t).critical_batch)
    if np.isinf(critical):
        r = decode_floor(model, device, batch=[1.0, 1e3, 1e6], context=t)
        assert (r.bound == "memory").all() and (r.step_time_s == r.memory_time_s).all()
        return
    b = critical * ratio
    assume(abs(ratio - 1) > 1e-6 and b >= 1)  # a batch is at least one sequence
    r = decode_floor(model, device, b, t)
    if b < critical:
        assert str(r.bound) == "memory" and r.step_time_s == r.memory_time_s
    else:
        assert str(r.bound) == "compute" and r.step_time_s == r.compute_time_s


@law
@given(dense_models, accelerators(), contexts)
def test_critical_batch_matches_the_symbolic_closed_form(model, device, t):
    """The closed form holds for B <= V (one embedding row per sequence).  Past B = V the
    gather saturates and ``decode_floor`` continues in the second linear regime, so there
    the numeric crossing lies at or beyond V (and may be finite where the closed form is not)."""
    numeric = float(decode_floor(model, device, 1, t).critical_batch)
    closed = float(symbolic.closed_form("critical_batch_dense").evaluate(model, device, context=t))
    if closed <= model.vocab_size:
        assert numeric == pytest.approx(closed, rel=1e-12)
    else:
        assert numeric >= model.vocab_size
        assert np.isinf(closed) or numeric <= closed


@law
@given(models(), accelerators(uniform_peaks=True), batches, contexts, st.floats(0.25, 2.0), st.floats(0.25, 2.0),
       st.floats(0.25, 4.0))
def test_scaling_bytes_and_bandwidth_together_leaves_time_unchanged(model, device, b, t, b_w, b_kv, scale):
    """Every byte is a weight byte, a KV byte or a recurrent-state byte: scale their sizes and the
    bandwidth by s and the memory time is unchanged (FLOPs and the peak do not move)."""
    base = model.replace(weight_format=storage_format(b_w), kv_format=storage_format(b_kv),
                         state_format=storage_format(b_kv), expert_weight_format=None)
    scaled = model.replace(weight_format=storage_format(b_w * scale), kv_format=storage_format(b_kv * scale),
                           state_format=storage_format(b_kv * scale), expert_weight_format=None)
    faster = device.replace(memory_bandwidth=device.memory_bandwidth * scale)
    r0, r1 = decode_floor(base, device, b, t), decode_floor(scaled, faster, b, t)
    assert float(r1.bytes_total) == pytest.approx(scale * float(r0.bytes_total), rel=1e-12)
    assert float(r1.memory_time_s) == pytest.approx(float(r0.memory_time_s), rel=1e-12)
    assert float(r1.step_time_s) == pytest.approx(float(r0.step_time_s), rel=1e-12)


@law
@given(models(), accelerators(uniform_peaks=True), batches, contexts, st.floats(0.1, 10.0))
def test_scaling_the_device_scales_time_and_keeps_the_bound(model, device, b, t, scale):
    """Peak and bandwidth both ×s: every time ÷s; the ridge point, the bound and B* stay put."""
    faster = device.replace(memory_bandwidth=device.memory_bandwidth * scale,
                            peak_flops={p: v * scale for p, v in device.peak_flops.items()})
    r0, r1 = decode_floor(model, device, b, t), decode_floor(model, faster, b, t)
    assert float(r1.step_time_s) == pytest.approx(float(r0.step_time_s) / scale, rel=1e-12)
    assert r1.ridge_point == pytest.approx(r0.ridge_point, rel=1e-12)
    assume(abs(float(r0.memory_time_s / r0.compute_time_s) - 1) > 1e-9)
    assert str(r1.bound) == str(r0.bound)
    c0, c1 = float(r0.critical_batch), float(r1.critical_batch)
    assert (np.isinf(c0) and np.isinf(c1)) or c1 == pytest.approx(c0, rel=1e-9)
