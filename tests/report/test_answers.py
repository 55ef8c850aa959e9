"""The report's answers: the deployment search on N GPUs, an engine's expected numbers and the
control moving the layout's numbers; every number in the page is the library's (parsed back)."""

import math

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode import decode_floor
from roofline_decode.cli import main
from roofline_decode.errors import InvalidValueError
from roofline_decode.floors.capacity import usable_memory
from roofline_decode.measure.expected import expected
from roofline_decode.planning import deployments
from roofline_decode.report.data import (DEPLOYMENT_COLUMNS, EXPECTED_COLUMNS, EXPECTED_SERVING_COLUMNS,
                                         LAYOUT_COLUMNS)
from roofline_decode.report.page import display

from .page_parser import ReportPage

GPUS = ["h200-sxm", "mi300x"]


def _same(cell_value, expected_value):
    value = float(cell_value)
    return value == expected_value or (math.isnan(value) and math.isnan(expected_value))


@pytest.fixture(scope="module")
def search_page():
    import matplotlib

    matplotlib.use("Agg")
    return ReportPage(rd.report("deepseek-v3", GPUS, batch=64, context=8192, input_length=1024, output_length=1024,
                                gpus=16, ttft=2.0, tpot=0.05, price_per_hour=3.5, batches=[1, 64], contexts=[8192]))


def test_the_deployment_search_is_the_library_search(search_page):
    cells = [c for c in search_page.cells if c.get("table") == "deployments"]
    for gpu in GPUS:
        result = deployments("deepseek-v3", gpu, 16, 1024, 1024, 2.0, 0.05, price_per_hour=3.5)
        assert search_page.texts["p", "answer", gpu] == result.answer()
        front = result.frontier()
        mine = [c for c in cells if c["device"] == gpu]
        assert front and len(mine) == len(front) * len(DEPLOYMENT_COLUMNS)
        scales = {key: scale for key, _, scale in DEPLOYMENT_COLUMNS}
        for c in mine:
            point = front[int(c["row"])]
            value = point.label if c["key"] == "label" else getattr(point, c["key"])
            if scales[c["key"]] is None:
                assert c["value"] == value
            else:
                assert float(c["value"]) == float(value), c
                assert c["text"] == display(float(value) * scales[c["key"]])
        best = result.best
        assert best is not None and best.tokens_per_s_per_gpu == max(p.tokens_per_s_per_gpu for p in front
                                                                       if p.tpot_s <= 0.05 and p.ttft_s <= 2.0)
    rows = [attrs.get("class") for tag, attrs in search_page.tags if tag == "tr"]
    assert rows.count("best") == len(GPUS)
    # layers of two devices, breakdown, ridge, frontier, and one deployment frontier per device
    assert sum(1 for tag, _ in search_page.tags if tag == "svg") == 2 * len(GPUS) + 3


def test_no_search_without_gpus_and_its_checks(search_page):
    plain = ReportPage(rd.report("llama-3.2-1b", "h100-sxm", batch=4, batches=[4], contexts=[4096]))
    assert not [c for c in plain.cells if c.get("table") in ("deployments", "expected", "expected-serving")]
    assert "Expected performance" not in "".join(c["text"] for c in plain.cells)
    with pytest.raises(InvalidValueError, match="gpus"):
        rd.report("llama-3.2-1b", "h100-sxm", gpus=8)  # no lengths
    with pytest.raises(InvalidValueError, match="tpot"):
        rd.report("llama-3.2-1b", "h100-sxm", tpot=0.05)  # an SLO without the search
    with pytest.raises(InvalidValueError, match="engine"):
        rd.report("llama-3.2-1b", "h100-sxm", engine="no-such-engine")


def test_expected_numbers_are_the_library_expectation(tmp_path):
    page_text = rd.report("llama-3.1-8b", ["h100-sxm", "mi300x"], batch=8, context=4096, parallel="tp2",
                          input_length=1024, output_length=256, engine="vllm", batches=[1, 8], contexts=[4096])
    page = ReportPage(page_text)
    assert page_text.count("Expected numbers are not floors") == 2
    for gpu in ("h100-sxm", "mi300x"):
        e = expected("llama-3.1-8b", gpu, batch=8, context=4096, engine="vllm", tensor_parallel=2)
        low, high = e.tokens_per_s_band
        library = {"floor_step_time_s": e.floor_step_time_s, "step_time_s": e.step_time_s, "lower_s": e.lower_s,
                   "upper_s": e.upper_s, "tokens_per_s": e.tokens_per_s, "tokens_per_s_lower": low,
                   "tokens_per_s_upper": high}
        cells = [c for c in page.cells if c.get("table") == "expected" and c["device"] == gpu]
        assert len(cells) == len(EXPECTED_COLUMNS)
        for c in cells:
            if c["key"] == "basis":
                assert c["value"] == e.basis == "engine profile"
            else:
                assert _same(c["value"], float(np.ravel(library[c["key"]])[0])), c
        assert float(e.step_time_s) >= float(e.floor_step_time_s)
        s = expected("llama-3.1-8b", gpu, batch=8.0, engine="vllm", tensor_parallel=2, prompt=1024, output=256)
        library = {"ttft_floor_s": s.ttft_floor_s, "ttft_s": s.ttft_s, "ttft_lower_s": s.ttft_lower_s,
                   "ttft_upper_s": s.ttft_upper_s, "floor_step_time_s": s.floor_step_time_s,
                   "step_time_s": s.step_time_s, "lower_s": s.lower_s, "upper_s": s.upper_s}
        cells = [c for c in page.cells if c.get("table") == "expected-serving" and c["device"] == gpu]
        assert len(cells) == len(EXPECTED_SERVING_COLUMNS)
        for c in cells:
            assert _same(c["value"], float(np.ravel(library[c["key"]])[0])), c
        assert page.texts["li", "expected", gpu] == f"{gpu}: {e.label}"
        assert page.texts["li", "expected-serving", gpu] == f"{gpu}: {s.label}"
        assert "serving run" in s.label and "decode only" in e.label


