"""Read a Hugging Face ``config.json`` into a :class:`~roofline_decode.specs.model.Model`, offline.

Each supported ``model_type`` has a reader that maps its keys (and its family's defaults for
absent keys) onto Model fields.  Unknown model types list the supported ones; a missing
required key names the key and the file.  The keys each family reads are listed in
``docs/architecture/hf-import.md``.

Absent keys take the family's config-class default only where that default is derived or
general (``head_dim`` = d / H_q, multi-head ``num_key_value_heads``, ``tie_word_embeddings``,
sliding-window patterns); where it is a fixed, model-specific number (Gemma ``head_dim`` 256,
Qwen ``num_key_value_heads``) the key is required.  MoE dense layers are counted in
``first_dense_layers`` (their position changes no total).  ``quantization_config`` sets the
stored weight format unless ``weight_format=`` is passed.

Modules: ``reader`` (typed key access, loading the file), ``families`` (the readers and the
``READERS`` table; extend there to support a new family), ``families_more`` and
``families_hybrid`` (later model types; the Mamba-2 hybrids), ``quantization``
(``quantization_config`` -> weight formats).
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from ..._json_limits import shown
from ...errors import ConfigError
from .families import READERS
from .families_hybrid import HYBRID_READERS
from .families_more import MORE_READERS
from .quantization import quantization_formats
from .reader import ConfigReader, read_config

READERS.update(MORE_READERS)
READERS.update(HYBRID_READERS)
SUPPORTED_MODEL_TYPES = tuple(READERS)
#: Multimodal wrappers whose ``text_config`` holds the language model, and the model_type it
#: is read as when ``text_config`` does not name one.
WRAPPERS = {"gemma3": "gemma3_text", "llama4": "llama4_text", "mistral3": "mistral", "qwen2_5_vl": "qwen2",
            "llava": "llama", "paligemma": "gemma2", "qwen3_vl": "qwen3", "qwen3_vl_moe": "qwen3_moe"}

__all__ = ["hf_config_fields", "read_config", "SUPPORTED_MODEL_TYPES", "ConfigReader", "READERS"]


def hf_config_fields(config: str | PathLike[str] | Mapping[str, Any], name: str | None = None,
                     **overrides: Any) -> tuple[dict[str, Any], str]:
    """The :class:`~roofline_decode.specs.model.Model` fields a Hugging Face config.json
    (path, directory or dict) states, and where it came from.

    This package only reads configs; ``Model.from_hf_config`` builds the Model from these
    fields, so the reader never imports the Model (no import circle between the two).

    Parameters
    ----------
    config, name, overrides
        As in :meth:`~roofline_decode.specs.model.Model.from_hf_config`, which documents them.

    Returns
    -------
    fields : dict
        The Model fields: the architecture, the weight formats the config's
        ``quantization_config`` states, the name, the source and the ``overrides``.
    source : str
        The config file's path, or ``"<config dict>"``, for error messages.

    Raises
    ------
    ConfigError
        Unreadable or malformed JSON, an unknown ``model_type`` (the message lists the
        supported ones), a missing required key (named with the file), or a malformed value.

    Examples
    --------
    >>> fields, source = hf_config_fields({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
    ...     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
    ...     "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2})
    >>> fields["num_experts"], fields["num_experts_per_token"], fields["moe_intermediate_size"], source
    (8, 2, 14336, '<config dict>')
    """
    data, source = read_config(config)
    data = _language_model(data, source)
    reader = ConfigReader(data, source)
    model_type = data.get("model_type")
    if model_type is None:
        raise ConfigError(source, "model_type", f"required key is missing; supported: {', '.join(sorted(READERS))}")
    if not isinstance(model_type, str) or model_type not in READERS:
        raise ConfigError(
            source, "model_type",
            f"unsupported model_type {shown(model_type)}; supported: {', '.join(sorted(READERS))}",
        )
    fields = READERS[model_type](reader)
    if "weight_format" not in overrides:
        fields.update(quantization_formats(reader, fields, model_type))
    meta = data.get("_roofline") or {}
    if not isinstance(meta, dict):
        raise ConfigError(source, "_roofline", f"expected an object, got {shown(meta)}")
    if name is None:
        architectures = data.get("architectures")
        named = architectures[0] if isinstance(architectures, list) and architectures and isinstance(
            architectures[0], str) else model_type
        name = meta.get("name") or data.get("_name_or_path") or (
            (Path(source).resolve().parent.name or named) if source != "<config dict>" else named
        )
    fields.update(name=name, source=meta.get("config_source") or (source if source != "<config dict>" else None))
    fields = {k: v for k, v in fields.items() if v is not None}
    fields.update(overrides)
    return fields, source



def _known(value: Any, table: Mapping[str, Any]) -> bool:
    """``value in table`` for a config value of any JSON type (a list is not hashable)."""
    return isinstance(value, str) and value in table


def _language_model(data: dict[str, Any], source: str) -> dict[str, Any]:
    """The language model's config of a multimodal wrapper (``text_config``), with the
    wrapper's name, architectures, quantization and tying where the text config lacks them."""
    text = data.get("text_config")
    if not isinstance(text, dict) or _known(data.get("model_type"), READERS):
        return data
    merged = dict(text)
    wrapper = data.get("model_type")
    if not _known(merged.get("model_type"), READERS):
        if not isinstance(wrapper, str) or wrapper not in WRAPPERS:
            raise ConfigError(source, "model_type", f"unsupported multimodal wrapper {shown(wrapper)} with a text_config; "
                                                    f"supported: {', '.join(sorted(WRAPPERS))}")
        merged["model_type"] = WRAPPERS[wrapper]
    for key in ("_roofline", "_name_or_path", "architectures", "quantization_config", "tie_word_embeddings",
                "torch_dtype"):
        if key in data and key not in merged:
            merged[key] = data[key]
    return merged
