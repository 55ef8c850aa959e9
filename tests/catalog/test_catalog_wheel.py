"""The built wheel ships the catalog: build it, install it into a temporary folder, load every SKU.

The wheel is built offline with ``pip wheel --no-build-isolation`` when the build backend
(hatchling) is installed in this environment, else with pip's usual isolated build (which
fetches hatchling from the package index).  It is installed with ``pip install --target`` and
imported in a fresh interpreter whose ``PYTHONPATH`` puts that folder first, from a working
directory outside the repository; numpy and pydantic come from this environment.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile

import pytest

from .helpers import ACCELERATOR_FILES, REPO_ROOT, TIER_FILES

PROBE = """
import json, sys
import roofline_decode as rd
from roofline_decode import catalog
from roofline_decode.catalog_docs import render_catalog_page
accelerators = {i: catalog.load_accelerator(i).memory_bandwidth for i in catalog.list_accelerators()}
tiers = {i: catalog.load_memory_tier(i).bandwidth for i in catalog.list_memory_tiers()}
floor = rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=1, context=1024)
print(json.dumps({
    "package": rd.__file__, "specs": str(catalog.bundled_spec_directory()),
    "accelerators": accelerators, "tiers": tiers, "tokens_per_s": float(floor.tokens_per_s),
    "page": render_catalog_page(),
}))
"""


def _pip(*args: str, cwd=None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pip", *args, "--disable-pip-version-check", "--no-input", "-q"]
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel path, folder the wheel is installed in)."""
    out = tmp_path_factory.mktemp("wheel")
    isolation = [] if importlib.util.find_spec("hatchling") else ["--use-pep517"]
    no_isolation = ["--no-build-isolation"] if not isolation else []
    _pip("wheel", "--no-deps", *no_isolation, *isolation, "--wheel-dir", str(out / "dist"), str(REPO_ROOT))
    wheels = list((out / "dist").glob("roofline_decode-*.whl"))
    assert len(wheels) == 1, wheels
    target = out / "site"
    _pip("install", "--no-deps", "--no-index", "--no-compile", "--target", str(target), str(wheels[0]))
    return wheels[0], target


def _run_installed(target, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ROOFLINE_DECODE_SPEC_PATH")}
    env["PYTHONPATH"] = str(target)
    return subprocess.run([sys.executable, *args], cwd=target.parent, env=env, capture_output=True, text=True, timeout=120)


def test_wheel_bundles_every_spec_file_and_the_schemas(installed):
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in ACCELERATOR_FILES + TIER_FILES:
        assert f"roofline_decode/hardware_specs/{path.parent.name}/{path.name}" in names
    assert "roofline_decode/hardware_specs/README.md" in names
    assert "roofline_decode/hardware_specs/schema/accelerator.schema.json" in names
    assert "roofline_decode/catalog_docs.py" in names


def test_installed_wheel_loads_every_sku(installed):
    _, target = installed
    result = _run_installed(target, "-c", PROBE)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["package"].startswith(str(target)), "imported the source tree, not the wheel"
    assert report["specs"] == str(target / "roofline_decode" / "hardware_specs")
    assert sorted(report["accelerators"]) == sorted(p.stem for p in ACCELERATOR_FILES)
    assert sorted(report["tiers"]) == sorted(p.stem for p in TIER_FILES)
    assert report["accelerators"]["h100-sxm"] == 3.35e12
    assert report["tokens_per_s"] > 0
    assert report["page"] == (REPO_ROOT / "docs" / "hardware_catalog.md").read_text(encoding="utf-8")


def test_installed_command_line_lists_the_catalog(installed):
    _, target = installed
    result = _run_installed(target, "-m", "roofline_decode", "list", "gpus")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip().splitlines()) >= 1 + len(ACCELERATOR_FILES)
    result = _run_installed(target, "-m", "roofline_decode", "show", "no-such-gpu")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1


def test_installed_wheel_ships_the_latency_presets(installed):
    wheel, target = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    presets = sorted((REPO_ROOT / "latency_profiles").glob("*.toml"))
    assert presets
    for path in presets:
        assert f"roofline_decode/latency_profiles/{path.name}" in names
    result = _run_installed(target, "-m", "roofline_decode", "list", "latency")
    assert result.returncode == 0, result.stderr
    assert all(path.stem in result.stdout for path in presets)


def test_installed_wheel_ships_the_memory_energies(installed):
    wheel, target = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    files = sorted((REPO_ROOT / "memory_energy").glob("*.toml"))
    assert files
    for path in files:
        assert f"roofline_decode/memory_energy/{path.name}" in names
    result = _run_installed(target, "-c", "from roofline_decode import decode_floor; "
                            "print(float(decode_floor('llama-3.1-8b', 'h200-sxm', batch=1, context=4096)"
                            ".joules_per_token_floor))")
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) == 8 * 15_546_859_520 * 2.4e-12
