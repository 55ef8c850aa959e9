"""The scalar fast path of decode_floor (issue 18) returns exactly what the general path does:
every field, with the same types, values (bit for bit), dtypes and flags; and Newton's critical
batch of an MoE model under uniform routing is the bisection's answer."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode.floors.critical_batch import moe_critical_batch
from roofline_decode.floors.peaks import group_peaks
from roofline_decode.floors.traffic import step_traffic
from roofline_decode.floors.fast_path import clear_plans, scalar_floor
from roofline_decode.floors.routing import resolve_routing
from roofline_decode.specs.latency import load_latency_profile

MODELS = rd.list_models()
ACCELERATORS = rd.list_accelerators()


def _same(x, y) -> bool:
    if isinstance(x, Mapping) and isinstance(y, Mapping):  # group FLOPs: a dict or a lazy mapping
        return list(x) == list(y) and all(_same(x[k], y[k]) for k in x)
    if type(x) is not type(y):
        return False
    if isinstance(x, np.ndarray):
        return (x.dtype == y.dtype and x.shape == y.shape and x.flags.writeable == y.flags.writeable
                and np.array_equal(x, y, equal_nan=x.dtype.kind == "f"))
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, float) and math.isnan(x):
        return math.isnan(y)
    return x == y


def _general(model, accelerator, batch, context, **options):
    """The general path: a 0-d array batch never takes the fast path."""
    return rd.decode_floor(model, accelerator, np.array(batch, dtype=float), context, **options)


def _assert_identical(model, accelerator, batch, context, **options):
    fast = rd.decode_floor(model, accelerator, batch, context, **options)
    general = _general(model, accelerator, batch, context, **options)
    # the fast path fills the instance dict itself: every field, nothing else
    assert sorted(vars(fast)) == sorted(vars(general)) == sorted(item.name for item in dataclasses.fields(general))
    for item in dataclasses.fields(general):
        x, y = getattr(fast, item.name), getattr(general, item.name)
        assert _same(x, y), (item.name, x, y)
    assert _same(fast.bound, general.bound) and repr(fast.to_records()) == repr(general.to_records())  # NaN-safe
    assert str(fast) == str(general)
    return fast


@settings(max_examples=120, deadline=None)
@given(model=st.sampled_from(MODELS), accelerator=st.sampled_from(ACCELERATORS),
       batch=st.one_of(st.integers(1, 512), st.floats(1, 2**20), st.sampled_from([1, 2**53, 10**6 + 0.5])),
       context=st.one_of(st.integers(0, 2**17), st.floats(0, 2**22), st.sampled_from([0, 0.5, 1, 2**53])),
       sparse=st.booleans(), routing=st.sampled_from(["uniform", "identical"]),
       latency=st.sampled_from([None, "cuda-graph-h100"]))
def test_fast_path_equals_general_path(model, accelerator, batch, context, sparse, routing, latency):
    _assert_identical(model, accelerator, batch, context, sparse=sparse, routing=routing, latency=latency)


@pytest.mark.parametrize("model", ["llama-3.1-8b", "mixtral-8x7b", "deepseek-v3", "gpt-oss-120b"])
def test_fast_path_is_taken_and_identical(model):
    spec, device = rd.load_model(model), rd.load_accelerator("h100-sxm")
    clear_plans()
    for batch, context in ((1, 0), (8, 4096), (np.float64(64.0), np.int64(1024)), (300.5, 0.25)):
        taken = scalar_floor(spec, device, batch, context, False, resolve_routing("uniform", spec), None)
        assert taken is not None
        _assert_identical(spec, device, batch, context)
    # the plan is reused: a second call does not rebuild it
    assert _assert_identical(spec, device, 2, 100).spec is spec


def test_fast_path_declines_what_the_general_path_must_word():
    spec, device = rd.load_model("llama-3.1-8b"), rd.load_accelerator("h100-sxm")
    uniform = resolve_routing("uniform", spec)
    for batch, context in ((True, 0), (1, False), (0.5, 0), (1, -1), (float("nan"), 0), (1, float("inf")),
                           (2**53 + 2, 0), ([1], 0), (1, spec.max_position_embeddings), ("1", 0)):
        assert scalar_floor(spec, device, batch, context, False, uniform, None) is None
    with pytest.raises(rd.errors.InvalidValueError, match="batch"):
        rd.decode_floor(spec, device, True, 0)
    _assert_identical(spec, device, 1, spec.max_position_embeddings + 5)  # beyond the positions: general path


def test_fast_path_keeps_up_with_a_new_profile_object():
    spec, device = rd.load_model("llama-3.2-1b"), rd.load_accelerator("h100-sxm")
    profile = load_latency_profile("cuda-graph-h100")
    slower = profile.model_copy(update={"operation_latency": profile.operation_latency * 4})
    a = rd.decode_floor(spec, device, 1, 1024, latency=profile)
    b = rd.decode_floor(spec, device, 1, 1024, latency=slower)
    assert float(b.chain_time_s) > float(a.chain_time_s)
    _assert_identical(spec, device, 1, 1024, latency=slower)


def _bisected(model, accelerator, context: float) -> float:
    """The former 64-step bisection of T_comp − T_mem on the general traffic terms."""
    peaks = group_peaks(model, accelerator, False)
    bandwidth = accelerator.memory_bandwidth
    high = float(np.asarray(moe_critical_batch(model, np.array([context]), peaks, bandwidth))[0])
    if not math.isfinite(high):
        return high
    high, low = high * 1.5 + 1, 0.0  # a bracket that holds the root

    def margin(b):
        t = step_traffic(model, np.array([b]), np.array([context]))
        return float(peaks.compute_time(t)[0] - (t.weight_bytes + t.kv_read_bytes + t.kv_write_bytes)[0] / bandwidth)

    for _ in range(200):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        low, high = (low, mid) if margin(mid) >= 0 else (mid, high)
    return high


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from([m for m in MODELS if rd.load_model(m).is_moe]),
       accelerator=st.sampled_from(ACCELERATORS), context=st.floats(0, 2**20))
def test_newton_critical_batch_matches_bisection(model, accelerator, context):
    spec, device = rd.load_model(model), rd.load_accelerator(accelerator)
    peaks = group_peaks(spec, device, False)
    if not peaks.bounded:
        return
    newton = float(moe_critical_batch(spec, np.array([context]), peaks, device.memory_bandwidth)[0])
    bisected = _bisected(spec, device, context)
    assert newton == bisected or abs(newton - bisected) <= 1e-9 * bisected


@pytest.mark.parametrize("model", [m for m in MODELS if rd.load_model(m).is_moe])
def test_moe_critical_batch_of_the_fast_path_is_the_general_one(model):
    for device in ("h100-sxm", "mi300x", "b200"):
        for context in (0, 1000.5, 4096, 131072):
            fast = rd.decode_floor(model, device, 3, context)
            general = _general(model, device, 3, context)
            assert _same(fast.critical_batch, general.critical_batch), (device, context)


def test_fast_path_calls_the_dataclass_init_when_it_checks_fields(monkeypatch):
    from roofline_decode.floors import fast_path as _fast

    monkeypatch.setattr(_fast, "_CHECKED_INIT", True)
    _assert_identical("mixtral-8x7b", "h100-sxm", 8, 4096)
    _assert_identical("llama-3.1-8b", "mi300x", 3, 100)
