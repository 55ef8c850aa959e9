"""Fuzz the prefill, request and speculative floors (the second wave's entry points)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import roofline_decode as rd
from tests.fuzz.strategies import anything, finite_non_negative, finite_positive, grid_values, outcome
from tests.fuzz.test_fuzz_estimate import fuzz

MODEL = rd.load_model("llama-3.1-8b")
GPU = rd.load_accelerator("h100-sxm")
small = st.one_of(st.integers(0, 8192), st.lists(st.integers(1, 4096), min_size=1, max_size=3), anything)
#: weights= and kv= (issue 30): mostly None, real formats and a llama.cpp preset, every kind of bad value
weights = st.one_of(st.none(), st.none(), st.sampled_from(["fp8", "int4-g32", "q4_0", "Q4_K_M", "fp9"]), anything)
kv = st.one_of(st.none(), st.none(), st.sampled_from(["fp8", "bf16", "q4_0"]), anything)


@fuzz(400)
@given(prompt=small, batch=grid_values, chunk=st.one_of(st.none(), small), cached=st.one_of(st.just(0), small),
       weights=weights, kv=kv)
def test_prefill_floor(prompt, batch, chunk, cached, weights, kv):
    r = outcome("prefill_floor", lambda: rd.prefill_floor(MODEL, GPU, prompt, batch, chunk=chunk, cached=cached,
                                                          weights=weights, kv=kv))
    if r is not None:
        finite_positive("ttft_s", r.ttft_s)
        finite_non_negative("flops", r.flops)


@fuzz(400)
@given(prompt=small, output=small, batch=grid_values, cached=st.one_of(st.just(0), small), weights=weights, kv=kv)
def test_request_floor(prompt, output, batch, cached, weights, kv):
    r = outcome("request_floor", lambda: rd.request_floor(MODEL, GPU, prompt, output, batch, cached=cached,
                                                          weights=weights, kv=kv))
    if r is not None:
        finite_positive("ttft_s", r.ttft_s)
        finite_non_negative("decode_time_s", r.decode_time_s)


@fuzz(300)
@given(k=st.one_of(st.integers(1, 8), anything), acceptance=st.one_of(st.floats(0, 1), anything), batch=grid_values,
       context=grid_values)
def test_speculative_floor(k, acceptance, batch, context):
    r = outcome("speculative_floor", lambda: rd.speculative_floor(MODEL, GPU, draft="llama-3.2-1b", k=k,
                                                                  acceptance=acceptance, batch=batch, context=context))
    if r is not None:
        finite_positive("plain_step_s", r.plain_step_s)
        finite_positive("verify_step_s", r.verify_step_s)
        finite_positive("time_per_token_s", r.time_per_token_s)
        assert np.all(np.asarray(r.tokens_per_round) >= 1)
