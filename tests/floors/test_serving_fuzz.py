"""serving_floor and balanced_workers on arbitrary input: an answer with no warning, or the library's error."""

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode.errors import RooflineError

valid = st.integers(1, 4096)
numbers = st.one_of(valid, valid, valid, valid, valid, valid, st.integers(-3, 2**20), st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(
    [0, 1, 2, 2**53, 2**53 + 1, 1e300, 0.5, True, "8", None]))
layouts = st.sampled_from([None, None, None, 1, 2, 2, 8, "tp2ep2", "tp2ep2", "pp2", "dp2", 0, -1, "tp3", "ep2", "x", 2.5,
                           True])


#: answers met (not refusals), for a look when the strategies change
ANSWERED = {"serving_floor": 0, "balanced_workers": 0}


def call(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return function(*args, **kwargs)
        except RooflineError:
            return None


@settings(max_examples=150, deadline=None)
@given(concurrency=numbers, isl=numbers, osl=numbers, parallel=layouts,
       mode=st.sampled_from(["aggregated", "aggregated", "disaggregated", "disaggregated", "both"]),
       workers=st.integers(0, 4),
       link=st.one_of(st.none(), st.none(), st.floats(1e9, 1e12), st.floats(allow_nan=True, allow_infinity=True)),
       max_batch=st.one_of(st.none(), st.integers(-1, 300)))
def test_serving_floor_answers_or_refuses(concurrency, isl, osl, parallel, mode, workers, link, max_batch):
    extra = {} if mode != "disaggregated" else {"decode_workers": workers, "kv_link_bandwidth": link}
    r = call(rd.serving_floor, "qwen3-30b-a3b", "h100-sxm", concurrency, isl, osl, parallel=parallel, mode=mode,
             max_batch=max_batch, **extra)
    if r is None:
        return
    ANSWERED["serving_floor"] += 1
    running = r.running_batch > 0
    for key in ("ttft_s", "tpot_s", "e2e_latency_s", "decode_step_s", "prefill_s"):
        value = np.asarray(getattr(r, key))[running]
        assert np.all(np.isfinite(value) & (value > 0)), key
    assert np.all(r.requests_per_s >= 0) and np.all(r.queued >= 0)
    assert np.all(r.e2e_latency_s[running] >= r.ttft_s[running])
    assert len(r.to_records()) == int(np.prod(r.shape)) and str(r)


@settings(max_examples=60, deadline=None)
@given(isl=numbers, osl=numbers, batch=numbers, rate=st.one_of(st.none(), numbers), layout=layouts)
def test_balanced_workers_answers_or_refuses(isl, osl, batch, rate, layout):
    r = call(rd.balanced_workers, "llama-3.1-8b", "h100-sxm", isl, osl, batch, request_rate=rate,
             prefill_parallel=layout, decode_parallel=layout)
    if r is not None:
        ANSWERED["balanced_workers"] += 1
        assert np.all(r.ratio > 0) and np.all(np.isfinite(r.ratio))

