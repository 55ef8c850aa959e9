"""Read hardware spec TOML files (``hardware_specs/<vendor>/<id>.toml``) into specs.

The file format (one SKU per file, id = file stem) is described in ``hardware_specs/README.md``
and exported as a JSON schema by :func:`json_schema` (checked in as
``hardware_specs/schema/*.schema.json``).  Every figure carries its value and unit as printed,
a kind and a source key; errors name the file and the field.

Examples
--------
>>> from roofline_decode.catalog import bundled_spec_directory
>>> gpu = load_spec_file(bundled_spec_directory() / "nvidia" / "h100-sxm.toml")
>>> gpu.id, gpu.figures["memory_bandwidth"].value, gpu.figures["memory_bandwidth"].unit
('h100-sxm', 3.35, 'TB/s')
>>> sorted(json_schema("memory_tier")["required"])
['bandwidth', 'direction', 'name', 'sources', 'type']
"""

from __future__ import annotations

import datetime
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.config import JsonDict

from .._parse import ParseProblem, parse_toml
from ..errors import InvalidValueError, RooflineError, SpecFileError
from ..formats import ComputePrecision
from ..units import BANDWIDTH_UNITS, BYTE_UNITS, FLOPS_UNITS, POWER_UNITS
from ._base import SpecValidationError, describe_validation_error
from .accelerator import Accelerator, Category, Figure, Interconnect, MemoryTier, Source

__all__ = [
    "load_spec_file",
    "json_schema",
    "schema_text",
    "SCHEMA_FILES",
    "AcceleratorFile",
    "MemoryTierFile",
]

#: File names of the exported JSON schemas (in ``hardware_specs/schema/``), by spec type.
SCHEMA_FILES = {"accelerator": "accelerator.schema.json", "memory_tier": "memory_tier.schema.json"}

_DERIVED_NEEDS_DERIVATION: JsonDict = {
    "if": {"properties": {"kind": {"const": "derived"}}, "required": ["kind"]},
    "then": {"required": ["derivation"]},
}


if TYPE_CHECKING:  # a str to mypy; to pydantic the keys of the unit tables of units.py (an enum in the schema)
    ByteUnit: TypeAlias = str
    BandwidthUnit: TypeAlias = str
    FlopsUnit: TypeAlias = str
    PowerUnit: TypeAlias = str
else:
    ByteUnit = Literal[tuple(BYTE_UNITS)]
    BandwidthUnit = Literal[tuple(BANDWIDTH_UNITS)]
    FlopsUnit = Literal[tuple(FLOPS_UNITS)]
    PowerUnit = Literal[tuple(POWER_UNITS)]


class StrictEntry(BaseModel):
    # strict: a quoted number ("80") or a boolean is a mistake in a TOML spec, not a value
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class FigureEntry(StrictEntry):
    """A figure table: value, unit as printed, kind, source key (and derivation if derived)."""

    model_config = ConfigDict(json_schema_extra=_DERIVED_NEEDS_DERIVATION)

    value: float = Field(gt=0, allow_inf_nan=False, description="The number as the source prints it.")
    unit: str = Field(description="The unit as the source prints it.")
    kind: Literal["datasheet", "derived", "measured"] = Field(
        description="datasheet: printed by a publisher; derived: computed from printed numbers "
        "(say how in 'derivation'); measured: measured, not rated."
    )
    source: str = Field(min_length=1, description="Key of a [sources.<key>] table of this file.")
    derivation: str | None = Field(default=None, description="The arithmetic of a derived figure, e.g. 'sparse/2'.")
    note: str | None = None


class CapacityFigure(FigureEntry):
    """A memory capacity figure (GB, GiB, ...)."""

    unit: ByteUnit = Field(description="The unit as the source prints it.")


class CacheFigure(CapacityFigure):
    """An on-chip cache or SRAM figure, with what it counts in 'structure'."""

    structure: str | None = Field(default=None, description="What the figure counts, e.g. 'L2'.")


class BandwidthFigure(FigureEntry):
    """A bandwidth figure (GB/s, TB/s, ...); bandwidth is decimal."""

    unit: BandwidthUnit = Field(description="The unit as the source prints it.")


class FlopsFigure(FigureEntry):
    """A peak compute figure (TFLOP/s; TOP/s for integer formats)."""

    unit: FlopsUnit = Field(description="The unit as the source prints it.")


