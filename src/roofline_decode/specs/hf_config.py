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
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import ConfigError, RooflineError
from ..formats import NumberFormat, group_quantized

__all__ = ["model_from_hf_config", "read_config", "SUPPORTED_MODEL_TYPES", "ConfigReader", "READERS"]

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


# -- pieces shared by the families -------------------------------------------------------------

_ACTIVATIONS = frozenset({"silu", "swish", "gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu_python",
                          "quick_gelu", "relu", "relu2", "tanh"})
_LAYER_KINDS = {"full_attention": "full", "sliding_attention": "sliding"}


def _activation(r: ConfigReader, *keys: str) -> None:
    """Reject an activation we do not know (its name, not its cost, is checked: no FLOPs counted)."""
    for key in keys:
        value = r.config.get(key)
        if value is not None:
            if not isinstance(value, str) or value not in _ACTIVATIONS:
                raise r.error(key, f"unsupported activation {value!r}; supported: {', '.join(sorted(_ACTIVATIONS))}")
            return


def _core(r: ConfigReader, tie: bool, kv_heads: Any = "mha", head_dim: Any = "derived") -> dict[str, Any]:
    """Sizes common to the rotary decoder families.

    ``kv_heads``: "mha" (absent key means H_q), an int default, or ``_REQUIRED``;
    ``head_dim``: "derived" (absent means d / H_q), an int default, or ``_REQUIRED``.
    """
    hidden = r.integer("hidden_size", minimum=1)
    heads = r.integer("num_attention_heads", minimum=1)
    if head_dim == "derived":
        head_dim = hidden // heads if hidden % heads == 0 else _REQUIRED
    return {
        "num_layers": r.integer("num_hidden_layers", minimum=1),
        "hidden_size": hidden,
        "num_heads": heads,
        "num_kv_heads": r.integer("num_key_value_heads", default=heads if kv_heads == "mha" else kv_heads, minimum=1),
        "head_dim": r.integer("head_dim", default=head_dim, minimum=1),
        "vocab_size": r.integer("vocab_size", minimum=1),
        "tie_word_embeddings": r.boolean("tie_word_embeddings", tie),
        "max_position_embeddings": r.integer("max_position_embeddings", default=None, minimum=1),
    }


def _window(r: ConfigReader, default: int | None) -> int | None:
    """``sliding_window``: the family default when absent, no window when null."""
    if "sliding_window" not in r.config:
        return default
    return r.integer("sliding_window", default=None, minimum=1)


def _pattern(num_layers: int, every: int) -> list[str]:
    """Every ``every``-th layer global, the others sliding (HF: ``(i + 1) % every``)."""
    return ["sliding" if (i + 1) % every else "full" for i in range(num_layers)]


def _attention_layers(r: ConfigReader, num_layers: int, window: int | None,
                      default: list[str] | None = None, read_key: bool = True) -> dict[str, Any]:
    """``sliding_window`` and ``layer_types`` fields.  Without a window every layer attends
    globally (as in transformers); without a pattern every layer slides."""
    raw = r.config.get("layer_types") if read_key else None
    if raw is not None:
        if not isinstance(raw, list) or len(raw) != num_layers:
            raise r.error("layer_types",
                          f"expected a list of {num_layers} attention kinds (num_hidden_layers), got {raw!r}")
        for i, kind in enumerate(raw):
            if not isinstance(kind, str) or kind not in _LAYER_KINDS:
                raise r.error(f"layer_types[{i}]",
                              f"unsupported attention kind {kind!r}; supported: {', '.join(_LAYER_KINDS)}")
        types = [_LAYER_KINDS[kind] for kind in raw]
    else:
        types = default if default is not None else ["sliding"] * num_layers
    if window is None or "sliding" not in types:
        return {}
    return {"sliding_window": window, "layer_types": tuple(types)}


