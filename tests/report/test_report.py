"""The HTML report: every number in the page is the library's (parsed back and compared)."""

import math

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode import decode_floor, load_accelerator
from roofline_decode.cli import main
from roofline_decode.errors import InvalidValueError
from roofline_decode.report.data import FLOOR_COLUMNS, LAYER_COLUMNS
from roofline_decode.report.page import display

from .page_parser import ReportPage

GPUS = ["h100-sxm", "mi300x"]


@pytest.fixture(scope="module")
def moe_page():
    import matplotlib

    matplotlib.use("Agg")
    return ReportPage(rd.report("qwen3-30b-a3b", GPUS, batch=8, context=8192))


def _value(text):
    return {"True": True, "False": False, "true": True, "false": False}.get(text, text)


def test_floor_cells_are_the_library_numbers(moe_page):
    cells = [c for c in moe_page.cells if c.get("table") == "floors"]
    assert len(cells) == len(GPUS) * len(FLOOR_COLUMNS)
    for gpu in GPUS:
        floor = decode_floor("qwen3-30b-a3b", gpu, batch=8, context=8192)
        for cell in (c for c in cells if c["device"] == gpu):
            expected = np.asarray(getattr(floor, cell["key"]))
            if cell["key"] == "bound":
                assert cell["value"] == str(expected)
            elif cell["key"] == "fits":
                assert cell["value"] == str(bool(expected)).lower()
            else:
                assert float(cell["value"]) == float(expected) or (math.isnan(float(expected))
                                                                   and math.isnan(float(cell["value"]))), cell


def test_layer_cells_are_the_library_numbers(moe_page):
    for gpu in GPUS:
        table = decode_floor("qwen3-30b-a3b", gpu, batch=8, context=8192).layers()
        cells = [c for c in moe_page.cells if c["table_device"] == gpu and c["layer"]]
        assert {c["layer"] for c in cells} == {row.kind for row in table} | {"step"}
        floor = table.floor
        for cell in (c for c in cells if c["layer"] == "step"):  # the step's own numbers
            expected = {"kv_bytes": floor.kv_read_bytes + floor.kv_write_bytes, "share": 1.0}.get(cell["key"])
            expected = getattr(floor, cell["key"]) if expected is None else expected
            assert cell["value"] == str(expected) if cell["key"] == "bound" else float(cell["value"]) == float(expected)
        cells = [c for c in cells if c["layer"] != "step"]
        for cell in cells:
            row = table[cell["layer"]]
            expected = {"kv_bytes": row.kv_read_bytes + row.kv_write_bytes,
                        "share": row.bytes_total / table.floor.bytes_total}.get(cell["key"])
            expected = getattr(row, cell["key"]) if expected is None else expected
            if cell["key"] == "bound":
                assert cell["value"] == str(expected)
            else:
                assert float(cell["value"]) == float(expected), cell
        assert math.fsum(float(c["value"]) for c in cells if c["key"] == "bytes_total") == float(
            table.floor.bytes_total)


def test_display_text_follows_the_value(moe_page):
    for cell in moe_page.cells:
        key = cell.get("key")
        scale = dict((k, s) for k, _, s in FLOOR_COLUMNS + LAYER_COLUMNS).get(key)
        if scale is not None and cell.get("kind") is None:
            assert cell["text"] == display(float(cell["value"]) * scale)
    assert display(1234.5678) == "1235" and display(0.0001234) == "1.234e-4" and display(float("inf")) == "inf"
    assert display(float("nan")) == "n/a" and display(12_345_678) == "1.235e7" and display(0) == "0"


