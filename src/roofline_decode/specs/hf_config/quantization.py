"""``quantization_config`` -> the stored format of every weight group (issue 21 item 2).

A quantizer converts the linear layers of the decoder blocks; everything else stays in the
checkpoint's wide dtype (``torch_dtype``, bf16 by default):

* never converted: the embedding table and the norm vectors (not linear layers);
* kept wide by default: the lm_head (transformers adds it to ``modules_to_not_convert`` for
  fp8, GPTQ, AWQ and bitsandbytes; GPTQ converts it only with ``"lm_head": true``) and the MoE
  router (a tiny d × E gate that FP8/GPTQ/AWQ checkpoints keep wide);
* ``modules_to_not_convert`` (fp8, AWQ, mxfp4), ``ignore`` (compressed-tensors, where it is
  the whole list: lm_head and router are converted unless named, but a router that is no
  ``nn.Linear`` is never a target of the scheme's ``"Linear"``: DeepSeek-V3's and Kimi-K2's
  ``DeepseekV3TopkRouter``, GLM's ``Glm4MoeTopkRouter``, MiniMax-M2's ``MiniMaxM2TopKRouter`` hold
  a bare weight parameter) and ``llm_int8_skip_modules``
  (bitsandbytes) keep more modules wide.  Entries match module names as transformers does:
  ``re:<regex>``, a glob with ``*``, or a substring.  Names are matched against the family's
  module names layer by layer, so an entry that names some layers only keeps that share of
  the group wide (the group's format then blends both widths by parameter count).
* mxfp4 (gpt-oss) converts the routed experts only.

FP8 block scales (``weight_block_size``, DeepSeek-V3's ``weight_scale_inv``: one fp32 per
128 × 128 block) are counted in the format's bits per element.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from typing import Any

from ..._json_limits import shown
from ...formats import ComputePrecision, NumberFormat, get_format, group_quantized
from .reader import ConfigReader

_QUANT_METHODS = ("awq", "bitsandbytes", "compressed-tensors", "fbgemm_fp8", "fp8", "gptq", "mxfp4")

#: Groups a quantizer converts unless told otherwise (the router and lm_head only where noted).
_LINEAR_GROUPS = ("attention", "mlp", "experts", "shared_experts")

#: Families whose MoE router is a module holding ``weight = nn.Parameter(...)`` and no
#: ``nn.Linear`` (transformers' DeepseekV3TopkRouter, Glm4MoeTopkRouter and Glm4MoeLiteTopkRouter
#: built on it, MiniMaxM2TopKRouter): a compressed-tensors scheme that targets "Linear" leaves it
#: in the checkpoint's wide dtype.
_ROUTER_NOT_LINEAR = frozenset({"deepseek_v3", "deepseek_v32", "glm4_moe", "glm4_moe_lite", "minimax_m2"})
#: FP8 ``fmt`` spellings: torch dtype names (MiniMax-M2's "float8_e4m3fn") and the short ones.
_FP8_KINDS = {"e4m3": "e4m3", "e5m2": "e5m2", "float8_e4m3fn": "e4m3", "float8_e4m3": "e4m3", "float8_e5m2": "e5m2"}


def quantization_formats(r: ConfigReader, fields: dict[str, Any], model_type: str = "llama") -> dict[str, Any]:
    """Model fields (``weight_format``, ``expert_weight_format``, ``tensor_formats``) stated by
    ``quantization_config``; empty when the config has none."""
    q = r.config.get("quantization_config")
    if q is None:
        return {}
    if not isinstance(q, dict):
        raise r.error("quantization_config", f"expected an object, got {shown(q)}")
    method = q.get("quant_method")
    key = "quantization_config.quant_method"
    if method is None:
        raise r.error(key, f"required key is missing; supported: {', '.join(_QUANT_METHODS)}")
    is_moe = bool(fields.get("num_experts"))
    wide = get_format("fp16" if r.config.get("torch_dtype") in ("float16", "fp16") else "bf16")
    converted = set(_LINEAR_GROUPS)
    if method == "mxfp4":  # transformers quantizes only the MoE experts to MXFP4
        quantized = get_format("mxfp4")
        if not is_moe:
            return {"weight_format": quantized}
        converted = {"experts"}
    elif method in ("fp8", "fbgemm_fp8"):
        quantized = _fp8(r, q)
    elif method in ("gptq", "awq"):
        quantized = _gptq_awq(r, q, method)
        if method == "gptq" and q.get("lm_head") is True:
            converted.add("lm_head")
    elif method == "bitsandbytes":
        quantized = _bitsandbytes(r, q)
        converted.add("router")  # bitsandbytes converts every nn.Linear but the lm_head
    elif method == "compressed-tensors":
        quantized = _compressed_tensors(r, q)
        if isinstance(q.get("ignore"), list):  # targets "Linear": the list says what stays wide
            converted |= {"lm_head"} if model_type in _ROUTER_NOT_LINEAR else {"lm_head", "router"}
    else:
        raise r.error(key, f"unsupported quantization {shown(method)}; supported: {', '.join(_QUANT_METHODS)} "
                           "(pass weight_format=... to state the format yourself)")
    listed_key, listed = _not_converted(r, q, method)
    shares = _module_shares(r, fields, model_type, listed, listed_key)
    formats: dict[str, NumberFormat] = {}
    for group in ("embedding", "lm_head", "attention", "mlp", "experts", "shared_experts", "router", "norms"):
        kept = 1.0 if group not in converted else shares.get(group, 0.0)
        formats[group] = _blend(quantized, wide, kept)
    if converted == {"experts"}:  # gpt-oss: the default stays wide
        return {"weight_format": wide, "tensor_formats": formats}
    return {"weight_format": quantized, "tensor_formats": formats}


def _fp8(r: ConfigReader, q: dict[str, Any]) -> NumberFormat:
    fmt = q.get("fmt") or "e4m3"
    kind = _FP8_KINDS.get(fmt.lower()) if isinstance(fmt, str) else None
    if kind is None:
        raise r.error("quantization_config.fmt", f"expected one of {', '.join(_FP8_KINDS)}, got {shown(fmt)}")
    block = q.get("weight_block_size")
    if block is None:
        return get_format(f"fp8_{kind}")
    if not (isinstance(block, list) and len(block) == 2
            and all(isinstance(b, int) and not isinstance(b, bool) and 1 <= b <= 1 << 20 for b in block)):
        raise r.error("quantization_config.weight_block_size", f"expected two integers from 1 to 2**20, got {shown(block)}")
    return NumberFormat(  # one fp32 scale per block (DeepSeek-V3 weight_scale_inv)
        name=f"fp8_{kind}-b{block[0]}x{block[1]}", bits_per_element=8 + 32 / (block[0] * block[1]),
        compute_precision="fp8",
        description=f"FP8 {kind.upper()} with one fp32 scale per {block[0]}x{block[1]} block",
    )


def _gptq_awq(r: ConfigReader, q: dict[str, Any], method: str) -> NumberFormat:
    bits = q.get("bits", q.get("w_bit"))
    group = q.get("group_size", q.get("q_group_size", 128))
    if isinstance(bits, bool) or not isinstance(bits, int) or bits not in (2, 3, 4, 8):
        raise r.error("quantization_config.bits", f"expected 2, 3, 4 or 8, got {shown(bits)}")
    if group == -1:  # per output channel: scales are negligible
        return NumberFormat(name=f"{method}-int{bits}", bits_per_element=bits, compute_precision="bf16",
                            description=f"{method} per-channel")
    if isinstance(group, bool) or not isinstance(group, int) or not 1 <= group <= 1 << 20:
        raise r.error("quantization_config.group_size", f"expected an integer from 1 to 2**20, or -1, got {shown(group)}")
    # fp16 scale and a packed `bits`-bit zero point per group (GPTQ and AWQ checkpoints)
    return group_quantized(bits, group, 16, bits, name=f"{method}-int{bits}-g{group}")


def _bitsandbytes(r: ConfigReader, q: dict[str, Any]) -> NumberFormat:
    if q.get("load_in_8bit"):
        return get_format("int8")
    if q.get("load_in_4bit"):
        kind = q.get("bnb_4bit_quant_type") or "fp4"
        if kind not in ("fp4", "nf4"):
            raise r.error("quantization_config.bnb_4bit_quant_type", f"expected 'fp4' or 'nf4', got {shown(kind)}")
        # blocks of 64 with an fp32 absmax; double quantization stores it in 8 bits + fp32 per 256 blocks
        bits = 4 + (8 / 64 + 32 / (64 * 256) if q.get("bnb_4bit_use_double_quant") else 32 / 64)
        return NumberFormat(name=f"bnb-{kind}", bits_per_element=bits, compute_precision="bf16",
                            description=f"bitsandbytes {kind}, blocks of 64")
    raise r.error("quantization_config", "bitsandbytes config sets neither load_in_8bit nor load_in_4bit")


def _compressed_tensors(r: ConfigReader, q: dict[str, Any]) -> NumberFormat:
    """The weight scheme of ``config_groups`` (one scheme for every group; llm-compressor)."""
    groups = q.get("config_groups")
    key = "quantization_config.config_groups"
    if not isinstance(groups, dict) or not groups:
        raise r.error(key, f"expected an object of quantization schemes, got {shown(groups)}")
    schemes = []
    for name, scheme in groups.items():
        weights = scheme.get("weights") if isinstance(scheme, dict) else None
        if not isinstance(weights, dict):
            raise r.error(f"{key}.{name}.weights", f"expected an object, got {shown(weights)}")
        activations = scheme.get("input_activations")
        schemes.append((weights, activations if isinstance(activations, dict) else None, f"{key}.{name}"))
    if len({repr(s[:2]) for s in schemes}) > 1:
        raise r.error(key, "schemes that differ between groups are not supported; pass weight_format=...")
    weights, activations, where = schemes[0]
    bits, kind = weights.get("num_bits"), weights.get("type", "int")
    if isinstance(bits, bool) or not isinstance(bits, int) or bits not in (2, 3, 4, 8):
        raise r.error(f"{where}.weights.num_bits", f"expected 2, 3, 4 or 8, got {shown(bits)}")
    if kind not in ("int", "float"):
        raise r.error(f"{where}.weights.type", f"expected 'int' or 'float', got {shown(kind)}")
    strategy = weights.get("strategy", "tensor")
    group = weights.get("group_size")
    if kind == "float" and bits == 4 and group == 16:
        return get_format("nvfp4")
    if kind == "float" and bits == 8:
        fmt = get_format("fp8_e4m3")
        if strategy == "block":
            block = weights.get("block_structure") or [128, 128]
            if not (isinstance(block, list) and len(block) == 2
                    and all(isinstance(b, int) and not isinstance(b, bool) and 1 <= b <= 1 << 20 for b in block)):
                raise r.error(f"{where}.weights.block_structure",
                              f"expected two integers from 1 to 2**20, got {shown(block)}")
            fmt = NumberFormat(name=f"fp8_e4m3-b{block[0]}x{block[1]}", compute_precision="fp8",
                               bits_per_element=8 + 16 / (block[0] * block[1]),
                               description="FP8 E4M3 with one 16-bit scale per block (compressed-tensors)")
        return fmt
    compute: ComputePrecision = "bf16"
    if activations is not None and activations.get("num_bits") == 8 and kind == "int" and bits == 8:
        compute = "int8"
    if strategy == "group":
        if isinstance(group, bool) or not isinstance(group, int) or not 1 <= group <= 1 << 20:
            raise r.error(f"{where}.weights.group_size", f"expected an integer from 1 to 2**20, got {shown(group)}")
        zero = 0 if weights.get("symmetric", True) else bits
        return group_quantized(bits, group, 16, zero, name=f"ct-int{bits}-g{group}" + ("-sym" if not zero else ""))
    if kind == "float":
        raise r.error(f"{where}.weights", f"unsupported float scheme of {bits} bits, strategy {shown(strategy)}")
    return NumberFormat(name="int8_w8a8" if compute == "int8" else f"ct-int{bits}", bits_per_element=bits,
                        compute_precision=compute,
                        description=f"compressed-tensors int{bits}, per-{strategy} scales (negligible)")


#: Most module names or patterns a ``modules_to_not_convert``-like list may hold, and the
#: longest pattern: real lists name a few modules per layer.
_MAX_PATTERNS, _MAX_PATTERN_LENGTH = 100_000, 1_000
#: Most (module, pattern) pairs matched: about 100 layers x 10 modules x 10,000 patterns.
_MATCH_BUDGET = 10**7


def _not_converted(r: ConfigReader, q: dict[str, Any], method: str) -> tuple[str, list[str]]:
    """(key, module names or patterns) of the modules a quantizer leaves wide."""
    key = {"compressed-tensors": "ignore", "bitsandbytes": "llm_int8_skip_modules"}.get(method, "modules_to_not_convert")
    value = q.get(key)
    if value is None:
        return key, []
    if not isinstance(value, list) or len(value) > _MAX_PATTERNS or not all(
            isinstance(v, str) and len(v) <= _MAX_PATTERN_LENGTH for v in value):
        raise r.error(f"quantization_config.{key}", f"expected a list of at most {_MAX_PATTERNS:,} module names of at "
                                                    f"most {_MAX_PATTERN_LENGTH:,} characters, got {shown(value)}")
    for i, pattern in enumerate(value):
        if pattern.startswith("re:"):
            try:
                re.compile(pattern[3:])
            except (re.error, RecursionError, OverflowError) as exc:
                raise r.error(f"quantization_config.{key}[{i}]",
                              f"expected a regular expression after 're:', got {shown(pattern)} ({exc})") from None
    return key, value


def _matches(pattern: str | Callable[[str], re.Match[str] | None], name: str) -> bool:
    """Whether a module name is listed: a compiled ``re:`` pattern's match, a glob with ``*``,
    else a substring."""
    if not isinstance(pattern, str):
        return pattern(name) is not None
    if "*" in pattern:
        return fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(name, pattern + ".*")
    return pattern in name


def _module_names(fields: dict[str, Any], model_type: str) -> dict[str, list[tuple[str, float]]]:
    """(module name, parameters) of every linear module per weight group, in the family's names."""
    d, layers = fields["hidden_size"], fields["num_layers"]
    heads, kv_heads, head_dim = fields["num_heads"], fields["num_kv_heads"], fields["head_dim"]
    if fields.get("kv_lora_rank"):
        rq, rkv = fields.get("q_lora_rank", 0), fields["kv_lora_rank"]
        nope, rope, dv = fields["qk_nope_head_dim"], fields["qk_rope_head_dim"], fields["v_head_dim"]
        query = ([("q_a_proj", d * rq), ("q_b_proj", rq * heads * (nope + rope))] if rq
                 else [("q_proj", d * heads * (nope + rope))])
        attention = query + [("kv_a_proj_with_mqa", d * (rkv + rope)), ("kv_b_proj", rkv * heads * (nope + dv)),
                             ("o_proj", heads * dv * d)]
    else:
        attention = [("q_proj", d * heads * head_dim), ("k_proj", d * kv_heads * head_dim),
                     ("v_proj", d * kv_heads * head_dim), ("o_proj", heads * head_dim * d)]
    mlp_names = ("gate_proj", "up_proj", "down_proj")
    block, router, shared = "mlp", "mlp.gate", "mlp.shared_experts"
    expert_names: tuple[str, ...] = tuple(f"experts.0.{n}" for n in mlp_names)
    if model_type == "mixtral":
        block, router, expert_names = "block_sparse_moe", "block_sparse_moe.gate", ("experts.0.w1", "experts.0.w2",
                                                                                   "experts.0.w3")
    elif model_type == "gpt_oss":
        router, expert_names = "mlp.router", ("experts.gate_up_proj", "experts.down_proj")
    elif model_type == "minimax_m2":
        block, router = "block_sparse_moe", "block_sparse_moe.gate"
        expert_names = ("experts.0.w1", "experts.0.w2", "experts.0.w3")
    elif model_type in ("qwen2_moe", "qwen3_next", "qwen3_5_moe_text"):
        shared = "mlp.shared_expert"
    first_dense = fields.get("first_dense_layers", 0) if fields.get("num_experts") else layers
    names: dict[str, list[tuple[str, float]]] = {g: [] for g in ("attention", "mlp", "experts", "shared_experts",
                                                                 "router")}
    for i in range(layers):
        prefix = f"model.layers.{i}"
        names["attention"] += [(f"{prefix}.self_attn.{n}", p) for n, p in attention]
        if i < first_dense:
            names["mlp"] += [(f"{prefix}.mlp.{n}", 1.0) for n in mlp_names]
        else:
            names["experts"] += [(f"{prefix}.{block}.{n}", 1.0) for n in expert_names]
            names["router"].append((f"{prefix}.{router}", 1.0))
            if fields.get("shared_expert_intermediate_size"):
                names["shared_experts"] += [(f"{prefix}.{shared}.{n}", 1.0) for n in mlp_names]
    names["lm_head"] = [("lm_head", 1.0)]
    return names