def _qwen_attention_layers(r: ConfigReader, num_layers: int) -> dict[str, Any]:
    """Qwen: a window only with ``use_sliding_window``; layers from ``max_window_layers`` on slide."""
    if not r.boolean("use_sliding_window", False):
        return {}
    window = _window(r, None)
    if window is None:
        return {}
    first = r.integer("max_window_layers", minimum=0)
    return _attention_layers(r, num_layers, window, ["full" if i < first else "sliding" for i in range(num_layers)])


def _moe(r: ConfigReader, num_layers: int, num_experts: int, per_token: int, expert_width: int,
         dense_width: int, is_moe_layer: Callable[[int], bool], shared_width: int = 0) -> dict[str, Any]:
    """MoE fields; a stack without MoE layers is a dense model of width ``dense_width``."""
    moe_layers = sum(bool(is_moe_layer(i)) for i in range(num_layers)) if num_experts else 0
    if moe_layers == 0:
        return {"intermediate_size": dense_width}
    if not 1 <= per_token <= num_experts:
        raise r.error("num_experts_per_tok", f"must be in [1, {num_experts}] (the routed experts), got {per_token}")
    dense_layers = num_layers - moe_layers
    return {
        "num_experts": num_experts,
        "num_experts_per_token": per_token,
        "moe_intermediate_size": expert_width,
        "shared_expert_intermediate_size": shared_width,
        "first_dense_layers": dense_layers,
        "intermediate_size": dense_width if dense_layers else 0,
    }


# -- quantization_config -> stored weight formats ----------------------------------------------

_QUANT_METHODS = ("awq", "bitsandbytes", "fbgemm_fp8", "fp8", "gptq", "mxfp4")


def _quantization(r: ConfigReader, is_moe: bool) -> dict[str, Any]:
    """Weight formats stated by ``quantization_config`` (empty when the config has none)."""
    q = r.config.get("quantization_config")
    if q is None:
        return {}
    if not isinstance(q, dict):
        raise r.error("quantization_config", f"expected an object, got {q!r}")
    method = q.get("quant_method")
    key = "quantization_config.quant_method"
    if method == "mxfp4":  # transformers quantizes only the MoE experts to MXFP4
        return {"expert_weight_format": "mxfp4"} if is_moe else {"weight_format": "mxfp4"}
    if method in ("fp8", "fbgemm_fp8"):
        kind = str(q.get("fmt") or "e4m3").lower()
        if kind not in ("e4m3", "e5m2"):
            raise r.error("quantization_config.fmt", f"expected 'e4m3' or 'e5m2', got {kind!r}")
        block = q.get("weight_block_size")
        if block is None:
            return {"weight_format": f"fp8_{kind}"}
        if not (isinstance(block, list) and len(block) == 2
                and all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block)):
            raise r.error("quantization_config.weight_block_size", f"expected two positive integers, got {block!r}")
        fmt = NumberFormat(  # one fp32 scale per block (DeepSeek-V3 weight_scale_inv)
            name=f"fp8_{kind}-b{block[0]}x{block[1]}", bits_per_element=8 + 32 / (block[0] * block[1]),
            compute_precision="fp8",
            description=f"FP8 {kind.upper()} with one fp32 scale per {block[0]}x{block[1]} block",
        )
        return {"weight_format": fmt}
    if method in ("gptq", "awq"):
        bits = q.get("bits", q.get("w_bit"))
        group = q.get("group_size", q.get("q_group_size", 128))
        if isinstance(bits, bool) or not isinstance(bits, int) or bits not in (2, 3, 4, 8):
            raise r.error("quantization_config.bits", f"expected 2, 3, 4 or 8, got {bits!r}")
        if group == -1:  # per output channel: scales are negligible
            return {"weight_format": NumberFormat(name=f"{method}-int{bits}", bits_per_element=bits,
                                                  compute_precision="bf16", description=f"{method} per-channel")}
        if isinstance(group, bool) or not isinstance(group, int) or group < 1:
            raise r.error("quantization_config.group_size", f"expected a positive integer or -1, got {group!r}")
        # fp16 scale and a packed `bits`-bit zero point per group (GPTQ and AWQ checkpoints)
        return {"weight_format": group_quantized(bits, group, 16, bits, name=f"{method}-int{bits}-g{group}")}
    if method == "bitsandbytes":
        if q.get("load_in_8bit"):
            return {"weight_format": "int8"}
        if q.get("load_in_4bit"):
            kind = q.get("bnb_4bit_quant_type") or "fp4"
            if kind not in ("fp4", "nf4"):
                raise r.error("quantization_config.bnb_4bit_quant_type", f"expected 'fp4' or 'nf4', got {kind!r}")
            # blocks of 64 with an fp32 absmax; double quantization stores it in 8 bits + fp32 per 256 blocks
            bits = 4 + (8 / 64 + 32 / (64 * 256) if q.get("bnb_4bit_use_double_quant") else 32 / 64)
            return {"weight_format": NumberFormat(name=f"bnb-{kind}", bits_per_element=bits, compute_precision="bf16",
                                                  description=f"bitsandbytes {kind}, blocks of 64")}
        raise r.error("quantization_config", "bitsandbytes config sets neither load_in_8bit nor load_in_4bit")
    raise r.error(key, f"unsupported quantization {method!r}; supported: {', '.join(_QUANT_METHODS)} "
                       "(pass weight_format=... to state the format yourself)")