def test_grid_is_the_library_grid(moe_page):
    grid = moe_page.grid
    b, t = np.asarray(grid["batches"])[:, None], np.asarray(grid["contexts"])[None, :]
    assert 8.0 in grid["batches"] and 8192.0 in grid["contexts"]
    for device in grid["devices"]:
        floor = decode_floor("qwen3-30b-a3b", device["id"], batch=b, context=t)
        for key, _, scale in FLOOR_COLUMNS:
            expected = np.broadcast_to(getattr(floor, key), floor.shape).ravel().tolist()
            values = device["columns"][key]
            if scale is None:
                assert values == [e if key == "fits" else str(e) for e in expected], key
            else:
                assert [float(v) for v in values] == pytest.approx(expected, rel=0, abs=0, nan_ok=True), key
        table = floor.layers()
        assert device["layers"][-1]["layer"] == "step"
        assert [float(v) for v in device["layers"][-1]["flops"]] == np.ravel(floor.flops).tolist()
        for row, data in zip(table, device["layers"]):
            assert data["layer"] == row.kind
            assert [float(v) for v in data["flops"]] == np.ravel(row.flops).tolist()
            assert [float(v) for v in data["memory_time_s"]] == np.ravel(row.memory_time_s).tolist()
        records = floor.to_records()
        assert [[grid["notes"][i] for i in point] for point in device["notes"]] == [r["notes"] for r in records]


def test_notes_and_sources(moe_page):
    for gpu in GPUS:
        floor = decode_floor("qwen3-30b-a3b", gpu, batch=8, context=8192)
        assert moe_page.notes[gpu] == (floor.to_records()[0]["notes"] or [
            "none: the point fits and no assumption beyond the conventions applies"])
        device = load_accelerator(gpu)
        figures = {attrs["data-figure"] for tag, attrs in moe_page.tags if tag == "tr" and "data-figure" in attrs}
        assert set(device.figures) <= figures
        links = {attrs["href"] for tag, attrs in moe_page.tags if tag == "a"}
        assert {device.sources[f.source].url for f in device.figures.values()} <= links
    bandwidth = [c for c in moe_page.cells if "si-value" in c]
    assert any(float(c["si-value"]) == load_accelerator("h100-sxm").memory_bandwidth for c in bandwidth)


def test_the_page_is_self_contained(moe_page):
    for tag, attrs in moe_page.tags:
        assert tag not in ("link", "iframe", "img", "object", "embed"), tag
        assert not (tag == "script" and "src" in attrs)
        assert not any(k in ("src", "srcset") for k in attrs)
        if tag == "image":  # SVG images would be a fetch too
            pytest.fail("an <image> in an SVG")
    # the layers plot of each device, breakdown, ridge, frontier
    assert sum(1 for tag, _ in moe_page.tags if tag == "svg") == len(GPUS) + 3


def test_report_writes_the_file_and_checks_its_input(tmp_path):
    out = tmp_path / "sub" / "r.html"
    page = rd.report("llama-3.2-1b", "h100-sxm", batch=4, context=1024, output=out, batches=[1, 16],
                     contexts=[0, 4096])
    assert out.read_text(encoding="utf-8") == page
    grid = ReportPage(page).grid
    assert grid["batches"] == [1.0, 4.0, 16.0] and grid["contexts"] == [0.0, 1024.0, 4096.0]
    with pytest.raises(InvalidValueError, match="batch"):
        rd.report("llama-3.2-1b", "h100-sxm", batch=[1, 2])
    with pytest.raises(InvalidValueError, match="routing"):
        rd.report("llama-3.2-1b", "h100-sxm", routing="skewed")
    with pytest.raises(InvalidValueError, match="batches"):
        rd.report("llama-3.2-1b", "h100-sxm", batches=[0.5, 2])
    with pytest.raises(InvalidValueError, match="contexts"):
        rd.report("llama-3.2-1b", "h100-sxm", contexts=["long"])
    with pytest.raises(InvalidValueError, match="accelerators"):
        rd.report("llama-3.2-1b", [])
    with pytest.raises(InvalidValueError, match="grid points"):
        rd.report("llama-3.2-1b", "h100-sxm", batches=range(1, 100), contexts=range(0, 100))


def test_the_package_calls_report_too():
    import roofline_decode.report as package

    assert callable(package) and callable(rd.report)


