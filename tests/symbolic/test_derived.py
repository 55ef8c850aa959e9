"""Closed forms derived with sympy, checked against the numeric estimator ``decode_floor``."""

import numpy as np
import pytest
import sympy

import roofline_decode as rd
from roofline_decode import InvalidValueError, UnknownIdError, decode_floor, formulas
from roofline_decode.symbolic import (
    closed_form, closed_forms, compute_bound_reachable, entry, model_values, per_sequence_terms, step_expressions, symbol,
)
from roofline_decode.symbolic.derived import ESTIMATOR_FIELDS

DENSE = ["llama-3.1-8b", "llama-2-7b", "qwen2.5-7b", "mistral-7b-v0.1", "gemma-2-9b", "gpt2", "opt-6.7b"]
MOE = ["mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v2-lite", "gpt-oss-20b"]
DEVICES = ["h100-sxm", "a100-80gb-sxm", "mi300x", "tpu-v5e"]
CONTEXTS = np.array([0.0, 100.0, 1000.0, 4096.0, 32768.0])


@pytest.mark.parametrize("model", rd.list_models())
def test_composed_step_equals_decode_floor_on_every_catalog_model(model):
    batch = np.array([[1.0], [7.0], [64.0], [1000.0]])
    r = decode_floor(model, "h100-sxm", batch=batch, context=CONTEXTS)
    values = model_values(model, "h100-sxm")
    for name, result in step_expressions(moe=True, mixers=True).items():  # mixer terms are 0 where absent
        got = result.evaluate(values, batch=batch, context=CONTEXTS)
        np.testing.assert_allclose(got, getattr(r, ESTIMATOR_FIELDS[name]), rtol=1e-12, err_msg=name)


def test_dense_step_form_is_the_moe_form_without_experts():
    moe, dense = step_expressions(moe=True), step_expressions(moe=False)
    no_experts = {symbol("num_moe_layers"): 0}
    for name in dense:
        assert sympy.simplify(moe[name].rhs.subs(no_experts) - dense[name].rhs) == 0, name


@pytest.mark.parametrize("model", DENSE)
@pytest.mark.parametrize("device", DEVICES)
def test_critical_batch_equals_decode_floor(model, device):
    expected = decode_floor(model, device, batch=1, context=CONTEXTS).critical_batch
    got = closed_form("critical_batch_dense").evaluate(model, device, context=CONTEXTS)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_critical_batch_llama_8b_h100_values():
    got = closed_form("critical_batch_dense").evaluate("llama-3.1-8b", "h100-sxm", context=CONTEXTS)
    # about the ridge point (295.4) at zero context, unreachable at 4k tokens (8 KV heads, bf16)
    assert 290 < got[0] < 300 and np.isinf(got[3]) and np.isinf(got[4])


def test_critical_batch_solves_compute_time_equals_memory_time():
    dense = step_expressions(moe=False)
    batch = symbol("batch")
    linear = {sympy.Min(batch, symbol("vocab_size")): batch}
    margin = (dense["compute_time"].rhs - dense["memory_time"].rhs).subs(linear)
    (root,) = sympy.solve(margin, batch)
    finite = closed_form("critical_batch_dense").expression.rhs.args[0][0].subs(symbol("num_moe_layers"), 0)
    assert sympy.simplify(root - finite) == 0


def test_per_sequence_terms_rebuild_the_dense_step():
    terms = per_sequence_terms()
    dense = step_expressions(moe=False)
    batch = symbol("batch")
    linear = {sympy.Min(batch, symbol("vocab_size")): batch}
    rebuilt = terms["fixed_bytes"] + batch * terms["bytes_per_sequence"]
    assert sympy.simplify(rebuilt - dense["bytes_moved"].rhs.subs(linear)) == 0
    assert terms["fixed_flops"] == 0


def test_critical_batch_refuses_moe_models():
    with pytest.raises(InvalidValueError, match="dense"):
        closed_form("critical_batch_dense").evaluate("mixtral-8x7b", "h100-sxm", context=0)


@pytest.mark.parametrize("model", ["llama-3.1-8b", "qwen2.5-7b", "gemma-2-9b", "mistral-7b-v0.1", *MOE])
@pytest.mark.parametrize("batch", [1.0, 16.0, 256.0])
def test_crossover_context_makes_kv_bytes_equal_weight_bytes(model, batch):
    t_x = float(closed_form("crossover_context").evaluate(model, batch=batch))
    if np.isinf(t_x):  # every layer slides: the capped KV read never reaches the weights
        r = decode_floor(model, "h100-sxm", batch=batch, context=1e9)
        assert rd.load_model(model).num_global_layers == 0
        assert float(r.kv_read_bytes) < float(r.weight_bytes)
        return
    r = decode_floor(model, "h100-sxm", batch=batch, context=[t_x, 0.99 * t_x])
    assert r.kv_read_bytes[0] == pytest.approx(float(r.weight_bytes[0]), rel=1e-12)
    assert r.kv_read_bytes[1] < r.weight_bytes[1]


def test_crossover_context_llama_8b_value():
    # 16.06 GB of bf16 weights / 131,072 B of KV per token: about 122.5k tokens at batch 1
    t_x = float(closed_form("crossover_context").evaluate("llama-3.1-8b", batch=1))
    assert 110_000 < t_x < 125_000