# -- readers, one per model_type ---------------------------------------------------------------

def _llama(r: ConfigReader) -> dict[str, Any]:
    """Llama: GQA with rotary embeddings, SwiGLU MLP, RMSNorm; optional biases."""
    fields = _core(r, tie=False)
    fields["intermediate_size"] = r.integer("intermediate_size", minimum=1)
    _activation(r, "hidden_act")
    bias = r.boolean("attention_bias", False)
    fields.update(qkv_bias=bias, o_bias=bias, mlp_bias=r.boolean("mlp_bias", False))
    return fields


def _mistral(r: ConfigReader) -> dict[str, Any]:
    """Mistral: as Llama without biases; every layer slides (MistralConfig window 4096)."""
    fields = _core(r, tie=False, kv_heads=8)
    fields["intermediate_size"] = r.integer("intermediate_size", minimum=1)
    _activation(r, "hidden_act")
    fields.update(_attention_layers(r, fields["num_layers"], _window(r, 4096), read_key=False))
    return fields


def _mixtral(r: ConfigReader) -> dict[str, Any]:
    """Mixtral: every layer MoE, experts of width ``intermediate_size``; no shared expert."""
    fields = _core(r, tie=False, kv_heads=8)
    _activation(r, "hidden_act")
    layers = fields["num_layers"]
    experts = r.integer("num_local_experts", default=8, minimum=1)
    fields.update(_moe(r, layers, experts, r.integer("num_experts_per_tok", default=2, minimum=1),
                       r.integer("intermediate_size", minimum=1), 0, lambda i: True))
    fields.update(_attention_layers(r, layers, _window(r, None)))
    return fields


