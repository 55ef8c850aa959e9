"""The bundled specs agree with the researched reference table where both have a value.

``tests/data/reference_accelerators.csv`` is a copy of ``shared/reference/accelerators.csv``
(the project's researched hardware table: one row per SKU with its source URL, secondary
source and how it was verified), copied so these tests need nothing outside the repository.
Each spec file names its row with ``reference_id``.  Compared after unit conversion: memory
capacity (with the published unit), bandwidth, every dense peak, interconnect bandwidth (with
its stated direction), TDP and on-chip cache.  A CSV value that no file holds must be listed
under "Left out" in hardware_specs/README.md; a file value that differs from the CSV must be
listed in KNOWN_DIFFERENCES below, with the reason.

The copies (this CSV and ``tests/data/measured/*.csv``, the published timings of
``shared/reference/measured/``) must stay byte-for-byte equal to their originals.  ``../shared``
is found beside the project root (``ROOFLINE_DECODE_SHARED`` names another place, e.g. from a
git worktree).  Where it is absent the drift check skips, except under CI (``CI`` set), where
``../shared`` always exists and its absence fails the run instead of hiding the check.
"""

from __future__ import annotations

import csv
import math
import os
import re
from pathlib import Path

import pytest

from roofline_decode.units import BYTE_UNITS, GB, TFLOP

from .helpers import ACCELERATOR_FILES, REPO_ROOT, SPEC_DIR, SPEC_FILES, ids, raw, spec

DATA = Path(__file__).resolve().parents[1] / "data"
CSV_COPY = DATA / "reference_accelerators.csv"
SHARED = Path(os.environ.get("ROOFLINE_DECODE_SHARED") or REPO_ROOT.parent / "shared")
#: copy under tests/data -> original under shared/reference
COPIES = {CSV_COPY: Path("accelerators.csv")} | {
    path: Path("measured") / path.name for path in sorted((DATA / "measured").glob("*.csv"))
}

with CSV_COPY.open(newline="", encoding="utf-8") as _handle:
    ROWS = {row["id"]: row for row in csv.DictReader(_handle)}

PEAK_COLUMNS = {
    "fp32": "fp32_tflops", "tf32": "tf32_tflops_dense", "bf16": "bf16_tflops_dense",
    "fp16": "fp16_tflops_dense", "fp8": "fp8_tflops_dense", "int8": "int8_tops_dense", "fp4": "fp4_tflops_dense",
}
REL_TOL = 1e-3

#: (reference_id, figure) -> why the file differs from the CSV.  Each entry must still differ.
KNOWN_DIFFERENCES = {
    ("google_tpu_v5p", "memory"): "Google's current v5p page prints 95 GiB (96 GiB physical); the CSV "
    "copied the older page's '95GB'",
    ("google_tpu_v5p", "interconnect"): "the CSV stores 600 GB/s with 'direction not stated'; Google's current "
    "page prints 1200 GB/s bidirectional, of which 600 is the per-direction half",
    ("apple_m1_max", "fp32"): "the CSV's 10.4 TFLOPS is Notebookcheck's extrapolation from the M1 (Apple printed "
    "none); the file derives 10.62 from 32 cores x 128 ALUs x 2 x 1.296 GHz (metal-benchmarks), as its fp16",
}


def _reference_id(path: Path) -> str:
    return raw(path)["reference_id"]


def _left_out() -> set[tuple[str, str]]:
    """(reference_id, figure) pairs of the README's "Left out" table."""
    text = (SPEC_DIR / "README.md").read_text(encoding="utf-8")
    section = text.split("## Left out", 1)[1].split("\n## ", 1)[0]
    pairs = set()
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and re.fullmatch(r"[a-z0-9_]+", cells[0]):
            for figure in cells[1].split(","):
                pairs.add((cells[0], figure.split()[0]))
    return pairs


LEFT_OUT = _left_out()

#: Files with a row in the reference CSV (the devices added by issue 13 have none; their figures
#: are pinned to their sources in test_catalog_new_devices.py).
REFERENCED_FILES = [p for p in SPEC_FILES if "reference_id" in raw(p)]
REFERENCED_ACCELERATORS = [p for p in ACCELERATOR_FILES if "reference_id" in raw(p)]


def _shared_reference() -> Path:
    reference = SHARED / "reference"
    if not reference.is_dir():
        message = f"{reference} is not present, so the copies under tests/data are not checked against it"
        if os.environ.get("CI"):
            pytest.fail(f"{message} (CI always has ../shared; set ROOFLINE_DECODE_SHARED if it lives elsewhere)")
        pytest.skip(message)
    return reference


def test_the_measured_copies_are_all_there():
    # the published timings the measure tests read: four CSVs (tests/data/measured/README.md)
    assert {p.name for p in COPIES if p.parent.name == "measured"} == {
        "gpt_fast.csv", "exllama.csv", "knlp_full_model_decode.csv", "knlp_attention_microbench.csv"}


@pytest.mark.parametrize("copy", list(COPIES), ids=[str(p.relative_to(DATA)) for p in COPIES])
def test_the_copy_matches_the_shared_reference(copy):
    original = _shared_reference() / COPIES[copy]
    assert original.is_file(), f"{copy.relative_to(REPO_ROOT)} copies {original}, which no longer exists"
    assert copy.read_bytes() == original.read_bytes(), f"refresh {copy.relative_to(REPO_ROOT)} from {original}"


def test_every_file_names_a_distinct_reference_row():
    # files added without a CSV row (issue 13) are pinned to their sources in test_catalog_new_devices.py
    refs = [_reference_id(p) for p in SPEC_FILES if "reference_id" in raw(p)]
    assert len(refs) == len(set(refs))
    assert set(refs) <= set(ROWS), set(refs) - set(ROWS)


