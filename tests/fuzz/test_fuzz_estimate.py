"""Fuzz decode_floor, sweep and the Model and Accelerator constructors."""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode.specs.accelerator import Accelerator
from roofline_decode.specs.model import Model
from tests.fuzz.strategies import anything, finite_non_negative, finite_positive, grid_values, numbers, outcome

def fuzz(examples: int) -> settings:
    """Settings of a fuzz test: ``examples`` inputs (times ``ROOFLINE_FUZZ_SCALE`` for a deeper
    local run), no deadline (the machine may be loaded)."""
    scale = int(os.environ.get("ROOFLINE_FUZZ_SCALE", "1"))
    return settings(max_examples=examples * scale, deadline=None, suppress_health_check=list(HealthCheck))
DENSE = ["llama-3.1-8b", "gpt2", "gemma-2-9b", "phi-3-mini-4k", "qwen2.5-7b", "deepseek-v2-lite"]
GPUS = ["h100-sxm", "m2-max", "mi300x", "l4", "tpu-v5e", "rtx-4090"]
MODELS = {name: rd.load_model(name) for name in DENSE}
DEVICES = {name: rd.load_accelerator(name) for name in GPUS}
H100 = DEVICES["h100-sxm"]


def check_floor(r) -> None:
    """What a DecodeFloor promises: finite positive bytes, FLOPs, times and rates."""
    for name in ("weight_bytes", "bytes_total", "flops", "memory_time_s", "step_time_s", "tokens_per_s",
                 "per_sequence_tokens_per_s", "arithmetic_intensity"):
        finite_positive(name, getattr(r, name))
    for name in ("kv_read_bytes", "kv_write_bytes", "compute_time_s"):
        finite_non_negative(name, getattr(r, name))
    assert np.all(r.step_time_s >= r.memory_time_s)
    critical = np.asarray(r.critical_batch, dtype=float)
    assert not np.any(critical < 0)


@fuzz(2500)
@given(model=st.sampled_from(DENSE), gpu=st.sampled_from(GPUS), batch=grid_values, context=grid_values,
       sparse=st.booleans())
def test_decode_floor(model, gpu, batch, context, sparse):
    r = outcome("decode_floor", lambda: rd.decode_floor(MODELS[model], DEVICES[gpu], batch=batch, context=context,
                                                        sparse=sparse))
    if r is not None:
        check_floor(r)


@fuzz(150)
@given(batch=grid_values, context=grid_values, routing=st.one_of(st.sampled_from(["uniform", "identical"]), anything))
def test_decode_floor_moe_routing(batch, context, routing):
    r = outcome("decode_floor (MoE, routing)",
                lambda: rd.decode_floor("qwen1.5-moe-a2.7b", H100, batch=batch, context=context, routing=routing))
    if r is not None:
        check_floor(r)


@fuzz(500)
@given(models=st.one_of(st.sampled_from(DENSE), st.lists(st.sampled_from(DENSE), max_size=2), anything),
       gpus=st.one_of(st.sampled_from(GPUS), st.lists(st.sampled_from(GPUS), max_size=2), anything),
       batch=grid_values, context=grid_values)
def test_sweep(models, gpus, batch, context):
    result = outcome("sweep", lambda: rd.sweep(models, gpus, batch=batch, context=context))
    for r in result or []:
        check_floor(r)


MODEL_FIELDS = list(Model.model_fields)
BASE_MODEL = {k: getattr(MODELS["llama-3.1-8b"], k) for k in MODEL_FIELDS}


@fuzz(1500)
@given(changes=st.dictionaries(st.sampled_from(MODEL_FIELDS), st.one_of(anything, st.integers(0, 10**6)),
                               min_size=1, max_size=3))
def test_model_constructor(changes):
    model = outcome("Model(...)", lambda: Model(**{**BASE_MODEL, **changes}))
    if model is not None:
        finite_positive("weight_bytes", model.weight_bytes)
        finite_positive("parameter_count", model.parameter_count)
        r = outcome("Model(...)", lambda: rd.decode_floor(model, H100, batch=[1, 64], context=[0, 4096]))
        if r is not None:
            check_floor(r)


ACCELERATOR_FIELDS = ["memory_bandwidth", "memory_capacity", "peak_flops", "sparse_peak_flops", "tdp_w", "name",
                      "plausibility_checks", "interconnect", "figures"]
BASE_ACCELERATOR = {k: getattr(H100, k) for k in Accelerator.model_fields}
peaks = st.dictionaries(st.sampled_from(["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "fp9"]),
                        st.one_of(numbers, st.floats(1e11, 1e16)), max_size=3)


@fuzz(1500)
@given(changes=st.dictionaries(st.sampled_from(ACCELERATOR_FIELDS),
                               st.one_of(anything, peaks, st.floats(1e7, 1e17)), min_size=1, max_size=3))
def test_accelerator_constructor(changes):
    device = outcome("Accelerator(...)", lambda: Accelerator(**{**BASE_ACCELERATOR, **changes}))
    if device is not None:
        finite_positive("memory_bandwidth", device.memory_bandwidth)
        finite_positive("memory_capacity", device.memory_capacity)
        r = outcome("Accelerator(...)", lambda: rd.decode_floor(MODELS["llama-3.1-8b"], device, batch=[1, 512],
                                                                context=[0, 8192]))
        if r is not None:
            check_floor(r)
