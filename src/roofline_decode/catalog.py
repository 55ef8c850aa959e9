"""The catalog: bundled accelerators, memory tiers and model configs, plus the user's own.

Accelerator and tier ids are the stems of ``hardware_specs/**/<id>.toml`` files; model ids the
stems of the bundled ``model_configs/<id>.json`` files.  Users add their own spec directories
or files with :func:`add_spec_directory`, :func:`add_spec_file` or the
``ROOFLINE_DECODE_SPEC_PATH`` environment variable (``os.pathsep``-separated); a user file
overrides a bundled one with the same id.  A path ending in ``.toml`` is loaded directly.

Examples
--------
>>> "h100-sxm" in list_accelerators() and "pcie5-x16" in list_memory_tiers()
True
"""

from __future__ import annotations

import json
import os
import re
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import InvalidValueError, SpecFileError, UnknownIdError
from .specs.accelerator import Accelerator, MemoryTier
from .specs.hf_config import ConfigNote
from .specs.model import Model
from .specs.spec_file import load_spec_file, read_toml

__all__ = [
    "bundled_spec_directory",
    "add_spec_directory",
    "add_spec_file",
    "remove_spec_directory",
    "spec_directories",
    "list_accelerators",
    "list_memory_tiers",
    "load_accelerator",
    "load_memory_tier",
    "list_models",
    "load_model",
    "model_metadata",
    "ENV_SPEC_PATH",
]

ENV_SPEC_PATH = "ROOFLINE_DECODE_SPEC_PATH"
_PACKAGE_DIR = Path(__file__).resolve().parent
_MODEL_DIR = _PACKAGE_DIR / "model_configs"
_user_directories: list[Path] = []
# the same Path objects on every look-up (their hash is computed once)
_BUNDLED_CANDIDATES = (_PACKAGE_DIR / "hardware_specs", _PACKAGE_DIR.parents[1] / "hardware_specs")
_BUNDLED_FOUND: list[Path] = []


def bundled_spec_directory() -> Path:
    """The shipped ``hardware_specs`` folder: inside the wheel, or at the repository top level
    for an editable install."""
    if _BUNDLED_FOUND:  # part of the installation: found once per process
        return _BUNDLED_FOUND[0]
    for candidate in _BUNDLED_CANDIDATES:
        if candidate.is_dir():
            _BUNDLED_FOUND.append(candidate)
            return candidate
    raise FileNotFoundError("roofline_decode's bundled hardware_specs folder is missing from the installation")


def add_spec_directory(path: str | Path) -> None:
    """Add a directory of user spec files (searched recursively) or a single ``.toml`` spec file.

    Its ids override bundled ones and those of earlier additions (latest added wins); the id of a
    file is its stem, wherever it sits.

    Raises
    ------
    SpecFileError
        The path is neither a directory nor a ``.toml`` file.
    """
    _user_directories.append(_checked_spec_path(_as_path("path", path), "(directory)"))
    _index.cache_clear()
    _GENERATION[0] += 1


def add_spec_file(path: str | Path) -> None:
    """Add one user spec file; its id (the file stem) overrides a bundled one.

    The file is loaded once here, so a malformed file fails now with its path and field.
    """
    path = _as_path("path", path)
    if path.suffix != ".toml" or not _is(path, "file"):
        raise SpecFileError(path, "(file)", "not a .toml file")
    load_spec_file(path)
    add_spec_directory(path)


def remove_spec_directory(path: str | Path) -> None:
    """Undo :func:`add_spec_directory` or :func:`add_spec_file` for ``path`` (no error if absent)."""
    resolved = _as_path("path", path).resolve()
    _user_directories[:] = [p for p in _user_directories if p != resolved]
    _index.cache_clear()
    _GENERATION[0] += 1


def _as_path(name: str, value: Any) -> Path:
    """A non-empty str or path-like as a Path (``""`` would mean the current folder)."""
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        raise InvalidValueError(name, value, "a non-empty path (str or pathlib.Path)")
    return Path(value)


def _is(path: Path, kind: str) -> bool:
    """``path.is_dir()`` / ``is_file()`` / ``exists()``, False for a name the OS refuses
    (too long, or holding a NUL byte) instead of an OSError."""
    try:
        return {"dir": path.is_dir, "file": path.is_file, "any": path.exists}[kind]()
    except (OSError, ValueError):
        return False


