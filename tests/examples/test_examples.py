"""Every example runs headless and writes its figure where it is told; the notebook runs too."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPTS = sorted(EXAMPLES.glob("*.py"))

#: What each script must print: the figures it reproduces.
EXPECTED = {
    "ridge_llama8b_gpus.py": [r"h100-sxm\s+ridge\s+295\.4 FLOP/B", r"critical batch 855 at 256 tokens, none at 4096"],
    "worked_example_20gb.py": [r"batch 1: reads 19\.81 GB per step -> step >= 19\.81 ms, <= 50\.5 steps/s",
                               r"batch 4: .* 201\.9 tokens/s in all, 50\.5 per sequence",
                               r"4\.000x the tokens/s for 1\.0000x the step time"],
    "scaling_book_critical_batch.py": [r"ridge point of TPU v5e \(Scaling Book figures\): 240\.2 FLOP/B",
                                       r"bf16 weights \(compute in bf16\): critical batch 240\.4 at context 0",
                                       r"int8 weights \(compute in bf16\): critical batch 120\.2 at context 0"],
    "capacity_map_70b.py": [r"on h200-sxm: largest batch \d+ at 4k", r"on mi300x: largest batch \d+ at 4k"],
}


def test_every_script_is_covered_and_documented():
    assert {p.name for p in SCRIPTS} == set(EXPECTED)
    for script in SCRIPTS:
        text = script.read_text()
        assert text.startswith('"""') and "Run: ``python examples/" in text, script.name


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_example_runs_headless_and_writes_into_the_given_folder(script, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [str(script), str(tmp_path)])
    runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out
    for pattern in EXPECTED[script.name]:
        assert re.search(pattern, out), (pattern, out)
    written = [Path(line.removeprefix("wrote ")) for line in out.splitlines() if line.startswith("wrote ")]
    assert written and all(p.parent == tmp_path and p.read_bytes().startswith(b"\x89PNG") for p in written)


def test_example_runs_as_a_script_with_the_output_folder_from_the_environment(tmp_path):
    env = dict(os.environ, ROOFLINE_EXAMPLES_OUT=str(tmp_path), MPLBACKEND="Agg")
    run = subprocess.run([sys.executable, str(EXAMPLES / "capacity_map_70b.py")], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "capacity_map_70b.png").is_file()


def test_default_output_folder_is_in_the_temp_directory(monkeypatch):
    monkeypatch.delenv("ROOFLINE_EXAMPLES_OUT", raising=False)
    monkeypatch.setattr(sys, "argv", ["x"])
    module = runpy.run_path(str(EXAMPLES / "worked_example_20gb.py"))  # defines, does not run main()
    assert module["output_dir"]() == Path(tempfile.gettempdir()) / "roofline_decode_examples"


def test_notebook_runs_headless(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("ROOFLINE_EXAMPLES_OUT", str(tmp_path))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(EXAMPLES / "ridge_point_tour.ipynb", as_version=4)
    assert notebook.cells[0].cell_type == "markdown" and "ridge point" in notebook.cells[0].source
    # "python3" is the kernel ipykernel installs into the environment (and jupyter_client's
    # native kernel, run with this interpreter), so it resolves in a fresh virtual environment.
    client = nbclient.NotebookClient(notebook, kernel_name="python3", timeout=180,
                                     resources={"metadata": {"path": str(EXAMPLES)}})
    client.execute()
    errors = [o for cell in notebook.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    names = {"ridge", "batch", "context", "breakdown", "capacity"}
    assert {p.name for p in tmp_path.iterdir()} == {f"tour_{n}.png" for n in names}
    last = notebook.cells[-1]["outputs"][0]["text"]
    assert re.search(r"largest batch at 8k context: \d+", last)
