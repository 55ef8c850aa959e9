"""Catalog summaries, and the generated catalog page ``docs/hardware_catalog.md``.

The page lists every bundled accelerator (a table per vendor: memory as printed, bandwidth,
dense bf16 and fp8 peaks, ridge point, interconnect, scale-out, links to sources) and every memory tier.
It is generated from ``hardware_specs/`` together with the exported JSON schemas of the spec
files (``hardware_specs/schema/*.schema.json``); tests check that the checked-in copies are
current.  In a source checkout::

    python -m roofline_decode.catalog_docs           # rewrite the page and the schemas
    python -m roofline_decode.catalog_docs --check   # exit 1 if any of them is stale

Examples
--------
>>> from roofline_decode.catalog import load_accelerator
>>> gpu = load_accelerator("tpu-v4")
>>> printed(gpu.figures["memory_capacity"]), headline_peak(gpu)
('32 GiB', ('bf16', 275000000000000.0))
>>> headline_peak(load_accelerator("t4"))       # no bf16 on Turing: the fp16 peak instead
('fp16', 65000000000000.0)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .catalog import bundled_spec_directory
from .specs.accelerator import Accelerator, Figure, MemoryTier
from .specs.spec_file import SCHEMA_FILES, load_spec_file, schema_text
from .units import GB, TFLOP

__all__ = [
    "printed",
    "headline_peak",
    "HEADLINE_PRECISIONS",
    "bundled_specs",
    "render_catalog_page",
    "generated_files",
    "main",
]

#: The dense peak shown as "dense bf16" in listings, in order of preference (fp16 where a
#: device has no bf16, e.g. V100 and T4).
HEADLINE_PRECISIONS = ("bf16", "fp16")

#: Vendor folders in the order the page lists them; other folders follow alphabetically.
VENDOR_FOLDERS = ("nvidia", "amd", "intel", "google", "aws", "apple")

PAGE_PATH = Path("docs") / "hardware_catalog.md"
SCHEMA_DIRECTORY = Path("hardware_specs") / "schema"


def _number(value: float) -> str:
    # the shortest text that reads back as the same float: 3.35, 362.05, 13500
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def printed(figure: Figure) -> str:
    """A figure as its source prints it: value and unit (``'80 GB'``, ``'3.35 TB/s'``)."""
    return f"{_number(figure.value)} {figure.unit}"


def headline_peak(accelerator: Accelerator, precisions: Sequence[str] = HEADLINE_PRECISIONS) -> tuple[str, float] | None:
    """(precision, dense peak [FLOP/s]) of the first of ``precisions`` the device has, else None."""
    for precision in precisions:
        if precision in accelerator.peak_flops:
            return precision, accelerator.peak_flops[precision]
    return None


def bundled_specs() -> tuple[list[Accelerator], list[MemoryTier]]:
    """Every bundled spec (user directories and ``ROOFLINE_DECODE_SPEC_PATH`` ignored), by id."""
    specs = [load_spec_file(path) for path in sorted(bundled_spec_directory().rglob("*.toml"))]
    # load_spec_file sets every id (the file stem) and path; "" only satisfies the type
    accelerators = sorted((s for s in specs if isinstance(s, Accelerator)), key=lambda s: s.id or "")
    tiers = sorted((s for s in specs if isinstance(s, MemoryTier)), key=lambda s: s.id or "")
    return accelerators, tiers


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _marked(figure: Figure, text: str) -> str:
    return text + (" †" if figure.kind == "derived" else "")


def _tflops(spec: Accelerator, precision: str) -> str:
    if precision not in spec.peak_flops:
        return "-"
    return _marked(spec.figures[f"peak_flops.{precision}"], f"{spec.peak_flops[precision] / TFLOP:.6g}")


def _accelerator_row(spec: Accelerator) -> list[str]:
    headline = headline_peak(spec)
    if headline is None:
        peak, ridge = "-", "-"
    else:
        precision, _ = headline
        peak = _tflops(spec, precision) + ("" if precision == "bf16" else f" ({precision})")
        ridge = f"{spec.ridge_point(precision):.4g}"
    link = scale_out = "-"
    if spec.interconnect is not None:
        figure = spec.figures["interconnect.bandwidth"]
        link = _marked(figure, f"{printed(figure)} {spec.interconnect.direction.replace('_', ' ')}, "
                               f"{spec.interconnect.scope.replace('_', ' ')}")
        if "interconnect.domain_size" in spec.figures:
            domain = spec.figures["interconnect.domain_size"]
            link += "; " + _marked(domain, f"domain of {spec.interconnect.domain_size}")
    if spec.scale_out is not None:
        figure = spec.figures["scale_out.bandwidth"]
        scale_out = _marked(figure, f"{printed(figure)} {spec.scale_out.direction.replace('_', ' ')}")
    sources = ", ".join(f"[{key}]({source.url})" for key, source in spec.sources.items())
    return [
        f"`{spec.id}`", _cell(spec.name), spec.category or "-",
        _marked(spec.figures["memory_capacity"], printed(spec.figures["memory_capacity"]))
        + (f" ({printed(spec.figures['usable_memory'])} usable)" if "usable_memory" in spec.figures else ""),
        _marked(spec.figures["memory_bandwidth"], f"{spec.memory_bandwidth / GB:.6g}"),
        peak, _tflops(spec, "fp8"), ridge, link, scale_out, sources,
    ]


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _vendor_groups(accelerators: list[Accelerator]) -> list[tuple[str, list[Accelerator]]]:
    groups: dict[str, list[Accelerator]] = {}
    for spec in accelerators:
        groups.setdefault(Path(spec.path or "").parent.name, []).append(spec)  # bundled: path always set
    order = [f for f in VENDOR_FOLDERS if f in groups] + sorted(set(groups) - set(VENDOR_FOLDERS))
    # the folder's shortest vendor name titles it ("Intel" over "Intel (Habana)")
    return [(min((spec.vendor or folder for spec in groups[folder]), key=len), groups[folder]) for folder in order]


def render_catalog_page() -> str:
    """The Markdown text of ``docs/hardware_catalog.md`` for the bundled specs."""
    accelerators, tiers = bundled_specs()
    lines = [
        "# Hardware catalog",
        "",
        "<!-- Generated by `python -m roofline_decode.catalog_docs` from hardware_specs/; do not edit. -->",
        "",
        f"{len(accelerators)} accelerators and {len(tiers)} memory tiers ship with roofline_decode. "
        "Every figure below comes from a spec file in `hardware_specs/`, where it is stored with its "
        "unit as printed, its kind and its source; `roofline-decode show ID` prints all of them. "
        "The policies (dense vs sparse, GB vs GiB, interconnect semantics, how to add a SKU) are in "
        "`hardware_specs/README.md` in the source tree.",
        "",
        "- **category**: datacenter, workstation, consumer, soc (laptop/SoC with unified memory) or cpu; "
        "`roofline-decode list gpus --vendor V --category C` filters by both.",
        "- **memory**: capacity as the vendor prints it (HBM \"GB\" is physically GiB); \"usable\" is what the "
        "runtime exposes where a source gives less (ECC on GDDR data-center cards). Unified memory is shared "
        "with the CPU and OS: see [your own GPU or Mac](your_own_device.md).",
        "- **bandwidth**: peak memory bandwidth in decimal GB/s.",
        "- **dense bf16**, **dense fp8**: dense peaks (no 2:4 sparsity) in TFLOP/s; \"(fp16)\" marks "
        "the fp16 peak of a device without bf16.",
        "- **ridge**: dense bf16 (or fp16) peak / bandwidth, in FLOP/B: the arithmetic intensity "
        "above which a decode step is compute-bound.",
        "- **interconnect**: the vendor's headline scale-up figure, with what it counts, and the devices of "
        "its scale-up domain (8 on an HGX board, 72 in an NVL72 rack) where a source states them.",
        "- **scale-out**: the network bandwidth per device between scale-up domains (the NIC per GPU).",
        "- † marks a derived figure (for example a dense peak printed only as sparse/2); "
        "`roofline-decode show ID` gives the arithmetic.",
    ]
    headers = ["id", "name", "category", "memory", "bandwidth GB/s", "dense bf16", "dense fp8", "ridge FLOP/B",
               "interconnect", "scale-out", "sources"]
    for vendor, specs in _vendor_groups(accelerators):
        lines += ["", f"## {vendor}", "", *_table(headers, [_accelerator_row(s) for s in specs])]
    rows = []
    for tier in tiers:
        figure = tier.figures["bandwidth"]
        sources = ", ".join(f"[{key}]({source.url})" for key, source in tier.sources.items())
        rows.append([f"`{tier.id}`", _cell(tier.name), _marked(figure, printed(figure)),
                     tier.direction.replace("_", " "), sources])
    lines += [
        "", "## Memory tiers", "",
        "Host-side tiers for offload planning. Rates come from the standards' signalling rates; "
        "achievable rates are lower.", "",
        *_table(["id", "name", "bandwidth", "direction", "sources"], rows),
    ]
    return "\n".join(lines) + "\n"


def generated_files() -> dict[Path, str]:
    """Paths (relative to the repository root) of every generated catalog file, with its text."""
    files = {PAGE_PATH: render_catalog_page()}
    for kind, name in SCHEMA_FILES.items():
        files[SCHEMA_DIRECTORY / name] = schema_text(kind)
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or with ``--check``, compare) the generated files; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m roofline_decode.catalog_docs", description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(),
                        help="repository root holding hardware_specs/ and docs/ (default: the current directory)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a generated file is stale")
    args = parser.parse_args(argv)
    if not (args.root / "hardware_specs").is_dir():
        print(f"{args.root}: no hardware_specs/ folder here; run from the repository root or pass --root", file=sys.stderr)
        return 2
    stale = []
    for relative, text in generated_files().items():
        target = args.root / relative
        current = target.read_text(encoding="utf-8") if target.is_file() else None
        if current == text:
            continue
        stale.append(relative)
        if not args.check:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    verb = "stale" if args.check else "written"
    for relative in stale:
        print(f"{relative}: {verb}")
    if not stale:
        print("generated catalog files are current")
    return 1 if args.check and stale else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
