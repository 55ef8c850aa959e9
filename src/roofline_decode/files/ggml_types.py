"""GGML tensor types: block size and bytes per block, as GGUF files store them.

Each quantised GGML type stores blocks of ``block_size`` elements in ``type_size`` bytes
(scales included), so its bits per element are exactly ``8 · type_size / block_size``.  The
block layouts are those of ``ggml/src/ggml-common.h`` (``static_assert(sizeof(block_q4_K) ==
...)``) and the type ids those of ``enum ggml_type`` in ``ggml/include/ggml.h``, llama.cpp
(https://github.com/ggml-org/llama.cpp, retrieved 2026-11-30).  K-quants and i-quants use
super-blocks of QK_K = 256 elements; q4_0 ... q8_0, iq4_nl and mxfp4 blocks of 32.

Examples
--------
>>> GGML_TYPES["q4_k"].bits_per_element, GGML_TYPES["q6_k"].bits_per_element
(4.5, 6.5625)
>>> GGML_TYPE_IDS[12]
'q4_k'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GgmlType", "GGML_TYPES", "GGML_TYPE_IDS", "ggml_formats"]


@dataclass(frozen=True)
class GgmlType:
    """One GGML tensor type: id in ``enum ggml_type``, elements and bytes per block."""

    name: str
    type_id: int
    block_size: int
    type_size: int
    layout: str

    @property
    def bits_per_element(self) -> float:
        """Stored bits per element [bit], block scales included."""
        return 8 * self.type_size / self.block_size

    def tensor_bytes(self, elements: int) -> int:
        """Bytes of a tensor of ``elements`` elements [B] (whole blocks)."""
        blocks, rest = divmod(int(elements), self.block_size)
        if rest:
            raise ValueError(f"{elements} elements are not a whole number of {self.name} blocks of {self.block_size}")
        return blocks * self.type_size


_QK_K = 256
#: name -> GgmlType.  Layout strings follow the block structs of ggml-common.h.
GGML_TYPES: dict[str, GgmlType] = {t.name: t for t in (
    GgmlType("f32", 0, 1, 4, "IEEE binary32"),
    GgmlType("f16", 1, 1, 2, "IEEE binary16"),
    GgmlType("q4_0", 2, 32, 18, "fp16 d + 16 B of nibbles"),
    GgmlType("q4_1", 3, 32, 20, "fp16 d, m + 16 B of nibbles"),
    GgmlType("q5_0", 6, 32, 22, "fp16 d + 4 B high bits + 16 B of nibbles"),
    GgmlType("q5_1", 7, 32, 24, "fp16 d, m + 4 B high bits + 16 B of nibbles"),
    GgmlType("q8_0", 8, 32, 34, "fp16 d + 32 int8"),
    GgmlType("q8_1", 9, 32, 36, "fp16 d, s + 32 int8 (activations)"),
    GgmlType("q2_k", 10, _QK_K, 84, "16 B scales/mins + 64 B quants + fp16 d, dmin"),
    GgmlType("q3_k", 11, _QK_K, 110, "32 B high-bit mask + 64 B quants + 12 B scales + fp16 d"),
    GgmlType("q4_k", 12, _QK_K, 144, "fp16 d, dmin + 12 B 6-bit scales + 128 B nibbles"),
    GgmlType("q5_k", 13, _QK_K, 176, "fp16 d, dmin + 12 B scales + 32 B high bits + 128 B nibbles"),
    GgmlType("q6_k", 14, _QK_K, 210, "128 B low 4 bits + 64 B high 2 bits + 16 B int8 scales + fp16 d"),
    GgmlType("q8_k", 15, _QK_K, 292, "fp32 d + 256 int8 + 16 int16 sums (activations)"),
    GgmlType("iq2_xxs", 16, _QK_K, 66, "fp16 d + 32 uint16"),
    GgmlType("iq2_xs", 17, _QK_K, 74, "fp16 d + 32 uint16 + 8 B scales"),
    GgmlType("iq3_xxs", 18, _QK_K, 98, "fp16 d + 96 B"),
    GgmlType("iq1_s", 19, _QK_K, 50, "fp16 d + 32 B + 8 uint16"),
    GgmlType("iq4_nl", 20, 32, 18, "fp16 d + 16 B of nibbles (non-linear grid)"),
    GgmlType("iq3_s", 21, _QK_K, 110, "fp16 d + 64 B + 8 B high bits + 32 B signs + 4 B scales"),
    GgmlType("iq2_s", 22, _QK_K, 82, "fp16 d + 64 B + 8 B high bits + 8 B scales"),
    GgmlType("iq4_xs", 23, _QK_K, 136, "fp16 d + uint16 high scales + 4 B low scales + 128 B nibbles"),
    GgmlType("i8", 24, 1, 1, "int8"),
    GgmlType("i16", 25, 1, 2, "int16"),
    GgmlType("i32", 26, 1, 4, "int32"),
    GgmlType("i64", 27, 1, 8, "int64"),
    GgmlType("f64", 28, 1, 8, "IEEE binary64"),
    GgmlType("iq1_m", 29, _QK_K, 56, "32 B + 16 B + 8 B scales"),
    GgmlType("bf16", 30, 1, 2, "bfloat16"),
    GgmlType("tq1_0", 34, _QK_K, 54, "48 B base-3 + 4 B + fp16 d (ternary)"),
    GgmlType("tq2_0", 35, _QK_K, 66, "64 B 2-bit + fp16 d (ternary)"),
    GgmlType("mxfp4", 39, 32, 17, "E8M0 scale + 16 B of E2M1 nibbles"),
)}
#: enum ggml_type id -> name.
GGML_TYPE_IDS: dict[int, str] = {t.type_id: t.name for t in GGML_TYPES.values()}

_PLAIN = {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "f64": None, "i8": None, "i16": None, "i32": None, "i64": None}
_NOT_STORAGE = ("q8_1", "q8_k")  # activation-side types: never a weight format


def ggml_formats() -> dict:
    """NumberFormats of the quantised GGML weight types (weight-only: multiply in bf16)."""
    from ..formats import NumberFormat

    return {
        t.name: NumberFormat(
            name=t.name, bits_per_element=t.bits_per_element, compute_precision="bf16",
            description=f"GGML {t.name}: blocks of {t.block_size} in {t.type_size} B ({t.layout}); ggml-common.h",
        )
        for t in GGML_TYPES.values() if t.name not in _PLAIN and t.name not in _NOT_STORAGE
    }


def format_of_type(name: str):
    """The NumberFormat of a GGML type name (f32/f16/bf16 map to fp32/fp16/bf16)."""
    from ..formats import get_format

    plain = _PLAIN.get(name, name)
    if plain is None:
        raise ValueError(f"GGML type {name} is not a weight format")
    return get_format(plain)