def _checked_spec_path(path: Path, field: str) -> Path:
    if _is(path, "dir") or (_is(path, "file") and path.suffix == ".toml"):
        return path.resolve()
    problem = "not a directory or a .toml file" if _is(path, "any") else "no such directory or file"
    raise SpecFileError(path, field, problem)


def _id_or_path(kind: str, value: Any) -> str | Path:
    """A catalog id (str) or a path; anything else is an InvalidValueError naming ``kind``."""
    if isinstance(value, os.PathLike):
        return Path(value)
    if not isinstance(value, str) or not value or "\x00" in value:
        raise InvalidValueError(kind, value, f"a {kind} id (a non-empty string without NUL bytes) or a path")
    return value


def spec_directories() -> list[Path]:
    """Spec directories (or single files) in increasing precedence: bundled, environment, added.

    The environment variable ``ROOFLINE_DECODE_SPEC_PATH`` holds ``os.pathsep``-separated
    directories or ``.toml`` files; an entry that does not exist is an error.
    """
    env = [_checked_spec_path(Path(p), ENV_SPEC_PATH) for p in os.environ.get(ENV_SPEC_PATH, "").split(os.pathsep) if p]
    return [bundled_spec_directory(), *env, *_user_directories]


def _folder_stamp(path: Path) -> int:
    """Latest modification time of a spec folder and its subfolders (a file: its own), so a
    file added to or removed from a folder already indexed is seen on the next look-up.

    The folder list of each tree is remembered with every folder's mtime: a look-up stats those
    folders only (no listing); any changed mtime (a file or folder added, removed or renamed
    anywhere in the tree changes its parent's) walks the tree again."""
    if path.is_file():
        return path.stat().st_mtime_ns
    known = _FOLDER_TREES.get(path)
    if known is not None:
        folders, mtimes = known
        try:
            if all(os.stat(folder).st_mtime_ns == mtime for folder, mtime in zip(folders, mtimes)):
                _FOLDER_STAMPS[path] = max(mtimes)
                return max(mtimes)
        except OSError:  # a folder went away: walk again
            pass
    walked = [str(path)]
    for root, names, _ in os.walk(path):
        walked.extend(os.path.join(root, name) for name in names)
    mtimes = tuple(os.stat(folder).st_mtime_ns for folder in walked)
    _FOLDER_TREES[path] = (tuple(walked), mtimes)
    _FOLDER_STAMPS[path] = max(mtimes)
    return max(mtimes)


#: spec folder -> (its folders, their mtimes) as last walked (:func:`_folder_stamp`)
_FOLDER_TREES: dict[Path, tuple[tuple[str, ...], tuple[int, ...]]] = {}
#: spec folder -> its stamp at the last check
_FOLDER_STAMPS: dict[Path, int] = {}


class _Index:
    """The spec files of the folders: ``files`` (id -> file, later folders overriding earlier
    ones) and ``broken`` (id -> its SpecFileError, for an id defined twice in one folder).

    A file's type (accelerator or memory tier) is read only when it is needed: loading one id
    reads that file alone, a listing (or an unknown id) reads every file once per version
    (:func:`_file_kind`).  A file that cannot be read (malformed TOML, no valid ``type``) is
    in no listing; loading its id raises its error, and every other id, command and listing
    keeps working."""

    def __init__(self, files: dict[str, Path], broken: dict[str, SpecFileError]) -> None:
        self.files, self.broken = files, broken

    def of_kind(self, kind: str) -> dict[str, Path]:
        """id -> file of every spec of ``kind`` (reads each file's type)."""
        return {spec_id: path for spec_id, path in self.files.items() if _kind_of(path) == kind}


@lru_cache(maxsize=4)
def _index(directories: tuple[Path, ...], stamps: tuple[int, ...] = ()) -> _Index:
    """The :class:`_Index` of ``directories`` (``stamps`` only keys the cache)."""
    files: dict[str, Path] = {}
    broken: dict[str, SpecFileError] = {}
    for directory in directories:
        seen: dict[str, Path] = {}
        paths = [directory] if directory.is_file() else sorted(directory.rglob("*.toml"))
        for path in paths:
            files.pop(path.stem, None)
            broken.pop(path.stem, None)
            if path.stem in seen:
                broken[path.stem] = SpecFileError(path, "(id)", f"id {path.stem!r} is also defined by {seen[path.stem]}")
                continue
            seen[path.stem] = path
            files[path.stem] = path
    return _Index(files, broken)


