"""to_dataframe() on every result with records, to_xarray() on a sweep ([frames] extra)."""

from __future__ import annotations

import builtins

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode.errors import MissingExtraError

pd = pytest.importorskip("pandas")
xr = pytest.importorskip("xarray")


def test_decode_floor_frame_matches_records():
    floor = rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=[1, 8, 64], context=[[1024], [8192]])
    frame = floor.to_dataframe()
    records = floor.to_records()
    assert len(frame) == len(records) == 6
    assert list(frame.columns) == list(records[0])
    assert frame["step_time_s"].tolist() == [r["step_time_s"] for r in records]
    assert set(frame["bound"]) == {"memory"}


def test_sweep_frame_and_dataset():
    result = rd.sweep(["llama-3.1-8b", "mixtral-8x7b"], ["h100-sxm", "mi300x"], batch=[1, 8, 64], context=[1024, 8192])
    assert len(result.to_dataframe()) == 2 * 2 * 3 * 2
    ds = result.to_xarray()
    assert dict(ds.sizes) == {"model": 2, "accelerator": 2, "batch": 3, "context": 2}
    assert list(ds.accelerator.values) == ["h100-sxm", "mi300x"]
    # every value is the one of the floor it came from
    mixtral_mi300x = result[3]
    assert mixtral_mi300x.model == "Mixtral-8x7B-v0.1" and mixtral_mi300x.accelerator == "mi300x"
    np.testing.assert_array_equal(ds.step_time_s.sel(model=mixtral_mi300x.model, accelerator="mi300x").values,
                                  mixtral_mi300x.step_time_s)
    assert ds.ridge_point.sel(model="Llama-3.1-8B", accelerator="h100-sxm") == pytest.approx(result[0].ridge_point)
    assert str(ds.bound.values[0, 0, 0, 0]) == "memory"


def test_grid_results_plans_and_comparisons_have_frames():
    prefill = rd.prefill_floor("llama-3.1-8b", "h100-sxm", prompt=[512, 2048])
    assert len(prefill.to_dataframe()) == 2
    plan = rd.planning.plan("llama-3.1-8b", ["h100-sxm", "l4"], batch=8, context=4096)
    assert len(plan.to_dataframe()) == len(plan.to_records())


def test_missing_pandas_is_our_error(monkeypatch):
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name in ("pandas", "xarray"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    floor = rd.decode_floor("llama-3.1-8b", "h100-sxm")
    with pytest.raises(MissingExtraError, match=r"roofline_decode\[frames\]"):
        floor.to_dataframe()
    with pytest.raises(MissingExtraError, match="xarray"):
        rd.sweep(["llama-3.1-8b"], ["h100-sxm"]).to_xarray()