def test_the_control_moves_the_layout_table():
    page = ReportPage(rd.report("deepseek-v3", "h200-sxm", batch=64, context=8192, parallel="tp8",
                                batches=[1, 64, 1024], contexts=[0, 8192, 131072]))
    grid = page.grid
    b, t = np.asarray(grid["batches"])[:, None], np.asarray(grid["contexts"])[None, :]
    share = decode_floor("deepseek-v3", "h200-sxm", batch=b, context=t, parallel="tp8")
    columns = grid["devices"][0]["layout"]
    assert [k for k, _, _ in grid["layout_columns"]] == [k for k, _, _ in LAYOUT_COLUMNS] + ["fits"]
    for key, _, scale in LAYOUT_COLUMNS:
        library = np.broadcast_to(getattr(share, key), share.shape).ravel().tolist()
        if scale is None:
            assert columns[key] == [str(v) for v in library], key
        else:
            assert [float(v) for v in columns[key]] == library, key
    fits = (np.broadcast_to(share.resident_bytes_per_device, share.shape) <= usable_memory("h200-sxm")).ravel()
    assert columns["fits"] == fits.tolist() and True in columns["fits"] and False in columns["fits"]
    k = grid["batches"].index(64.0) * len(grid["contexts"]) + grid["contexts"].index(8192.0)
    for c in (c for c in page.cells if c.get("table") == "layout" and c["key"] not in ("bound", "fits")):
        assert float(c["value"]) == pytest.approx(float(columns[c["key"]][k]), rel=1e-12), c["key"]
    # no layout: no layout columns in the grid
    plain = ReportPage(rd.report("llama-3.2-1b", "h100-sxm", batches=[1], contexts=[4096]))
    assert "layout" not in plain.grid["devices"][0]


def test_cli_report_search_and_engine(tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "8", "--isl", "1K", "--osl",
                 "128", "--gpus", "4", "--ttft-ms", "500", "--tpot-ms", "30", "--price-per-hour", "3", "--engine",
                 "vllm", "-o", str(out)]) == 0
    page = ReportPage(out.read_text(encoding="utf-8"))
    result = deployments("llama-3.1-8b", "h100-sxm", 4, 1024, 128, 0.5, 0.03, price_per_hour=3.0)
    assert page.texts["p", "answer", "h100-sxm"] == result.answer()
    assert [c for c in page.cells if c.get("table") == "expected-serving"]
    for argv, flag in ((["--gpus", "4"], "--gpus"), (["--isl", "1K", "--osl", "128", "--tpot-ms", "30"], "--tpot-ms"),
                       (["--price-per-hour", "3"], "--price-per-hour"), (["--engine", "nope"], "--engine"),
                       (["--isl", "1K", "--osl", "128", "--gpus", "0"], "--gpus")):
        capsys.readouterr()
        try:
            code = main(["report", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", *argv, "-o", str(out)])
        except SystemExit as exc:  # argparse refuses a bad number itself
            code = exc.code
        assert code == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and flag in err, (argv, err)


def test_no_expected_serving_where_no_sequence_fits_says_why():
    page = ReportPage(rd.report("deepseek-v3", "rtx-4090", input_length=1024, output_length=128,
                                engine="llama.cpp-cuda", batches=[1], contexts=[4096]))
    cells = [c for c in page.cells if c.get("table") == "expected-serving"]
    assert len(cells) == len(EXPECTED_SERVING_COLUMNS) and all(c["text"] == "n/a" for c in cells)
    assert page.texts["li", "expected-serving", "rtx-4090"].startswith("rtx-4090: no expectation: model=")
    assert [c for c in page.cells if c.get("table") == "expected" and c["key"] == "step_time_s"]