def _kind_of(path: Path) -> str | SpecFileError:
    """The ``type`` of a spec file ("accelerator" or "memory_tier"), or the SpecFileError that
    says why it has none (read once per version of the file)."""
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        stamp = -1  # read_toml words the problem
    return _file_kind(path, stamp)


@lru_cache(maxsize=1024)
def _file_kind(path: Path, stamp: int) -> str | SpecFileError:
    try:
        kind = read_toml(path).get("type")
        if not isinstance(kind, str) or kind not in ("accelerator", "memory_tier"):
            raise SpecFileError(path, "type", f"expected 'accelerator' or 'memory_tier', got {kind!r}")
    except SpecFileError as exc:
        return exc
    return kind


def _current_index(full: bool = True) -> _Index:
    """The index as the spec folders stand now.  ``full=False`` (a look-up by id) skips the
    stats of the bundled tree's folders and reuses its last stamp: a file added there with a
    new id is seen because a miss looks again with ``full=True``; a changed file is seen by
    its own mtime in :func:`_load`; user and environment folders (which override ids) are
    always checked.  Only a second file for an existing id inside the installed
    ``hardware_specs`` waits for the next listing or miss to be reported."""
    directories = tuple(spec_directories())
    bundled = directories[0]
    stamps = tuple(_FOLDER_STAMPS[d] if not full and d is bundled and d in _FOLDER_STAMPS else _folder_stamp(d)
                   for d in directories)
    index = _index(directories, stamps)
    if index is not _LAST_INDEX[0]:  # another index than the last look-up's: forget what ids loaded
        _LAST_INDEX[0] = index
        _GENERATION[0] += 1
    return index


_LAST_INDEX: list[_Index | None] = [None]


@lru_cache(maxsize=256)
def _load_cached(path: Path, mtime: float) -> Accelerator | MemoryTier:
    return load_spec_file(path)


#: (kind, id) -> (its file, the file's mtime [ns], the spec, the index generation): the last
#: spec loaded by that id while no environment or user folder was set (:func:`_recent`)
_RECENT: dict[tuple[str, str], tuple[str, int, Any, int]] = {}
#: bumped whenever another index is in use or the user folders change: a memo entry of an
#: earlier generation is not used
_GENERATION = [0]


def _recent(kind: str, spec_id: str) -> Any:
    """The spec last loaded by ``spec_id`` if nothing it rests on has changed, else None.

    A look-up by id costs one ``stat`` of the spec's own file: a changed file (its mtime) or a
    removed one loads again; a file added with a new id is not in the memo; a user or
    environment folder (whose files may override any id) turns the memo off; another index
    (a listing or a miss found a folder changed) invalidates every entry."""
    hit = _RECENT.get((kind, spec_id))
    if hit is None or hit[3] != _GENERATION[0] or _user_directories or os.environ.get(ENV_SPEC_PATH):
        return None
    try:
        if os.stat(hit[0]).st_mtime_ns == hit[1]:
            return hit[2]
    except OSError:
        pass
    return None


def _load_by_id(kind: str, spec_id: str, path: Path) -> Any:
    """The spec in ``path`` (parsed once per version), recorded as loaded by ``spec_id`` (see
    :func:`_recent`; the mtime is read before the file, so a change while it is read is seen);
    None if the file holds a spec of the other ``kind``."""
    stat = path.stat()
    spec = _load_cached(path, stat.st_mtime)
    if not isinstance(spec, Accelerator if kind == "accelerator" else MemoryTier):
        return None
    if not _user_directories and not os.environ.get(ENV_SPEC_PATH):
        _RECENT[kind, spec_id] = (str(path), stat.st_mtime_ns, spec, _GENERATION[0])
    return spec


def _load(kind: str, id_or_path: str | Path, label: str) -> Any:
    if isinstance(id_or_path, str):
        spec = _recent(kind, id_or_path)
        if spec is not None:
            return spec
    checked = _id_or_path(label, id_or_path)
    if isinstance(checked, Path) or checked.endswith(".toml"):
        spec = load_spec_file(checked)
        if not isinstance(spec, Accelerator if kind == "accelerator" else MemoryTier):
            other = "memory_tier" if kind == "accelerator" else "accelerator"
            raise SpecFileError(checked, "type", f"expected type {kind!r} for a {label}, got {other!r}")
        return spec
    path = _current_index(full=False).files.get(checked)
    if path is not None:
        try:  # the file read once: a malformed one raises its error; one of the other type looks again
            spec = _load_by_id(kind, checked, path)
        except FileNotFoundError:  # removed since it was indexed: look again
            spec = None
        if spec is not None:
            return spec
    index = _current_index()
    if checked in index.broken:
        raise index.broken[checked]
    path = index.files.get(checked)
    if path is not None:
        found = _kind_of(path)
        if isinstance(found, SpecFileError):
            raise found
        spec = _load_by_id(kind, checked, path) if found == kind else None
        if spec is not None:
            return spec
    raise UnknownIdError(label, checked, index.of_kind(kind))


