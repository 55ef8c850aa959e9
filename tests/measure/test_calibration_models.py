"""The bounded nested fit: exact NNLS, recovery of each candidate, physical parameters, selection,
rows below the strict floor, save / load."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode import decode_floor, load_accelerator, load_model
from roofline_decode.errors import InvalidValueError
from roofline_decode.measure import Measurement, calibrate, load_calibration
from roofline_decode.measure._nnls import nnls

H100 = load_accelerator("h100-sxm")
MODELS = [load_model("llama-3.1-8b", weights=w) for w in ("bf16", "int8")] + [load_model("qwen2.5-7b")]


def test_nnls_meets_the_optimality_conditions():
    # Lawson & Hanson: x >= 0, gradient <= 0 everywhere and = 0 where x > 0 (KKT)
    rng = np.random.default_rng(16)
    for _ in range(300):
        a = rng.standard_normal((rng.integers(1, 10), rng.integers(1, 6)))
        b = rng.standard_normal(a.shape[0])
        x = nnls(a, b)
        gradient = a.T @ (b - a @ x)
        assert np.all(x >= 0) and np.all(gradient <= 1e-8) and np.allclose(gradient[x > 0], 0, atol=1e-8)


def truth(model, batch, context, *, t0=4e-4, q=0.0, eta_w=0.8, eta_kv=0.8, t_h=0.0):
    f = decode_floor(model, H100, batch=batch, context=context)
    kv = float(f.kv_read_bytes + f.kv_write_bytes) / f.memory_bandwidth
    device = t0 + q * batch + float(f.weight_bytes) / f.memory_bandwidth / eta_w + kv / eta_kv
    return max(t_h, device)


def grid(**params):
    return [Measurement(model=m, batch=b, context=t, step_time_s=truth(m, b, t, **params))
            for m in MODELS for b in (1, 4, 16, 64) for t in (512, 4096, 16384)]


def test_separate_streams_and_a_per_sequence_cost_are_recovered_and_chosen():
    cal = calibrate(grid(t0=3e-4, q=2e-5, eta_w=0.85, eta_kv=0.4), H100)
    assert cal.model_name == "streams+batch"
    assert cal.bandwidth_efficiency == pytest.approx(0.85, rel=1e-6)
    assert cal.kv_efficiency == pytest.approx(0.4, rel=1e-6)
    assert cal.per_sequence_s == pytest.approx(2e-5, rel=1e-6)
    assert cal.step_overhead_s == pytest.approx(3e-4, rel=1e-5)
    # the rows mix depths (28 and 32 layers) and were made with a per-step t0: the choice finds it
    assert cal.fixed_cost == "step" and cal.layers == (28, 32)
    assert "cross-validated" in cal.reason and set(cal.candidates) >= {"bandwidth/layer", "streams+batch/step"}


def test_a_host_bound_floor_is_recovered():
    # HF eager decode: the step cannot beat the host's launch time at small batch (22 of 36 rows here)
    cal = calibrate(grid(t0=1e-4, q=1e-5, eta_w=0.8, eta_kv=0.3, t_h=0.01), H100)
    assert cal.model_name == "streams+batch+host"
    assert cal.parameters["t_h"].value == pytest.approx(0.01, rel=1e-6)
    p = cal.predict(MODELS[0], batch=[1, 64], context=16384)
    assert list(p.bound) == ["host", "memory"]


def test_the_simplest_model_wins_when_the_rows_cannot_tell():
    cal = calibrate(grid(t0=4e-4, eta_w=0.7, eta_kv=0.7), H100)
    assert cal.model_name == "bandwidth" and cal.bandwidth_efficiency == pytest.approx(0.7, rel=1e-6)
    two = calibrate(grid(eta_w=0.7, eta_kv=0.7)[:1] + grid(eta_w=0.7, eta_kv=0.7)[12:13], H100)
    assert two.model_name == "bandwidth" and "too few" in two.reason and two.dof == 0


def test_parameters_carry_uncertainties_and_status():
    rng = np.random.default_rng(7)
    rows = [m.replace(step_time_s=m.step_time_s * (1 + 0.02 * rng.standard_normal())) for m in
            grid(t0=3e-4, q=2e-5, eta_w=0.85, eta_kv=0.4)]
    cal = calibrate(rows, H100)
    params = cal.parameters
    fitted = [p for p in params.values() if p.status == "fitted"]
    assert fitted and all(p.std > 0 for p in fitted)
    assert params["u_c"].status == "not fitted" and cal.compute_efficiency is None
    text = str(cal)
    assert "model " + cal.model_name in text and "±" in text


def test_a_single_model_cannot_separate_the_weight_stream_from_t0():
    rows = [m for m in grid(t0=3e-4, eta_w=0.5, eta_kv=0.3) if m.model.name == "Qwen2.5-7B"]
    cal = calibrate(rows, H100, models=("streams",))
    assert cal.parameters["u_w"].status.startswith("not identifiable")
    assert any("weight-stream efficiency" in w for w in cal.warnings)
    # the same model is still predicted exactly
    p = cal.predict(MODELS[2], batch=32, context=8192)
    assert float(p.step_time_s) == pytest.approx(truth(MODELS[2], 32, 8192, t0=3e-4, eta_w=0.5, eta_kv=0.3), rel=1e-6)


def test_rows_below_the_strict_floor_are_left_out_with_a_note():
    rows = grid(eta_w=0.8, eta_kv=0.8)
    floor = float(decode_floor(MODELS[0], H100, batch=1, context=512).step_time_s)
    bad = Measurement(model=MODELS[0], batch=1, context=512, step_time_s=0.5 * floor)
    cal = calibrate(rows + [bad], H100)
    assert [i for i, _ in cal.excluded] == [len(rows)] and "below its strict floor" in cal.excluded[0][1]
    assert len(cal.measured_s) == len(rows) and "excluded row" in str(cal)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.floats(1.0, 4.0), min_size=6, max_size=6), st.booleans())
def test_parameters_stay_physical_on_any_rows(factors, relative):
    # arbitrary step times at or above the floor: t0, q >= 0 and efficiencies in (0, 1]
    points = [(MODELS[0], 1, 512), (MODELS[1], 4, 4096), (MODELS[2], 16, 16384), (MODELS[0], 64, 512),
              (MODELS[1], 1, 16384), (MODELS[2], 64, 4096)]
    rows = [Measurement(model=m, batch=b, context=t,
                        step_time_s=float(decode_floor(m, H100, batch=b, context=t).step_time_s) * f)
            for (m, b, t), f in zip(points, factors)]
    cal = calibrate(rows, H100, weighting="relative" if relative else "absolute")
    # the rows mix depths (28, 32 layers): the fixed cost of a step is t0 (per step) or t_layer x L
    assert cal.fixed_cost_s(MODELS[0]) >= 0 and cal.fixed_cost_s(MODELS[2]) >= 0 and cal.per_sequence_s >= 0
    assert 0 < cal.bandwidth_efficiency <= 1 and 0 < cal.kv_efficiency <= 1
    assert np.all(cal.predict(MODELS[0], batch=[1, 8], context=[0, 2048]).step_time_s
                  >= decode_floor(MODELS[0], H100, batch=[1, 8], context=[0, 2048]).step_time_s * (1 - 1e-12))


def test_tensor_parallel_rows_use_the_aggregate_bandwidth():
    one = Measurement(model=MODELS[0], batch=1, context=0, step_time_s=truth(MODELS[0], 1, 0))
    eight = one.replace(tensor_parallel=8, step_time_s=4e-4 + (one.step_time_s - 4e-4) / 8)
    assert eight.num_devices == 8
    cal = calibrate([one, eight, Measurement(model=MODELS[1], batch=1, context=0, step_time_s=truth(MODELS[1], 1, 0))],
                    H100, models=("bandwidth",))
    assert cal.bandwidth_efficiency == pytest.approx(0.8, rel=1e-6)
    assert float(cal.predict(MODELS[0], context=0, tensor_parallel=8).step_time_s) == pytest.approx(eight.step_time_s, rel=1e-6)
    with pytest.raises(InvalidValueError, match="tensor_parallel"):
        cal.predict(MODELS[0], tensor_parallel=0)


def test_save_and_load_predict_the_same(tmp_path):
    rng = np.random.default_rng(3)
    rows = [m.replace(step_time_s=m.step_time_s * (1 + 0.01 * rng.standard_normal())) for m in grid(q=1e-5)]
    cal = calibrate(rows, H100)
    cal.save(tmp_path / "fit.json")
    back = load_calibration(tmp_path / "fit.json")
    a, b = cal.predict(MODELS[1], batch=[2, 32], context=8000), back.predict(MODELS[1], batch=[2, 32], context=8000)
    assert np.allclose(a.step_time_s, b.step_time_s) and np.allclose(a.upper_s, b.upper_s)
    assert back.model_name == cal.model_name and str(back) == str(cal)
    (tmp_path / "bad.json").write_text('{"format": "something else"}')
    with pytest.raises(InvalidValueError, match="bad.json"):
        load_calibration(tmp_path / "bad.json")
    with pytest.raises(InvalidValueError, match="missing.json"):
        load_calibration(tmp_path / "missing.json")


def test_moe_rows_are_judged_against_the_identical_routing_floor():
    # Mixtral at batch 8: uniform routing reads ~7.9 of 8 experts per layer, identical routing 2;
    # a row between the two floors is admissible (correlated routing) and is fitted, not left out
    mixtral = load_model("mixtral-8x7b")
    uniform = float(decode_floor(mixtral, H100, batch=8, context=1024).step_time_s)
    strict = float(decode_floor(mixtral, H100, batch=8, context=1024, routing="identical").step_time_s)
    assert strict < 0.5 * uniform
    rows = [Measurement(model=mixtral, batch=8, context=1024, step_time_s=0.8 * uniform),
            Measurement(model=mixtral, batch=1, context=1024, step_time_s=2 * strict),
            Measurement(model=mixtral, batch=8, context=1024, step_time_s=0.9 * strict)]
    cal = calibrate(rows, H100)
    assert [i for i, _ in cal.excluded] == [2]
    identical = Measurement(model=mixtral, batch=8, context=1024, step_time_s=1.5 * strict, routing="identical")
    assert identical.routing == "identical"
    assert calibrate([identical, rows[1]], H100).excluded == ()


def _noise_free_rows(extra):
    """Llama-3.1-8B on an H100 at one context, B = 1, 2, 4, 8: the strict floor plus ``extra(B, floor)``."""
    from roofline_decode.measure import calibration_models as cm

    rows = []
    for b in (1, 2, 4, 8):
        t = cm.floor_terms(load_model("llama-3.1-8b"), load_accelerator("h100-sxm"), b, 4096)
        rows.append(Measurement(model="llama-3.1-8b", batch=b, context=4096,
                                step_time_s=float(t.strict_floor_s) + extra(b, t)))
    return rows


def test_a_per_batch_slope_at_one_context_is_fitted():
    """floor + 1 ms + 2 ms x B at B = 1, 2, 4, 8: the batch varies, so q is fitted (2 ms), and the
    bytes term, which varies only as the fixed and per-sequence costs do, is the one held (it was
    q = 0 with "every row has the same batch")."""
    cal = calibrate(_noise_free_rows(lambda b, t: 1e-3 + 2e-3 * b), "h100-sxm", models=("bandwidth+batch",))
    assert cal.per_sequence_s == pytest.approx(2e-3, rel=1e-6)
    assert cal.fixed_cost_s("llama-3.1-8b") == pytest.approx(1e-3, rel=1e-6)
    assert not any("same batch" in w for w in cal.warnings)
    assert any("bandwidth efficiency" in w for w in cal.warnings)


def test_a_rejected_weight_column_does_not_hide_the_kv_column():
    """floor + 1 ms + one more KV time (η_kv = 0.5): the weight column is rejected next to t0, and
    the KV column, which grows with the batch, is still fitted (it was held at η_kv = 1)."""
    cal = calibrate(_noise_free_rows(lambda b, t: 1e-3 + float(t.kv_s)), "h100-sxm", models=("streams",))
    assert cal.kv_efficiency == pytest.approx(0.5, rel=1e-6)
    assert cal.fixed_cost_s("llama-3.1-8b") == pytest.approx(1e-3, rel=1e-6)
