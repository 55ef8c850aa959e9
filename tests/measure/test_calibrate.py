"""Calibration: exact recovery on synthetic rows, band coverage, refusals, and the published pairs."""

from pathlib import Path

import numpy as np
import pytest

from roofline_decode import decode_floor, load_accelerator, load_model
from roofline_decode.errors import InvalidValueError, RooflineError
from roofline_decode.measure import Measurement, calibrate, load_published
from roofline_decode.measure._stats import student_t_quantile
from roofline_decode.measure.published import rtx_3090_ti

DATA = Path(__file__).parents[1] / "data" / "measured"
H100 = load_accelerator("h100-sxm")
MODELS = [load_model("llama-3.1-8b", weights=w) for w in ("bf16", "int8", "int4-g32")]


def true_time(model, batch, context, eta, t0, eta_c=None):
    floor = decode_floor(model, H100, batch=batch, context=context)
    compute = float(floor.compute_time_s) / eta_c if eta_c else 0.0
    return t0 + max(float(floor.memory_time_s) / eta, compute)


def rows(points, **truth):
    return [Measurement(model=m, batch=b, context=t, step_time_s=true_time(m, b, t, **truth)) for m, b, t in points]


@pytest.mark.parametrize("weighting", ["relative", "absolute"])
def test_noiseless_rows_recover_eta_and_t0(weighting):
    points = [(m, b, t) for m in MODELS for b in (1, 4, 16) for t in (512, 8192)]
    cal = calibrate(rows(points, eta=0.8, t0=3e-4), H100, weighting=weighting)
    assert cal.bandwidth_efficiency == pytest.approx(0.8, rel=1e-9)
    assert cal.step_overhead_s == pytest.approx(3e-4, rel=1e-9)
    assert cal.compute_efficiency is None
    assert np.max(np.abs(cal.relative_residuals)) < 1e-9
    assert cal.sustained_bandwidth == pytest.approx(0.8 * H100.memory_bandwidth)


def test_noiseless_rows_with_compute_bound_batches_recover_eta_c():
    # Llama-3.1-8B bf16 on an H100 turns compute-bound near batch 440 at short context
    points = [(MODELS[0], b, t) for b in (1, 8, 64, 256, 1024, 2048, 4096) for t in (128, 2048)]
    cal = calibrate(rows(points, eta=0.8, t0=3e-4, eta_c=0.6), H100)
    assert cal.bandwidth_efficiency == pytest.approx(0.8, rel=1e-9)
    assert cal.step_overhead_s == pytest.approx(3e-4, rel=1e-9)
    assert cal.compute_efficiency == pytest.approx(0.6, rel=1e-9)
    prediction = cal.predict(MODELS[0], batch=[1, 4096], context=128)
    assert list(prediction.bound) == ["memory", "compute"]
    assert prediction.step_time_s[1] == pytest.approx(true_time(MODELS[0], 4096, 128, 0.8, 3e-4, 0.6), rel=1e-9)


@pytest.mark.parametrize("weighting, noise", [("relative", 0.03), ("absolute", 2e-4)])
def test_noisy_rows_fall_inside_the_band_at_the_stated_rate(weighting, noise):
    rng = np.random.default_rng(20261130)
    fit_points = [(m, b, 1024) for m in MODELS for b in (1, 8)]
    new_points = [(m, b, 4096) for m in MODELS for b in (2, 32)]
    fit_truth = np.array([true_time(*p, eta=0.7, t0=5e-4) for p in fit_points])
    new_truth = np.array([true_time(*p, eta=0.7, t0=5e-4) for p in new_points])

    def noisy(truth):
        eps = rng.standard_normal(truth.shape)
        return truth * (1 + noise * eps) if weighting == "relative" else truth + noise * eps

    inside = total = 0
    for _ in range(100):
        measured = noisy(fit_truth)
        cal = calibrate([Measurement(model=m, batch=b, context=t, step_time_s=y)
                         for (m, b, t), y in zip(fit_points, measured)], H100, weighting=weighting, level=0.9,
                        models=("bandwidth",))
        fresh = noisy(new_truth)
        for (m, b, t), y in zip(new_points, fresh):
            p = cal.predict(m, batch=b, context=t)
            inside += bool(p.lower_s <= y <= p.upper_s)
            total += 1
    # the band is conservative by design: its s is at least the cross-validated error (95 % here)
    assert 0.87 <= inside / total <= 0.98, inside / total


def test_predict_broadcasts_like_decode_floor():
    cal = calibrate(rows([(m, 1, 1024) for m in MODELS] + [(MODELS[0], 8, 8192)], eta=0.75, t0=1e-4), H100)
    p = cal.predict(MODELS[1], batch=[[1], [8], [64]], context=[1024, 8192])
    assert p.step_time_s.shape == p.lower_s.shape == (3, 2)
    assert np.all(p.step_time_s >= p.floor_step_time_s)
    assert np.all((p.lower_s < p.step_time_s) & (p.step_time_s < p.upper_s))
    assert p.tokens_per_s[2, 0] == pytest.approx(64 / p.step_time_s[2, 0])


