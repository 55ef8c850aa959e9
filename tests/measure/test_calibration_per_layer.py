"""The fixed cost per layer (t_layer x L): values by hand, the depth law, the choice between per
layer and per step, and saved calibrations from before the choice existed."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode import decode_floor, load_accelerator, load_model
from roofline_decode.errors import InvalidValueError
from roofline_decode.measure import Measurement, calibrate, load_calibration
from roofline_decode.measure import calibration_models as cm

A100 = load_accelerator("a100-80gb-sxm")
SMALL, DEEP = load_model("llama-2-7b"), load_model("llama-2-70b")  # 32 and 80 layers


def hand_terms(weights_s, layers, fixed_cost):
    n = len(weights_s)
    zeros = np.zeros(n)
    terms = cm.Terms(np.array(weights_s), zeros, zeros, np.ones(n), np.array(weights_s), np.array(layers, float),
                     np.ones(n))
    return terms.with_fixed_cost(fixed_cost)


def test_per_layer_cost_and_efficiency_by_hand():
    # T = 0.1 ms x L + W / (0.8 BW): rows of 10 and 20 layers, weight times 1, 2, 3 ms
    weights_s, layers = [1e-3, 2e-3, 3e-3], [10, 10, 20]
    y = np.array([1e-4 * 10 + 1e-3 / 0.8, 1e-4 * 10 + 2e-3 / 0.8, 1e-4 * 20 + 3e-3 / 0.8])
    fit = cm.fit_model("bandwidth", hand_terms(weights_s, layers, "layer"), y, np.ones(3), False)
    assert fit.full[0] == pytest.approx(1e-4, rel=1e-9)          # t_layer [s]
    assert 1 / (1 + fit.full[1]) == pytest.approx(0.8, rel=1e-9)  # eta
    # a 40-layer model reading 4 ms of weights: 4 ms + 1 ms of fixed cost
    step, _, _ = fit.predict(hand_terms([4e-3], [40], "layer"))
    assert step[0] == pytest.approx(40 * 1e-4 + 4e-3 / 0.8, rel=1e-9)
    # the same rows with a per-step t0 cannot fit exactly (the fixed cost differs between depths)
    per_step = cm.fit_model("bandwidth", hand_terms(weights_s, layers, "step"), y, np.ones(3), False)
    assert np.max(np.abs(per_step.fitted_s - y)) > 1e-5


def rows(model, t_step, t_layer, eta, batches=(1, 4, 16), context=512):
    out = []
    for b in batches:
        f = decode_floor(model, A100, batch=b, context=context)
        step = t_step + t_layer * model.num_layers + float(f.memory_time_s) / eta
        out.append(Measurement(model=model, batch=b, context=context, step_time_s=step))
    return out


def test_one_depth_fits_the_same_either_way_and_defaults_to_per_layer():
    fit = rows(SMALL, 0.0, 50e-6, 0.8)
    layer, step = calibrate(fit, A100, models=("bandwidth",)), calibrate(fit, A100, models=("bandwidth",),
                                                                          fixed_cost="step")
    assert layer.fixed_cost == "layer" and layer.layers == (32,) and "cannot tell per layer" in layer.reason
    assert np.allclose(layer.calibrated_s, step.calibrated_s, rtol=1e-9)
    assert layer.layer_overhead_s == pytest.approx(50e-6, rel=1e-6)
    assert layer.step_overhead_s == pytest.approx(step.step_overhead_s, rel=1e-9) == pytest.approx(32 * 50e-6, rel=1e-6)
    # ... and differ only for another depth: 80 x 50 us against 32 x 50 us of fixed cost
    a, b = (float(c.predict(DEEP, batch=1, context=512).step_time_s) for c in (layer, step))
    assert a - b == pytest.approx(48 * 50e-6, rel=1e-6)
    assert "per-layer cost t_layer" in str(layer) and "fixed cost              per layer" in str(layer)


@settings(max_examples=15, deadline=None)
@given(st.floats(0, 2e-3), st.floats(1e-6, 2e-4), st.floats(0.3, 1.0), st.sampled_from(
    ["llama-2-13b", "llama-2-70b", "llama-3.1-70b", "llama-3.2-1b"]))
def test_depth_law_and_the_bracket(t_step, t_layer, eta, other):
    # a per-layer calibration gives another model of the family a fixed cost in proportion to its
    # depth; fitted at one depth on a true mix t_step + L t_layer, per step and per layer bracket
    # the true step time of any other depth
    fit = rows(SMALL, t_step, t_layer, eta)
    other = load_model(other)
    layer = calibrate(fit, A100, models=("bandwidth",))
    step = calibrate(fit, A100, models=("bandwidth",), fixed_cost="step")
    assert layer.fixed_cost_s(other) / layer.fixed_cost_s(SMALL) == pytest.approx(other.num_layers / 32, rel=1e-9)
    assert step.fixed_cost_s(other) == pytest.approx(step.fixed_cost_s(SMALL), rel=1e-12)
    truth = rows(other, t_step, t_layer, eta, batches=(8,))[0].step_time_s
    by_layer, by_step = (float(c.predict(other, batch=8, context=512).step_time_s) for c in (layer, step))
    low, high = sorted((by_layer, by_step))
    assert low * (1 - 1e-9) <= truth <= high * (1 + 1e-9)


def test_mixed_depths_choose_the_unit_the_rows_follow():
    per_layer = rows(SMALL, 0.0, 60e-6, 0.75) + rows(load_model("llama-2-13b"), 0.0, 60e-6, 0.75)
    cal = calibrate(per_layer, A100)
    assert cal.fixed_cost == "layer" and cal.layers == (32, 40) and np.isnan(cal.step_overhead_s)
    assert cal.layer_overhead_s == pytest.approx(60e-6, rel=1e-6)
    assert cal.candidates["bandwidth/layer"] < cal.candidates["bandwidth/step"]
    per_step = rows(SMALL, 2e-3, 0.0, 0.75) + rows(load_model("llama-2-13b"), 2e-3, 0.0, 0.75)
    assert calibrate(per_step, A100).fixed_cost == "step"
    with pytest.raises(InvalidValueError, match="fixed_cost"):
        calibrate(per_step, A100, fixed_cost="token")


def test_a_calibration_saved_before_the_choice_loads_per_step(tmp_path):
    cal = calibrate(rows(SMALL, 0.0, 50e-6, 0.8), A100, fixed_cost="step")
    cal.save(tmp_path / "fit.json")
    data = json.loads((tmp_path / "fit.json").read_text())
    assert data["format"] == "roofline-decode calibration 2" and data["fixed_cost"] == "step"
    # what version 1 wrote: no fixed_cost, layers, layer_overhead_s
    for key in ("fixed_cost", "layers", "layer_overhead_s"):
        del data[key]
    data["format"] = "roofline-decode calibration 1"
    (tmp_path / "v1.json").write_text(json.dumps(data))
    old = load_calibration(tmp_path / "v1.json")
    assert old.fixed_cost == "step"
    assert float(old.predict(DEEP).step_time_s) == pytest.approx(float(cal.predict(DEEP).step_time_s), rel=1e-12)
    data["format"] = "roofline-decode calibration 9"
    (tmp_path / "v9.json").write_text(json.dumps(data))
    with pytest.raises(InvalidValueError, match=r"v9\.json \(format 'roofline-decode calibration 9'\)"):
        load_calibration(tmp_path / "v9.json")
    layer = calibrate(rows(SMALL, 0.0, 50e-6, 0.8), A100)
    layer.save(tmp_path / "layer.json")
    back = load_calibration(tmp_path / "layer.json")
    assert back.fixed_cost == "layer" and back.layers == (32,) and str(back) == str(layer)
    assert float(back.predict(DEEP).step_time_s) == pytest.approx(float(layer.predict(DEEP).step_time_s), rel=1e-12)


def test_cli_fixed_cost_and_predict(capsys, tmp_path):
    from roofline_decode.cli import main

    csv = tmp_path / "runs.csv"
    fit = rows(SMALL, 0.0, 50e-6, 0.8)
    csv.write_text("model,gpu,batch,context,step_time_ms\n" + "".join(
        f"llama-2-7b,a100-80gb-sxm,{m.batch:g},{m.context:g},{m.step_time_s * 1e3!r}\n" for m in fit))
    for unit, per_step_ms in (("layer", 80 * 50e-3), ("step", 32 * 50e-3)):
        saved = tmp_path / f"{unit}.json"
        assert main(["calibrate", str(csv), "--fixed-cost", unit, "--save", str(saved)]) == 0
        assert f"per {unit}" in capsys.readouterr().out
        assert main(["predict", "--calibration", str(saved), "--model", "llama-2-70b"]) == 0
        assert f"fixed cost {per_step_ms:.4g} ms per step (per {unit}" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["calibrate", str(csv), "--fixed-cost", "token"])
    assert exit_.value.code == 2 and "--fixed-cost" in capsys.readouterr().err