def test_every_reference_row_with_values_has_a_file_or_is_left_out():
    covered = {_reference_id(p) for p in REFERENCED_FILES}
    value_columns = ["memory_gb", "mem_bw_gb_s", "interconnect_gb_s", *PEAK_COLUMNS.values()]
    for row_id, row in ROWS.items():
        if any(row[c] for c in value_columns):
            assert row_id in covered, f"{row_id} has values but no spec file"
        elif row_id not in covered:
            assert (row_id, "whole") in LEFT_OUT, f"{row_id}: say why it has no file under Left out"


def test_left_out_entries_are_really_absent():
    by_ref = {_reference_id(p): p for p in REFERENCED_FILES}
    for row_id, figure in LEFT_OUT:
        assert row_id in ROWS, f"Left out names {row_id}, which is not a CSV row"
        if figure == "whole":
            assert row_id not in by_ref
            continue
        document = raw(by_ref[row_id])
        present = figure in document or figure in document.get("peak_flops", {})
        assert not present, f"{row_id} {figure} is listed as left out but the file has it"


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL)


def _check(row_id: str, figure: str, ok: bool, message: str) -> None:
    if (row_id, figure) in KNOWN_DIFFERENCES:
        assert not ok, f"{(row_id, figure)} agrees with the CSV now: remove it from KNOWN_DIFFERENCES"
    else:
        assert ok, f"{row_id} {figure}: {message}"


def _missing(row_id: str, figure: str) -> None:
    assert (row_id, figure) in LEFT_OUT, (
        f"{row_id}: the CSV has {figure} but the file does not; list it under Left out in hardware_specs/README.md"
    )


@pytest.mark.parametrize("path", REFERENCED_ACCELERATORS, ids=ids(REFERENCED_ACCELERATORS))
def test_accelerator_agrees_with_reference(path):
    row_id = _reference_id(path)
    row = ROWS[row_id]
    gpu = spec(path)

    unit = row["memory_unit_as_published"].split()[0]
    expected = float(row["memory_gb"]) * BYTE_UNITS[unit]
    _check(row_id, "memory", _close(gpu.memory_capacity, expected),
           f"{gpu.figures['memory_capacity'].value} {gpu.figures['memory_capacity'].unit} vs CSV {row['memory_gb']} {unit}")
    _check(row_id, "bandwidth", _close(gpu.memory_bandwidth, float(row["mem_bw_gb_s"]) * GB),
           f"{gpu.memory_bandwidth / GB:g} GB/s vs CSV {row['mem_bw_gb_s']}")

    for precision, column in PEAK_COLUMNS.items():
        if not row[column]:
            continue
        if precision not in gpu.peak_flops:
            _missing(row_id, precision)
            continue
        _check(row_id, precision, _close(gpu.peak_flops[precision], float(row[column]) * TFLOP),
               f"dense {gpu.peak_flops[precision] / TFLOP:g} vs CSV {row[column]}")

    if row["interconnect_gb_s"]:
        if gpu.interconnect is None:
            _missing(row_id, "interconnect")
        else:
            semantics = row["interconnect_bw_semantics"].lower()
            link = gpu.interconnect
            # the CSV states per-direction or bidirectional in words; compare like with like
            value = link.per_direction_bandwidth if semantics.startswith("per direction") else 2 * link.per_direction_bandwidth
            _check(row_id, "interconnect", _close(value, float(row["interconnect_gb_s"]) * GB),
                   f"{link.bandwidth / GB:g} GB/s {link.direction} vs CSV {row['interconnect_gb_s']} ({semantics})")

    if row["tdp_w"]:
        if gpu.tdp_w is None:
            _missing(row_id, "tdp")
        else:
            _check(row_id, "tdp", _close(gpu.tdp_w, float(row["tdp_w"])), f"{gpu.tdp_w} W vs CSV {row['tdp_w']}")

    if row["onchip_cache_mb"]:
        cache = gpu.figures.get("onchip_cache")
        if cache is None:
            _missing(row_id, "onchip_cache")
        else:
            # the CSV column holds the number as printed, in MB or MiB as the file's unit says
            _check(row_id, "onchip_cache", cache.unit in ("MB", "MiB") and _close(cache.value, float(row["onchip_cache_mb"])),
                   f"{cache.value} {cache.unit} vs CSV {row['onchip_cache_mb']}")


#: Tiers with a reference CSV row; the others (the GH200's NVLink-C2C tier) are pinned in test_catalog_devices2.py.
REFERENCED_TIERS = [p for p in SPEC_FILES if p.parent.name == "tiers" and "reference_id" in raw(p)]


@pytest.mark.parametrize("path", REFERENCED_TIERS, ids=ids(REFERENCED_TIERS))
def test_memory_tier_agrees_with_reference(path):
    row_id = _reference_id(path)
    row = ROWS[row_id]
    tier = spec(path)
    # DDR5 rows carry the channel rate as memory bandwidth; PCIe and CXL rows as a link rate
    if row["mem_bw_gb_s"]:
        expected = float(row["mem_bw_gb_s"])
    else:
        assert row["interconnect_bw_semantics"].startswith("per direction") and tier.direction == "per_direction"
        expected = float(row["interconnect_gb_s"])
    _check(row_id, "bandwidth", _close(tier.bandwidth, expected * GB), f"{tier.bandwidth / GB:g} GB/s vs CSV {expected}")


def test_known_differences_name_real_rows():
    for row_id, figure in KNOWN_DIFFERENCES:
        assert row_id in ROWS and figure in ("memory", "bandwidth", "interconnect", "tdp", "onchip_cache", *PEAK_COLUMNS)