def test_two_rows_fit_exactly_without_a_band():
    cal = calibrate(rows([(MODELS[0], 1, 0), (MODELS[1], 1, 0)], eta=0.9, t0=2e-4), H100)
    assert cal.dof == 0 and np.isnan(cal.residual_std) and "exactly determined" in cal.band_method
    assert np.isnan(cal.predict(MODELS[2], batch=1, context=0).upper_s)


def test_underdetermined_fits_are_refused():
    with pytest.raises(InvalidValueError, match="at least 2 rows"):
        calibrate(rows([(MODELS[0], 1, 0)], eta=0.9, t0=2e-4), H100)
    same = rows([(MODELS[0], 1, 256)], eta=0.9, t0=2e-4) * 2
    with pytest.raises(InvalidValueError, match="distinct bytes"):
        calibrate(same, H100)
    compute_only = rows([(MODELS[0], b, 0) for b in (2048, 4096, 8192)], eta=0.9, t0=2e-4, eta_c=0.5)
    with pytest.raises(InvalidValueError, match="compute-bound"):
        calibrate(compute_only, H100)


def test_bad_arguments():
    good = rows([(MODELS[0], 1, 0), (MODELS[1], 1, 0)], eta=0.9, t0=2e-4)
    with pytest.raises(InvalidValueError, match="weighting"):
        calibrate(good, H100, weighting="squared")
    with pytest.raises(InvalidValueError, match="level"):
        calibrate(good, H100, level=1.5)
    # 1 ms is below the bf16 floor (4.8 ms): left out, which leaves one row
    with pytest.raises(InvalidValueError, match=r"1 rows at or above their strict floor \(1 below it left out\)"):
        calibrate([Measurement(model=MODELS[0], batch=1, context=0, step_time_s=1e-3),
                   Measurement(model=MODELS[1], batch=1, context=0, step_time_s=10e-3)], H100)
    with pytest.raises(InvalidValueError, match="models"):
        calibrate(good, H100, models=("quadratic",))
    with pytest.raises(RooflineError, match="step_time_s"):
        Measurement(model="llama-2-7b", batch=1, context=0, step_time_s=-1.0)


def test_t_quantiles_match_tables():
    # two-sided 90 % and 95 % critical values (NIST/SEMATECH e-Handbook, table 1.4.2.3)
    assert student_t_quantile(0.95, 1) == pytest.approx(6.314, abs=1e-3)
    assert student_t_quantile(0.95, 5) == pytest.approx(2.015, abs=1e-3)
    assert student_t_quantile(0.975, 10) == pytest.approx(2.228, abs=1e-3)
    assert student_t_quantile(0.95, 100) == pytest.approx(1.660, abs=1e-3)
    assert student_t_quantile(0.05, 5) == pytest.approx(-2.015, abs=1e-3)


def published_measurements(name, device, keep):
    out = {}
    for row in load_published(DATA / name).rows:
        if getattr(row.accelerator, "id", row.accelerator) != device or row.num_devices != 1:
            continue
        key = (row.model, str(row.weight_format))
        if keep(row) and key not in out:
            out[key] = Measurement(model=load_model(row.model, weights=row.weight_format, kv=row.kv_format),
                                   batch=row.batch, context=row.context, step_time_s=row.step_time)
    return out


def test_two_formats_of_the_a100_predict_the_third():
    # gpt-fast, Llama-2-7B on one A100-80GB: fit on bf16 and int8, predict int4-g32 (5.081 ms measured).
    # The unbounded fit (before issue 16) reached +3.6 % with eta = 1.11 > 1; bounded (eta <= 1): +1.8 %.
    rows_ = published_measurements("gpt_fast.csv", "a100-80gb-sxm", lambda r: r.model == "llama-2-7b")
    cal = calibrate([rows_["llama-2-7b", "bf16"], rows_["llama-2-7b", "int8"]], "a100-80gb-sxm")
    int4 = rows_["llama-2-7b", "int4-g32"]
    predicted = float(cal.predict(int4.model, batch=1, context=int4.context).step_time_s)
    assert cal.bandwidth_efficiency <= 1 and cal.step_overhead_s >= 0
    assert predicted / int4.step_time_s - 1 == pytest.approx(0.018, abs=0.005)


def test_two_formats_of_the_3090_ti_predict_the_third():
    # ExLlamaV2, Llama-2-7B on an RTX 3090 Ti: fit on EXL2 3.0 and 5.0 bpw, predict 4.0 bpw
    rows_ = published_measurements("exllama.csv", "rtx-3090-ti", lambda r: r.model == "llama-2-7b"
                                   and str(r.weight_format).startswith("exl2"))
    cal = calibrate([rows_["llama-2-7b", "exl2-3bpw"], rows_["llama-2-7b", "exl2-5bpw"]], rtx_3090_ti())
    four = rows_["llama-2-7b", "exl2-4bpw"]
    predicted = float(cal.predict(four.model, batch=1, context=0).step_time_s)
    assert abs(predicted / four.step_time_s - 1) < 0.02
