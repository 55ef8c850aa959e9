"""Which reader a config.json is read with: its ``model_type``, a multimodal wrapper's language
model, or the class its ``architectures`` names.

* A supported ``model_type`` is read by its reader.
* A multimodal wrapper (:data:`WRAPPERS`) is read through its language model: the
  ``text_config`` when there is one, else the top-level keys (older Qwen2.5-VL configs keep the
  text fields at the top level, and ``Qwen2_5_VLConfig`` builds its text config from them).
  The wrapper's name, architectures, quantization and tying apply where the text config lacks
  them.
* An unknown ``model_type`` (or none) whose ``architectures`` names a supported class is read as
  that class's model_type, with a :class:`~.reader.ConfigNote`: Kimi-K2 publishes
  ``"model_type": "kimi_k2"`` with ``"architectures": ["DeepseekV3ForCausalLM"]``.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Container, Mapping
from typing import Any, TypeGuard

from ..._json_limits import shown
from ...errors import ConfigError
from .reader import ConfigNote

__all__ = ["ARCHITECTURES", "WRAPPERS", "language_model"]

#: transformers model class -> the model_type read for it.
ARCHITECTURES = {
    "LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "MixtralForCausalLM": "mixtral",
    "Qwen2ForCausalLM": "qwen2", "Qwen2MoeForCausalLM": "qwen2_moe", "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe", "GemmaForCausalLM": "gemma", "Gemma2ForCausalLM": "gemma2",
    "Gemma3ForCausalLM": "gemma3_text", "Phi3ForCausalLM": "phi3", "DeepseekV2ForCausalLM": "deepseek_v2",
    "DeepseekV3ForCausalLM": "deepseek_v3", "DeepseekV32ForCausalLM": "deepseek_v32", "GptOssForCausalLM": "gpt_oss",
    "OPTForCausalLM": "opt", "GPT2LMHeadModel": "gpt2", "Olmo2ForCausalLM": "olmo2", "GraniteForCausalLM": "granite",
    "CohereForCausalLM": "cohere", "Cohere2ForCausalLM": "cohere2", "GPTJForCausalLM": "gptj",
    "FalconForCausalLM": "falcon", "Glm4MoeForCausalLM": "glm4_moe", "Qwen3NextForCausalLM": "qwen3_next",
    "Mamba2ForCausalLM": "mamba2", "Llama4ForCausalLM": "llama4_text", "PhiForCausalLM": "phi",
    "Starcoder2ForCausalLM": "starcoder2", "SmolLM3ForCausalLM": "smollm3", "OlmoForCausalLM": "olmo",
    "JambaForCausalLM": "jamba", "GraniteMoeHybridForCausalLM": "granitemoehybrid",
    "NemotronHForCausalLM": "nemotron_h", "FalconH1ForCausalLM": "falcon_h1", "MiniMaxM2ForCausalLM": "minimax_m2",
    "Qwen3_5MoeForCausalLM": "qwen3_5_moe_text", "GlmMoeDsaForCausalLM": "glm_moe_dsa",
    "Glm4MoeLiteForCausalLM": "glm4_moe_lite",
}

#: Multimodal wrappers -> the model_type their language model is read as when ``text_config``
#: names none (transformers' default text config of each wrapper; Kimi-K2.5's text model is
#: Kimi-K2, DeepSeek-V3 shapes).
WRAPPERS = {
    "gemma3": "gemma3_text", "llama4": "llama4_text", "mistral3": "mistral", "llava": "llama",
    "paligemma": "gemma", "qwen2_5_vl": "qwen2_5_vl_text", "qwen3_vl": "qwen3_vl_text",
    "qwen3_vl_moe": "qwen3_vl_moe_text", "qwen3_5_moe": "qwen3_5_moe_text", "kimi_k25": "deepseek_v3",
}

#: Wrapper keys that apply to the language model when its text config lacks them.
_INHERITED = ("_roofline", "_name_or_path", "architectures", "quantization_config", "tie_word_embeddings",
              "torch_dtype", "dtype")


def _known(value: Any, table: Container[str]) -> TypeGuard[str]:
    """``value in table`` for a config value of any JSON type (a list is not hashable)."""
    return isinstance(value, str) and value in table


def _architecture(config: Mapping[str, Any]) -> str | None:
    """The first class of ``architectures`` that a supported model_type reads."""
    names = config.get("architectures")
    if not isinstance(names, list):
        return None
    return next((name for name in names if _known(name, ARCHITECTURES)), None)


def _by_architecture(config: Mapping[str, Any], source: str, key: str, supported: Container[str]) -> str | None:
    """The model_type the ``architectures`` of ``config`` name, with a note; None if none does."""
    name = _architecture(config)
    if name is None or ARCHITECTURES[name] not in supported:
        return None
    model_type = ARCHITECTURES[name]
    given = config.get(key.rsplit(".", 1)[-1])
    what = "no model_type" if given is None else f"unsupported model_type {shown(given)}"
    warnings.warn(f"{source}: {key}: {what}; read as {model_type}, the model_type of its architectures {name}",
                  ConfigNote, stacklevel=5)
    return model_type


def language_model(data: dict[str, Any], source: str, supported: Collection[str]) -> tuple[dict[str, Any], str]:
    """The config of the language model and the model_type it is read as.

    Raises
    ------
    ConfigError
        No model_type and no supported architecture, an unsupported model_type, or a
        multimodal wrapper whose language model is neither named nor known.
    """
    model_type = data.get("model_type")
    text = data.get("text_config")
    if _known(model_type, supported):
        return data, model_type
    if not isinstance(text, dict):
        if _known(model_type, WRAPPERS):  # a wrapper with the text fields at the top level
            return data, WRAPPERS[model_type]
        resolved = _by_architecture(data, source, "model_type", supported)
        if resolved is not None:
            return data, resolved
        listed = f"{', '.join(sorted(supported))}; multimodal wrappers: {', '.join(sorted(WRAPPERS))}"
        if model_type is None:
            raise ConfigError(source, "model_type", f"required key is missing; supported: {listed}")
        raise ConfigError(source, "model_type", f"unsupported model_type {shown(model_type)}; supported: {listed}")
    merged = dict(text)
    text_type = merged.get("model_type")
    if not _known(text_type, supported):
        resolved = _by_architecture(merged, source, "text_config.model_type", supported) if text_type is not None \
            else None
        if resolved is None and _known(model_type, WRAPPERS):
            resolved = WRAPPERS[model_type]
            if text_type is not None:
                warnings.warn(f"{source}: text_config.model_type: unsupported model_type {shown(text_type)}; read as "
                              f"{resolved}, the language model of {model_type}", ConfigNote, stacklevel=4)
        if resolved is None:
            raise ConfigError(source, "model_type", f"unsupported multimodal wrapper {shown(model_type)} with a "
                                                    f"text_config; supported: {', '.join(sorted(WRAPPERS))}")
        text_type = resolved
    for key in _INHERITED:
        if key in data and key not in merged:
            merged[key] = data[key]
    merged["model_type"] = text_type
    return merged, text_type
