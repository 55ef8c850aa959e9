"""Read a Hugging Face ``config.json`` into a :class:`~roofline_decode.specs.model.Model`, offline.

Each supported ``model_type`` has a reader that maps its keys onto Model fields.  A published
config holds only the values that differ from its transformers configuration class's defaults
(``save_pretrained`` drops the rest), so the class's defaults (:mod:`.class_defaults`, each with
the transformers file it was read from) fill the keys a config leaves out; only what the class
derives (``head_dim`` = d / H_q, ``num_key_value_heads`` = H_q) is derived by the readers.
A multimodal wrapper is read through its language model, and an unknown ``model_type`` whose
``architectures`` names a supported class as that class, with a :class:`ConfigNote`
(:mod:`.model_types`).  MoE dense layers are counted in ``first_dense_layers`` (their position
changes no total).  ``quantization_config`` sets the stored weight format unless
``weight_format=`` is passed.  The keys each family reads are listed in
``docs/architecture/hf-import.md``.

Modules: ``reader`` (typed key access, loading the file), ``class_defaults`` (the defaults of
transformers' configuration classes), ``model_types`` (which reader reads a config),
``families`` (the readers and the ``READERS`` table; extend there to support a new family),
``families_more``, ``families_hybrid`` and ``families_moe`` (later model types; the Mamba-2
hybrids; the MoE types of issue 28), ``quantization`` (``quantization_config`` -> weight
formats).
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from ..._json_limits import shown
from ...errors import ConfigError
from .class_defaults import CLASS_DEFAULTS, defaults_for
from .families import READERS
from .families_hybrid import HYBRID_READERS
from .families_moe import MOE_READERS
from .families_more import MORE_READERS
from .model_types import ARCHITECTURES, WRAPPERS, language_model
from .quantization import quantization_formats
from .reader import ConfigNote, ConfigReader, read_config

READERS.update(MORE_READERS)
READERS.update(HYBRID_READERS)
READERS.update(MOE_READERS)
SUPPORTED_MODEL_TYPES = tuple(READERS)

__all__ = ["hf_config_fields", "read_config", "SUPPORTED_MODEL_TYPES", "ConfigReader", "ConfigNote", "READERS",
           "WRAPPERS", "ARCHITECTURES", "CLASS_DEFAULTS"]


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
    data, model_type = language_model(data, source, READERS)
    reader = ConfigReader(data, source, defaults_for(model_type))
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


