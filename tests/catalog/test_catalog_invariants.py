"""Whole-catalog invariants of the bundled hardware specs (hardware_specs/**.toml).

Ids, provenance (every figure resolves to a source with a URL and an ISO date, derived figures
say how), dense vs sparse, precision ordering, unit classes, and plausibility bands that a unit
slip of 1000x cannot pass.  The policies tested here are in hardware_specs/README.md.
"""

from __future__ import annotations

import datetime
import math
import re
from urllib.parse import urlparse

import pytest

from roofline_decode import catalog
from roofline_decode.specs.accelerator import Accelerator, MemoryTier
from roofline_decode.units import FLOPS_UNITS, GB, MB, TFLOP

from .helpers import ACCELERATOR_FILES, SPEC_FILES, TIER_FILES, ids, raw, spec

ID_PATTERN = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")

#: Compute precisions from widest to narrowest: a narrower one is never slower on the same
#: device (fp32 <= tf32 <= bf16, fp16 <= fp8 <= fp4; int8 >= bf16, fp16).  bf16 and fp16 share
#: a level and are not ordered against each other, nor are int8 and fp8.
PRECISION_LEVEL = {"fp32": 0, "tf32": 1, "bf16": 2, "fp16": 2, "fp8": 3, "int8": 3, "fp4": 4}
ORDERED_PAIRS = [
    (wide, narrow) for wide in PRECISION_LEVEL for narrow in PRECISION_LEVEL
    if PRECISION_LEVEL[wide] < PRECISION_LEVEL[narrow]
]

#: Where a vendor's sparse print is not twice its dense print.  Each entry must still differ
#: (test below), so a fixed file removes its entry.
SPARSE_NOT_TWICE_DENSE = {
    ("l40s", "bf16"): "NVIDIA's L40S datasheet prints 362.05 dense | 733 sparse (2.02x)",
    ("l40s", "fp16"): "NVIDIA's L40S datasheet prints 362.05 dense | 733 sparse (2.02x)",
    ("b300", "fp4"): "HGX B300 prints FP4 108 PF dense | 144 PF sparse: Blackwell Ultra sparsity gives 1.33x",
    ("gb300", "fp4"): "GB300 NVL72 prints FP4 1,080 PF dense | 1,440 PF sparse (per GPU 15 | 20): 1.33x, as on B300",
}

#: Plausible ranges, in the units named.  Each band is narrower than 1000x the smallest value
#: above its floor, so a GB/MB, TB/GB or TFLOP/GFLOP slip on any catalog entry lands outside.
RIDGE_BAND = (4.0, 5000.0)  # FLOP/B, dense and sparse, every precision (DGX Spark sparse fp4: 3663)
CAPACITY_BAND_GB = (4.0, 2000.0)
BANDWIDTH_BAND_GB_S = (50.0, 30000.0)
INTERCONNECT_BAND_GB_S = (20.0, 10000.0)
TDP_BAND_W = (20.0, 3000.0)
CACHE_BAND_MB = (1.0, 1000.0)
TIER_BAND_GB_S = (5.0, 500.0)
PEAK_BAND_TFLOPS = (1.0, 50000.0)


def test_the_catalog_has_40_accelerators_and_the_memory_tiers():
    assert len(ACCELERATOR_FILES) >= 40
    tiers = {p.stem for p in TIER_FILES}
    assert {"pcie4-x16", "pcie5-x16", "cxl2-x8", "cxl2-x16"} <= tiers
    assert any(t.startswith("ddr5-") for t in tiers)
    vendors = {spec(p).vendor for p in ACCELERATOR_FILES}
    assert {"NVIDIA", "AMD", "Google", "AWS", "Apple"} <= vendors and any(v.startswith("Intel") for v in vendors)


def test_ids_are_unique_file_stems(monkeypatch):
    monkeypatch.delenv(catalog.ENV_SPEC_PATH, raising=False)
    stems = [p.stem for p in SPEC_FILES]
    assert len(stems) == len(set(stems)), "two bundled files share an id"
    assert sorted(catalog.list_accelerators()) == sorted(p.stem for p in ACCELERATOR_FILES)
    assert sorted(catalog.list_memory_tiers()) == sorted(p.stem for p in TIER_FILES)
    for path in SPEC_FILES:
        assert spec(path).id == path.stem
        assert ID_PATTERN.match(path.stem), f"{path.stem!r} is not lowercase kebab-case"


