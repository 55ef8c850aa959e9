"""Access energy of memory technologies (pJ/bit), with their sources.

The data-movement energy floor of a step (:func:`~roofline_decode.formulas.data_movement_energy`)
is the bytes it moves times the energy per bit of the memory they live in.  Those energies ship as
TOML files in ``memory_energy/`` (one per technology, id = file stem: ``hbm3e``, ``gddr6``, ...),
each figure with value, unit as printed, kind and source like ``hardware_specs/``.  A technology
without a published figure has no file: its energy floor is unavailable (never invented).

An accelerator's technology comes from the free text of its ``memory_type``
(:func:`memory_technologies`: ``"HBM3e 12-high"`` -> ``hbm3e``); where the text names several
(``"LPDDR5/LPDDR5X unified"``) the floor uses the smallest sourced energy among them (the
conservative floor) and says so.

Examples
--------
>>> energy = load_memory_energy("hbm3e")
>>> energy.name, energy.access_energy_per_bit
('HBM3E', 2.4e-12)
>>> memory_technologies("HBM3e 12-high"), memory_technologies("LPDDR5/LPDDR5X unified")
(('hbm3e',), ('lpddr5', 'lpddr5x'))
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

from pydantic import Field

from ._base import Spec
from .accelerator import Figure, Source
from .data_files import bundled_file, bundled_folder, given_or_file, list_ids, read_figures
from .spec_file import SourceEntry, FigureEntry, StrictEntry

__all__ = ["MemoryEnergy", "MemoryEnergyFile", "load_memory_energy", "list_memory_energies",
           "bundled_memory_energy_directory", "memory_technologies", "access_energy_of", "ENERGY_UNITS"]

#: Energy-per-bit units a file may print, as that unit in J/bit.
ENERGY_UNITS = {"pJ/bit": 1e-12, "pJ/b": 1e-12, "fJ/bit": 1e-15}
_TECHNOLOGY = re.compile(r"(LPDDR|GDDR|HBM|DDR)(\d)(E|X)?", re.IGNORECASE)


class MemoryEnergy(Spec):
    """Energy to move one bit to or from a memory technology, in SI units.

    Attributes
    ----------
    name : str
        The technology as its source names it (``HBM3E``).
    access_energy_per_bit : float
        Energy per bit read or written e_bit [J/bit].
    """

    id: str | None = None
    name: str = Field(min_length=1)
    access_energy_per_bit: float = Field(gt=0, allow_inf_nan=False)
    notes: str | None = None
    figures: dict[str, Figure] = Field(default_factory=dict)
    sources: dict[str, Source] = Field(default_factory=dict)
    path: str | None = None


if TYPE_CHECKING:  # a str to mypy; to pydantic the keys of ENERGY_UNITS (an enum in the schema)
    EnergyUnit: TypeAlias = str
else:
    EnergyUnit = Literal[tuple(ENERGY_UNITS)]


class _EnergyFigure(FigureEntry):
    unit: EnergyUnit = Field(description="The unit as the source prints it.")


class MemoryEnergyFile(StrictEntry):
    """Schema of a memory energy file (memory_energy/<id>.toml; the id is the file stem)."""

    type: Literal["memory_energy"]
    name: str = Field(min_length=1)
    notes: str | None = None
    access_energy: _EnergyFigure
    sources: dict[str, SourceEntry] = Field(min_length=1)


def bundled_memory_energy_directory() -> Path:
    """The shipped ``memory_energy`` folder: inside the wheel, or at the repository top level
    for an editable install."""
    return bundled_folder("memory_energy")


def list_memory_energies() -> list[str]:
    """Ids of the memory technologies with a sourced access energy, sorted."""
    return list_ids("memory_energy")


def load_memory_energy(id_or_path: MemoryEnergy | str | Path) -> MemoryEnergy:
    """A :class:`MemoryEnergy` by technology id, from a ``.toml`` file, or as given.

    Ids are matched in lower case (``"HBM3e"`` is ``hbm3e``).

    Raises
    ------
    UnknownIdError
        No bundled file has that id (the message lists the technologies that have one).
    SpecFileError
        The file is unreadable or malformed; the message names the file and the field.
    """
    given = given_or_file(id_or_path, MemoryEnergy, _load_file)
    if given is not None:
        return given
    if isinstance(id_or_path, str):
        return _bundled(id_or_path.lower())
    return _load_file(bundled_file("memory_energy", id_or_path, "memory technology"))  # raises: not an id


@functools.lru_cache(maxsize=None)
def _bundled(technology: str) -> MemoryEnergy:
    return _load_file(bundled_file("memory_energy", technology, "memory technology"))


def _joules_per_bit(value: float, unit: str) -> float:
    return value * ENERGY_UNITS[unit]


def _load_file(path: Path) -> MemoryEnergy:
    spec, figures, sources = read_figures(path, MemoryEnergyFile, {"access_energy": _joules_per_bit})
    return MemoryEnergy(id=path.stem, name=spec.name, notes=spec.notes,
                        access_energy_per_bit=figures["access_energy"].si_value, figures=figures, sources=sources,
                        path=str(path))


def memory_technologies(memory_type: str | None) -> tuple[str, ...]:
    """Technology ids named in an accelerator's free-text ``memory_type``, in order.

    ``"HBM3e 12-high"`` -> ``("hbm3e",)``; ``"DDR5-6400 RDIMM"`` and ``"MRDIMM-8800"`` (DDR5
    multiplexed-rank DIMMs) -> ``("ddr5",)``; ``"LPDDR5/LPDDR5X unified"`` -> both; a text
    without a generation (``"HBM"``, ``"LPDDR unified"``) -> ``()``.
    """
    if not memory_type:
        return ()
    text = memory_type.upper().replace("MRDIMM", "DDR5 MRDIMM")
    found: list[str] = []
    for family, generation, suffix in _TECHNOLOGY.findall(text):
        technology = f"{family}{generation}{suffix}".lower()
        if technology not in found:
            found.append(technology)
    return tuple(found)


def access_energy_of(memory_type: str | None) -> tuple[MemoryEnergy | None, str | None]:
    """(the access energy the floor uses, a note) for an accelerator's ``memory_type``.

    The energy is None where no named technology has a sourced figure; the note then says the
    energy floor is unavailable and why.  Where several technologies are named and sourced, the
    smallest energy is used (a floor must hold for whichever part is fitted) and the note says so.

    Examples
    --------
    >>> energy, note = access_energy_of("HBM3e")
    >>> energy.id, note
    ('hbm3e', None)
    >>> access_energy_of("HBM")[1]
    "energy floor unavailable: memory type 'HBM' names no generation with a sourced access energy"
    """
    technologies = memory_technologies(memory_type)
    available = set(list_memory_energies())
    sourced = [_bundled(t) for t in technologies if t in available]
    if not sourced:
        if not technologies:
            why = (f"memory type {memory_type!r} names no generation with a sourced access energy"
                   if memory_type else "the accelerator states no memory_type")
        else:
            why = (f"no published access energy for {', '.join(t.upper() for t in technologies)} "
                   f"(sourced: {', '.join(t.upper() for t in sorted(available))})")
        return None, f"energy floor unavailable: {why}"
    chosen = min(sourced, key=lambda e: e.access_energy_per_bit)
    note = None
    if len(technologies) > 1:
        note = (f"memory type {memory_type!r} names {', '.join(t.upper() for t in technologies)}: the energy floor "
                f"uses the smallest sourced access energy, {chosen.name} at {chosen.access_energy_per_bit * 1e12:g} pJ/bit")
    return chosen, note
