"""``Accelerator`` and ``MemoryTier``: hardware in plain SI numbers, with provenance.

Built directly from numbers (``Accelerator(name="my-gpu", memory_bandwidth=4.0e11,
memory_capacity=64e9, peak_flops={"bf16": 1.0e14})``) or loaded from a ``hardware_specs/``
TOML file, in which case :attr:`Accelerator.figures` keeps every figure as printed, with its
kind and source (see :mod:`roofline_decode.specs.spec_file`).
"""

from __future__ import annotations

import math
from typing import Any, Literal, Self, TypeVar

from pydantic import Field, PositiveFloat, ValidationInfo, field_validator, model_validator

from .. import formulas as f
from ..errors import InvalidValueError
from ..formats import ComputePrecision, NumberFormat, is_compute_precision, get_format
from ._base import Spec, field_name
from .plausibility import dram_bandwidth_problem, order_problems, range_problem

__all__ = ["Accelerator", "MemoryTier", "Figure", "Source", "Interconnect", "CATEGORIES"]

FigureKind = Literal["datasheet", "derived", "measured"]

#: Device categories, as ``list gpus --category`` filters them: ``datacenter`` (server
#: accelerators), ``workstation`` (professional desktop cards), ``consumer`` (GeForce, Radeon
#: RX, Arc desktop cards), ``soc`` (laptop/SoC parts with unified memory: Apple silicon, Strix
#: Halo, DGX Spark, Jetson) and ``cpu`` (server CPUs as decode devices).
CATEGORIES = ("datacenter", "workstation", "consumer", "soc", "cpu")
Category = Literal["datacenter", "workstation", "consumer", "soc", "cpu"]

# Which figures describe which field: a copy that changes the field drops them (they would be
# stale: ``load_accelerator("m1-max").replace(memory_capacity=32e9)`` no longer has 64 GB).
_FIGURES_OF_FIELD = {
    "memory_capacity": ("memory_capacity", "usable_memory"),
    "usable_memory_capacity": ("usable_memory",),
    "memory_bandwidth": ("memory_bandwidth",),
    "peak_flops": ("peak_flops.",),
    "sparse_peak_flops": ("sparse_peak_flops.",),
    "tdp_w": ("tdp",),
    "interconnect": ("interconnect.",),
    "scale_out": ("scale_out.",),
}


class Source(Spec):
    """Where figures come from: a document with a URL and the date it was read."""

    title: str = Field(min_length=1)
    url: str = Field(min_length=1)
    retrieved: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="ISO date the source was read")
    publisher: str | None = None


class Figure(Spec):
    """One hardware figure as printed: value, unit, kind, source key (and how, if derived)."""

    value: float = Field(allow_inf_nan=False)
    unit: str
    kind: FigureKind
    source: str = Field(min_length=1)
    si_value: float = Field(allow_inf_nan=False, description="value converted to SI (B, B/s, FLOP/s, W)")
    derivation: str | None = None
    note: str | None = None
    structure: str | None = None

    @model_validator(mode="after")
    def _derived_says_how(self) -> Figure:
        if self.kind == "derived" and not self.derivation:
            raise ValueError("a figure of kind 'derived' must say how in 'derivation'")
        return self


class Interconnect(Spec):
    """A link: bandwidth [B/s], what that number means, and (scale-up) the domain it spans.

    ``domain_size`` is the number of devices that share a scale-up link (8 on an HGX H100 or
    B200 board's NVSwitch, 72 in a GB200/GB300 NVL72 rack): a parallel group larger than the
    domain crosses the scale-out network.  None where no source states it, and always None on
    a scale-out link (:attr:`Accelerator.scale_out`), which has no fixed domain.
    """

    name: str
    bandwidth: PositiveFloat = Field(allow_inf_nan=False)
    direction: Literal["bidirectional", "per_direction"]
    scope: Literal["aggregate", "per_peer"]
    note: str | None = None
    domain_size: int | None = Field(
        default=None, ge=2, strict=True,
        description="devices that share the scale-up link (a domain of one has no link)",
    )

    @property
    def per_direction_bandwidth(self) -> float:
        """Bandwidth in one direction [B/s] (half a bidirectional total)."""
        return self.bandwidth / 2 if self.direction == "bidirectional" else self.bandwidth