def _module_shares(r: ConfigReader, fields: dict[str, Any], model_type: str, patterns: list[str],
                   key: str) -> dict[str, float]:
    """Share of each group's parameters that ``patterns`` keep wide [1]."""
    if not patterns:
        return {}
    names = _module_names(fields, model_type)
    modules = sum(len(group) for group in names.values())
    if modules * len(patterns) > _MATCH_BUDGET:
        raise r.error(f"quantization_config.{key}", f"{len(patterns):,} module names for {modules:,} modules: expected "
                                                    f"at most {_MATCH_BUDGET:,} pairs of name and module to match")
    compiled = [re.compile(p[3:]).match if p.startswith("re:") else p for p in patterns]
    shares = {}
    for group, listed in names.items():
        total = sum(p for _, p in listed)
        kept = sum(p for name, p in listed if any(_matches(pattern, name) for pattern in compiled))
        if total:
            shares[group] = kept / total
    return shares


def _blend(quantized: NumberFormat, wide: NumberFormat, kept: float) -> NumberFormat:
    """The format of a group whose ``kept`` share stays wide and the rest is quantized."""
    if kept <= 0:
        return quantized
    if kept >= 1:
        return wide
    return NumberFormat(
        name=f"{quantized.name}+{kept:.0%} {wide.name}",
        bits_per_element=(1 - kept) * quantized.bits_per_element + kept * wide.bits_per_element,
        compute_precision=quantized.compute_precision,
        description=f"{quantized.name} with {kept:.1%} of the parameters kept in {wide.name}",
    )