@pytest.mark.parametrize("path", SPEC_FILES, ids=ids(SPEC_FILES))
def test_file_sits_in_its_vendor_folder_with_the_right_type(path):
    loaded = spec(path)
    if path.parent.name == "tiers":
        assert isinstance(loaded, MemoryTier)
    else:
        assert isinstance(loaded, Accelerator)
        assert loaded.vendor.lower().startswith(path.parent.name), (loaded.vendor, path.parent.name)
    assert path.parent.parent == catalog.bundled_spec_directory()


@pytest.mark.parametrize("path", SPEC_FILES, ids=ids(SPEC_FILES))
def test_every_figure_resolves_to_a_source_with_url_and_iso_date(path):
    loaded = spec(path)
    assert loaded.figures, "a bundled spec without figures"
    for key, figure in loaded.figures.items():
        source = loaded.sources.get(figure.source)
        assert source is not None, f"{key} cites {figure.source!r}"
        url = urlparse(source.url)
        assert url.scheme in ("http", "https") and "." in url.netloc, (key, source.url)
        retrieved = datetime.date.fromisoformat(source.retrieved)
        assert datetime.date(2020, 1, 1) <= retrieved <= datetime.date.today(), (key, source.retrieved)
        assert source.title.strip()
    cited = {figure.source for figure in loaded.figures.values()}
    assert set(loaded.sources) == cited, f"sources nobody cites: {set(loaded.sources) - cited}"


@pytest.mark.parametrize("path", SPEC_FILES, ids=ids(SPEC_FILES))
def test_derived_figures_say_how_and_datasheet_figures_do_not_compute(path):
    for key, figure in spec(path).figures.items():
        if figure.kind == "derived":
            assert figure.derivation and figure.derivation.strip(), key
        else:
            assert figure.derivation is None, f"{key} is {figure.kind} but has a derivation"
        if figure.kind == "measured":
            assert figure.note or spec(path).notes, f"{key}: a measured figure says what was measured"


@pytest.mark.parametrize("path", ACCELERATOR_FILES, ids=ids(ACCELERATOR_FILES))
def test_peaks_use_operation_units_and_si_values_match_the_printed_ones(path):
    gpu = spec(path)
    for key, figure in gpu.figures.items():
        if key.startswith(("peak_flops.", "sparse_peak_flops.")):
            integer = key.endswith(".int8")
            assert figure.unit in FLOPS_UNITS
            assert ("FLOP" not in figure.unit) == integer, f"{key} in {figure.unit}"
        assert figure.si_value > 0 and math.isfinite(figure.si_value)
    assert gpu.memory_capacity == gpu.figures["memory_capacity"].si_value
    assert gpu.memory_bandwidth == gpu.figures["memory_bandwidth"].si_value
    for precision, value in gpu.peak_flops.items():
        assert value == gpu.figures[f"peak_flops.{precision}"].si_value


def _half_ulp(value: float) -> float:
    """Half a unit in the last printed digit of a value as the TOML file writes it."""
    text = repr(float(value)).removesuffix(".0")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10.0**-decimals


@pytest.mark.parametrize("path", ACCELERATOR_FILES, ids=ids(ACCELERATOR_FILES))
def test_dense_never_above_sparse_and_sparse_is_twice_dense(path):
    gpu = spec(path)
    for precision, sparse in gpu.sparse_peak_flops.items():
        assert precision in gpu.peak_flops, f"sparse {precision} without its dense figure"
        dense = gpu.peak_flops[precision]
        assert dense <= sparse, precision
        dense_fig = gpu.figures[f"peak_flops.{precision}"]
        sparse_fig = gpu.figures[f"sparse_peak_flops.{precision}"]
        # both prints carry rounding: allow 2 x (half a digit of dense) + half a digit of sparse
        tolerance = (2 * _half_ulp(dense_fig.value) * dense_fig.si_value / dense_fig.value
                     + _half_ulp(sparse_fig.value) * sparse_fig.si_value / sparse_fig.value)
        twice = abs(sparse - 2 * dense) <= tolerance
        known = SPARSE_NOT_TWICE_DENSE.get((path.stem, precision))
        if known is None:
            assert twice, f"{precision}: sparse {sparse_fig.value} {sparse_fig.unit} != 2 x dense {dense_fig.value}"
        else:
            assert not twice, f"{(path.stem, precision)} is listed as an exception but is now 2x: remove it"