class PowerFigure(FigureEntry):
    """A power figure (W)."""

    unit: PowerUnit = Field(description="The unit as the source prints it.")


class CountFigure(FigureEntry):
    """A device count (the devices of a scale-up domain): a whole number of at least 2."""

    value: int = Field(ge=2, description="The number as the source prints it: a whole number of devices.")
    unit: Literal["devices"] = Field(description="Always 'devices'.")


class SourceEntry(StrictEntry):
    """A [sources.<key>] table: a document with its URL and the date it was read."""

    title: str = Field(min_length=1)
    url: str = Field(min_length=1, pattern=r"^https?://\S+$")
    retrieved: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="ISO date the source was read.")
    publisher: str | None = None

    @field_validator("retrieved")
    @classmethod
    def _real_date(cls, text: str) -> str:
        try:
            datetime.date.fromisoformat(text)
        except ValueError:
            raise ValueError(f"not a calendar date: {text!r}") from None
        return text


class LinkEntry(StrictEntry):
    """A link (the scale-out network): its headline bandwidth and what that number counts."""

    name: str
    direction: Literal["bidirectional", "per_direction"] = Field(
        description="bidirectional: both directions summed; per_direction: one direction."
    )
    scope: Literal["aggregate", "per_peer"] = Field(
        description="aggregate: summed over all links or peers; per_peer: between one pair."
    )
    bandwidth: BandwidthFigure
    note: str | None = None


class InterconnectEntry(LinkEntry):
    """The scale-up link: its headline bandwidth, what that number counts, and its domain."""

    domain_size: CountFigure | None = Field(
        default=None,
        description="Devices that share the scale-up link (8 on an HGX board, 72 in an NVL72 rack).",
    )


class AcceleratorFile(StrictEntry):
    """Schema of an accelerator spec file (hardware_specs/<vendor>/<id>.toml; the id is the file stem)."""

    model_config = ConfigDict(title="roofline_decode accelerator spec file")

    type: Literal["accelerator"]
    reference_id: str | None = Field(default=None, description="Row id in shared/reference/accelerators.csv.")
    name: str = Field(min_length=1)
    vendor: str = Field(min_length=1)
    category: Category | None = Field(
        default=None,
        description="datacenter, workstation, consumer, soc (laptop/SoC with unified memory) or cpu.",
    )
    form_factor: str | None = None
    memory_type: str | None = None
    unified_memory: bool = Field(
        default=False, description="The memory is shared with the host CPU and operating system."
    )
    notes: str | None = None
    memory_capacity: CapacityFigure
    usable_memory: CapacityFigure | None = Field(
        default=None,
        description="Memory the runtime exposes where a source gives it and it is below the capacity "
        "(e.g. nvidia-smi's total with ECC on).",
    )
    gpu_memory_share: float | None = Field(
        default=None, gt=0, le=1, allow_inf_nan=False,
        description="Fraction of a unified memory the accelerator may use; absent: the rule of the device kind.",
    )
    memory_bandwidth: BandwidthFigure
    peak_flops: dict[ComputePrecision, FlopsFigure] = Field(
        default_factory=dict, description="Dense peaks (no 2:4 structured sparsity), by compute precision."
    )
    sparse_peak_flops: dict[ComputePrecision, FlopsFigure] = Field(
        default_factory=dict, description="Structured-sparsity peaks, only where the vendor prints them."
    )
    tdp: PowerFigure | None = None
    onchip_cache: CacheFigure | None = None
    interconnect: InterconnectEntry | None = None
    scale_out: LinkEntry | None = Field(
        default=None,
        description="The scale-out network per device (an InfiniBand or Ethernet NIC per GPU).",
    )
    sources: dict[str, SourceEntry] = Field(min_length=1)
    plausibility_checks: bool = Field(
        default=True, description="Check figures against the ranges of real devices (catches unit slips); "
        "false only for exotic hardware outside them.",
    )


