"""Read a Hugging Face ``config.json`` into a :class:`~roofline_decode.specs.model.Model`, offline.

Each supported ``model_type`` has a reader that maps its keys (and its family's defaults for
absent keys) onto Model fields.  Unknown model types list the supported ones; a missing
required key names the key and the file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError, RooflineError

__all__ = ["model_from_hf_config", "read_config", "SUPPORTED_MODEL_TYPES", "ConfigReader"]


class ConfigReader:
    """Typed access to one config dict, with errors that name the key and the file."""

    def __init__(self, config: Mapping[str, Any], source: str):
        self.config, self.source = config, source

    def has(self, key: str) -> bool:
        return self.config.get(key) is not None

    def require(self, *keys: str) -> Any:
        """The value of the first present key; a clear error naming them if none is present."""
        for key in keys:
            if self.config.get(key) is not None:
                return self.config[key]
        raise ConfigError(self.source, " or ".join(keys), "required key is missing")

    def get(self, key: str, default: Any = None) -> Any:
        value = self.config.get(key)
        return default if value is None else value

    def integer(self, *keys: str, default: int | None = None, minimum: int = 0) -> int:
        if default is not None and not any(self.config.get(k) is not None for k in keys):
            return default
        value = self.require(*keys)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(self.source, keys[0], f"expected an integer >= {minimum}, got {value!r}")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.config.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(self.source, key, f"expected true or false, got {value!r}")
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
    except OSError as exc:
        raise ConfigError(path, "(file)", f"cannot read: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(path, f"line {exc.lineno} column {exc.colno}", f"not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(path, "(root)", "expected a JSON object")
    return data, str(path)


def _llama_like(r: ConfigReader) -> dict[str, Any]:
    """llama, mistral, qwen2: GQA with rotary embeddings, gated MLP, RMSNorm."""
    hidden = r.integer("hidden_size", minimum=1)
    heads = r.integer("num_attention_heads", minimum=1)
    fields: dict[str, Any] = {
        "num_layers": r.integer("num_hidden_layers", minimum=1),
        "hidden_size": hidden,
        "num_heads": heads,
        "num_kv_heads": r.integer("num_key_value_heads", default=heads, minimum=1),
        # head_dim only where the config states it; older configs imply d / H_q
        "head_dim": r.integer("head_dim", default=hidden // heads, minimum=1),
        "intermediate_size": r.integer("intermediate_size", minimum=1),
        "vocab_size": r.integer("vocab_size", minimum=1),
        "tie_word_embeddings": r.boolean("tie_word_embeddings", False),
        "max_position_embeddings": r.get("max_position_embeddings"),
    }
    if r.config.get("hidden_act", "silu") not in ("silu", "swish", "gelu", "gelu_pytorch_tanh"):
        raise ConfigError(r.source, "hidden_act", f"unsupported activation {r.config['hidden_act']!r}")
    bias = r.boolean("attention_bias", False)
    fields.update(qkv_bias=bias, o_bias=bias, mlp_bias=r.boolean("mlp_bias", False))
    return fields


def _llama(r: ConfigReader) -> dict[str, Any]:
    return _llama_like(r)


def _mistral(r: ConfigReader) -> dict[str, Any]:
    fields = _llama_like(r)
    if r.has("sliding_window"):
        fields["sliding_window"] = r.integer("sliding_window", minimum=1)
    return fields


def _qwen2(r: ConfigReader) -> dict[str, Any]:
    fields = _llama_like(r)
    # Qwen2 projects q, k, v with bias and o without; the key attention_bias is absent.
    fields.update(qkv_bias=True, o_bias=False)
    if r.boolean("use_sliding_window", False) and r.has("sliding_window"):
        # layers at index >= max_window_layers slide (Qwen2 modelling code)
        window = r.integer("sliding_window", minimum=1)
        first_sliding = r.integer("max_window_layers", default=fields["num_layers"])
        layers = fields["num_layers"]
        if first_sliding < layers:
            fields["sliding_window"] = window
            fields["layer_types"] = tuple("full" if i < first_sliding else "sliding" for i in range(layers))
    return fields


#: model_type -> reader returning Model fields.  Extend here to support a new family.
READERS: dict[str, Callable[[ConfigReader], dict[str, Any]]] = {
    "llama": _llama,
    "mistral": _mistral,
    "qwen2": _qwen2,
}
SUPPORTED_MODEL_TYPES = tuple(READERS)


def model_from_hf_config(config, name: str | None = None, **overrides: Any):
    """Build a :class:`Model` from a Hugging Face config.json (path, directory or dict).

    Parameters
    ----------
    config : str, Path or mapping
        A config.json file, a directory holding one, or the parsed dict.
    name : str, optional
        Display name; defaults to the ``_roofline.name`` key of bundled configs, the
        ``_name_or_path`` key, or the file's folder name.
    **overrides
        Model fields to set on top of the config (e.g. ``weight_format="q4_0"``).

    Raises
    ------
    ConfigError
        Unknown ``model_type`` (the message lists the supported ones), a missing required key
        (named with the file), or a malformed value.
    """
    from .model import Model

    data, source = read_config(config)
    reader = ConfigReader(data, source)
    model_type = data.get("model_type")
    if model_type not in READERS:
        raise ConfigError(
            source, "model_type",
            f"unsupported model_type {model_type!r}; supported: {', '.join(sorted(READERS))}",
        )
    fields = READERS[model_type](reader)
    meta = data.get("_roofline") or {}
    if name is None:
        name = meta.get("name") or data.get("_name_or_path") or (
            Path(source).parent.name if source != "<config dict>" else model_type
        )
    fields.update(name=name, source=meta.get("config_source") or (source if source != "<config dict>" else None))
    fields = {k: v for k, v in fields.items() if v is not None}
    fields.update(overrides)
    try:
        return Model(**fields)
    except RooflineError as exc:
        raise ConfigError(source, "(model)", str(exc)) from None