def list_accelerators() -> list[str]:
    """Ids of every known accelerator, sorted."""
    return sorted(_current_index().of_kind("accelerator"))


def list_memory_tiers() -> list[str]:
    """Ids of every known memory tier (PCIe, CXL, DDR5 channels), sorted."""
    return sorted(_current_index().of_kind("memory_tier"))


def load_accelerator(id_or_path: Accelerator | str | Path) -> Accelerator:
    """Load an accelerator by catalog id (``"h100-sxm"``) or from a TOML file path.

    Examples
    --------
    >>> load_accelerator("h100-sxm").memory_bandwidth
    3350000000000.0
    """
    if isinstance(id_or_path, Accelerator):
        return id_or_path
    spec: Accelerator = _load("accelerator", id_or_path, "accelerator")
    return spec


def load_memory_tier(id_or_path: MemoryTier | str | Path) -> MemoryTier:
    """Load a memory tier by id (``"pcie5-x16"``) or from a TOML file path."""
    if isinstance(id_or_path, MemoryTier):
        return id_or_path
    spec: MemoryTier = _load("memory_tier", id_or_path, "memory tier")
    return spec


def list_models() -> list[str]:
    """Ids of the bundled model configs, sorted."""
    _MODEL_DIRECTORY_STAMP[:] = [_MODEL_DIR.stat().st_mtime_ns]
    return list(_model_ids(_MODEL_DIRECTORY_STAMP[0]))


@lru_cache(maxsize=2)
def _model_ids(stamp: int) -> tuple[str, ...]:
    """Bundled model ids, listed again when the folder's mtime (``stamp``) changes."""
    return tuple(sorted(p.stem for p in _MODEL_DIR.glob("*.json")))


def _bundled(model_id: str, overrides: dict[str, Any]) -> Model:
    """A bundled model by id, parsed once per version of its file.

    A repeated id costs one ``stat`` of its file (:data:`_RECENT_MODELS`); otherwise the cached
    id list is consulted (a file added or removed since is seen: a miss or a failed stat lists
    the folder again)."""
    file = os.path.join(_MODEL_DIR_NAME, model_id + ".json")
    hit = _RECENT_MODELS.get(model_id)
    if hit is not None and not overrides and hit[0] == file:
        try:
            if os.stat(file).st_mtime_ns == hit[1]:
                return hit[2]
        except OSError:
            pass
    ids = _model_ids(_MODEL_DIRECTORY_STAMP[0]) if _MODEL_DIRECTORY_STAMP else ()
    if model_id in ids:
        try:
            stamp = os.stat(file).st_mtime_ns
        except FileNotFoundError:
            ids = ()
    if model_id not in ids:
        _MODEL_DIRECTORY_STAMP[:] = [_MODEL_DIR.stat().st_mtime_ns]
        if model_id not in _model_ids(_MODEL_DIRECTORY_STAMP[0]):
            raise UnknownIdError("model", model_id, list_models())
        stamp = os.stat(file).st_mtime_ns
    # a bundled kimi_k2 config is read as deepseek_v3 by design: that ConfigNote is for users' files
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r".*unsupported model_type '[^']+'; read as ", ConfigNote)
        if overrides:
            return Model.from_hf_config(_MODEL_DIR / f"{model_id}.json", **overrides)
        # Models are frozen, so every caller shares the one parsed per file version
        model = Model.from_hf_config(_MODEL_DIR / f"{model_id}.json")
    _RECENT_MODELS[model_id] = (file, stamp, model)
    return model


#: model id -> (its file, the file's mtime [ns], the Model parsed from that version)
_RECENT_MODELS: dict[str, tuple[str, int, Model]] = {}
_MODEL_DIRECTORY_STAMP: list[int] = []
_MODEL_DIR_NAME = str(_MODEL_DIR)


