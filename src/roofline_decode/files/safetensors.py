"""Read safetensors headers (dtype and shape of every tensor) beside a config.json; no data.

A ``.safetensors`` file starts with a little-endian uint64 N and N bytes of JSON mapping each
tensor name to ``{"dtype", "shape", "data_offsets"}`` (https://github.com/huggingface/safetensors,
"Format", retrieved 2026-11-30).  A sharded checkpoint lists its files in
``model.safetensors.index.json`` (``weight_map``: tensor name -> file).

Bytes are summed per weight group from the tensors' dtypes and shapes, auxiliary tensors
included (``weight_scale_inv`` block scales of FP8 checkpoints, GPTQ/AWQ ``qweight`` /
``qzeros`` / ``scales`` / ``g_idx``, compressed-tensors ``weight_packed`` / ``weight_scale``),
and each group's format is its bytes over the parameters the architecture gives that group
(so packed integer tensors need no unpacking).  Layers past ``num_hidden_layers`` (DeepSeek's
multi-token-prediction module, ``model.layers.61``) are not part of the decode step and are
left out.
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..formats import ComputePrecision
    from ..specs.model import Model

__all__ = ["read_safetensors_header", "checkpoint_tensors", "hf_tensor_group", "model_from_folder",
           "has_safetensors"]

#: safetensors dtype -> bytes per element.
DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U64": 8,
               "U32": 4, "U16": 2, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1}
_PLAIN = {"F32": "fp32", "F16": "fp16", "BF16": "bf16", "F8_E4M3": "fp8_e4m3", "F8_E5M2": "fp8_e5m2"}
_MAX_HEADER = 1 << 28
_AUX = ("weight_scale_inv", "weight_scale", "weight_zero_point", "weight_packed", "weight_shape", "qweight",
        "qzeros", "scales", "g_idx", "input_scale", "weight_global_scale", "input_global_scale", "bias", "weight")


def read_safetensors_header(path: str | Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Tensor name -> (dtype, shape) from a .safetensors file's JSON header."""
    path = Path(path)
    try:
        with path.open("rb") as stream:
            head = stream.read(8)
            if len(head) != 8:
                raise ConfigError(path, "(header)", "file ends before the 8-byte header length")
            size = struct.unpack("<Q", head)[0]
            if size > _MAX_HEADER:
                raise ConfigError(path, "(header)", f"header length {size} is implausible: not a safetensors file")
            text = stream.read(size)
    except OSError as exc:
        raise ConfigError(path, "(file)", f"cannot read: {exc.strerror or exc}") from None
    try:
        header = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(path, "(header)", f"not a safetensors JSON header: {exc}") from None
    if not isinstance(header, dict):
        raise ConfigError(path, "(header)", "expected a JSON object")
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype, shape = (info.get("dtype"), info.get("shape")) if isinstance(info, dict) else (None, None)
        if dtype not in DTYPE_BYTES:
            raise ConfigError(path, name, f"unknown dtype {dtype!r}; known: {', '.join(DTYPE_BYTES)}")
        if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise ConfigError(path, name, f"expected a shape of non-negative integers, got {shape!r}")
        tensors[name] = (dtype, tuple(shape))
    return tensors


def has_safetensors(folder: Path) -> bool:
    return folder.is_dir() and any(folder.glob("*.safetensors"))


def checkpoint_tensors(folder: str | Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Every tensor of a checkpoint folder: the shards named by the index JSON, else every
    ``*.safetensors`` file."""
    folder = Path(folder)
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(index, "weight_map", f"not a safetensors index: {exc}") from None
        files = sorted({folder / f for f in weight_map.values()})
        missing = [f.name for f in files if not f.is_file()]
        if missing:
            raise ConfigError(index, "weight_map", f"shard {missing[0]} is not in the folder "
                                                   f"({len(missing)} of {len(files)} missing)")
    else:
        files = sorted(folder.glob("*.safetensors"))
    tensors: dict[str, tuple[str, tuple[int, ...]]] = {}
    for file in files:
        tensors.update(read_safetensors_header(file))
    return tensors


_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")


def hf_tensor_group(name: str) -> str:
    """Weight group of a Hugging Face tensor name (``model.layers.3.mlp.experts.7.up_proj.weight``)."""
    base = name
    for suffix in _AUX:
        if base.endswith("." + suffix):
            base = base[: -len(suffix) - 1]
            break
    if "embed_tokens" in base or base.endswith(("wte", "wpe", "embed_positions")):
        return "embedding"
    if base.startswith("lm_head") or base.endswith("lm_head"):
        return "lm_head"
    if "norm" in base or base.endswith(("ln_1", "ln_2", "ln_f")):
        return "norms"
    if re.search(r"\.(mlp|block_sparse_moe)\.(gate|router)$", base) or "e_score_correction_bias" in base:
        return "router"
    if "shared_expert" in base:
        return "router" if base.endswith("shared_expert_gate") else "shared_experts"
    if ".experts" in base:
        return "experts"
    if re.search(r"\.(self_attn|attn|attention)\.", base + "."):
        return "norms" if name.endswith(".bias") else "attention"
    return "mlp"


def model_from_folder(folder: str | Path, name: str | None = None, **overrides: Any) -> Model:
    """A Model from a checkpoint folder: config.json for the architecture, the safetensors
    headers for the bytes of every weight group."""
    from ..formats import NumberFormat, get_format
    from ..specs.model import Model

    folder = Path(folder)
    tensors = checkpoint_tensors(folder)
    model = Model.from_hf_config(folder, name=name, **overrides)
    if "weight_format" in overrides:
        return model
    totals: dict[str, int] = {}
    dtypes: dict[str, set[str]] = {}
    for tensor, (dtype, shape) in tensors.items():
        layer = _LAYER.search(tensor)
        if layer and int(layer[1]) >= model.num_layers:
            continue  # e.g. DeepSeek-V3's MTP layer
        group = hf_tensor_group(tensor)
        n = 1
        for dim in shape:
            n *= dim
        totals[group] = totals.get(group, 0) + n * DTYPE_BYTES[dtype]
        dtypes.setdefault(group, set()).add(dtype)
    counts = model.group_parameters
    formats: dict[str, NumberFormat] = {}
    for group, nbytes in totals.items():
        params = counts.get(group, 0)
        if params == 0:
            continue
        kinds = dtypes[group]
        if len(kinds) == 1 and next(iter(kinds)) in _PLAIN and nbytes == params * DTYPE_BYTES[next(iter(kinds))]:
            formats[group] = get_format(_PLAIN[next(iter(kinds))])
            continue
        wide = sorted(kinds, key=lambda k: -DTYPE_BYTES[k])
        compute: ComputePrecision = "fp8" if any(k.startswith("F8") for k in kinds) else "bf16"
        formats[group] = NumberFormat(
            name=f"{folder.name}:{group}", bits_per_element=8 * nbytes / params, compute_precision=compute,
            description=f"{group} tensors of {folder.name} in {', '.join(wide)}: {nbytes} B for {params} parameters",
        )
    if model.tie_word_embeddings:
        formats.pop("lm_head", None)
    if not formats:
        return model
    main = formats.get("attention") or formats.get("mlp") or next(iter(formats.values()))
    return model.with_precision(weights={"default": main, **formats}).replace(source=str(folder))