def _qwen(r: ConfigReader, generation: int, moe: bool) -> dict[str, Any]:
    """Qwen2 / Qwen2-MoE / Qwen3 / Qwen3-MoE.

    Qwen2: q, k, v projections with bias, o without (no config key says so).  Qwen3: explicit
    head_dim, per-head q/k RMSNorm, ``attention_bias`` (false).  MoE: layer i is sparse unless
    listed in ``mlp_only_layers`` or off ``decoder_sparse_step``; Qwen2-MoE adds one gated
    shared expert per MoE layer.
    """
    fields = _core(r, tie=False, kv_heads=_REQUIRED, head_dim=_REQUIRED if generation == 3 else "derived")
    _activation(r, "hidden_act")
    if generation == 2:
        fields.update(qkv_bias=True, o_bias=False)
    else:
        bias = r.boolean("attention_bias", False)
        fields.update(qkv_bias=bias, o_bias=bias, qk_norm=True)
    if moe:
        dense_only = set(r.integer_list("mlp_only_layers"))
        step = r.integer("decoder_sparse_step", default=1, minimum=1)
        shared = r.integer("shared_expert_intermediate_size", minimum=0) if generation == 2 else 0
        fields.update(_moe(
            r, fields["num_layers"], r.integer("num_experts", minimum=0), r.integer("num_experts_per_tok", minimum=1),
            r.integer("moe_intermediate_size", minimum=1), r.integer("intermediate_size", minimum=0),
            lambda i: i not in dense_only and (i + 1) % step == 0, shared,
        ))
    else:
        fields["intermediate_size"] = r.integer("intermediate_size", minimum=1)
    fields.update(_qwen_attention_layers(r, fields["num_layers"]))
    return fields


def _gemma_common(r: ConfigReader, norms_per_layer: int) -> dict[str, Any]:
    fields = _core(r, tie=True, kv_heads=_REQUIRED, head_dim=_REQUIRED)
    fields["intermediate_size"] = r.integer("intermediate_size", minimum=1)
    _activation(r, "hidden_activation", "hidden_act")  # GeGLU: gated
    bias = r.boolean("attention_bias", False)
    fields.update(qkv_bias=bias, o_bias=bias, norms_per_layer=norms_per_layer)
    return fields


def _gemma(r: ConfigReader) -> dict[str, Any]:
    """Gemma: GeGLU, explicit head_dim (16 x 256 = 4096 for d = 3072), tied embeddings."""
    return _gemma_common(r, norms_per_layer=2)


def _gemma2(r: ConfigReader) -> dict[str, Any]:
    """Gemma 2: four norms per layer; even layers slide (window 4096), odd layers global."""
    fields = _gemma_common(r, norms_per_layer=4)
    layers = fields["num_layers"]
    fields.update(_attention_layers(r, layers, _window(r, 4096), _pattern(layers, 2)))
    return fields


def _gemma3_text(r: ConfigReader) -> dict[str, Any]:
    """Gemma 3 (text): Gemma 2 plus q/k norms; every ``sliding_window_pattern``-th layer global."""
    fields = _gemma_common(r, norms_per_layer=4)
    fields["qk_norm"] = True
    layers = fields["num_layers"]
    every = r.integer("sliding_window_pattern", default=6, minimum=1)
    fields.update(_attention_layers(r, layers, _window(r, 4096), _pattern(layers, every)))
    return fields


def _phi3(r: ConfigReader) -> dict[str, Any]:
    """Phi-3: fused qkv and gate_up projections (same counts as separate); every layer slides."""
    fields = _core(r, tie=False)
    fields["intermediate_size"] = r.integer("intermediate_size", minimum=1)
    _activation(r, "hidden_act")
    bias = r.boolean("attention_bias", False)
    fields.update(qkv_bias=bias, o_bias=bias)
    fields.update(_attention_layers(r, fields["num_layers"], _window(r, None)))
    return fields


