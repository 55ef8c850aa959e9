"""Typed, error-naming access to one Hugging Face config dict, and loading it from a file."""

from __future__ import annotations

from os import PathLike
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..._json_limits import JSONProblem, load_file, shown
from ...errors import ConfigError, RooflineError
from .._limits import MAX_LAYERS, MAX_SIZE

#: Largest value of a layer-count key (readers loop over the layers) and of any other integer key.
_MAXIMA = {"num_hidden_layers": MAX_LAYERS, "n_layer": MAX_LAYERS}

#: Largest config.json read [B]: real ones are a few kB (a long ``id2label`` table: a few hundred).
MAX_FILE_BYTES = 64 * 2**20

#: Marks a key without a default: ``ConfigReader.integer(..., default=REQUIRED_KEYS)`` (the default)
#: raises when it is absent.
REQUIRED_KEYS = object()


class ConfigNote(UserWarning, RooflineError):
    """How a config was read where that differs from its own words: an unsupported
    ``model_type`` read as the class its ``architectures`` names (Kimi-K2's ``kimi_k2`` as
    ``deepseek_v3``).  A warning, so that ``warnings.simplefilter("ignore", ConfigNote)``
    silences it and ``"error"`` turns it into a failure; raised so, it is a
    :class:`~roofline_decode.errors.RooflineError` like every refused input."""


class ConfigReader:
    """Typed access to one config dict over its class's defaults, with errors that name the key
    and the file.

    ``config`` holds the merged view (the defaults, then the config's own keys over them).
    Where a value may come from one of several keys (``n_embd`` or ``hidden_size``), a key the
    config states wins over a key only the defaults hold.
    """

    def __init__(self, config: Mapping[str, Any], source: str, defaults: Mapping[str, Any] | None = None):
        self.stated: Mapping[str, Any] = config
        self.config: Mapping[str, Any] = {**defaults, **config} if defaults else config
        self.source = source

    def _first(self, keys: tuple[str, ...]) -> str | None:
        """The first key with a value: stated in the config, else from the defaults."""
        for view in (self.stated, self.config):
            for key in keys:
                if view.get(key) is not None:
                    return key
        return None

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(self.source, key, problem)

    def has(self, key: str) -> bool:
        return self.config.get(key) is not None

    def require(self, *keys: str) -> Any:
        """The value of the first present key; a clear error naming them if none is present."""
        key = self._first(keys)
        if key is None:
            raise self.error(" or ".join(keys), "required key is missing")
        return self.config[key]

    def get(self, key: str, default: Any = None) -> Any:
        value = self.config.get(key)
        return default if value is None else value

    def integer(self, *keys: str, default: Any = REQUIRED_KEYS, minimum: int = 0) -> Any:
        """The first present key as an int >= ``minimum``; ``default`` when none is present
        (required when no default is given; ``default=None`` makes it optional)."""
        key = self._first(keys)
        if key is None and default is not REQUIRED_KEYS:
            return default
        value = self.require(*keys)
        assert key is not None  # require raised otherwise
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