#: Suffixes of a repository name that change no architecture key (chat and base checkpoints).
_VARIANT = re.compile(r"-(instruct|chat|it|hf|base|pt)(?=-|$)")


def bundled_id_of_repo(repo: str) -> str | None:
    """The bundled model id of a Hugging Face repository id, or None.

    ``"meta-llama/Llama-3.1-8B"`` and its instruct checkpoint ``"meta-llama/Llama-3.1-8B-Instruct"``
    give ``"llama-3.1-8b"``: each bundled config records its repository (``_roofline.hf_repo``),
    and a chat, instruct or base checkpoint of it has the same architecture.  A checkpoint in
    another format (``-FP8``, ``-AWQ``, ``-GGUF``) is not matched: its weights differ.

    >>> bundled_id_of_repo("Qwen/Qwen3-8B"), bundled_id_of_repo("nobody/Qwen3-8B")
    ('qwen3-8b', None)
    """
    if repo.count("/") != 1:
        return None
    return _repos(_MODEL_DIR.stat().st_mtime_ns).get(_VARIANT.sub("", repo.lower()))


@lru_cache(maxsize=2)
def _repos(stamp: int) -> dict[str, str]:
    """Repository (lower case, variant suffix cut) -> bundled id, read again when the folder changes."""
    repos: dict[str, str] = {}
    for model_id in _model_ids(stamp):
        repo = model_metadata(model_id).get("hf_repo")
        if isinstance(repo, str):
            repos.setdefault(_VARIANT.sub("", repo.lower()), model_id)
    return repos


def model_metadata(model_id: str) -> dict[str, Any]:
    """The ``_roofline`` block of a bundled config: name, sources, stated parameter counts."""
    checked = _id_or_path("model", model_id)
    if checked not in list_models():
        raise UnknownIdError("model", str(checked), list_models())
    config = json.loads((_MODEL_DIR / f"{checked}.json").read_text(encoding="utf-8"))
    metadata: dict[str, Any] = config.get("_roofline", {})
    return metadata


def load_model(id_or_path: Model | str | Path, weights: Any = None, kv: Any = None, **overrides: Any) -> Model:
    """Load a bundled model by id (``"llama-3.1-8b"``), a config.json path or directory (with
    ``*.safetensors`` files beside it, their headers give every weight group's bytes), or a
    ``.gguf`` file (its header only: architecture and every tensor's type and shape).

    Parameters
    ----------
    id_or_path : str or Path
        Catalog id, or a path to a Hugging Face config.json (or its folder).
    weights, kv : str, NumberFormat or dict, optional
        Weight and KV-cache formats (default: the config's quantization, else bf16).  One
        weight format stores every weight group in it; a dict such as
        ``{"default": "q8_0", "experts": "mxfp4"}`` sets formats per weight group
        (:data:`~roofline_decode.specs.model.WEIGHT_GROUPS`) and keeps the others.
    **overrides
        Other Model fields to set.

    Examples
    --------
    >>> load_model("llama-2-7b", weights="int8").weight_format.name
    'int8'
    """
    if isinstance(id_or_path, Model):
        model = id_or_path.replace(**overrides) if overrides else id_or_path
    else:
        id_or_path = _id_or_path("model", id_or_path)
        is_dir = not str(id_or_path).endswith(".gguf") and os.path.isdir(id_or_path)
        if isinstance(id_or_path, str) and not is_dir and not id_or_path.endswith((".gguf", ".json")):
            # an id names a bundled file; never a path out of the catalog ("../x"); a Hugging
            # Face repository id ("meta-llama/Llama-3.1-8B") names the bundled model of that repo
            model = _bundled(bundled_id_of_repo(id_or_path) or id_or_path, overrides)
            return model if weights is None and kv is None else model.with_precision(weights=weights, kv=kv)
        path = Path(id_or_path)
        if str(id_or_path).endswith(".gguf"):
            from .files.gguf import model_from_gguf

            model = model_from_gguf(path, **overrides)
        elif is_dir and _is(path / "config.json", "file") and any(path.glob("*.safetensors")):
            from .files.safetensors import model_from_folder

            model = model_from_folder(path, **overrides)
        else:  # a config.json path or its folder
            model = Model.from_hf_config(path, **overrides)
    if weights is not None or kv is not None:
        model = model.with_precision(weights=weights, kv=kv)
    return model