class MemoryTierFile(StrictEntry):
    """Schema of a memory-tier spec file (hardware_specs/tiers/<id>.toml; the id is the file stem)."""

    model_config = ConfigDict(title="roofline_decode memory tier spec file")

    type: Literal["memory_tier"]
    reference_id: str | None = Field(default=None, description="Row id in shared/reference/accelerators.csv.")
    name: str = Field(min_length=1)
    direction: Literal["per_direction", "bidirectional", "half_duplex"] = Field(
        description="per_direction: one direction of a full-duplex link; bidirectional: both summed; "
        "half_duplex: reads and writes share the bus."
    )
    notes: str | None = None
    bandwidth: BandwidthFigure
    capacity: CapacityFigure | None = None
    sources: dict[str, SourceEntry] = Field(min_length=1)
    plausibility_checks: bool = Field(
        default=True, description="Check figures against the ranges of real devices (catches unit slips); "
        "false only for exotic hardware outside them.",
    )


_FILE_SCHEMAS: dict[str, type[AcceleratorFile | MemoryTierFile]] = {
    "accelerator": AcceleratorFile, "memory_tier": MemoryTierFile,
}


def json_schema(kind: str = "accelerator") -> dict[str, Any]:
    """JSON schema (draft 2020-12) of a spec file, from the pydantic file models.

    Parameters
    ----------
    kind : {"accelerator", "memory_tier"}
        Which spec type.

    Returns
    -------
    dict
        The schema; :func:`schema_text` gives the checked-in JSON text.
    """
    if kind not in _FILE_SCHEMAS:
        raise InvalidValueError("kind", kind, " or ".join(repr(k) for k in _FILE_SCHEMAS))
    schema = _FILE_SCHEMAS[kind].model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def schema_text(kind: str = "accelerator") -> str:
    """The JSON schema of a spec file as the text of ``hardware_specs/schema/<kind>.schema.json``."""
    return json.dumps(json_schema(kind), indent=2, ensure_ascii=False) + "\n"


_COUNT_UNITS = {"devices": 1.0}


def _field_path(field: str) -> str:
    # pydantic reports a bad dict key as "peak_flops.fp9.[key]"
    return field.removesuffix(".[key]")


def _figure(field: str, entry: FigureEntry, sources: dict[str, SourceEntry],
            problems: list[tuple[str, str]]) -> Figure | None:
    """The Figure of a file entry; its problems (undefined source, derivation missing, a value
    that overflows in SI) are appended to ``problems`` and None is returned."""
    unit_table = {
        CapacityFigure: BYTE_UNITS, CacheFigure: BYTE_UNITS, BandwidthFigure: BANDWIDTH_UNITS,
        FlopsFigure: FLOPS_UNITS, PowerFigure: POWER_UNITS, CountFigure: _COUNT_UNITS,
    }[type(entry)]
    found = len(problems)
    if entry.source not in sources:
        problems.append((f"{field}.source",
                         f"source {entry.source!r} is not defined; defined: {', '.join(sources) or 'none'}"))
    if entry.kind == "derived" and not (entry.derivation or "").strip():
        problems.append((f"{field}.derivation", "a derived figure must say how it was derived"))
    si_value = entry.value * unit_table[entry.unit]
    if not math.isfinite(si_value):
        problems.append((f"{field}.value", f"{entry.value:g} {entry.unit} is beyond the largest number a float holds"))
    if len(problems) > found:
        return None
    return Figure(**entry.model_dump(), si_value=si_value)


def _problems_error(path: Path, problems: list[tuple[str, str]]) -> SpecFileError:
    """One SpecFileError listing every problem: ``path: field: problem; field: problem; ...``."""
    (field, problem), rest = problems[0], problems[1:]
    return SpecFileError(path, field, problem + "".join(f"; {f}: {p}" for f, p in rest))


def read_toml(path: Path) -> dict[str, Any]:
    """The parsed TOML of ``path``; a :class:`SpecFileError` naming the file when it is unreadable."""
    try:
        return parse_toml(path.read_bytes())
    except OSError as exc:
        raise SpecFileError(path, "(file)", f"cannot read: {exc.strerror or exc}") from None
    except ParseProblem as exc:
        raise SpecFileError(path, exc.where, str(exc)) from None


