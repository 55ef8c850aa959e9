"""Shared loader of the small sourced-figure data folders beside ``hardware_specs/``.

``latency_profiles/`` and ``memory_energy/`` hold one TOML file per entry (id = file stem),
every figure with its value and unit as printed, a kind and a source key resolving to a
``[sources.*]`` table, like the hardware specs.  This module finds the bundled folder (inside
the wheel or at the repository top for an editable install), resolves ids and reads a file into
its figures, so each data kind only declares its schema and its units.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import ValidationError

from ..errors import SpecFileError, UnknownIdError
from ._base import describe_validation_error
from .accelerator import Figure, Source
from .spec_file import SourceEntry, read_toml

__all__ = ["bundled_folder", "list_ids", "bundled_file", "given_or_file", "read_figures"]

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
_Spec = TypeVar("_Spec")


class _SourcedFile(Protocol):
    """What :func:`read_figures` needs of a file schema: its ``[sources.*]`` tables."""

    @property
    def sources(self) -> Mapping[str, SourceEntry]: ...


_File = TypeVar("_File", bound=_SourcedFile)


def bundled_folder(name: str) -> Path:
    """The shipped data folder ``name``: inside the wheel, or at the repository top level."""
    for candidate in (_PACKAGE_DIR / name, _PACKAGE_DIR.parents[1] / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"roofline_decode's bundled {name} folder is missing from the installation")


def list_ids(name: str) -> list[str]:
    """Ids (file stems) of the bundled folder ``name``, sorted."""
    return sorted(p.stem for p in bundled_folder(name).glob("*.toml"))


#: Longest id looked up as a file name (file systems stop at 255 bytes).
MAX_ID_LENGTH = 200


def bundled_file(name: str, entry_id: Any, label: str) -> Path:
    """The bundled file of ``entry_id`` in folder ``name``; an :class:`UnknownIdError` naming
    ``label`` (with the known ids) for anything else, a path outside the folder included."""
    if (not isinstance(entry_id, str) or not entry_id or len(entry_id) > MAX_ID_LENGTH
            or any(c in entry_id for c in "/\\\x00")):  # a path, a NUL byte, a name no file system holds
        shown = (entry_id[:40] + "...") if isinstance(entry_id, str) and len(entry_id) > 40 else entry_id
        raise UnknownIdError(label, shown if isinstance(entry_id, str) else repr(entry_id), list_ids(name))
    path = bundled_folder(name) / f"{entry_id}.toml"
    if not path.is_file():
        raise UnknownIdError(label, entry_id, list_ids(name))
    return path


def given_or_file(value: object, kind: type[_Spec], load_file: Callable[[Path], _Spec]) -> _Spec | None:
    """``value`` itself when it is a ``kind``; the file ``load_file`` reads when ``value`` is a
    path or a name ending in ``.toml``; None for anything else (an id of a bundled file)."""
    if isinstance(value, kind):
        return value
    if isinstance(value, Path) or (isinstance(value, str) and value.endswith(".toml")):
        return load_file(Path(value))
    return None


def read_figures(path: Path, schema: Callable[..., _File],
                 to_si: dict[str, Callable[[float, str], float]]) -> tuple[_File, dict[str, Figure], dict[str, Source]]:
    """Read ``path`` with the pydantic file ``schema``; return (the parsed file, its figures, its
    sources).  ``to_si`` maps each figure field to the conversion of (value, unit as printed) to
    SI; absent optional figures are skipped.

    Raises
    ------
    SpecFileError
        Unreadable or malformed TOML, a field of the wrong type or unit, or a figure whose source
        key is not defined; the message names the file and the field.
    """
    raw = read_toml(path)
    try:
        spec = schema(**raw)
    except ValidationError as exc:
        field, value, message = describe_validation_error(exc)[0]
        shown = "" if "missing" in message or "unknown field" in message else f" (got {value!r})"
        raise SpecFileError(path, field, message + shown) from None
    figures: dict[str, Figure] = {}
    for field, convert in to_si.items():
        entry = getattr(spec, field)
        if entry is None:
            continue
        if entry.source not in spec.sources:
            raise SpecFileError(path, f"{field}.source",
                                f"source {entry.source!r} is not defined; defined: {', '.join(spec.sources)}")
        figures[field] = Figure(**entry.model_dump(), si_value=convert(entry.value, entry.unit))
    sources = {key: Source(**s.model_dump()) for key, s in spec.sources.items()}
    return spec, figures, sources