@pytest.mark.parametrize("model", DENSE)
def test_intensity_limit_is_per_sequence_flops_over_bytes(model):
    r = decode_floor(model, "h100-sxm", batch=[[1.0], [2.0]], context=CONTEXTS)
    flops_per_sequence = r.flops[0]
    bytes_per_sequence = r.bytes_total[1] - r.bytes_total[0]
    got = closed_form("intensity_limit").evaluate(model, context=CONTEXTS)
    np.testing.assert_allclose(got, flops_per_sequence / bytes_per_sequence, rtol=1e-9)
    # the intensity approaches the limit from below as the batch grows (B <= V)
    big = decode_floor(model, "h100-sxm", batch=[100.0, 10_000.0], context=4096.0).arithmetic_intensity
    limit = closed_form("intensity_limit").evaluate(model, context=4096.0)
    assert big[0] < big[1] < limit


def test_intensity_limit_is_sympy_limit_of_the_step():
    form = closed_form("intensity_limit")
    terms = per_sequence_terms()
    ratio = terms["flops_per_sequence"] / terms["bytes_per_sequence"]
    assert sympy.simplify(form.expression.rhs - ratio) == 0


@pytest.mark.parametrize("model", DENSE + MOE)
@pytest.mark.parametrize("device", DEVICES)
def test_compute_bound_reachable_matches_finite_critical_batch(model, device):
    reachable = compute_bound_reachable(model, device, CONTEXTS)
    critical = decode_floor(model, device, batch=1, context=CONTEXTS).critical_batch
    np.testing.assert_array_equal(reachable, np.isfinite(critical))


@pytest.mark.parametrize("model", ["llama-3.1-8b", "gemma-2-9b", "mixtral-8x7b"])
@pytest.mark.parametrize("batch, context, target", [(1, 4096, 100.0), (32, 8192, 1500.0), (256, 0, 20_000.0)])
def test_required_bandwidth_delivers_the_target(model, batch, context, target):
    bandwidth = float(closed_form("required_bandwidth").evaluate(
        model, "h100-sxm", batch=batch, context=context, target_tokens_per_second=target))
    device = rd.load_accelerator("h100-sxm").replace(memory_bandwidth=bandwidth)
    r = decode_floor(model, device, batch=batch, context=context)
    assert float(r.tokens_per_s) == pytest.approx(target, rel=1e-12)


def test_required_bandwidth_is_infinite_when_compute_caps_the_rate():
    r = decode_floor("llama-3.1-8b", "h100-sxm", batch=512, context=0)
    too_fast = 1.01 * float(r.peak_flops * r.batch / r.flops)  # above what the peak allows
    assert np.isinf(closed_form("required_bandwidth").evaluate(
        "llama-3.1-8b", "h100-sxm", batch=512, context=0, target_tokens_per_second=too_fast))


@pytest.mark.parametrize("model", ["llama-3.1-8b", "llama-3.1-70b", "gemma-2-9b", "mixtral-8x7b", "deepseek-v2-lite"])
@pytest.mark.parametrize("context", [1024.0, 8192.0, 131072.0])
def test_max_batch_fits_and_one_more_does_not(model, context):
    m = rd.load_model(model)
    capacity = 200e9
    b_max = float(closed_form("max_batch").evaluate(m, "h100-sxm", context=context, memory_capacity=capacity))
    assert b_max == int(b_max) >= 0

    def resident(batch):
        return m.weight_bytes + formulas.kv_cache_bytes(
            batch, context, m.kv_bytes_per_token_per_layer, m.num_global_layers, m.num_sliding_layers, m.window)

    assert resident(b_max + 1) > capacity
    if b_max > 0:
        assert resident(b_max) <= capacity


def test_max_batch_is_zero_when_the_weights_do_not_fit():
    assert closed_form("max_batch").evaluate("llama-3.1-405b", "h100-sxm", context=1024.0) == 0


def test_registry_latex_and_errors():
    forms = closed_forms()
    assert set(forms) == {"critical_batch_dense", "crossover_context", "intensity_limit", "compute_bound_context",
                          "required_bandwidth", "max_batch"}
    for form in forms.values():
        assert form.latex().startswith(entry(form.expression.name).latex + " = ")
        assert form._repr_latex_().startswith("$\\displaystyle ")
    with pytest.raises(UnknownIdError, match="closed form"):
        closed_form("critical_batch_sparse")
    with pytest.raises(InvalidValueError, match="context"):
        closed_form("critical_batch_dense").evaluate("llama-3.1-8b", "h100-sxm")


@pytest.mark.parametrize("model", ["llama-3.1-8b", "mistral-7b-v0.1", "gemma-2-9b", "gpt-oss-20b", "deepseek-v3",
                                   "mixtral-8x7b"])
@pytest.mark.parametrize("device", ["h100-sxm", "a100-80gb-sxm", "l4"])
def test_compute_bound_context_separates_finite_and_infinite_critical_batch(model, device):
    t_c = float(closed_form("compute_bound_context").evaluate(model, device))
    if np.isinf(t_c):  # attention alone outruns the ridge: compute-bound reachable at any context
        assert np.isfinite(decode_floor(model, device, batch=1, context=[0.0, 1e5, 1e7]).critical_batch).all()
        return
    r = decode_floor(model, device, batch=1, context=[0.999 * t_c, 1.001 * t_c])
    assert np.isfinite(r.critical_batch[0]) and np.isinf(r.critical_batch[1])


def test_compute_bound_context_llama_8b_h100_is_a_few_hundred_tokens():
    # 2 P_used ≈ 1.5e10 FLOP against 295 FLOP/B × 131 kB of KV per token (minus 4 FLOP/B of attention)
    t_c = float(closed_form("compute_bound_context").evaluate("llama-3.1-8b", "h100-sxm"))
    assert 300 < t_c < 500
