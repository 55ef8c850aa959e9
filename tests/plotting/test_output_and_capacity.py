"""File output, lazy import of matplotlib, and the capacity rule the plots shade by."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode import plotting
from roofline_decode.errors import InvalidValueError, MissingExtraError
from roofline_decode.plotting import _common

MAGIC = {".png": b"\x89PNG", ".svg": b"<?xml", ".pdf": b"%PDF"}


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf", ".PNG"])
def test_save_writes_each_format(tmp_path, suffix):
    ax = plotting.context_plot("llama-3.2-1b", "l4", context=[0, 1024, 2048], batch=[1, 4])
    path = plotting.save(ax, tmp_path / "nested" / f"plot{suffix}")
    assert path.is_file() and path.read_bytes().startswith(MAGIC[suffix.lower()])


def test_save_rejects_other_extensions(tmp_path):
    ax = plotting.context_plot("llama-3.2-1b", "l4", context=[0, 1024], batch=[1])
    with pytest.raises(InvalidValueError, match=r"output=.*\.png, \.svg, \.pdf"):
        plotting.save(ax, tmp_path / "plot.jpg")
    assert not (tmp_path / "plot.jpg").exists()


def test_importing_the_library_and_plotting_does_not_import_matplotlib():
    code = "import sys, roofline_decode, roofline_decode.plotting; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_matplotlib_names_the_plot_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # import now raises ImportError
    with pytest.raises(MissingExtraError, match=r"roofline_decode\[plot\]"):
        plotting.ridge_plot("llama-3.1-8b", "h100-sxm")


def test_palette_is_okabe_ito():
    assert plotting.PALETTE[:3] == ("#0072B2", "#D55E00", "#009E73")
    assert len(set(plotting.PALETTE)) == 8


@pytest.mark.parametrize("model, gpu, context", [
    ("llama-3.1-8b", "h100-sxm", 4096), ("llama-3.1-70b", "mi300x", 32768), ("gemma-2-9b", "l4", 8192),
])
def test_max_batch_is_the_edge_of_what_fits(model, gpu, context):
    limit = plotting.max_batch(model, gpu, context)
    assert limit >= 1
    spec = rd.load_model(model)
    floor = rd.decode_floor(spec, gpu, batch=[limit, limit + 1], context=context)
    assert list(_common.fits(spec, floor, rd.load_accelerator(gpu))) == [True, False]


def test_max_batch_is_zero_when_the_weights_do_not_fit():
    assert plotting.max_batch("llama-3.1-70b", "h100-sxm", 1024) == 0


def test_capacity_rule_is_the_planning_module_s():
    from roofline_decode.floors import capacity

    spec, gpu = rd.load_model("llama-3.1-8b"), rd.load_accelerator("h100-sxm")
    # 81,559 MiB (nvidia-smi's figure for the 80 "GB" read as 80 GiB) - 2 GiB
    assert plotting.usable_memory(gpu) == capacity.usable_memory(gpu) == 81559 * 2**20 - 2 * 2**30
    assert _common.memory_label(gpu) == "77.65 GiB usable"
    assert plotting.max_batch(spec, gpu, 4096) == capacity.max_batch(spec, gpu, 4096)
    floor = rd.sweep([spec], [gpu], batch=[1, 64], context=[0, 4096])[0]
    np.testing.assert_array_equal(plotting.resident_bytes(spec, floor),
                                  capacity.resident_bytes(spec, floor.batch, floor.context))
    # context 0 holds no KV cache: the limit is taken at one token
    assert plotting.max_batch(spec, gpu, 0) == capacity.max_batch(spec, gpu, 1)


def test_save_names_an_output_that_cannot_be_written(tmp_path):
    ax = plotting.context_plot("llama-3.2-1b", "l4", context=[0, 1024], batch=[1])
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(InvalidValueError, match=r"output=.*a-file.*a file path that can be written"):
        plotting.save(ax, blocker / "plot.png")


@pytest.mark.parametrize("dpi", [0.5, 0, -3, 1, 19.9, True, 1e9, float("nan"), "high"])
def test_save_rejects_bad_resolutions(tmp_path, dpi):
    ax = plotting.context_plot("llama-3.2-1b", "l4", context=[0, 1024], batch=[1])
    with pytest.raises(InvalidValueError, match=r"dpi=.*from 20 to 1200"):
        plotting.save(ax, tmp_path / "plot.png", dpi=dpi)
    assert not (tmp_path / "plot.png").exists()
