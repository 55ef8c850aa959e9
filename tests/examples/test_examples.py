"""Every example runs headless and writes its figure where it is told; the notebook runs too."""

from __future__ import annotations

import math
import os
import re
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib
import pytest

import roofline_decode as rd
from roofline_decode import plotting

matplotlib.use("Agg")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPTS = sorted(EXAMPLES.glob("*.py"))


def _ridge_llama8b(out: str) -> None:
    # the printed critical batches are the floors' own (smallest whole batch), per GPU and context
    for gpu in ("a100-80gb-sxm", "h100-sxm", "h200-sxm", "mi300x"):
        floor = rd.decode_floor("llama-3.1-8b", gpu, batch=1, context=[256, 4096])
        short, long = floor.critical_batch
        assert not math.isfinite(long)
        assert re.search(rf"{gpu}\s+ridge\s+{floor.ridge_point:.1f} FLOP/B; .*critical batch "
                         rf"{math.ceil(short)} at 256 tokens, none at 4096 tokens", out), gpu


def _worked_example(out: str) -> None:
    # the claim: >= 20 ms per step and <= 50 steps/s for ~20 GB through 1 TB/s; batch 4 shares the pass
    gb, ms, steps = map(float, re.search(r"batch 1: reads ([\d.]+) GB per step -> step >= ([\d.]+) ms, "
                                         r"<= ([\d.]+) steps/s", out).groups())
    assert abs(gb - 20) / 20 < 0.02 and abs(ms - 20) / 20 < 0.02 and abs(steps - 50) / 50 < 0.02
    rate, step = map(float, re.search(r"batching 4 requests: ([\d.]+)x the tokens/s for ([\d.]+)x", out).groups())
    assert rate == pytest.approx(4.0, rel=1e-3) and step == pytest.approx(1.0, rel=1e-3)


def _scaling_book(out: str) -> None:
    # Austin et al., How to Scale Your Model, Part 7: B* = 1.97e14 / 8.2e11 = 240 (bf16), 120 (int8)
    assert re.search(r"ridge point of TPU v5e \(Scaling Book figures\): 240\.2 FLOP/B", out)
    for weights, published in (("bf16", 240), ("int8", 120)):
        value = float(re.search(rf"{weights} weights \(compute in bf16\): critical batch ([\d.]+) at context 0",
                                out).group(1))
        assert abs(value - published) / published < 0.01, (weights, value)


def _capacity_map(out: str) -> None:
    for gpu in ("h200-sxm", "mi300x"):
        model = rd.load_model("llama-3.1-70b", weights="fp8", kv="fp8")
        limit = plotting.max_batch(model, gpu, 4096)
        assert f"on {gpu}: largest batch {limit:.0f} at 4k" in out


def _energy_cost_table(out: str) -> None:
    # the table of docs/energy.md (checked there by tests/energy/test_energy_cost_table.py)
    assert "| llama-3.1-8b | h100-sxm | 1 | 1 | 0.5336 | 3.249 | 3.867 |" in out
    assert "| llama-3.1-70b | h100-sxm | 1 | 2 |" in out  # 70B bf16 does not fit one H100


#: What each script must print: the figures it reproduces.
EXPECTED = {
    "ridge_llama8b_gpus.py": _ridge_llama8b,
    "worked_example_20gb.py": _worked_example,
    "scaling_book_critical_batch.py": _scaling_book,
    "capacity_map_70b.py": _capacity_map,
    "energy_cost_table.py": _energy_cost_table,
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
    EXPECTED[script.name](out)
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
