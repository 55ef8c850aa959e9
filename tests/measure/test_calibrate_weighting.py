"""Calibration's weighted least squares against a hand-solved answer on four rows (issue 22).

The statistical coverage test notices a wrong weighting only through its rate; this one is
deterministic.  Four rows of Llama-2-7B (bf16, batch 1) on a device of 1 TB/s whose compute
peak (1e18 FLOP/s) keeps every row memory-bound, so the model is T = t0 + (1/η)·x with
x = bytes / BW.  By hand (tests/foundation/test_estimate.py::test_llama2_7b_batch1_hand_derived):
bytes = (6738415616 − 32000·4096 + 4096)·2 weights + 524288 KV written + 524288·T KV read
= 13215219712 + 524288·T.

Weighted least squares minimises Σ w_i (y_i − t0 − a·x_i)², whose normal equations

    [Σw   Σwx ] [t0]   [Σwy ]
    [Σwx  Σwx²] [a ] = [Σwxy]

are solved below by Cramer's rule in exact rational arithmetic, for w = 1/y² ("relative",
the default) and w = 1 ("absolute").
"""

from fractions import Fraction

import pytest

from roofline_decode import Accelerator, load_model
from roofline_decode.measure import Measurement, calibrate

DEVICE = Accelerator(name="1 TB/s, memory-bound", memory_bandwidth=1e12, memory_capacity=80e9,
                     peak_flops={"bf16": 1e18})
CONTEXTS = [0, 4096, 16384, 32768]
# step times [s] as a harness would print them in ms; about 2 ms + 1.25 x, off by -4 % to +4 %
MEASURED = [0.0185, 0.0210, 0.0305, 0.0385]


def _x(context):
    weights = (6_738_415_616 - 32000 * 4096 + 4096) * 2
    return Fraction(weights + 524_288 * (1 + context), 10**12)


def _hand_fit(weights):
    xs, ys = [_x(t) for t in CONTEXTS], [Fraction(y) for y in MEASURED]
    s = sum(weights)
    sx = sum(w * x for w, x in zip(weights, xs))
    sxx = sum(w * x * x for w, x in zip(weights, xs))
    sy = sum(w * y for w, y in zip(weights, ys))
    sxy = sum(w * x * y for w, x, y in zip(weights, xs, ys))
    det = s * sxx - sx * sx
    t0, a = (sy * sxx - sx * sxy) / det, (s * sxy - sx * sy) / det
    residuals = [y - t0 - a * x for x, y in zip(xs, ys)]
    s2 = sum(w * r * r for w, r in zip(weights, residuals)) / (len(ys) - 2)
    return float(t0), float(a), float(s2) ** 0.5, [float(r) for r in residuals]


def _rows():
    model = load_model("llama-2-7b")
    return [Measurement(model=model, batch=1, context=t, step_time_s=y) for t, y in zip(CONTEXTS, MEASURED)]


@pytest.mark.parametrize("weighting", ["relative", "absolute"])
def test_weighted_least_squares_matches_the_hand_solution(weighting):
    weights = [1 / Fraction(y) ** 2 for y in MEASURED] if weighting == "relative" else [Fraction(1)] * 4
    t0, a, s, residuals = _hand_fit(weights)
    cal = calibrate(_rows(), DEVICE, weighting=weighting)
    # one model at batch 1: the rows identify t0 and one efficiency only (issue 16's "bandwidth")
    assert cal.model_name == "bandwidth" and cal.compute_efficiency is None and cal.dof == 2
    assert cal.step_overhead_s == pytest.approx(t0, rel=1e-9)
    assert cal.bandwidth_efficiency == pytest.approx(1 / a, rel=1e-9)
    assert cal.residuals_s == pytest.approx(residuals, rel=1e-7, abs=1e-12)
    assert cal.residual_standard_error == pytest.approx(s, rel=1e-9)
    # the band's s is at least the residual one (it also covers the cross-validated error)
    assert cal.residual_std >= cal.residual_standard_error


def test_relative_and_absolute_weighting_give_different_answers():
    # the rows are chosen so that the two weightings disagree well beyond the tolerance above
    relative = _hand_fit([1 / Fraction(y) ** 2 for y in MEASURED])
    absolute = _hand_fit([Fraction(1)] * 4)
    assert abs(relative[0] / absolute[0] - 1) > 0.2  # t0 differs by more than 20 %
    assert abs(relative[1] / absolute[1] - 1) > 0.02  # 1/η by more than 2 %
    # relative weighting is the default
    default = calibrate(_rows(), DEVICE)
    assert default.step_overhead_s == pytest.approx(relative[0], rel=1e-9)
