"""Read hardware spec TOML files (``hardware_specs/<vendor>/<id>.toml``) into specs.

The file format (one SKU per file, id = file stem) is described in ``hardware_specs/README.md``
and exported as a JSON schema by :func:`json_schema`.  Every figure carries its value and unit
as printed, a kind and a source key; errors name the file and the field.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import RooflineError, SpecFileError
from ..formats import ComputePrecision
from ..units import BANDWIDTH_UNITS, BYTE_UNITS, FLOPS_UNITS, POWER_UNITS
from ._base import describe_validation_error
from .accelerator import Accelerator, Figure, Interconnect, MemoryTier, Source

__all__ = ["load_spec_file", "json_schema", "AcceleratorFile", "MemoryTierFile"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FigureEntry(_Strict):
    """A figure table: ``value``, ``unit`` as printed, ``kind``, ``source`` (+ ``derivation``)."""

    value: float = Field(gt=0, allow_inf_nan=False)
    unit: str
    kind: Literal["datasheet", "derived", "measured"]
    source: str = Field(min_length=1)
    derivation: str | None = None
    note: str | None = None
    structure: str | None = None


class SourceEntry(_Strict):
    title: str = Field(min_length=1)
    url: str = Field(min_length=1, pattern=r"^https?://")
    retrieved: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    publisher: str | None = None


class InterconnectEntry(_Strict):
    name: str
    direction: Literal["bidirectional", "per_direction"]
    scope: Literal["aggregate", "per_peer"]
    bandwidth: FigureEntry
    note: str | None = None


class AcceleratorFile(_Strict):
    """Schema of an accelerator spec file."""

    type: Literal["accelerator"]
    reference_id: str | None = None
    name: str
    vendor: str
    form_factor: str | None = None
    memory_type: str | None = None
    notes: str | None = None
    memory_capacity: FigureEntry
    memory_bandwidth: FigureEntry
    peak_flops: dict[ComputePrecision, FigureEntry] = Field(default_factory=dict)
    sparse_peak_flops: dict[ComputePrecision, FigureEntry] = Field(default_factory=dict)
    tdp: FigureEntry | None = None
    onchip_cache: FigureEntry | None = None
    interconnect: InterconnectEntry | None = None
    sources: dict[str, SourceEntry] = Field(min_length=1)


class MemoryTierFile(_Strict):
    """Schema of a memory-tier spec file."""

    type: Literal["memory_tier"]
    reference_id: str | None = None
    name: str
    direction: Literal["per_direction", "bidirectional", "half_duplex"]
    notes: str | None = None
    bandwidth: FigureEntry
    capacity: FigureEntry | None = None
    sources: dict[str, SourceEntry] = Field(min_length=1)


def json_schema(kind: str = "accelerator") -> dict[str, Any]:
    """JSON schema of a spec file (``"accelerator"`` or ``"memory_tier"``)."""
    return (AcceleratorFile if kind == "accelerator" else MemoryTierFile).model_json_schema()


_UNITS_BY_FIELD = {
    "memory_capacity": BYTE_UNITS, "capacity": BYTE_UNITS, "onchip_cache": BYTE_UNITS,
    "memory_bandwidth": BANDWIDTH_UNITS, "bandwidth": BANDWIDTH_UNITS, "interconnect.bandwidth": BANDWIDTH_UNITS,
    "tdp": POWER_UNITS,
}


def _figure(path: Path, field: str, entry: FigureEntry, sources: dict) -> Figure:
    units = FLOPS_UNITS if field.split(".")[0] in ("peak_flops", "sparse_peak_flops") else _UNITS_BY_FIELD[field]
    if entry.unit not in units:
        raise SpecFileError(path, f"{field}.unit", f"unknown unit {entry.unit!r}; allowed: {', '.join(units)}")
    if entry.source not in sources:
        raise SpecFileError(
            path, f"{field}.source", f"source {entry.source!r} is not defined; defined: {', '.join(sources) or 'none'}"
        )
    if entry.kind == "derived" and not entry.derivation:
        raise SpecFileError(path, f"{field}.derivation", "a derived figure must say how it was derived")
    return Figure(**entry.model_dump(), si_value=entry.value * units[entry.unit])


def load_spec_file(path: str | Path, id: str | None = None) -> Accelerator | MemoryTier:
    """Load one TOML spec file; the id defaults to the file stem.

    Raises
    ------
    SpecFileError
        Unreadable or malformed TOML, an unknown key, a missing source, a bad unit; the message
        names the file and the field.
    """
    path = Path(path)
    try:
        with path.open("rb") as handle:
            raw = tomllib.load(handle)
    except OSError as exc:
        raise SpecFileError(path, "(file)", f"cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecFileError(path, "(toml)", f"malformed TOML: {exc}") from None
    schema = {"accelerator": AcceleratorFile, "memory_tier": MemoryTierFile}.get(raw.get("type"))
    if schema is None:
        raise SpecFileError(path, "type", f"expected 'accelerator' or 'memory_tier', got {raw.get('type')!r}")
    try:
        spec = schema(**raw)
    except ValidationError as exc:
        field, value, message = describe_validation_error(exc)[0]
        shown = "" if "missing" in message or "unknown field" in message else f" (got {value!r})"
        raise SpecFileError(path, field, message + shown) from None
    sources = {key: Source(**s.model_dump()) for key, s in spec.sources.items()}
    figures: dict[str, Figure] = {}

    def take(field: str, entry: FigureEntry | None) -> float | None:
        if entry is None:
            return None
        figures[field] = _figure(path, field, entry, spec.sources)
        return figures[field].si_value

    common = dict(id=id or path.stem, name=spec.name, notes=spec.notes, sources=sources, path=str(path))
    try:
        if isinstance(spec, MemoryTierFile):
            bandwidth = take("bandwidth", spec.bandwidth)
            capacity = take("capacity", spec.capacity)
            return MemoryTier(**common, bandwidth=bandwidth, direction=spec.direction, capacity=capacity, figures=figures)
        capacity = take("memory_capacity", spec.memory_capacity)
        bandwidth = take("memory_bandwidth", spec.memory_bandwidth)
        peaks = {p: take(f"peak_flops.{p}", e) for p, e in spec.peak_flops.items()}
        sparse = {p: take(f"sparse_peak_flops.{p}", e) for p, e in spec.sparse_peak_flops.items()}
        tdp = take("tdp", spec.tdp)
        take("onchip_cache", spec.onchip_cache)
        interconnect = None
        if spec.interconnect is not None:
            link = spec.interconnect
            interconnect = Interconnect(
                name=link.name, bandwidth=take("interconnect.bandwidth", link.bandwidth),
                direction=link.direction, scope=link.scope, note=link.note,
            )
        return Accelerator(
            **common, vendor=spec.vendor, form_factor=spec.form_factor, memory_type=spec.memory_type,
            memory_capacity=capacity, memory_bandwidth=bandwidth, peak_flops=peaks, sparse_peak_flops=sparse,
            interconnect=interconnect, tdp_w=tdp, figures=figures,
        )
    except SpecFileError:
        raise
    except RooflineError as exc:
        raise SpecFileError(path, "(spec)", str(exc)) from None
