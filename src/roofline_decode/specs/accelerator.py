"""``Accelerator`` and ``MemoryTier``: hardware in plain SI numbers, with provenance.

Built directly from numbers (``Accelerator(name="my-gpu", memory_bandwidth=4.0e11,
memory_capacity=64e9, peak_flops={"bf16": 1.0e14})``) or loaded from a ``hardware_specs/``
TOML file, in which case :attr:`Accelerator.figures` keeps every figure as printed, with its
kind and source (see :mod:`roofline_decode.specs.spec_file`).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, PositiveFloat, ValidationInfo, field_validator, model_validator

from .. import formulas as f
from ..errors import InvalidValueError
from ..formats import COMPUTE_PRECISIONS, ComputePrecision, NumberFormat, get_format
from ._base import Spec
from .plausibility import order_problems, range_problem

__all__ = ["Accelerator", "MemoryTier", "Figure", "Source", "Interconnect"]

FigureKind = Literal["datasheet", "derived", "measured"]


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
    """A scale-up link: bandwidth [B/s] and what that number means."""

    name: str
    bandwidth: PositiveFloat = Field(allow_inf_nan=False)
    direction: Literal["bidirectional", "per_direction"]
    scope: Literal["aggregate", "per_peer"]
    note: str | None = None

    @property
    def per_direction_bandwidth(self) -> float:
        """Bandwidth in one direction [B/s] (half a bidirectional total)."""
        return self.bandwidth / 2 if self.direction == "bidirectional" else self.bandwidth


def _plausible(value: Any, info: ValidationInfo, quantity: str) -> Any:
    """``value`` unless it is outside the plausible range of ``quantity`` while the spec's
    ``plausibility_checks`` are on (see :mod:`roofline_decode.specs.plausibility`)."""
    if value is not None and info.data.get("plausibility_checks", True):
        problem = range_problem(info.field_name, value, quantity)
        if problem:
            raise ValueError(problem + _OPT_OUT)
    return value


_OPT_OUT = " (pass plausibility_checks=False for hardware really outside this range)"


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
        if cls.model_fields[info.field_name].annotation is bool:
            return value
        values = value.values() if isinstance(value, dict) else (value,)
        if any(isinstance(v, bool) for v in values):
            raise ValueError("expected a number, got a boolean")
        return value

    def replace(self, **changes: Any):
        """A validated copy with some fields changed; the printed figures of changed fields are
        dropped (they no longer describe the value: planning and ``show`` read the field)."""
        if "figures" not in changes:
            changed = set(changes) | ({"tdp"} if "tdp_w" in changes else set())
            changes["figures"] = {k: v for k, v in self.figures.items() if k.split(".")[0] not in changed}
        return super().replace(**changes)

    @model_validator(mode="after")
    def _sources_resolve(self):
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
        Scale-up link.

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
    tdp_w: PositiveFloat | None = None

    @field_validator("peak_flops", "sparse_peak_flops")
    @classmethod
    def _finite(cls, peaks: dict[str, float], info: ValidationInfo) -> dict[str, float]:
        problems = []
        for precision, value in peaks.items():
            if not math.isfinite(value):
                raise ValueError(f"{precision} peak must be finite, got {value!r}")
            if info.data.get("plausibility_checks", True):
                problem = range_problem(f"{info.field_name}.{precision}", value, "peak")
                if problem:
                    problems.append(f"{precision}: {problem}")
        if info.data.get("plausibility_checks", True):
            problems += order_problems(info.field_name, peaks)
        if problems:
            raise ValueError("; ".join(problems) + _OPT_OUT)
        return peaks

    @field_validator("memory_bandwidth")
    @classmethod
    def _plausible_bandwidth(cls, value: float, info: ValidationInfo) -> float:
        return _plausible(value, info, "bandwidth")

    @field_validator("memory_capacity")
    @classmethod
    def _plausible_capacity(cls, value: float, info: ValidationInfo) -> float:
        return _plausible(value, info, "capacity")

    @field_validator("interconnect")
    @classmethod
    def _plausible_link(cls, link: Interconnect | None, info: ValidationInfo) -> Interconnect | None:
        if link is not None and info.data.get("plausibility_checks", True):
            problem = range_problem("interconnect.bandwidth", link.bandwidth, "bandwidth")
            if problem:
                raise ValueError(f"bandwidth: {problem}{_OPT_OUT}")
        return link

    def peak(self, precision: str | NumberFormat = "bf16", sparse: bool = False) -> tuple[str, float]:
        """(precision used, peak [FLOP/s]) for a compute precision or a number format.

        A format computes on its own precision where the device has it, else on the next of
        its fallbacks (fp8 weights on an A100 run in bf16).
        """
        if isinstance(precision, NumberFormat):
            candidates = precision.compute_fallbacks
        elif precision in COMPUTE_PRECISIONS:
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
    capacity: PositiveFloat | None = None

    @field_validator("bandwidth")
    @classmethod
    def _plausible_bandwidth(cls, value: float, info: ValidationInfo) -> float:
        return _plausible(value, info, "bandwidth")

    @field_validator("capacity")
    @classmethod
    def _plausible_capacity(cls, value: float | None, info: ValidationInfo) -> float | None:
        return _plausible(value, info, "capacity")

    @property
    def read_bandwidth(self) -> float:
        """Bandwidth available to reads streaming toward the accelerator [B/s]."""
        return self.bandwidth / 2 if self.direction == "bidirectional" else self.bandwidth
