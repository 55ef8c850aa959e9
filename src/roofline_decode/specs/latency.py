"""Latency profiles: the minimum times of a decode step's serial chain, with their sources.

A profile says how long one dependent operation takes at least (``operation_latency``), how
many such operations a layer holds (``operations_per_layer``), the fixed cost of one
tensor-parallel collective (``collective_latency``) and of a step outside the layers
(``step_latency``).  :func:`~roofline_decode.decode_floor` adds the chain they imply as a
third constraint (:func:`~roofline_decode.formulas.serial_chain_time`).

Named presets ship as TOML files in ``latency_profiles/`` (one per preset, id = file stem,
figures with value, unit as printed, kind and source like ``hardware_specs/``); users build
their own from numbers (``LatencyProfile(name="mine", operation_latency=2e-6,
operations_per_layer=7)``) or load a file of the same format.

Examples
--------
>>> profile = load_latency_profile("cuda-graph-h100")
>>> profile.operation_latency, profile.operations_per_layer
(1.3e-06, 10.0)
>>> sorted(list_latency_profiles())[:2]
['cuda-graph-h100', 'eager-launch']
"""

from __future__ import annotations

from functools import lru_cache

from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

from pydantic import Field

from ..checks import MAX_LATENCY  # largest latency accepted [s] (a unit slip beyond it)
from ._base import Spec
from .accelerator import Figure, Source
from .data_files import bundled_file, bundled_folder, given_or_file, list_ids, read_figures
from .spec_file import SourceEntry, FigureEntry, StrictEntry

__all__ = ["LatencyProfile", "LatencyProfileFile", "load_latency_profile", "list_latency_profiles",
           "bundled_latency_directory", "TIME_UNITS"]

#: Time units a profile file may print, as units per second (divided by: 1.3 us -> 1.3e-06 s exactly).
TIME_UNITS = {"s": 1.0, "ms": 1e3, "us": 1e6, "µs": 1e6, "ns": 1e9}
_COUNT_UNITS = {"1": 1.0}
if TYPE_CHECKING:  # a str to mypy; to pydantic the keys of the tables above (an enum in the schema)
    TimeUnit: TypeAlias = str
    CountUnit: TypeAlias = str
else:
    TimeUnit = Literal[tuple(TIME_UNITS)]
    CountUnit = Literal[tuple(_COUNT_UNITS)]


#: Largest number of dependent operations per layer accepted [1] (real decoders: about 5-40).
MAX_OPERATIONS_PER_LAYER = 10_000.0


class LatencyProfile(Spec):
    """Minimum times of the serial chain of a decode step, in SI units.

    Attributes
    ----------
    operation_latency : float
        Minimum time of one dependent operation (a kernel and its drain) t_op [s], at most
        :data:`MAX_LATENCY` (as the other latencies).
    operations_per_layer : float
        Dependent operations per layer n_op [1].
    collective_latency : float
        Fixed cost of one tensor-parallel collective α [s] (used by the multi-device floors).
    step_latency : float
        Fixed cost of a step outside the layers t_0 [s] (sampling, host round trip).
    """

    id: str | None = None
    name: str = Field(min_length=1)
    operation_latency: float = Field(ge=0, le=MAX_LATENCY, allow_inf_nan=False)
    operations_per_layer: float = Field(ge=0, le=MAX_OPERATIONS_PER_LAYER, allow_inf_nan=False)
    collective_latency: float = Field(default=0.0, ge=0, le=MAX_LATENCY, allow_inf_nan=False)
    step_latency: float = Field(default=0.0, ge=0, le=MAX_LATENCY, allow_inf_nan=False)
    notes: str | None = None
    figures: dict[str, Figure] = Field(default_factory=dict)
    sources: dict[str, Source] = Field(default_factory=dict)
    path: str | None = None

    @property
    def label(self) -> str:
        """The id of a catalog preset, else the name."""
        return self.id or self.name


class _TimeFigure(FigureEntry):
    unit: TimeUnit = Field(description="The unit as the source prints it.")
    value: float = Field(ge=0, allow_inf_nan=False, description="The number as the source prints it.")


class _CountFigure(FigureEntry):
    unit: CountUnit = Field(description="'1': a plain count.")
    value: float = Field(ge=0, allow_inf_nan=False, description="The count.")


class LatencyProfileFile(StrictEntry):
    """Schema of a latency profile file (latency_profiles/<id>.toml; the id is the file stem)."""

    type: Literal["latency_profile"]
    name: str = Field(min_length=1)
    notes: str | None = None
    operation_latency: _TimeFigure
    operations_per_layer: _CountFigure
    collective_latency: _TimeFigure | None = None
    step_latency: _TimeFigure | None = None
    sources: dict[str, SourceEntry] = Field(min_length=1)


def bundled_latency_directory() -> Path:
    """The shipped ``latency_profiles`` folder: inside the wheel, or at the repository top
    level for an editable install."""
    return bundled_folder("latency_profiles")


def list_latency_profiles() -> list[str]:
    """Ids of the bundled latency presets, sorted."""
    return list_ids("latency_profiles")


def load_latency_profile(id_or_path: LatencyProfile | str | Path) -> LatencyProfile:
    """A :class:`LatencyProfile` by preset id, from a ``.toml`` file, or as given.

    A preset is parsed once per version of its file (a changed file is read again).

    Raises
    ------
    UnknownIdError
        No preset has that id (the message lists close matches).
    SpecFileError
        The file is unreadable or malformed; the message names the file and the field.
    """
    given = given_or_file(id_or_path, LatencyProfile, _load_file)
    if given is not None:
        return given
    path = bundled_file("latency_profiles", id_or_path, "latency profile")
    return _preset(path, path.stat().st_mtime_ns)


@lru_cache(maxsize=64)
def _preset(path: Path, stamp: int) -> LatencyProfile:
    """A preset parsed once per file version (``stamp``: its mtime); profiles are frozen."""
    return _load_file(path)


def _seconds(value: float, unit: str) -> float:
    return value / TIME_UNITS[unit]  # divided: 1.3 us -> 1.3e-06 s exactly


def _count(value: float, unit: str) -> float:
    return value * _COUNT_UNITS[unit]


def _load_file(path: Path) -> LatencyProfile:
    spec, figures, sources = read_figures(path, LatencyProfileFile, {
        "operation_latency": _seconds, "operations_per_layer": _count,
        "collective_latency": _seconds, "step_latency": _seconds,
    })
    values = {field: figure.si_value for field, figure in figures.items()}
    return LatencyProfile(id=path.stem, name=spec.name, notes=spec.notes, figures=figures, sources=sources,
                          path=str(path), **values)
