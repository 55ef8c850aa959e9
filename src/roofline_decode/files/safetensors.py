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

A file is untrusted input (DESIGN.md §4c, issue 27): the header length is checked against the
file's size and a limit before it is read, the JSON may hold at most one object or array per
12 bytes and one string per 8 (a real header holds three and five per tensor entry of 50 bytes
or more), so parsing it holds at most about 12 times the file's size; nesting is bounded
by the JSON parser; every dtype is a known name, every shape a list of at most 8 integers of
at most 2**53 elements in all, ``data_offsets`` (where present) two integers whose difference
is the tensor's bytes; the index's ``weight_map`` maps names to shard files of its folder; and
the main tensors' shapes agree with config.json (:mod:`.tensor_shapes`).  Every problem is one
:class:`~roofline_decode.errors.ConfigError` naming the file and the key or tensor.
"""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._parse import ParseProblem, parse_json
from ..errors import ConfigError
from .untrusted import checked_elements, shown

if TYPE_CHECKING:
    from ..formats import ComputePrecision
    from ..specs.model import Model

__all__ = ["read_safetensors_header", "checkpoint_tensors", "hf_tensor_group", "model_from_folder",
           "has_safetensors"]

#: safetensors dtype -> bytes per element.
DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U64": 8,
               "U32": 4, "U16": 2, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1}
_PLAIN = {"F32": "fp32", "F16": "fp16", "BF16": "bf16", "F8_E4M3": "fp8_e4m3", "F8_E5M2": "fp8_e5m2"}
#: Longest header (the safetensors library's own MAX_HEADER_SIZE) and index file.
_MAX_HEADER = _MAX_INDEX = 100_000_000
#: Most dimensions of one tensor.
_MAX_DIMS = 8
#: A JSON string literal.
_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_AUX = ("weight_scale_inv", "weight_scale", "weight_zero_point", "weight_packed", "weight_shape", "qweight",
        "qzeros", "scales", "g_idx", "input_scale", "weight_global_scale", "input_global_scale", "bias", "weight")


def _json(path: Path, limit: int, offset: int = 0, length: int | None = None) -> Any:
    """The JSON text of ``path`` (``length`` bytes from ``offset``, else the whole file), read
    after checking its length against the file's size and ``limit``, and parsed after
    checking it holds no more objects, arrays and strings than a real header or index."""
    where = "(header)" if offset else "(json)"
    try:
        with path.open("rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if length is None:
                length = size
            if length > limit:
                raise ConfigError(path, where, f"length {length:,} B is over the limit of {limit:,} B")
            stream.seek(offset)
            text = stream.read(length)
    except OSError as exc:
        raise ConfigError(path, "(file)", f"cannot read: {exc.strerror or exc}") from None
    bare = _STRINGS.sub(b'""', text)  # brackets and escaped quotes inside strings make no objects
    containers, strings = bare.count(b"{") + bare.count(b"["), bare.count(b'"') // 2
    del bare
    if 12 * containers > len(text) + 32 or 8 * strings > len(text) + 32:
        raise ConfigError(path, where, f"{containers:,} objects or arrays and {strings:,} strings in {len(text):,} "
                                       "bytes: a safetensors header or index holds at most one object or array per 12 "
                                       "bytes and one string per 8 (a tensor entry: 3 and 5 in 50 bytes or more)")
    try:
        return parse_json(text)
    except ParseProblem as exc:
        raise ConfigError(path, where, f"not a safetensors JSON {'header' if offset else 'index'}: {exc}") from None


def read_safetensors_header(path: str | Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Tensor name -> (dtype, shape) from a .safetensors file's JSON header.

    Raises
    ------
    ConfigError
        A header length beyond the file or the limit, malformed or oversized JSON, an unknown
        dtype, a shape that is not a list of non-negative integers or holds more than 2**53
        elements, ``data_offsets`` that disagree with the shape; naming the file and tensor.
    """
    path = Path(path)
    try:
        with path.open("rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            head = stream.read(8)
    except OSError as exc:
        raise ConfigError(path, "(file)", f"cannot read: {exc.strerror or exc}") from None
    if len(head) != 8:
        raise ConfigError(path, "(header)", "file ends before the 8-byte header length")
    length = struct.unpack("<Q", head)[0]
    if length > size - 8:
        raise ConfigError(path, "(header)", f"header length {length:,} is larger than the file "
                                            f"({size:,} bytes, {size - 8:,} after the length): truncated or not safetensors")
    if length > _MAX_HEADER:
        raise ConfigError(path, "(header)", f"header length {length:,} B is over the limit of {_MAX_HEADER:,} B: "
                                            "not a safetensors file")
    header = _json(path, _MAX_HEADER, 8, length)
    if not isinstance(header, dict):
        raise ConfigError(path, "(header)", f"expected a JSON object, got {shown(header)}")
    tensors = {}
    for name, info in header.items():
        if name != "__metadata__":
            tensors[name] = _tensor(path, name, info)
    return tensors


def _tensor(path: Path, name: str, info: Any) -> tuple[str, tuple[int, ...]]:
    """(dtype, shape) of one header entry, every field checked."""
    if not isinstance(info, dict):
        raise ConfigError(path, name, f"expected an object of dtype, shape and data_offsets, got {shown(info)}")
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in DTYPE_BYTES:
        what = f"unknown dtype {dtype!r}" if isinstance(dtype, str) else f"dtype {shown(dtype)} is not a dtype name"
        raise ConfigError(path, name, f"{what}; known: {', '.join(DTYPE_BYTES)}")
    if not isinstance(shape, list) or len(shape) > _MAX_DIMS or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise ConfigError(path, name, f"expected a shape of at most {_MAX_DIMS} non-negative integers, got "
                                      f"{shown(shape) if not isinstance(shape, list) or len(shape) > 4 else shape}")
    nbytes = checked_elements(path, name, tuple(shape), "rows first") * DTYPE_BYTES[dtype]
    if offsets is not None:
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(
                isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 2**64 for n in offsets)):
            raise ConfigError(path, name, f"data_offsets {shown(offsets)}: expected [begin, end], integers "
                                          "from 0 to 2**64 - 1")
        if offsets[1] - offsets[0] != nbytes:
            raise ConfigError(path, name, f"data_offsets {offsets} span {offsets[1] - offsets[0]:,} bytes but "
                                          f"{dtype} x shape {shape} is {nbytes:,}")
    return dtype, tuple(shape)