def _deepseek(r: ConfigReader, version: int) -> dict[str, Any]:
    """DeepSeek-V2/V3: multi-head latent attention, dense first layers, shared + routed experts."""
    if r.boolean("attention_bias", False):
        raise r.error("attention_bias", "MLA projections with biases are not supported (expected false)")
    if "q_lora_rank" not in r.config:  # null is meaningful (no query compression); absent is not
        raise r.error("q_lora_rank", "required key is missing (null means an uncompressed query)")
    hidden = r.integer("hidden_size", minimum=1)
    heads = r.integer("num_attention_heads", minimum=1)
    layers = r.integer("num_hidden_layers", minimum=1)
    nope, rope = r.integer("qk_nope_head_dim", minimum=1), r.integer("qk_rope_head_dim", minimum=1)
    _activation(r, "hidden_act")
    fields: dict[str, Any] = {
        "num_layers": layers, "hidden_size": hidden, "num_heads": heads,
        # nominal: MLA caches one latent per token, not num_key_value_heads heads
        "num_kv_heads": heads, "head_dim": nope + rope,
        "vocab_size": r.integer("vocab_size", minimum=1),
        "tie_word_embeddings": r.boolean("tie_word_embeddings", False),
        "max_position_embeddings": r.integer("max_position_embeddings", default=None, minimum=1),
        "kv_lora_rank": r.integer("kv_lora_rank", minimum=1),
        "q_lora_rank": r.integer("q_lora_rank", default=0, minimum=0),
        "qk_nope_head_dim": nope, "qk_rope_head_dim": rope,
        "v_head_dim": r.integer("v_head_dim", minimum=1),
    }
    required = _REQUIRED if version == 3 else 0  # DeepseekV3Config defaults (1 shared, 3 dense) are model-specific
    first_dense = r.integer("first_k_dense_replace", default=required, minimum=0)
    every = r.integer("moe_layer_freq", default=1, minimum=1)
    width = r.integer("moe_intermediate_size", minimum=1)
    shared = r.integer("n_shared_experts", default=required, minimum=0) * width
    fields.update(_moe(
        r, layers, r.integer("n_routed_experts", minimum=0), r.integer("num_experts_per_tok", minimum=1), width,
        r.integer("intermediate_size", minimum=0), lambda i: i >= first_dense and i % every == 0, shared,
    ))
    return fields


def _gpt_oss(r: ConfigReader) -> dict[str, Any]:
    """gpt-oss: every layer MoE (experts and router with biases), alternating 128-token windows."""
    fields = _core(r, tie=False, kv_heads=8, head_dim=64)
    _activation(r, "hidden_act")
    bias = r.boolean("attention_bias", True)
    layers = fields["num_layers"]
    fields.update(qkv_bias=bias, o_bias=bias, mlp_bias=True)
    fields.update(_moe(
        r, layers, r.integer("num_local_experts", "num_experts", minimum=1),
        r.integer("num_experts_per_tok", "experts_per_token", minimum=1),
        r.integer("intermediate_size", minimum=1), 0, lambda i: True,
    ))
    fields.update(_attention_layers(r, layers, _window(r, 128), _pattern(layers, 2)))
    return fields


def _opt(r: ConfigReader) -> dict[str, Any]:
    """OPT: multi-head attention, LayerNorms, biases everywhere, plain ReLU MLP, learned positions
    (``max_position_embeddings`` + 2 offset rows)."""
    hidden = r.integer("hidden_size", minimum=1)
    heads = r.integer("num_attention_heads", minimum=1)
    projection = r.integer("word_embed_proj_dim", default=hidden, minimum=1)
    if projection != hidden:
        raise r.error("word_embed_proj_dim", f"{projection} != hidden_size {hidden}: "
                                             "OPT's project_in/project_out embeddings are not supported")
    if hidden % heads:
        raise r.error("num_attention_heads", f"{heads} does not divide hidden_size {hidden}")
    _activation(r, "activation_function")
    positions = r.integer("max_position_embeddings", minimum=1)
    bias = r.boolean("enable_bias", True)
    return {
        "num_layers": r.integer("num_hidden_layers", minimum=1), "hidden_size": hidden,
        "num_heads": heads, "num_kv_heads": heads, "head_dim": hidden // heads,
        "intermediate_size": r.integer("ffn_dim", minimum=1), "vocab_size": r.integer("vocab_size", minimum=1),
        "mlp_gated": False, "qkv_bias": bias, "o_bias": bias, "mlp_bias": bias,
        "tie_word_embeddings": r.boolean("tie_word_embeddings", True),
        "norm_type": "layer", "norms_per_layer": 2 if r.boolean("layer_norm_elementwise_affine", True) else 0,
        "position_embedding_rows": positions + 2, "max_position_embeddings": positions,
    }