def test_cli_report(tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", "--model", "gemma-3-4b", "--gpu", "l4", "--batch", "2", "--context", "2K", "-o",
                 str(out)]) == 0
    assert "report written" in capsys.readouterr().out
    page = ReportPage(out.read_text(encoding="utf-8"))
    assert 2048.0 in page.grid["contexts"]
    assert main(["report", "--model", "gemma-3-4b", "--gpu", "l4", "--batch", "1,2", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--batch" in err
    assert main(["report", "--model", "gemma-3-4b", "--gpu", "l4", "-o", str(tmp_path / "r.png")]) == 2
    assert "--output" in capsys.readouterr().err


def test_frontier_envelope_is_the_library_envelope(moe_page):
    from roofline_decode.planning import frontier

    envelope = frontier("qwen3-30b-a3b", GPUS, 8192).envelope()
    cells = [c for c in moe_page.cells if c.get("table") == "frontier"]
    for key in ("batch", "tokens_per_s_per_user", "tokens_per_s_per_device", "step_time_s"):
        assert [float(c["value"]) for c in cells if c["key"] == key] == [getattr(p, key) for p in envelope]


def test_a_layout_adds_the_deployment_floor(tmp_path, capsys):
    from roofline_decode.floors.capacity import usable_memory
    from roofline_decode.report.data import LAYOUT_COLUMNS

    page = ReportPage(rd.report("deepseek-v3", ["h200-sxm", "mi300x"], batch=64, context=8192, parallel="tp8",
                                batches=[1, 64], contexts=[8192]))
    cells = [c for c in page.cells if c.get("table") == "layout"]
    assert len(cells) == 2 * (len(LAYOUT_COLUMNS) + 1)
    for gpu in ("h200-sxm", "mi300x"):
        share = decode_floor("deepseek-v3", gpu, batch=64, context=8192, parallel="tp8")
        for cell in (c for c in cells if c["device"] == gpu):
            if cell["key"] == "fits":  # 88.75 GB of weights and cache per device
                expected = float(share.resident_bytes_per_device) <= usable_memory(gpu)
                assert cell["value"] == str(expected).lower() == "true"
            elif cell["key"] == "bound":
                assert cell["value"] == str(share.bound)
            else:
                assert float(cell["value"]) == float(getattr(share, cell["key"])), cell["key"]
    # the single-device floor table stays: it does not fit one H200
    assert [c["value"] for c in page.cells if c.get("table") == "floors" and c["key"] == "fits"] == ["false", "false"]
    out = tmp_path / "r.html"
    assert main(["report", "--model", "llama-3.2-1b", "--gpu", "h200-sxm", "--tp", "2", "--link-gbps", "450", "-o",
                 str(out)]) == 0
    assert "Link overrides (link_bandwidth 450 GB/s)" in out.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["report", "--model", "llama-3.2-1b", "--gpu", "h200-sxm", "--tp", "3", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--tp=3" in err


def test_no_layout_no_deployment_section(moe_page):
    assert not [c for c in moe_page.cells if c.get("table") == "layout"]


def test_input_and_output_lengths_add_the_serving_floors(tmp_path, capsys):
    from roofline_decode import serving_floor
    from roofline_decode.report.data import SERVING_COLUMNS

    page = ReportPage(rd.report("llama-3.1-8b", ["h100-sxm", "mi300x"], batch=16, context=4096, parallel="tp2",
                                input_length=2048, output_length=256, batches=[1, 16], contexts=[4096]))
    cells = [c for c in page.cells if c.get("table") == "serving"]
    assert len(cells) == 2 * len(SERVING_COLUMNS)
    for gpu in ("h100-sxm", "mi300x"):
        floor = serving_floor("llama-3.1-8b", gpu, 16, 2048, 256, parallel="tp2")
        for cell in (c for c in cells if c["device"] == gpu):
            expected = np.asarray(getattr(floor, cell["key"]))
            if cell["key"] == "limited_by":
                assert cell["value"] == str(expected)
            else:
                assert float(cell["value"]) == float(expected), cell["key"]
    with pytest.raises(InvalidValueError, match="both"):
        rd.report("llama-3.1-8b", "h100-sxm", input_length=2048)
    out = tmp_path / "r.html"
    assert main(["report", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--isl", "1K", "--osl", "128", "-o",
                 str(out)]) == 0
    assert "<h2>Serving: 1 clients, 1024 tokens in, 128 out" in out.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["report", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--osl", "128", "-o", str(out)]) == 2
    assert "--isl/--osl" in capsys.readouterr().err