def load_spec_file(path: str | Path, id: str | None = None) -> Accelerator | MemoryTier:
    """Load one TOML spec file into an :class:`Accelerator` or a :class:`MemoryTier`.

    Parameters
    ----------
    path : str or Path
        The TOML file.
    id : str, optional
        Catalog id; defaults to the file stem.

    Raises
    ------
    SpecFileError
        Unreadable or malformed TOML, an unknown key, a value of the wrong type, a missing or
        undefined source, a bad unit, a derived figure without its derivation; the message
        names the file and the field.
    """
    path = Path(path)
    raw = read_toml(path)
    kind = raw.get("type")
    schema = _FILE_SCHEMAS.get(kind) if isinstance(kind, str) else None
    if schema is None:
        raise SpecFileError(path, "type", f"expected 'accelerator' or 'memory_tier', got {kind!r}")
    try:
        spec = schema(**raw)
    except ValidationError as exc:
        refused = []
        for field, value, message in describe_validation_error(exc):
            shown = "" if "missing" in message or "unknown field" in message else f" (got {_short(value)})"
            refused.append((_field_path(field), message + shown))
        raise _problems_error(path, refused) from None
    sources = {key: Source(**s.model_dump()) for key, s in spec.sources.items()}
    figures: dict[str, Figure] = {}
    problems: list[tuple[str, str]] = []

    @overload
    def take(field: str, entry: FigureEntry) -> float: ...
    @overload
    def take(field: str, entry: FigureEntry | None) -> float | None: ...

    def take(field: str, entry: FigureEntry | None) -> float | None:
        if entry is None:
            return None
        figure = _figure(field, entry, spec.sources, problems)
        if figure is None:
            return 1.0  # a placeholder; the problem is reported with every other one
        figures[field] = figure
        return figure.si_value

    common: dict[str, Any] = dict(id=id or path.stem, name=spec.name, notes=spec.notes, sources=sources,
                                  path=str(path), plausibility_checks=spec.plausibility_checks)
    try:
        if isinstance(spec, MemoryTierFile):
            bandwidth = take("bandwidth", spec.bandwidth)
            capacity = take("capacity", spec.capacity)
            if problems:
                raise _problems_error(path, problems)
            return MemoryTier(**common, bandwidth=bandwidth, direction=spec.direction, capacity=capacity,
                              figures=figures)
        capacity = take("memory_capacity", spec.memory_capacity)
        usable = take("usable_memory", spec.usable_memory)
        bandwidth = take("memory_bandwidth", spec.memory_bandwidth)
        peaks = {p: take(f"peak_flops.{p}", e) for p, e in spec.peak_flops.items()}
        sparse = {p: take(f"sparse_peak_flops.{p}", e) for p, e in spec.sparse_peak_flops.items()}
        tdp = take("tdp", spec.tdp)
        take("onchip_cache", spec.onchip_cache)
        links = {field: None if link is None else (link, take(f"{field}.bandwidth", link.bandwidth),
                                                   take(f"{field}.domain_size", getattr(link, "domain_size", None)))
                 for field, link in (("interconnect", spec.interconnect), ("scale_out", spec.scale_out))}
        if problems:
            raise _problems_error(path, problems)
        interconnect, scale_out = (None if entry is None else _link(*entry) for entry in links.values())
        return Accelerator(
            **common, vendor=spec.vendor, form_factor=spec.form_factor, memory_type=spec.memory_type,
            memory_capacity=capacity, memory_bandwidth=bandwidth, peak_flops=peaks, sparse_peak_flops=sparse,
            interconnect=interconnect, scale_out=scale_out, tdp_w=tdp, figures=figures, category=spec.category,
            unified_memory=spec.unified_memory, usable_memory_capacity=usable, gpu_memory_share=spec.gpu_memory_share,
        )
    except SpecFileError:
        raise
    except SpecValidationError as exc:  # every field the spec refused (plausibility ranges, ...)
        raise _problems_error(path, [(_spec_field(f, m), m) for f, _, m in exc.problems]) from None
    except RooflineError as exc:
        raise SpecFileError(path, getattr(exc, "field", "(spec)"), str(exc)) from None


def _link(link: LinkEntry, bandwidth: float, domain_size: float | None) -> Interconnect:
    """The :class:`Interconnect` of a link table, with its bandwidth [B/s] and domain in SI."""
    return Interconnect(name=link.name, bandwidth=bandwidth, direction=link.direction, scope=link.scope,
                        note=link.note, domain_size=None if domain_size is None else int(domain_size))


def _spec_field(field: str, message: str) -> str:
    """The file's name of a spec field: ``peak_flops`` with ``bf16: ...`` -> ``peak_flops.bf16``."""
    if field in ("peak_flops", "sparse_peak_flops") and ":" in message.split(" ")[0]:
        return f"{field}.{message.split(':')[0]}"
    return {"tdp_w": "tdp"}.get(field, field)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
