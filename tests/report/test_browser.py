"""The report in a real browser: headless Chromium loads the page, the control moves (a URL
fragment picks the grid point on load), the numbers change to the library's, and the console
holds nothing but the page's own update lines.

Chromium is driven from the command line (``--dump-dom``, ``--screenshot``, the console on
stderr with ``--enable-logging``): no browser-automation package.  Without Chromium the test
skips (``apt-get install chromium`` on Debian; ``.ci/run`` installs it and sets
``ROOFLINE_DECODE_BROWSER_TEST=required``, which turns the skip into a failure).
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode import decode_floor
from roofline_decode.report.data import FLOOR_COLUMNS
from roofline_decode.report.page import display

from .page_parser import ReportPage

CHROMIUM = next((p for p in (shutil.which("chromium"), "/usr/bin/chromium", shutil.which("chromium-browser"))
                 if p and Path(p).exists()), None)
REQUIRED = os.environ.get("ROOFLINE_DECODE_BROWSER_TEST") == "required"

if CHROMIUM is None and REQUIRED:
    pytest.fail("ROOFLINE_DECODE_BROWSER_TEST=required but no Chromium: apt-get install chromium", pytrace=False)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium: apt-get install chromium (Debian) "
                                                          "to run the browser test")

MODEL, GPUS = "llama-3.1-8b", ["h100-sxm", "mi300x"]
#: console lines as Chromium logs them to stderr: ...:CONSOLE:12] "text", source: ... (or CONSOLE(12))
CONSOLE = re.compile(r':CONSOLE[:(]\d*\)?\] "(.*)", source: ')


def chromium(url, *arguments, profile):
    run = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
         f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *arguments, url],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    return run.stdout, [m.group(1) for m in CONSOLE.finditer(run.stderr)]


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    import matplotlib

    matplotlib.use("Agg")
    path = tmp_path_factory.mktemp("report") / "report.html"
    rd.report(MODEL, GPUS, batch=8, context=4096, output=path)
    return path


def test_the_control_moves_the_numbers_to_the_library_grid(page_file, tmp_path):
    before = ReportPage(page_file.read_text(encoding="utf-8"))
    dom, console = chromium(f"{page_file.as_uri()}#batch=256&context=32768", "--dump-dom", profile=tmp_path / "p")
    after = ReportPage(dom)
    body = next(attrs for tag, attrs in after.tags if tag == "body")
    assert body == {"data-batch": "256", "data-context": "32768", "data-ready": "yes"}, body
    assert console and all(line.startswith("roofline-report ") for line in console), console  # no error, no warning
    floors = {(c["device"], c["key"]): c for c in after.cells if c.get("table") == "floors"}
    initial = {(c["device"], c["key"]): c for c in before.cells if c.get("table") == "floors"}
    grid_index = (after.grid["batches"].index(256.0), after.grid["contexts"].index(32768.0))
    for gpu in GPUS:
        library = decode_floor(MODEL, gpu, batch=np.asarray(after.grid["batches"])[:, None],
                               context=np.asarray(after.grid["contexts"])[None, :])
        point = decode_floor(MODEL, gpu, batch=256, context=32768)
        step = floors[gpu, "step_time_s"]
        assert float(step["value"]) == float(library.step_time_s[grid_index])
        assert float(step["value"]) == pytest.approx(float(point.step_time_s), rel=1e-12)
        assert step["text"] == display(float(step["value"]) * 1e3) != initial[gpu, "step_time_s"]["text"]
        assert floors[gpu, "fits"]["value"] == "false" and initial[gpu, "fits"]["value"] == "true"
        assert any("does not fit" in note for note in after.notes[gpu])
        for key, _, scale in FLOOR_COLUMNS:
            if scale is not None:
                assert floors[gpu, key]["text"] == display(float(floors[gpu, key]["value"]) * scale), key
        layers = {c["layer"]: c for c in after.cells if c["table_device"] == gpu and c.get("key") == "flops"}
        for row in library.layers():
            assert float(layers[row.kind]["value"]) == float(row.flops[grid_index])


def test_screenshot(page_file, tmp_path):
    shot = tmp_path / "report.png"
    _, console = chromium(f"{page_file.as_uri()}#batch=64&context=0", f"--screenshot={shot}",
                          "--window-size=1280,1600", "--hide-scrollbars", profile=tmp_path / "p")
    assert all(line.startswith("roofline-report ") for line in console), console
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
    keep = os.environ.get("ROOFLINE_DECODE_SCREENSHOT")  # a path: keep the screenshot to look at
    if keep:
        shutil.copy(shot, keep)


def test_the_control_moves_the_layout_table_and_the_answers_stay(tmp_path):
    """Under a layout the control moves the deployment table to the layout floor at the new point;
    the expected and deployment-search sections load without a console error."""
    path = tmp_path / "layout.html"
    rd.report(MODEL, GPUS, batch=8, context=4096, parallel="tp2", input_length=1024, output_length=128, gpus=4,
              tpot=0.03, engine="vllm", output=path)
    dom, console = chromium(f"{path.as_uri()}#batch=256&context=32768", "--dump-dom", profile=tmp_path / "p")
    assert all(line.startswith("roofline-report ") for line in console), console
    after = ReportPage(dom)
    assert next(attrs for tag, attrs in after.tags if tag == "body")["data-batch"] == "256"
    for gpu in GPUS:
        share = decode_floor(MODEL, gpu, batch=256, context=32768, parallel="tp2")
        layout = {c["key"]: c for c in after.cells if c.get("table") == "layout" and c["device"] == gpu}
        assert float(layout["step_time_s"]["value"]) == pytest.approx(float(share.step_time_s), rel=1e-12)
        assert layout["step_time_s"]["text"] == display(float(layout["step_time_s"]["value"]) * 1e3)
        assert float(layout["communication_time_s"]["value"]) == pytest.approx(float(share.communication_time_s),
                                                                               rel=1e-12)
        assert layout["bound"]["value"] == str(share.bound)
    assert [c for c in after.cells if c.get("table") == "deployments"]
    assert [c for c in after.cells if c.get("table") == "expected"]
