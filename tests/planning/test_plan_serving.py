"""plan() verdicts and the Little's-law serving rate."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode import formulas as f
from roofline_decode.errors import InvalidValueError
from roofline_decode.planning import plan, serving_rate, tensor_parallel_floor, usable_memory
from roofline_decode.floors.parallel import DEFAULT_COLLECTIVE_LATENCY


def test_issue_question_70b_32k_batch16_50ms():
    # "does a 70B model at 32K context and batch 16 fit on this GPU, and can it meet 50 ms per token?"
    rows = {r.accelerator: r for r in plan("llama-3.1-70b", ["h100-sxm", "h200-sxm", "b200", "mi300x"],
                                           batch=16, context=32768, slo_ms=50)}
    # weights 141.1 GB + 16 x 10.74 GB of KV = 312.9 GB: fits none of them
    for row in rows.values():
        assert row.resident_bytes_per_device == pytest.approx(141.107e9 + 16 * 327680 * 32768, rel=1e-4)
        assert not row.fits
    # one B200 (8 TB/s) would meet 50 ms on paper but cannot hold it; an H100 misses both
    assert rows["b200"].verdict == "capacity-limited"
    assert rows["h100-sxm"].verdict == "both"
    assert rows["h100-sxm"].min_devices == 4 and rows["b200"].min_devices == 2


@settings(max_examples=25, deadline=None)
@given(model=st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b", "mixtral-8x7b"]),
       device=st.sampled_from(["h100-sxm", "a100-80gb-sxm", "mi300x", "h200-sxm"]),
       batch=st.integers(1, 64), context=st.integers(0, 65536), slo=st.one_of(st.none(), st.floats(1, 200)))
def test_verdict_matches_fit_and_target_and_min_devices_is_minimal(model, device, batch, context, slo):
    row = plan(model, device, batch=batch, context=context, slo_ms=slo)[0]
    meets = True if slo is None else row.step_time_s * 1e3 <= slo
    assert row.fits == (row.resident_bytes_per_device <= row.usable_bytes_per_device)
    assert row.verdict == {(True, True): "ok", (True, False): "bandwidth-limited",
                           (False, True): "capacity-limited", (False, False): "both"}[(row.fits, meets)]
    heads = rd.load_model(model).num_heads
    if row.min_devices is not None:
        assert heads % row.min_devices == 0
        # plan's settings: the realistic variant (5 µs per collective, on the critical path)
        realistic = dict(collective_latency=DEFAULT_COLLECTIVE_LATENCY, overlap_communication=False)
        floor = tensor_parallel_floor(model, device, batch, context, row.min_devices, **realistic)
        assert float(floor.resident_bytes_per_device) <= row.usable_bytes_per_device
        assert slo is None or float(floor.step_time_s) * 1e3 <= slo
        for n in range(1, row.min_devices):
            if heads % n == 0:
                smaller = tensor_parallel_floor(model, device, batch, context, n, **realistic)
                fits = float(smaller.resident_bytes_per_device) <= row.usable_bytes_per_device
                assert not (fits and (slo is None or float(smaller.step_time_s) * 1e3 <= slo))
    if row.fits:
        assert row.max_batch is None or row.max_batch >= batch
    if context == 0:
        assert row.max_batch is None or row.max_batch == 0


def test_plan_tp_and_offload_rows():
    rows = plan("llama-3.1-70b", "h100-sxm", batch=16, context=32768, slo_ms=50, tp=4)
    assert rows[0].devices == 4 and rows[0].fits and rows[0].verdict == "ok"
    off = plan("llama-3.1-70b", "h100-sxm", batch=16, context=32768, slo_ms=50, tp=4,
               offload_kv=0.5, tier="pcie5-x16")[0]
    assert off.tier_resident_bytes_per_device > 0 and off.bound == "tier"
    assert off.resident_bytes_per_device < rows[0].resident_bytes_per_device
    assert off.verdict == "bandwidth-limited"


def test_plan_records_and_table():
    result = plan("llama-3.1-8b", ["h100-sxm", "l4"], batch=8, context=8192, slo_ms=30)
    records = result.to_records()
    assert [r["accelerator"] for r in records] == ["h100-sxm", "l4"]
    assert {"fits", "verdict", "min_devices", "step_time_s", "bound", "max_batch"} <= set(records[0])
    text = str(result)
    assert "verdict" in text and "h100-sxm" in text and "l4" in text


@pytest.mark.parametrize("kwargs,field", [(dict(batch=0), "batch"), (dict(context=-1), "context"),
                                          (dict(slo_ms=0), "slo_ms"),
                                          (dict(max_devices=0), "max_devices")])
def test_plan_rejects_bad_input(kwargs, field):
    args = dict(batch=1, context=1024) | kwargs
    with pytest.raises(InvalidValueError, match=field):
        plan("llama-3.1-8b", "h100-sxm", **args)


def test_littles_law_identities():
    # Scaling Book Part 8: "43 / (0.019 * 512 * N)" = 4.42 / N queries per second
    assert f.request_rate_at_concurrency(43, 512, 0.019) == pytest.approx(4.42, abs=0.005)
    rate = f.requests_per_second(43 / 0.019, 512)
    assert rate == pytest.approx(f.request_rate_at_concurrency(43, 512, 0.019))
    assert f.littles_law_concurrency(rate, 512, 0.019) == pytest.approx(43)


def test_serving_rate_is_the_steady_state():
    r = serving_rate("llama-3.1-8b", "h100-sxm", output_length=500, prompt_length=1000, slo_ms=20)
    assert r.step_time_s <= 0.020 and r.limited_by == "the per-token target"
    # Little's law holds at the operating point
    # (a request holds a slot for its 499 decode steps: the prefill yields the first token)
    assert f.littles_law_concurrency(r.requests_per_s, 499, r.step_time_s) == pytest.approx(r.concurrency)
    # one more request in flight would miss the target
    nxt = tensor_parallel_floor("llama-3.1-8b", "h100-sxm", r.concurrency + 1, r.mean_context, 1)
    assert float(nxt.step_time_s) > 0.020
    assert r.tokens_per_s == pytest.approx(r.requests_per_s * 499)


def test_serving_rate_limited_by_memory_without_target():
    r = serving_rate("llama-3.1-8b", "h100-sxm", output_length=500, prompt_length=1000)
    assert r.limited_by == "memory capacity" and r.concurrency == r.max_concurrency
    per_sequence = 131072 * (1000 + 498 / 2)  # mean of the decode contexts 1000 ... 1498
    assert r.concurrency == int((usable_memory("h100-sxm") - rd.load_model("llama-3.1-8b").weight_bytes)
                                // per_sequence)


@settings(max_examples=20, deadline=None)
@given(slo=st.floats(5, 60), extra=st.floats(0, 40))
def test_looser_targets_never_lower_the_rate(slo, extra):
    a = serving_rate("llama-3.1-8b", "a100-80gb-sxm", 256, 512, slo_ms=slo)
    b = serving_rate("llama-3.1-8b", "a100-80gb-sxm", 256, 512, slo_ms=slo + extra)
    assert b.requests_per_s >= a.requests_per_s
    assert np.all(np.diff(a.curve_requests_per_s) >= -1e-9)


def test_serving_rate_target_missed_and_no_room():
    missed = serving_rate("llama-3.1-70b", "h100-sxm", 100, 100, slo_ms=10, num_devices=2)
    assert missed.requests_per_s == 0 and "missed" in missed.limited_by
    none = serving_rate("llama-3.1-70b", "l4", 100)
    assert none.concurrency == 0 and "capacity" in none.limited_by


@pytest.mark.parametrize("kwargs,field", [(dict(num_devices=0), "num_devices"), (dict(max_concurrency=0), "max_concurrency"),
                                          (dict(output_length="a"), "output_length"),
                                          (dict(output_length=1), "output_length"),
                                          (dict(slo_ms="fast"), "slo_ms")])
def test_serving_rate_rejects_bad_input(kwargs, field):
    args = dict(output_length=100, prompt_length=100) | kwargs
    with pytest.raises(InvalidValueError, match=field):
        serving_rate("llama-3.1-8b", "h100-sxm", **args)


@pytest.mark.parametrize("kwargs,field", [(dict(max_devices=2.5), "max_devices"), (dict(batch="a"), "batch")])
def test_plan_rejects_non_numbers(kwargs, field):
    args = dict(batch=1, context=1024) | kwargs
    with pytest.raises(InvalidValueError, match=field):
        plan("llama-3.1-8b", "h100-sxm", **args)


def test_slo_ms_per_token_is_a_deprecated_alias_of_slo_ms():
    from roofline_decode.planning import can_tier_feed, required_tier_bandwidth

    new = plan("llama-3.1-8b", "h100-sxm", batch=8, context=8192, slo_ms=30)[0]
    with pytest.warns(DeprecationWarning, match="slo_ms_per_token= is deprecated; use slo_ms="):
        old = plan("llama-3.1-8b", "h100-sxm", batch=8, context=8192, slo_ms_per_token=30)[0]
    assert old.slo_ms == new.slo_ms == 30 and old.verdict == new.verdict
    with pytest.warns(DeprecationWarning, match="use slo_ms"):
        assert old.slo_ms_per_token == 30
    with pytest.warns(DeprecationWarning):
        rate = serving_rate("llama-3.1-8b", "h100-sxm", 500, 1000, slo_ms_per_token=20)
    assert rate.slo_ms == 20
    with pytest.warns(DeprecationWarning):
        need = required_tier_bandwidth("llama-3.1-8b", "h100-sxm", 16, 32768, slo_ms_per_token=100, kv_fraction=0.5)
    assert need == required_tier_bandwidth("llama-3.1-8b", "h100-sxm", 16, 32768, slo_ms=100, kv_fraction=0.5)
    with pytest.warns(DeprecationWarning):
        answer = can_tier_feed("llama-3.1-8b", "h100-sxm", "pcie5-x16", 16, 32768, kv_fraction=0.25,
                               slo_ms_per_token=50)
    assert "50 ms per token" in str(answer)
    with pytest.warns(DeprecationWarning), pytest.raises(InvalidValueError, match="slo_ms_per_token"):
        plan("llama-3.1-8b", "h100-sxm", batch=8, context=8192, slo_ms=30, slo_ms_per_token=30)
