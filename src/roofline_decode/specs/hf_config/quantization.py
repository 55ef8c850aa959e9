"""``quantization_config`` -> the stored weight formats it states."""

from __future__ import annotations

from typing import Any

from ...formats import NumberFormat, group_quantized
from .reader import ConfigReader

_QUANT_METHODS = ("awq", "bitsandbytes", "fbgemm_fp8", "fp8", "gptq", "mxfp4")


def quantization_formats(r: ConfigReader, is_moe: bool) -> dict[str, Any]:
    """Weight formats stated by ``quantization_config`` (empty when the config has none)."""
    q = r.config.get("quantization_config")
    if q is None:
        return {}
    if not isinstance(q, dict):
        raise r.error("quantization_config", f"expected an object, got {q!r}")
    method = q.get("quant_method")
    key = "quantization_config.quant_method"
    if method is None:
        raise r.error(key, f"required key is missing; supported: {', '.join(_QUANT_METHODS)}")
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
        if isinstance(group, bool) or not isinstance(group, int) or not 1 <= group <= 1 << 20:
            raise r.error("quantization_config.group_size", f"expected an integer from 1 to 2**20, or -1, got {group!r}")
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