def _gpt2(r: ConfigReader) -> dict[str, Any]:
    """GPT-2: n_embd/n_layer/n_head/n_positions/n_inner keys, biases, LayerNorms, learned positions."""
    if r.boolean("add_cross_attention", False):
        raise r.error("add_cross_attention", "cross-attention layers are not supported (decoder-only models)")
    hidden = r.integer("n_embd", "hidden_size", minimum=1)
    heads = r.integer("n_head", "num_attention_heads", minimum=1)
    if hidden % heads:
        raise r.error("n_head", f"{heads} does not divide n_embd {hidden}")
    _activation(r, "activation_function")
    positions = r.integer("n_positions", "max_position_embeddings", minimum=1)
    return {
        "num_layers": r.integer("n_layer", "num_hidden_layers", minimum=1), "hidden_size": hidden,
        "num_heads": heads, "num_kv_heads": heads, "head_dim": hidden // heads,
        "intermediate_size": r.integer("n_inner", default=4 * hidden, minimum=1),
        "vocab_size": r.integer("vocab_size", minimum=1),
        "mlp_gated": False, "qkv_bias": True, "o_bias": True, "mlp_bias": True,
        "tie_word_embeddings": r.boolean("tie_word_embeddings", True),
        "norm_type": "layer", "norms_per_layer": 2,
        "position_embedding_rows": positions, "max_position_embeddings": positions,
    }


#: model_type -> reader returning Model fields.  Extend here to support a new family.
READERS: dict[str, Callable[[ConfigReader], dict[str, Any]]] = {
    "llama": _llama,
    "mistral": _mistral,
    "mixtral": _mixtral,
    "qwen2": partial(_qwen, generation=2, moe=False),
    "qwen2_moe": partial(_qwen, generation=2, moe=True),
    "qwen3": partial(_qwen, generation=3, moe=False),
    "qwen3_moe": partial(_qwen, generation=3, moe=True),
    "gemma": _gemma,
    "gemma2": _gemma2,
    "gemma3_text": _gemma3_text,
    "phi3": _phi3,
    "deepseek_v2": partial(_deepseek, version=2),
    "deepseek_v3": partial(_deepseek, version=3),
    "gpt_oss": _gpt_oss,
    "opt": _opt,
    "gpt2": _gpt2,
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
        Model fields to set on top of the config (e.g. ``weight_format="q4_0"``; stating
        ``weight_format`` also skips the config's ``quantization_config``).

    Returns
    -------
    Model
        The architecture, in the weight format the config's ``quantization_config`` states
        (bf16 without one) and a bf16 KV cache.

    Raises
    ------
    ConfigError
        Unreadable or malformed JSON, an unknown ``model_type`` (the message lists the
        supported ones), a missing required key (named with the file), or a malformed value.

    Examples
    --------
    >>> m = model_from_hf_config({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
    ...     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
    ...     "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2})
    >>> m.num_experts, m.num_moe_layers, m.moe_intermediate_size
    (8, 32, 14336)
    """
    from .model import Model

    data, source = read_config(config)
    reader = ConfigReader(data, source)
    model_type = data.get("model_type")
    if model_type is None:
        raise ConfigError(source, "model_type", f"required key is missing; supported: {', '.join(sorted(READERS))}")
    if not isinstance(model_type, str) or model_type not in READERS:
        raise ConfigError(
            source, "model_type",
            f"unsupported model_type {model_type!r}; supported: {', '.join(sorted(READERS))}",
        )
    fields = READERS[model_type](reader)
    if "weight_format" not in overrides:
        fields.update(_quantization(reader, bool(fields.get("num_experts"))))
    meta = data.get("_roofline") or {}
    if not isinstance(meta, dict):
        raise ConfigError(source, "_roofline", f"expected an object, got {meta!r}")
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

