"""Typed, error-naming access to one Hugging Face config dict, and loading it from a file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import ConfigError

#: Marks a key without a default: ``ConfigReader.integer(..., default=_REQUIRED)`` (the default)
#: raises when it is absent.
_REQUIRED = object()


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

    def integer(self, *keys: str, default: Any = _REQUIRED, minimum: int = 0) -> Any:
        """The first present key as an int >= ``minimum``; ``default`` when none is present
        (required when no default is given; ``default=None`` makes it optional)."""
        if default is not _REQUIRED and not any(self.config.get(k) is not None for k in keys):
            return default
        value = self.require(*keys)
        key = next(k for k in keys if self.config.get(k) is not None)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(key, f"expected an integer >= {minimum}, got {value!r}")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.config.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {value!r}")
        return value

    def integer_list(self, key: str) -> list[int]:
        value = self.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise self.error(key, f"expected a list of integers, got {value!r}")
        return value


def read_config(config: str | Path | Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """Load a config (path to a config.json, or a dict) and say where it came from."""
    if isinstance(config, Mapping):
        return dict(config), "<config dict>"
    path = Path(config)
    if path.is_dir():
        path = path / "config.json"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, "(file)", f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    except OSError as exc:
        raise ConfigError(path, "(file)", f"cannot read: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(path, f"line {exc.lineno} column {exc.colno}", f"not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(path, "(root)", f"expected a JSON object, got {type(data).__name__}")
    return data, str(path)
