"""The band at a queried point (measure/engine_band.py): pooled where the profile has seen the
device and model, widened where it has not, and what it rests on in the label."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode.catalog import load_model
from roofline_decode.errors import InvalidValueError
from roofline_decode.measure.engine_band import (MIN_REGIME_ROWS, NO_OFFSET, band_basis, batch_half_width,
                                                 batch_slopes, held_out_seen, model_seen, offset_term, query_band,
                                                 step_regime, transfer_band, transfer_from_dict, transfer_of,
                                                 transfer_to_dict, ttft_regime)
from roofline_decode.measure.engine_fit import BAND_LEVELS, band_of
from roofline_decode.measure.engine_profile import (StepTerms, device_prior, fit_profile, load_engine_profile,
                                                    predict_step, step_terms)
from roofline_decode.measure.expected import expected


def _transfer(devices: int, models: int, sigma: float, prior: float | None) -> dict:
    within = {level: (-0.1 * (1 + level), 0.08 * (1 + level)) for level in BAND_LEVELS}
    return {"within": within, "centre": 0.0, "models": ["m"], "sigma_prior": prior,
            "device": {"groups": devices, "sigma_offset": sigma}, "model": {"groups": models, "sigma_offset": sigma}}


def _kind(groups: int, sigma: float) -> dict:
    return {"groups": groups, "sigma_offset": sigma}


def test_transfer_splits_group_offsets_from_the_within_scatter():
    errors = np.array([0.5, 0.6, 0.4, -0.3, -0.2, -0.4, 0.01, -0.01, 0.9, 1.1])
    groups = np.array(["model:a"] * 3 + ["model:b"] * 3 + [NO_OFFSET] * 2 + ["device:x"] * 2)
    t = transfer_of(errors, groups, ["a", "b"], 0.17)
    assert t["model"]["groups"] == 2 and t["device"]["groups"] == 1 and t["models"] == ["a", "b"]
    assert t["model"]["sigma_offset"] == pytest.approx(math.sqrt((0.5**2 + 0.3**2) / 2))
    assert t["device"]["sigma_offset"] == pytest.approx(1.0)
    lo, hi = t["within"][0.95]
    assert -0.11 < lo < 0 < hi < 0.11  # the offsets removed: only the +-0.1 scatter is left
    assert t["sigma_prior"] == 0.17
    with pytest.raises(InvalidValueError, match="groups"):
        transfer_of(errors, np.array(["batch:1"] * len(errors)), None, None)


@settings(max_examples=60, deadline=None)
@given(devices=st.integers(0, 20), models=st.integers(0, 20), sigma=st.floats(0.0, 2.0),
       prior=st.one_of(st.none(), st.floats(0.01, 1.0)), level=st.sampled_from(BAND_LEVELS))
def test_query_band_is_pooled_where_seen_and_never_narrower_elsewhere(devices, models, sigma, prior, level):
    t = _transfer(devices, models, sigma, prior)
    pooled = {lv: (-0.2 * lv, 0.3 * lv) for lv in BAND_LEVELS}
    lo, hi = query_band(pooled, t, level, [True, False, True, False], [True, True, False, False])
    assert (lo[0], hi[0]) == pooled[level]
    assert np.all(lo <= pooled[level][0]) and np.all(hi >= pooled[level][1])
    assert np.all(lo < hi)
    # a new device and a new model: never narrower than either alone
    assert lo[3] <= min(lo[1], lo[2]) and hi[3] >= max(hi[1], hi[2])


def test_fewer_groups_widen_the_offset_term_and_the_prior_steadies_it():
    widths = [offset_term(_kind(g, 0.3), None, 0.9) for g in (2, 3, 5, 10, 40)]
    assert all(a > b for a, b in zip(widths, widths[1:]))
    assert widths[-1] == pytest.approx(1.645 * 0.3, rel=0.06)  # many groups: the normal interval
    assert offset_term(_kind(1, 0.3), None, 0.9) == 0.0  # one offset and no prior: no spread to measure
    assert offset_term(_kind(0, 0.0), 0.2, 0.9) == pytest.approx(2.920 * 0.2, rel=1e-3)  # t_2 x prior
    assert offset_term(_kind(2, 1.0), 0.2, 0.9) < offset_term(_kind(2, 1.0), None, 0.9)
    with pytest.raises(InvalidValueError, match="level"):
        transfer_band(_transfer(3, 3, 0.1, None), 0.7, False, False)


def test_held_out_rows_know_what_their_fit_had_seen():
    ids = ["h100", "h100", "h200", "h200"]
    models = ["a", "b", "a", "c"]
    seen_d, seen_m = held_out_seen(ids, models, by_model=True)
    assert seen_d.tolist() == [False] * 4 + [True] * 4
    assert seen_m.tolist() == [True, False, True, False] + [False] * 4  # b and c ran on one device only
    assert held_out_seen(["x"] * 3, None, False)[0].all()  # folds of one device: both seen
    assert model_seen(None, ["a"]).tolist() == [True]
    assert model_seen(_transfer(2, 2, 0.1, None), ["m", "n"]).tolist() == [True, False]


def _one_device_profile(**kwargs):
    truth = np.array([50e-6, 1e-3, 20e-6, 0.25, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    parts, models = [], []
    for model in ("llama-3.1-8b", "llama-2-13b", "llama-2-7b"):
        parts.append(step_terms(load_model(model), rd.load_accelerator("h100-sxm"), np.array([1.0, 4.0, 16.0, 32.0]),
                                np.array([512.0, 1024.0, 4096.0, 2048.0])))
        models += [load_model(model).name] * 4
    terms = StepTerms.stack(parts)
    y = predict_step(terms, truth)[0] * np.exp(0.05 * np.sin(np.arange(len(models)) * 1.7))
    return fit_profile("test", "", terms, y, ["h100-sxm"] * len(y), {"h100-sxm": 3.35e12}, [], loss="log",
                       models=models, **kwargs)


def test_a_one_device_profile_widens_for_another_device_and_says_so():
    p = _one_device_profile()
    assert p.transfer is not None and p.transfer["sigma_prior"] == device_prior("test") > 0
    assert p.transfer["device"]["groups"] == 0 and p.transfer["model"]["groups"] == 3
    seen = query_band(p.band, p.transfer, 0.9, True, True)
    other = query_band(p.band, p.transfer, 0.9, False, True)
    assert other[1] - other[0] > seen[1] - seen[0] + 2.920 * p.transfer["sigma_prior"]  # t_2 x prior, both sides
    assert "a new device's offset (0 held-out device offsets" in band_basis(p.transfer, False, True)
    assert "new device" not in band_basis(p.transfer, True, False)
    assert device_prior("llama.cpp-cuda") is None  # the prior's own profile has none
    bare = _one_device_profile(offset_prior=None)  # no prior: nothing says how far another device lands
    assert bare.transfer is not None and bare.transfer["sigma_prior"] is None
    assert query_band(bare.band, bare.transfer, 0.9, False, True)[1] == seen[1]
    assert "no measure of a new device's offset" in band_basis(bare.transfer, False, True)
    with pytest.raises(InvalidValueError, match="offset_prior"):
        _one_device_profile(offset_prior="newest")


def test_expected_widens_for_an_unseen_device_and_labels_it():
    model = "llama-3.1-70b"
    on = expected(model, "h200-sxm", batch=8, engine="vllm", tensor_parallel=4)
    off = expected(model, "a100-80gb-sxm", batch=8, engine="vllm", tensor_parallel=4)
    assert float(off.upper_s / off.step_time_s) > float(on.upper_s / on.step_time_s)
    assert "as pooled" in on.label and "widened for a device not fitted: a new device's offset (2 held-out" in off.label
    p = load_engine_profile("vllm")
    assert p.transfer is not None
    lo, hi = p.transfer["regimes"]["decode"]["band"][0.9]  # a decode step alone: that regime's own band
    assert float(on.upper_s / on.step_time_s) == pytest.approx(math.exp(hi))
    assert "regime 'decode'" in on.label


def test_a_profile_written_before_the_transfer_band_uses_its_pooled_band(tmp_path):
    data = load_engine_profile("vllm").to_dict()
    del data["transfer"]
    del data["ttft"]["transfer"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    old = load_engine_profile(str(path))
    assert old.transfer is None and old.ttft is not None and old.ttft["transfer"] is None
    e = expected("llama-3.1-70b", "a100-80gb-sxm", batch=8, engine=old, tensor_parallel=4, prompt=1024, output=128)
    lo, hi = old.band[0.9]
    assert float(e.upper_s / e.step_time_s) == pytest.approx(math.exp(hi))
    assert "widened" not in e.label


@pytest.mark.parametrize("edit", [
    lambda t: t["model"].update(sigma_offset=-0.1), lambda t: t.update(sigma_prior=float("inf")),
    lambda t: t["within"].update({"0.9": [0.3, 0.1]}), lambda t: t["within"].pop("0.5"), lambda t: t.pop("device"),
    lambda t: t["device"].update(groups=-1), lambda t: t["model"].update(sigma_offset=float("nan")),
    lambda t: t["batch"]["slope"].update({"0.9": -0.1}), lambda t: t["batch"].update(fitted_max=0.0),
    lambda t: t["regimes"]["decode"]["within"].update({"0.9": [0.3, 0.1]}),
    lambda t: t["regimes"]["decode"]["band"].pop("0.5"),
])
def test_a_lying_transfer_band_is_refused(tmp_path, edit):
    data = load_engine_profile("tensorrt-llm").to_dict()
    edit(data["transfer"])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidValueError):
        load_engine_profile(str(path))


def _regime_rows(models_per_regime: dict[str, int], rows: int = MIN_REGIME_ROWS) -> tuple[np.ndarray, ...]:
    """Held-out errors of ``rows`` rows per regime, spread over that many models: the decode rows
    tight (+-0.05), the prefill-heavy rows wide (+-0.5)."""
    errors, groups, regimes = [], [], []
    for name, count in models_per_regime.items():
        scale = 0.05 if name == "decode" else 0.5
        errors.append(scale * np.linspace(-1, 1, rows))
        groups += [f"model:{name}{i % count}" for i in range(rows)]
        regimes += [name] * rows
    return np.concatenate(errors), np.array(groups), np.array(regimes)


def test_each_regime_with_enough_rows_and_models_gets_its_own_quantiles():
    errors, groups, regimes = _regime_rows({"decode": 3, "prefill-heavy": 3})
    t = transfer_of(errors, groups, None, 0.17, regimes)
    assert set(t["regimes"]) == {"decode", "prefill-heavy"}
    tight = query_band(band_of(errors), t, 0.9, True, True,
                       np.array(["decode", "prefill-heavy", "unknown"]))
    width = tight[1] - tight[0]
    assert width[0] < 0.11 < 0.8 < width[1]  # each regime its own spread
    assert width[2] == pytest.approx(np.quantile(errors, 0.95) - np.quantile(errors, 0.05))  # the pooled band
    assert "decode" in transfer_from_dict(transfer_to_dict(t))["regimes"]  # type: ignore[index]
    # two models, or a regime short of rows, or one regime alone: no band of its own
    assert set(transfer_of(errors, groups, None, 0.17, regimes)["regimes"]) == {"decode", "prefill-heavy"}
    few = _regime_rows({"decode": 2, "prefill-heavy": 3})
    assert set(transfer_of(*few[:2], None, 0.17, few[2])["regimes"]) == {"prefill-heavy"}
    short = _regime_rows({"decode": 3, "prefill-heavy": 3}, rows=MIN_REGIME_ROWS - 1)
    assert transfer_of(*short[:2], None, 0.17, short[2])["regimes"] == {}
    assert transfer_of(errors, groups, None, 0.17, np.full(len(errors), "decode"))["regimes"] == {}


def test_step_regime_is_prefill_heavy_where_the_riding_prompts_outlast_the_step():
    assert step_regime([0.0, 0.01, 0.011], 0.01).tolist() == ["decode", "decode", "prefill-heavy"]


@given(st.lists(st.floats(-2, 2), min_size=5, max_size=60), st.integers(0, 10_000))
@settings(max_examples=40, deadline=None)
def test_batch_slopes_cover_their_share_of_the_rows_they_come_from(errors, seed):
    e = np.array(errors)
    d = 1.0 + (np.arange(len(e)) * 7 + seed) % 5  # 1..5 doublings
    t = {"centre": 0.0, "within": {lv: (-0.1 * lv, 0.1 * lv) for lv in BAND_LEVELS}}
    k = batch_slopes(e, d, t)
    assert all(k[a] <= k[b] for a, b in zip(BAND_LEVELS, BAND_LEVELS[1:]))  # nested
    for level in BAND_LEVELS:
        lo, hi = t["within"][level]
        half = k[level] * d
        inside = (e >= -np.sqrt(lo**2 + half**2) - 1e-12) & (e <= np.sqrt(hi**2 + half**2) + 1e-12)
        assert inside.mean() >= level - 1.0 / len(e) - 1e-9


def test_a_batch_beyond_the_fitted_ones_widens_the_band_and_says_so():
    p = load_engine_profile("vllm")
    assert p.transfer is not None and p.transfer["batch"]["slope"][0.9] > 0
    top = p.transfer["batch"]["fitted_max"]
    assert batch_half_width(p.transfer, 0.9, [top / 2, top])[0] == 0 == batch_half_width(p.transfer, 0.9, [top])[0]
    assert batch_half_width(p.transfer, 0.9, 4 * top) == pytest.approx(2 * p.transfer["batch"]["slope"][0.9])
    assert batch_half_width(None, 0.9, 4 * top) == 0  # a profile written before the term
    inside = query_band(p.band, p.transfer, 0.9, True, True, "decode", top)
    beyond = query_band(p.band, p.transfer, 0.9, True, True, "decode", 4 * top)
    assert beyond[0] < inside[0] and beyond[1] > inside[1]
    e = expected("llama-3.1-8b", "h200-sxm", batch=np.array([64, 4096]), engine="vllm")
    ratio = e.upper_s / e.step_time_s
    assert ratio[1] > ratio[0] and "widened for a batch beyond the fitted ones" in e.label
    assert "beyond the fitted" not in expected("llama-3.1-8b", "h200-sxm", batch=64, engine="vllm").label


def test_a_profile_written_before_regimes_and_the_batch_term_keeps_its_band(tmp_path):
    data = load_engine_profile("vllm").to_dict()
    del data["transfer"]["regimes"], data["transfer"]["batch"]
    path = tmp_path / "older.json"
    path.write_text(json.dumps(data))
    old = load_engine_profile(str(path))
    assert old.transfer is not None and old.transfer["regimes"] == {} and "batch" not in old.transfer
    e = expected("llama-3.1-70b", "h200-sxm", batch=np.array([8, 8192]), engine=old, tensor_parallel=4)
    assert float(e.upper_s[1] / e.step_time_s[1]) == pytest.approx(math.exp(old.band[0.9][1]))
    assert "regime" not in e.label and "beyond the fitted" not in e.label


def test_the_ttft_band_of_many_clients_is_its_own_and_the_label_says_so():
    assert ttft_regime([8, 64, 65]).tolist() == ["few-clients", "few-clients", "many-clients"]
    p = load_engine_profile("vllm")
    assert p.ttft is not None
    t = p.ttft["transfer"]
    assert set(t["regimes"]) == {"few-clients", "many-clients"}
    few, many = (t["regimes"][r]["within"][0.9] for r in ("few-clients", "many-clients"))
    assert many[1] - many[0] > few[1] - few[0]  # the heavy tail of many clients
    e = expected("llama-3.1-70b", "h200-sxm", batch=np.array([8, 256]), engine="vllm", tensor_parallel=4,
                 prompt=1024, output=1024)
    assert e.ttft_s is not None and e.ttft_upper_s is not None
    lo, hi = query_band(p.ttft["band"], t, 0.9, True, True, ["few-clients", "many-clients"])
    assert np.allclose(e.ttft_upper_s / e.ttft_s, np.exp(hi))
    assert "TTFT band of regime 'few-clients'" in e.label


def test_a_device_offset_counts_only_its_rows_of_models_the_fit_had_seen():
    errors = np.array([0.2, 0.3, 2.0, 2.2, -0.1, -0.2, 1.5, 1.7])
    groups = np.array(["device:a"] * 4 + ["device:b"] * 4)
    pure = np.array([True, True, False, False] * 2)  # the last two rows of each device: a model new to its fit
    t = transfer_of(errors, groups, None, None, pure=pure)
    assert t["device"]["groups"] == 2
    assert t["device"]["sigma_offset"] == pytest.approx(math.sqrt((0.25**2 + 0.15**2) / 2))
    assert t["within"][0.9][1] <= 0.1 + 1e-12  # each part centred on its own median
    confounded = transfer_of(errors, groups, None, None, pure=np.zeros(8, dtype=bool))
    assert confounded["device"]["groups"] == 0  # a device of new models only: no device offset
    assert transfer_of(errors, groups, None, None)["device"]["sigma_offset"] > 0.9  # as before: the model part too
    sglang = load_engine_profile("sglang")  # its devices share no model
    assert sglang.transfer is not None and sglang.transfer["device"]["groups"] == 0