_Value = TypeVar("_Value", float, float | None)


#: SI unit of each checked quantity, for the messages
_UNITS = {"bandwidth": "B/s", "capacity": "B", "peak": "FLOP/s"}


def _below_one(name: str, value: float, quantity: str) -> str | None:
    """Why ``value`` is refused even without plausibility checks: no device is below 1 B/s,
    1 B or 1 FLOP/s, and a step's bytes or FLOPs divided by a smaller figure overflow to an
    infinite time."""
    if value < 1:
        return (f"{name} must be at least 1 {_UNITS[quantity]} even with plausibility_checks=False "
                "(a smaller figure makes the floor's times overflow)")
    return None


def _plausible(value: _Value, info: ValidationInfo, quantity: str) -> _Value:
    """``value`` unless it is outside the plausible range of ``quantity`` while the spec's
    ``plausibility_checks`` are on (see :mod:`roofline_decode.specs.plausibility`), or below 1
    in SI units when they are off."""
    if value is not None:
        if info.data.get("plausibility_checks", True):
            problem = range_problem(field_name(info), value, quantity)
            if problem:
                raise ValueError(problem + _OPT_OUT)
        elif problem := _below_one(field_name(info), value, quantity):
            raise ValueError(problem)
    return value


_OPT_OUT = " (pass plausibility_checks=False for hardware really outside this range)"


def _plausible_fields(quantity: str, *fields: str) -> classmethod[Any, [Any, ValidationInfo], Any]:
    """A field validator that passes each of ``fields`` through :func:`_plausible` as a ``quantity``."""

    def check(cls: type, value: Any, info: ValidationInfo) -> Any:
        return _plausible(value, info, quantity)

    return field_validator(*fields)(classmethod(check))


class _Hardware(Spec):
    plausibility_checks: bool = Field(
        default=True, description="check figures against the ranges of real devices (catches unit slips); "
        "False for exotic hardware outside them",
    )
    id: str | None = None
    name: str = Field(min_length=1)
    notes: str | None = None
    figures: dict[str, Figure] = Field(default_factory=dict)
    sources: dict[str, Source] = Field(default_factory=dict)
    path: str | None = Field(default=None, description="spec file the object was loaded from")

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans(cls, value: Any, info: ValidationInfo) -> Any:
        """``memory_bandwidth=True`` is a mistake, not 1 B/s (pydantic would read it as 1.0)."""
        if cls.model_fields[field_name(info)].annotation is bool:
            return value
        values = value.values() if isinstance(value, dict) else (value,)
        if any(isinstance(v, bool) for v in values):
            raise ValueError("expected a number, got a boolean")
        return value

    def replace(self, **changes: Any) -> Self:
        """A validated copy with some fields changed; the printed figures of changed fields are
        dropped (they no longer describe the value: planning and ``show`` read the field).  A
        field given its current value is not changed, and its figures stay."""
        if "figures" not in changes:
            changed = set(self.changed_fields(changes))
            changed |= {"tdp"} if "tdp_w" in changed else set()
            changes["figures"] = {k: v for k, v in self.figures.items() if k.split(".")[0] not in changed}
        return super().replace(**changes)

    def changed_fields(self, changes: dict[str, Any]) -> list[str]:
        """The fields of ``changes`` whose value differs from this object's."""
        return [field for field, value in changes.items() if getattr(self, field, None) != value]

    @model_validator(mode="after")
    def _sources_resolve(self) -> Self:
        for key, figure in self.figures.items():
            if figure.source not in self.sources:
                raise ValueError(f"figure {key!r} cites source {figure.source!r}, which is not in sources")
        return self

    def source_of(self, figure: str) -> Source | None:
        """The source of a figure (``"memory_bandwidth"``, ``"peak_flops.bf16"``, ...), if known."""
        fig = self.figures.get(figure)
        return self.sources.get(fig.source) if fig else None


