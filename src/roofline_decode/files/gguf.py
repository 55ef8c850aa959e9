"""Read a GGUF file's header (metadata and tensor infos) into a Model; no tensor data is read.

The layout is GGUF's, as documented in llama.cpp's ``docs/gguf.md`` / ggml's ``gguf.md``
(https://github.com/ggml-org/ggml/blob/master/docs/gguf.md, retrieved 2026-11-30): the magic
``GGUF``, a uint32 version (2 or 3), uint64 tensor and key-value counts, the key-value pairs
(a string key, a uint32 value type, the value; arrays hold a type, a uint64 count and the
items), then per tensor its name, uint32 dimension count, uint64 dimensions (ne0, the row
length, first), uint32 GGML type and uint64 data offset.  All little-endian.

The architecture comes from the metadata (``general.architecture`` and its
``<arch>.block_count``, ``.embedding_length``, ``.feed_forward_length``,
``.attention.head_count(_kv)``, ``.attention.key_length``, ``.expert_*`` ... keys), read through
the same family readers as a config.json; every tensor's exact byte size comes from its GGML
type and shape, summed per weight group (embedding, lm_head, attention, mlp, experts,
shared_experts, router, norms) into that group's format.

A file is untrusted input (DESIGN.md §4c, issue 27): every count and length is checked
against the bytes left in the file before it is read, arrays nest at most 8 deep, each
tensor's dimensions and element count are bounded and its rows are whole blocks of its type
(``ggml/src/gguf.cpp``'s own rule), duplicate keys and tensor names are refused, data offsets
are aligned and do not overlap, and the main tensors' shapes agree with the metadata
(:mod:`.tensor_shapes`).  The reader holds at most a small multiple of the file's size: long
arrays (a tokenizer's vocabulary) keep their length only.  Every problem is one
:class:`~roofline_decode.errors.ConfigError` naming the file and the key or tensor.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ..errors import ConfigError
from ..formats.ggml_types import GGML_TYPE_IDS, GGML_TYPES
from ..formats.registry import format_of_type
from .gguf_config import gguf_config, gguf_error
from ..formats.llama_quant import TensorInfo, group_formats_from_tensors
from .tensor_shapes import check_gguf_shapes
from .untrusted import SkippedArray, checked_elements, shown

if TYPE_CHECKING:
    from ..formats import NumberFormat
    from ..specs.model import Model

__all__ = ["GgufHeader", "read_gguf_header", "model_from_gguf", "tensor_group"]

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
#: Longest string value (a chat template is a few KiB) and tensor name (llama.cpp: 63 bytes).
_MAX_STRING, _MAX_NAME = 1 << 24, 1 << 10
#: Deepest nesting of arrays (llama.cpp writes and reads no nested arrays at all).
_MAX_DEPTH = 8
#: Arrays longer than this keep their length only; at most _MAX_KEPT items are kept in all.
_KEEP, _MAX_KEPT = 4096, 1 << 16
#: Most array items in one header (Gemma 3's tokenizer: 3 arrays of 262,144), key-value pairs
#: and tensors (DeepSeek-V3: about 1,200).
_MAX_ITEMS, _MAX_KV, _MAX_TENSORS = 1 << 24, 1 << 16, 1 << 20
#: Fewest bytes of one key-value pair (key length, value type, a one-byte value), one tensor
#: info (name length, dimension count, one dimension, type, offset) and one array header.
_KV_BYTES, _TENSOR_BYTES, _ARRAY_BYTES = 8 + 4 + 1, 8 + 4 + 8 + 4 + 8, 4 + 8


class GgufHeader:
    """Metadata (key -> value) and tensor infos (name, shape ne0-first, GGML type name)."""

    def __init__(self, path: str, version: int, metadata: dict[str, Any], tensors: list[tuple[str, tuple[int, ...], str]]):
        self.path, self.version, self.metadata, self.tensors = path, version, metadata, tensors

    @property
    def tensor_bytes(self) -> int:
        """Bytes of all tensor data [B] (each tensor's blocks, no alignment padding).

        Raises
        ------
        ConfigError
            A tensor whose element count is not a whole number of its type's blocks, naming it.
        """
        total = 0
        for name, shape, kind in self.tensors:
            elements = checked_elements(self.path, name, shape, "ne0 first")
            if kind not in GGML_TYPES:
                raise ConfigError(self.path, name, f"unknown GGML type {kind!r}; known: {', '.join(GGML_TYPES)}")
            try:
                total += GGML_TYPES[kind].tensor_bytes(elements)
            except ValueError as exc:
                raise ConfigError(self.path, name, f"shape {list(shape)} (ne0 first): {exc}") from None
        return total


class _Reader:
    """Reads the header, checking every length against the bytes left in the file first."""

    def __init__(self, stream: BinaryIO, path: str, size: int):
        self.stream, self.path, self.size, self.pos = stream, path, size, 0
        self.items = self.kept = 0  # array items read and kept so far

    def error(self, where: str, problem: str) -> ConfigError:
        return ConfigError(self.path, where, problem)

    def room(self, size: int, where: str, what: str) -> None:
        left = self.size - self.pos
        if size > left:
            raise self.error(where, f"file ends early: {what} needs {size:,} bytes, {left:,} are left "
                                    f"(of {self.size:,}): not a complete GGUF header")

    def take(self, size: int, where: str, what: str = "the field") -> bytes:
        self.room(size, where, what)
        data = self.stream.read(size)
        if len(data) != size:  # the file shrank while being read
            raise self.error(where, f"file ends early (wanted {size} bytes, got {len(data)}): not a complete GGUF header")
        self.pos += size
        return data

    def skip(self, size: int, where: str, what: str) -> None:
        self.room(size, where, what)
        self.stream.seek(size, os.SEEK_CUR)
        self.pos += size

    def unpack(self, fmt: str, where: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), where))[0]

    def length(self, where: str, limit: int, what: str) -> int:
        size: int = self.unpack("<Q", where)
        if size > limit:
            raise self.error(where, f"{what} of {size:,} bytes is over the limit of {limit:,}: "
                                    "not a GGUF header or a corrupt one")
        return size

    def string(self, where: str, limit: int = _MAX_STRING, what: str = "a string") -> str:
        return self.take(self.length(where, limit, what), where, what).decode("utf-8", errors="replace")

    def count(self, where: str, least: int, limit: int, what: str) -> int:
        """A uint64 count of things of at least ``least`` bytes each, checked against ``limit``
        and the bytes left in the file before any is read."""
        n: int = self.unpack("<Q", where)
        left = self.size - self.pos
        if n * least > left:
            raise self.error(where, f"file ends early: {n:,} {what} need at least {n * least:,} bytes "
                                    f"({least} each), {left:,} are left (of {self.size:,})")
        if n > limit:
            raise self.error(where, f"{n:,} {what} are over the limit of {limit:,}: not a model's GGUF header")
        return n

    def value(self, kind: int, where: str, depth: int = 0, keep: bool = True) -> Any:
        """A metadata value of GGUF type ``kind``; skipped (None, or a SkippedArray array) unless ``keep``."""
        if kind in _SCALARS:
            if not keep:
                return self.skip(struct.calcsize(_SCALARS[kind]), where, "a value")
            return self.unpack(_SCALARS[kind], where)
        if kind == _STRING:
            if not keep:
                return self.skip(self.length(where, _MAX_STRING, "a string"), where, "a string")
            return self.string(where)
        if kind != _ARRAY:
            raise self.error(where, f"unknown GGUF value type {kind} (0 to 12)")
        if depth >= _MAX_DEPTH:
            raise self.error(where, f"arrays nested more than {_MAX_DEPTH} deep: not a model's metadata")
        item = self.unpack("<I", where)
        if item not in _SCALARS and item not in (_STRING, _ARRAY):
            raise self.error(where, f"array of unknown GGUF value type {item} (0 to 12)")
        least = struct.calcsize(_SCALARS[item]) if item in _SCALARS else 8 if item == _STRING else _ARRAY_BYTES
        count = self.count(where, least, _MAX_ITEMS, "array items")
        self.items += count
        if self.items > _MAX_ITEMS:
            raise self.error(where, f"{self.items:,} array items in the metadata so far are over the limit of "
                                    f"{_MAX_ITEMS:,} in one header: not a model's GGUF header")
        keep = keep and count <= _KEEP and self.kept + count <= _MAX_KEPT
        if keep:
            self.kept += count
            if item in _SCALARS:
                return list(struct.unpack(f"<{count}{_SCALARS[item][1]}", self.take(count * least, where, "the array")))
            return [self.value(item, where, depth + 1) for _ in range(count)]
        if item in _SCALARS:
            self.skip(count * least, where, "the array")
        else:
            for _ in range(count):
                self.value(item, where, depth + 1, keep=False)
        return SkippedArray(count)


def read_gguf_header(path: str | Path) -> GgufHeader:
    """Metadata and tensor infos of a GGUF file, reading the header only.

    Raises
    ------
    ConfigError
        Not a GGUF file (magic), an unsupported version, a truncated header, a count or length
        the file cannot hold, arrays nested too deep, a duplicate key or tensor name, an unknown
        GGML tensor type, a tensor of too many elements or whose rows are not whole blocks of
        its type, a misaligned or overlapping data offset; naming the file and the key or tensor.
    """
    path = Path(path)
    try:
        stream = path.open("rb")
        size = os.fstat(stream.fileno()).st_size
    except OSError as exc:
        raise ConfigError(path, "(file)", f"cannot read: {exc.strerror or exc}") from None
    with stream:
        r = _Reader(stream, str(path), size)
        magic = r.take(4, "magic")
        if magic != b"GGUF":
            raise r.error("magic", f"expected b'GGUF', got {magic!r}: not a GGUF file")
        version = r.unpack("<I", "version")
        if version not in (2, 3):
            raise r.error("version", f"GGUF version {version} is not supported (2 or 3)")
        n_tensors = r.count("tensor_count", _TENSOR_BYTES, _MAX_TENSORS, "tensors")
        n_kv = r.count("metadata_kv_count", _KV_BYTES, _MAX_KV, "key-value pairs")
        metadata: dict[str, Any] = {}
        for i in range(n_kv):
            key = r.string(f"metadata[{i}].key", what="a key")
            if key in metadata:
                raise r.error(key, f"duplicate metadata key (pair {i}): each key appears once")
            metadata[key] = r.value(r.unpack("<I", key), key)
        tensors: list[tuple[str, tuple[int, ...], str]] = []
        spans: list[tuple[int, int, str]] = []
        names: set[str] = set()
        for i in range(n_tensors):
            name = r.string(f"tensor[{i}].name", _MAX_NAME, "a tensor name")
            if name in names:
                raise r.error(name, f"duplicate tensor name (tensor {i}): each tensor appears once")
            names.add(name)
            dims = r.unpack("<I", name)
            if not 1 <= dims <= 4:
                raise r.error(name, f"{dims} dimensions (1 to 4 allowed)")
            shape = tuple(r.unpack("<Q", name) for _ in range(dims))
            kind = r.unpack("<I", name)
            offset = r.unpack("<Q", name)
            if kind not in GGML_TYPE_IDS:
                raise r.error(name, f"unknown GGML type id {kind}; known: {sorted(GGML_TYPE_IDS)}")
            ggml = GGML_TYPES[GGML_TYPE_IDS[kind]]
            elements = checked_elements(r.path, name, shape, "ne0 first")
            if shape[0] % ggml.block_size:  # gguf.cpp: each row is whole blocks
                raise r.error(name, f"rows of {shape[0]:,} elements (ne0 of shape {list(shape)}) are not a whole "
                                    f"number of {ggml.name} blocks of {ggml.block_size}")
            tensors.append((name, shape, ggml.name))
            spans.append((offset, ggml.tensor_bytes(elements), name))
    _check_offsets(r, metadata.get("general.alignment", 32), spans)
    return GgufHeader(str(path), version, metadata, tensors)


def _check_offsets(r: _Reader, alignment: Any, spans: list[tuple[int, int, str]]) -> None:
    """Data offsets are multiples of ``general.alignment`` (a power of two, 32 by default) and
    no two tensors' data overlap (the data itself is never read)."""
    if isinstance(alignment, bool) or not isinstance(alignment, int) or not 1 <= alignment <= 2**32 \
            or alignment & (alignment - 1):
        raise r.error("general.alignment", f"expected a power of two up to 2**32, got {shown(alignment)}")
    start = end = 0
    previous = ""
    for offset, nbytes, name in sorted(spans):
        if offset % alignment:
            raise r.error(name, f"data offset {offset:,} is not a multiple of general.alignment = {alignment}")
        if offset < end:
            raise r.error(name, f"data offset {offset:,} lies inside the data of tensor {previous!r} (bytes {start:,} "
                                f"to {end:,}): each tensor's data must have its own bytes")
        start, end, previous = offset, offset + nbytes, name


def tensor_group(name: str, shape: tuple[int, ...]) -> str:
    """The weight group of a GGUF tensor name (``blk.3.ffn_down_exps.weight`` -> experts)."""
    if name.startswith(("token_embd", "position_embd", "token_types", "per_layer_token_embd")):
        return "embedding"
    if name == "output.weight":
        return "lm_head"
    if "ffn_gate_inp" in name or "exp_probs_b" in name:
        return "router"
    if "_exps" in name:
        return "experts"
    if "_shexp" in name:
        return "shared_experts"
    if "norm" in name:
        return "norms"
    if ".ffn_" in name:  # dense MLP matrices and their biases
        return "mlp"
    if len(shape) < 2 or name.startswith("blk.") and ".attn_" in name and name.endswith(".bias"):
        return "norms"
    return "attention"


def _no_weight_format(path: str, tensors: list[TensorInfo], types: dict[str, str], exc: ValueError) -> ConfigError:
    """The error for a weight group whose tensors are all of a type that stores no weights."""
    kinds: dict[str, set[str]] = {}
    for tensor in tensors:
        kinds.setdefault(tensor.group, set()).add(types[tensor.name])
    for tensor in tensors:
        try:
            format_of_type(types[tensor.name])
        except ValueError:
            if len(kinds[tensor.group]) == 1:
                return ConfigError(path, tensor.name, f"the {tensor.group} tensors are all GGML {types[tensor.name]}, "
                                                      "which is not a weight format (f32, f16, bf16 or a quantised type)")
    return ConfigError(path, "(tensors)", str(exc))


def model_from_gguf(path: str | Path, name: str | None = None, **overrides: Any) -> Model:
    """A :class:`Model` from a GGUF file's header: its architecture and, per weight group, the
    exact bytes of the tensors in their GGML types.

    Raises
    ------
    ConfigError
        Anything :func:`read_gguf_header` refuses; a metadata value that is missing, of the
        wrong type or out of range, naming the GGUF key (``llama.attention.head_count``); a
        main tensor whose shape contradicts the metadata, naming the tensor.

    Examples
    --------
    See ``docs/your-model-file.md``; the tests write small GGUF files with the ``gguf``
    package's writer.
    """
    from ..specs.model import Model

    header = read_gguf_header(path)
    config, meta = gguf_config(header)
    stated = header.metadata.get("general.name")
    label = name or (stated if isinstance(stated, str) and stated.strip() else None) or Path(path).stem
    # tensors of layers past num_hidden_layers (an MTP module) take no part in decoding
    layers: int = config["num_hidden_layers"]

    def decodes(name: str) -> bool:
        block = name.split(".")[1] if name.startswith("blk.") and name.count(".") > 1 else ""
        return not (block.isascii() and block.isdigit() and int(block) >= layers)

    tensors = [TensorInfo(n, shape, tensor_group(n, shape)) for n, shape, _ in header.tensors if decodes(n)]
    types = {n: kind for n, _, kind in header.tensors}
    try:
        groups = group_formats_from_tensors(tensors, types, Path(path).stem)
    except ValueError as exc:  # a group stored wholly in a type that is no weight format (f64, i32)
        raise _no_weight_format(header.path, tensors, types, exc) from None
    fields: dict[str, Any] = {"weight_format": groups.get("attention") or groups["embedding"]}
    fields.update(overrides)
    try:
        model = Model.from_hf_config(config, name=label, **fields)
    except ConfigError as exc:  # a value the family reader or the Model refuses: name the file and its key
        raise gguf_error(exc, meta, overrides) from None
    check_gguf_shapes(model, header.tensors, meta, layers)
    formats: dict[str, str | NumberFormat] = {
        g: fmt for g in ("embedding", "lm_head", "attention", "mlp", "experts", "shared_experts", "router", "norms")
        if (fmt := groups.get(g)) is not None
    }
    if model.tie_word_embeddings:
        formats.pop("lm_head", None)
    if "weight_format" not in overrides:
        model = model.with_precision(weights=formats)
    return model.replace(source=str(path))