def has_safetensors(folder: Path) -> bool:
    return folder.is_dir() and any(folder.glob("*.safetensors"))


def _shards(folder: Path) -> list[Path]:
    """The files of a checkpoint: the shards the index JSON names, else every ``*.safetensors``."""
    index = folder / "model.safetensors.index.json"
    if not index.is_file():
        return sorted(folder.glob("*.safetensors"))
    data = _json(index, _MAX_INDEX)
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict):
        raise ConfigError(index, "weight_map", f"not a safetensors index: expected an object of tensor name -> "
                                               f"shard file, got {shown(weight_map)}")
    for name, file in weight_map.items():
        if not isinstance(file, str) or not file or "/" in file or "\\" in file or "\0" in file or file in (".", ".."):
            raise ConfigError(index, f"weight_map[{shown(name)}]", f"expected the name of a shard file in the "
                                                                   f"index's folder, got {shown(file)}")
    files = sorted({folder / f for f in weight_map.values()})
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise ConfigError(index, "weight_map", f"shard {missing[0]} is not in the folder "
                                               f"({len(missing)} of {len(files)} missing)")
    return files


def checkpoint_tensors(folder: str | Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Every tensor of a checkpoint folder: the shards named by the index JSON, else every
    ``*.safetensors`` file."""
    tensors: dict[str, tuple[str, tuple[int, ...]]] = {}
    for file in _shards(Path(folder)):
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

    from .tensor_shapes import check_hf_shapes

    folder = Path(folder)
    found = {tensor: (dtype, shape, file) for file in _shards(folder)
             for tensor, (dtype, shape) in read_safetensors_header(file).items()}
    tensors = {tensor: (dtype, shape) for tensor, (dtype, shape, _) in found.items()}
    model = Model.from_hf_config(folder, name=name, **overrides)
    check_hf_shapes(model, found)
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