class Accelerator(_Hardware):
    """An accelerator: memory capacity [B], memory bandwidth [B/s], dense peaks [FLOP/s].

    Parameters
    ----------
    name : str
        Display name.
    memory_capacity : float
        Memory as the vendor states it, converted with the stated unit [B] (HBM "80 GB" is
        8.0e10 B here; see the capacity planning docs for the usable-memory rule).
    memory_bandwidth : float
        Peak memory bandwidth [B/s], decimal.
    peak_flops : dict
        Dense peaks by compute precision (fp32, tf32, bf16, fp16, fp8, int8, fp4) [FLOP/s].
        May be empty where the vendor publishes none (Apple M-series): the floor is then the
        memory time alone, still a valid lower bound.
    sparse_peak_flops : dict, optional
        2:4 structured-sparsity peaks; used only when asked for.
    interconnect : Interconnect, optional
        Scale-up link (NVLink, Infinity Fabric, ICI), with its ``domain_size`` where known.
    scale_out : Interconnect, optional
        Scale-out network per device (an InfiniBand or Ethernet NIC per GPU: ConnectX-7
        400 Gb/s on an HGX H100): the link between scale-up domains.
    category : {"datacenter", "workstation", "consumer", "soc", "cpu"}, optional
        Device category (see :data:`CATEGORIES`).
    unified_memory : bool
        The memory is shared with the host CPU and operating system (Apple silicon, Strix Halo,
        DGX Spark, Jetson, a CPU's DRAM): the accelerator may not be able to use all of it.
    usable_memory_capacity : float, optional
        Memory the runtime exposes [B] where a source gives it and it is less than the capacity
        (NVIDIA GDDR data-center cards with ECC on give up 1/16: an L40S shows 46,068 MiB of its
        48 GiB; an H100 SXM 81,559 MiB of its 80 GiB of HBM3).  Set it to None for a card run
        with ECC off.
    gpu_memory_share : float, optional
        Fraction of a unified memory the accelerator may use, in (0, 1].  None: the rule of the
        device kind (:func:`roofline_decode.planning.device_memory`; Apple silicon: macOS's
        default GPU wired limit).  Raise it to model ``sysctl iogpu.wired_limit_mb``.

    Examples
    --------
    >>> gpu = Accelerator(name="my-gpu", memory_bandwidth=4.0e11, memory_capacity=64e9,
    ...                   peak_flops={"bf16": 1.0e14})
    >>> gpu.ridge_point("bf16")
    250.0
    """

    vendor: str | None = None
    form_factor: str | None = None
    memory_type: str | None = None
    memory_capacity: PositiveFloat = Field(allow_inf_nan=False)
    memory_bandwidth: PositiveFloat = Field(allow_inf_nan=False)
    peak_flops: dict[ComputePrecision, PositiveFloat] = Field(default_factory=dict)
    sparse_peak_flops: dict[ComputePrecision, PositiveFloat] = Field(default_factory=dict)
    interconnect: Interconnect | None = None
    scale_out: Interconnect | None = None
    tdp_w: PositiveFloat | None = Field(default=None, allow_inf_nan=False)
    category: Category | None = None
    unified_memory: bool = False
    usable_memory_capacity: PositiveFloat | None = Field(default=None, allow_inf_nan=False)
    gpu_memory_share: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False)

    def replace(self, **changes: Any) -> Self:
        """A validated copy with some fields changed.

        Figures describing a changed field are dropped (they would be stale), unless ``figures``
        is given too; a new ``memory_capacity`` also clears ``usable_memory_capacity`` unless
        that is given (the ECC figure belongs to the old capacity).  A field given its current
        value is not changed: its figures stay (``replace(memory_capacity=gpu.memory_capacity)``
        keeps the printed "24 GB" that the usable-memory rule reads as 24 GiB).
        """
        changed = self.changed_fields(changes)
        if "figures" not in changes:
            stale = tuple(prefix for field in changed for prefix in _FIGURES_OF_FIELD.get(field, ()))
            if stale:
                changes["figures"] = {
                    key: fig for key, fig in self.figures.items()
                    if not any(key == p or (p.endswith(".") and key.startswith(p)) for p in stale)
                }
        if "memory_capacity" in changed and "usable_memory_capacity" not in changes:
            changes["usable_memory_capacity"] = None
        return super().replace(**changes)

    @field_validator("peak_flops", "sparse_peak_flops")
    @classmethod
    def _finite(cls, peaks: dict[str, float], info: ValidationInfo) -> dict[str, float]:
        problems: list[str] = []
        for precision, value in peaks.items():
            if not math.isfinite(value):
                raise ValueError(f"{precision} peak must be finite, got {value!r}")
            if info.data.get("plausibility_checks", True):
                problem = range_problem(f"{field_name(info)}.{precision}", value, "peak")
                if problem:
                    problems.append(f"{precision}: {problem}")
            elif below := _below_one(f"{field_name(info)}.{precision}", value, "peak"):
                raise ValueError(below)
        if info.data.get("plausibility_checks", True):
            problems += order_problems(field_name(info), peaks)
        if problems:
            raise ValueError("; ".join(problems) + _OPT_OUT)
        return peaks

    _plausible_bandwidth = _plausible_fields("bandwidth", "memory_bandwidth")
    _plausible_capacity = _plausible_fields("capacity", "memory_capacity", "usable_memory_capacity")

    @field_validator("memory_bandwidth")
    @classmethod
    def _dram_bandwidth(cls, value: float, info: ValidationInfo) -> float:
        """Above 50 TB/s only on-chip SRAM (``memory_type``, validated before this field)."""
        if info.data.get("plausibility_checks", True):
            problem = dram_bandwidth_problem(value, info.data.get("memory_type"))
            if problem:
                raise ValueError(problem + _OPT_OUT)
        return value

    @field_validator("interconnect", "scale_out")
    @classmethod
    def _plausible_link(cls, link: Interconnect | None, info: ValidationInfo) -> Interconnect | None:
        name = field_name(info)
        if link is not None and name == "scale_out" and link.domain_size is not None:
            raise ValueError("domain_size: a scale-out network has no fixed domain; the scale-up domain "
                             f"goes in interconnect.domain_size (got {link.domain_size})")
        if link is not None and info.data.get("plausibility_checks", True):
            problem = range_problem(f"{name}.bandwidth", link.bandwidth, "bandwidth")
            if problem:
                raise ValueError(f"bandwidth: {problem}{_OPT_OUT}")
        elif link is not None and (below := _below_one(f"{name}.bandwidth", link.bandwidth, "bandwidth")):
            raise ValueError(below)
        return link

    def peak(self, precision: str | NumberFormat = "bf16", sparse: bool = False) -> tuple[str, float]:
        """(precision used, peak [FLOP/s]) for a compute precision or a number format.

        A format computes on its own precision where the device has it, else on the next of
        its fallbacks (fp8 weights on an A100 run in bf16).
        """
        candidates: tuple[ComputePrecision, ...]
        if isinstance(precision, NumberFormat):
            candidates = precision.compute_fallbacks
        elif is_compute_precision(precision):
            candidates = (precision,)
        else:
            candidates = get_format(precision, field="precision").compute_fallbacks
        table = self.sparse_peak_flops if sparse else self.peak_flops
        for candidate in candidates:
            if candidate in table:
                return candidate, table[candidate]
        kind = "sparse" if sparse else "dense"
        raise InvalidValueError(
            "precision", str(precision),
            f"a {kind} peak {self.name} has ({', '.join(table) or 'none'}); tried {', '.join(candidates)}",
        )

    def ridge_point(self, precision: str | NumberFormat = "bf16", sparse: bool = False) -> float:
        """Ridge point F / BW [FLOP/B] for a compute precision (dense unless ``sparse``)."""
        return float(f.ridge_point(self.peak(precision, sparse)[1], self.memory_bandwidth))

    def __str__(self) -> str:
        return self.name


class MemoryTier(_Hardware):
    """A slower memory tier for offload planning (PCIe, CXL, DDR5 channels).

    ``bandwidth`` [B/s] is what the ``direction`` field says: per direction, a bidirectional
    total, or a half-duplex bus shared by reads and writes.
    """

    bandwidth: PositiveFloat = Field(allow_inf_nan=False)
    direction: Literal["per_direction", "bidirectional", "half_duplex"] = "per_direction"
    capacity: PositiveFloat | None = Field(default=None, allow_inf_nan=False)

    _plausible_bandwidth = _plausible_fields("bandwidth", "bandwidth")
    _plausible_capacity = _plausible_fields("capacity", "capacity")

    @property
    def read_bandwidth(self) -> float:
        """Bandwidth available to reads streaming toward the accelerator [B/s]."""
        return self.bandwidth / 2 if self.direction == "bidirectional" else self.bandwidth
