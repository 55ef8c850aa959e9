"""Issue 27 ("Untrusted files"): saved calibrations whose values lie.

Each reproducer gives one CalibrationFileError (an InvalidValueError) naming the file, the key,
the value and what is allowed; ``predict`` answers with exit code 2 and one line.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from roofline_decode.cli import main
from roofline_decode.errors import InvalidValueError
from roofline_decode.measure import CalibrationFileError, Measurement, calibrate, load_calibration

ROWS = [Measurement(model="llama-2-7b", batch=b, context=128, step_time_s=t)
        for b, t in ((1, 0.0160), (8, 0.0165), (16, 0.0171), (32, 0.0180))]


@pytest.fixture(scope="module")
def saved() -> dict:
    return calibrate(ROWS, "a100-80gb-sxm", models=("bandwidth",)).to_dict()


def write(tmp_path, data: dict, name: str = "fit.json", **replace: str) -> str:
    """``data`` as JSON, with each quoted marker of ``replace`` swapped for raw JSON text."""
    text = json.dumps(data)
    for marker, raw in replace.items():
        text = text.replace(f'"{marker}"', raw)
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def refused(path: str, key: str, value: str) -> CalibrationFileError:
    with pytest.raises(CalibrationFileError) as info:
        load_calibration(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {key}={value} is invalid: expected "), message
    assert isinstance(info.value, InvalidValueError) and info.value.key == key
    return info.value


def test_dof_1e400_is_refused(tmp_path, saved):
    refused(write(tmp_path, saved | {"dof": "INF"}, INF="1e400"), "dof", "inf")


def test_level_seven_is_refused(tmp_path, saved):
    assert "a coverage in (0, 1)" in str(refused(write(tmp_path, saved | {"level": 7}), "level", "7"))
    refused(write(tmp_path, saved | {"level": 1 - 2**-53}), "level", repr(1 - 2**-53))  # (1 + level) / 2 rounds to 1


def test_negative_dof_is_refused(tmp_path, saved):
    error = refused(write(tmp_path, saved | {"dof": -3}), "dof", "-3")
    assert "a whole number from 0 to 4" in str(error)  # 4 rows fitted


def test_empty_beta_is_refused(tmp_path, saved):
    data = json.loads(json.dumps(saved))
    data["fit"]["beta"] = []
    assert "a list of 2 numbers" in str(refused(write(tmp_path, data), "fit.beta", "[]"))


def test_nan_beta_is_refused_not_printed_as_null(tmp_path, saved, capsys):
    data = json.loads(json.dumps(saved))
    data["fit"]["beta"] = ["NAN"] * 2
    path = write(tmp_path, data, NAN="NaN")
    refused(path, "fit.beta[0]", "nan")
    code = main(["predict", "--calibration", path, "--model", "llama-2-7b", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}: fit.beta[0]=nan is invalid" in err


@pytest.mark.parametrize("change, key, value", [
    ({"dof": True}, "dof", "True"),
    ({"dof": 2.0}, "dof", "2.0"),
    ({"level": "0.9"}, "level", "'0.9'"),
    ({"residual_std": -1.0}, "residual_std", "-1.0"),
    ({"weighting": "squared"}, "weighting", "'squared'"),
    ({"layers": [0]}, "layers[0]", "0"),
    ({"layers": [2**64]}, "layers[0]", str(2**64)),
    ({"measured_s": [0.016, 0.0, 0.017, 0.018]}, "measured_s[1]", "0.0"),
    # a subnormal step time overflowed the relative residuals (found by the fuzz suite)
    ({"measured_s": [0.016, 5e-324, 0.017, 0.018]}, "measured_s[1]", "5e-324"),
    ({"residuals_s": [0.0]}, "residuals_s", "[0.0]"),
    ({"excluded": [{"row": 99, "reason": "x"}]}, "excluded[0].row", "99"),
    ({"warnings": [1]}, "warnings", "[1]"),
    ({"candidates": {"bandwidth": True}}, "candidates", "{'bandwidth': True}"),
    ({"accelerator_spec": []}, "accelerator_spec", "[]"),
])
def test_values_out_of_place_name_their_key(tmp_path, saved, change, key, value):
    refused(write(tmp_path, saved | change), key, value)


@pytest.mark.parametrize("edit, key", [
    (lambda fit: fit.update(parameter_names=["t0", "t0"]), "fit.parameter_names"),
    (lambda fit: fit.update(free=["q"]), "fit.free"),
    (lambda fit: fit.update(full=[0.0] * 5), "fit.full"),
    (lambda fit: fit.update(beta=[1e31, 0.5]), "fit.beta[0]"),
    (lambda fit: fit.update(covariance=[[1.0]]), "fit.covariance"),
    (lambda fit: fit.pop("covariance"), "fit.covariance"),
])
def test_fit_arrays_must_agree_with_the_parameter_names(tmp_path, saved, edit, key):
    data = json.loads(json.dumps(saved))
    edit(data["fit"])
    with pytest.raises(CalibrationFileError, match=rf"fit\.json: {key.replace('.', '[.]').replace('[0]', '.0.')}"):
        load_calibration(write(tmp_path, data))


def test_accelerator_that_does_not_validate_names_the_key(tmp_path, saved):
    spec = dict(saved["accelerator_spec"], memory_bandwidth=-1.0)
    with pytest.raises(CalibrationFileError, match=r"fit\.json: accelerator_spec='a100-80gb-sxm' is invalid: expected a "
                                                   r"valid accelerator \(.*memory_bandwidth"):
        load_calibration(write(tmp_path, saved | {"accelerator_spec": spec}))


def test_deep_nesting_is_refused_as_an_unreadable_calibration(tmp_path, saved):
    path = tmp_path / "deep.json"
    path.write_text('{"format": ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(CalibrationFileError, match=r"deep\.json: \(json\): not valid JSON: nested too deeply .*; expected a readable calibration"):
        load_calibration(path)


def test_a_fit_with_no_free_parameter_loads_with_a_square_covariance(tmp_path, saved):
    # every parameter at its bound: covariance [] (0 x 0), the band from the residuals alone
    data = json.loads(json.dumps(saved))
    data["fit"].update(free=[], covariance=[])
    back = load_calibration(write(tmp_path, data))
    p = back.predict("llama-2-7b", batch=[1, 8], context=128)
    assert np.all(p.lower_s <= p.step_time_s) and np.all(p.step_time_s < p.upper_s)


def test_negative_variances_are_refused(tmp_path, saved):
    data = json.loads(json.dumps(saved))
    data["fit"]["covariance"][0][0] = -3.0
    with pytest.raises(CalibrationFileError, match=r"fit\.json: fit\.covariance=.* variances >= 0 on its diagonal"):
        load_calibration(write(tmp_path, data))


def test_the_depth_limit_is_the_model_s():
    from roofline_decode.measure import calibration_io
    from roofline_decode.specs import _limits

    assert calibration_io.MAX_LAYERS == _limits.MAX_LAYERS


def test_calibrate_refuses_the_level_the_reader_refuses():
    # (1 + level) / 2 rounds to 1.0: predict's t quantile raised a bare ValueError
    with pytest.raises(InvalidValueError, match="level"):
        calibrate(ROWS, "a100-80gb-sxm", level=1 - 2**-53)