def test_sparse_exceptions_name_real_figures():
    for gpu_id, precision in SPARSE_NOT_TWICE_DENSE:
        gpu = catalog.load_accelerator(gpu_id)
        assert precision in gpu.sparse_peak_flops and precision in gpu.peak_flops


@pytest.mark.parametrize("path", ACCELERATOR_FILES, ids=ids(ACCELERATOR_FILES))
def test_lower_precision_is_never_slower(path):
    gpu = spec(path)
    for table in (gpu.peak_flops, gpu.sparse_peak_flops):
        for wide, narrow in ORDERED_PAIRS:
            if wide in table and narrow in table:
                assert table[narrow] >= table[wide], f"{narrow} {table[narrow]:.4g} < {wide} {table[wide]:.4g}"


def _inside(value: float, band: tuple[float, float]) -> bool:
    return band[0] <= value <= band[1]


@pytest.mark.parametrize("path", ACCELERATOR_FILES, ids=ids(ACCELERATOR_FILES))
def test_ridge_points_and_figures_inside_plausible_bands(path):
    gpu = spec(path)
    for sparse, table in ((False, gpu.peak_flops), (True, gpu.sparse_peak_flops)):
        for precision, peak in table.items():
            ridge = gpu.ridge_point(precision, sparse=sparse)
            assert _inside(ridge, RIDGE_BAND), f"ridge {precision} = {ridge:.4g} FLOP/B"
            # the band is tight enough that a 1000x slip in the peak or the bandwidth fails
            assert not _inside(ridge * 1000, RIDGE_BAND) and not _inside(ridge / 1000, RIDGE_BAND)
            assert _inside(peak / TFLOP, PEAK_BAND_TFLOPS), precision
    checks = [
        (gpu.memory_capacity / GB, CAPACITY_BAND_GB, "memory_capacity"),
        (gpu.memory_bandwidth / GB, BANDWIDTH_BAND_GB_S, "memory_bandwidth"),
    ]
    if gpu.tdp_w is not None:
        checks.append((gpu.tdp_w, TDP_BAND_W, "tdp"))
    if gpu.interconnect is not None:
        checks.append((gpu.interconnect.bandwidth / GB, INTERCONNECT_BAND_GB_S, "interconnect"))
    if "onchip_cache" in gpu.figures:
        checks.append((gpu.figures["onchip_cache"].si_value / MB, CACHE_BAND_MB, "onchip_cache"))
    for value, band, name in checks:
        assert _inside(value, band), f"{name} = {value:.4g} outside {band}"


@pytest.mark.parametrize("path", TIER_FILES, ids=ids(TIER_FILES))
def test_memory_tiers_inside_plausible_band(path):
    tier = spec(path)
    assert _inside(tier.bandwidth / GB, TIER_BAND_GB_S)
    assert not _inside(tier.bandwidth / GB * 1000, TIER_BAND_GB_S)
    assert not _inside(tier.bandwidth / GB / 1000, TIER_BAND_GB_S)
    assert tier.direction in ("per_direction", "half_duplex")  # no tier is quoted as a two-way sum


@pytest.mark.parametrize("path", ACCELERATOR_FILES, ids=ids(ACCELERATOR_FILES))
def test_interconnect_states_direction_and_scope(path):
    document = raw(path)
    if "interconnect" not in document:
        return
    link = spec(path).interconnect
    assert link.direction in ("bidirectional", "per_direction")
    assert link.scope in ("aggregate", "per_peer")
    expected = link.bandwidth / 2 if link.direction == "bidirectional" else link.bandwidth
    assert link.per_direction_bandwidth == expected


def test_plausibility_bands_reject_a_unit_slip():
    # the same H100 file with its bandwidth in GB/s instead of TB/s: ridge 1000x higher
    h100 = catalog.load_accelerator("h100-sxm")
    slipped = h100.replace(memory_bandwidth=h100.memory_bandwidth / 1000, figures={}, sources={})
    assert not _inside(slipped.ridge_point("bf16"), RIDGE_BAND)
    assert not _inside(slipped.memory_bandwidth / GB, BANDWIDTH_BAND_GB_S)
