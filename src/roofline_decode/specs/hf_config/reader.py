"""Typed, error-naming access to one Hugging Face config dict, and loading it from a file."""

from __future__ import annotations

from os import PathLike
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..._json_limits import JSONProblem, load_file, shown
from ...errors import ConfigError
from .._limits import MAX_LAYERS, MAX_SIZE

#: Largest value of a layer-count key (readers loop over the layers) and of any other integer key.
_MAXIMA = {"num_hidden_layers": MAX_LAYERS, "n_layer": MAX_LAYERS}

#: Largest config.json read [B]: real ones are a few kB (a long ``id2label`` table: a few hundred).
MAX_FILE_BYTES = 64 * 2**20

#: Marks a key without a default: ``ConfigReader.integer(..., default=REQUIRED_KEYS)`` (the default)
#: raises when it is absent.
REQUIRED_KEYS = object()


class ConfigReader:
    """Typed access to one config dict, with errors that name the key and the file."""

    def __init__(self, config: Mapping[str, Any], source: str):
        self.config, self.source = config, source

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(self.source, key, problem)

    def has(self, key: str) -> bool:
        return self.config.get(key) is not None

    def require(self, *keys: str) -> Any:
        """The value of the first present key; a clear error naming them if none is present."""
        for key in keys:
            if self.config.get(key) is not None:
                return self.config[key]
        raise self.error(" or ".join(keys), "required key is missing")

    def get(self, key: str, default: Any = None) -> Any:
        value = self.config.get(key)
        return default if value is None else value

    def integer(self, *keys: str, default: Any = REQUIRED_KEYS, minimum: int = 0) -> Any:
        """The first present key as an int >= ``minimum``; ``default`` when none is present
        (required when no default is given; ``default=None`` makes it optional)."""
        if default is not REQUIRED_KEYS and not any(self.config.get(k) is not None for k in keys):
            return default
        value = self.require(*keys)
        key = next(k for k in keys if self.config.get(k) is not None)
        maximum = _MAXIMA.get(key, MAX_SIZE)
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            high = f" and <= {maximum:,}" if isinstance(value, int) and value > maximum else ""
            raise self.error(key, f"expected an integer >= {minimum}{high}, got {shown(value)}")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.config.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {shown(value)}")
        return value

    def integer_list(self, key: str) -> list[int]:
        value = self.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise self.error(key, f"expected a list of integers, got {shown(value)}")
        return value


def read_config(config: str | PathLike[str] | Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """Load a config (path to a config.json, or a dict) and say where it came from."""
    if isinstance(config, Mapping):
        return dict(config), "<config dict>"
    if not isinstance(config, (str, PathLike)):
        raise ConfigError(repr(config), "(config)", "expected a path to a config.json, a folder holding one, or a dict")
    path = Path(config)
    try:
        if path.is_dir():
            path = path / "config.json"
    except OSError as exc:  # a name too long for the file system
        raise ConfigError(path, "(file)", f"cannot read: {exc.strerror or exc}") from None
    try:
        data = load_file(path, max_bytes=MAX_FILE_BYTES)
    except JSONProblem as exc:
        raise ConfigError(path, exc.where, exc.problem) from None
    if not isinstance(data, dict):
        raise ConfigError(path, "(root)", f"expected a JSON object, got {type(data).__name__}")
    return data, str(path)
