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

from .number_format import NumberFormat, ggml_format

__all__ = ["GgmlType", "GGML_TYPES", "GGML_TYPE_IDS", "MMQ_TYPES", "ggml_formats"]


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
#: One type a line: name, id in ``enum ggml_type``, elements per block (QK_K: 256), bytes per
#: block and the block's layout (its struct in ggml-common.h).
_TABLE = """
f32        0     1    4  IEEE binary32
f16        1     1    2  IEEE binary16
q4_0       2    32   18  fp16 d + 16 B of nibbles
q4_1       3    32   20  fp16 d, m + 16 B of nibbles
q5_0       6    32   22  fp16 d + 4 B high bits + 16 B of nibbles
q5_1       7    32   24  fp16 d, m + 4 B high bits + 16 B of nibbles
q8_0       8    32   34  fp16 d + 32 int8
q8_1       9    32   36  fp16 d, s + 32 int8 (activations)
q2_k      10  QK_K   84  16 B scales/mins + 64 B quants + fp16 d, dmin
q3_k      11  QK_K  110  32 B high-bit mask + 64 B quants + 12 B scales + fp16 d
q4_k      12  QK_K  144  fp16 d, dmin + 12 B 6-bit scales + 128 B nibbles
q5_k      13  QK_K  176  fp16 d, dmin + 12 B scales + 32 B high bits + 128 B nibbles
q6_k      14  QK_K  210  128 B low 4 bits + 64 B high 2 bits + 16 B int8 scales + fp16 d
q8_k      15  QK_K  292  fp32 d + 256 int8 + 16 int16 sums (activations)
iq2_xxs   16  QK_K   66  fp16 d + 32 uint16
iq2_xs    17  QK_K   74  fp16 d + 32 uint16 + 8 B scales
iq3_xxs   18  QK_K   98  fp16 d + 96 B
iq1_s     19  QK_K   50  fp16 d + 32 B + 8 uint16
iq4_nl    20    32   18  fp16 d + 16 B of nibbles (non-linear grid)
iq3_s     21  QK_K  110  fp16 d + 64 B + 8 B high bits + 32 B signs + 4 B scales
iq2_s     22  QK_K   82  fp16 d + 64 B + 8 B high bits + 8 B scales
iq4_xs    23  QK_K  136  fp16 d + uint16 high scales + 4 B low scales + 128 B nibbles
i8        24     1    1  int8
i16       25     1    2  int16
i32       26     1    4  int32
i64       27     1    8  int64
f64       28     1    8  IEEE binary64
iq1_m     29  QK_K   56  32 B + 16 B + 8 B scales
bf16      30     1    2  bfloat16
tq1_0     34  QK_K   54  48 B base-3 + 4 B + fp16 d (ternary)
tq2_0     35  QK_K   66  64 B 2-bit + fp16 d (ternary)
mxfp4     39    32   17  E8M0 scale + 16 B of E2M1 nibbles
"""


def _types(table: str) -> dict[str, GgmlType]:
    types: dict[str, GgmlType] = {}
    for line in table.strip().splitlines():
        name, type_id, block, size, layout = line.split(maxsplit=4)
        types[name] = GgmlType(name, int(type_id), _QK_K if block == "QK_K" else int(block), int(size), layout)
    return types


#: name -> GgmlType, in ``enum ggml_type`` order.
GGML_TYPES: dict[str, GgmlType] = _types(_TABLE)
#: enum ggml_type id -> name.
GGML_TYPE_IDS: dict[int, str] = {t.type_id: t.name for t in GGML_TYPES.values()}

PLAIN_TYPES = {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "f64": None, "i8": None, "i16": None, "i32": None, "i64": None}
NOT_STORAGE_TYPES = ("q8_1", "q8_k")  # activation-side types: never a weight format


#: The weight types llama.cpp's CUDA MMQ kernels multiply on int8 (the activations quantised to
#: q8_1): the ``switch (type)`` of ``ggml_cuda_should_use_mmq`` in
#: ``ggml/src/ggml-cuda/mmq.cu`` (and ``ggml_cuda_mul_mat_q_switch_type`` beside it), llama.cpp
#: read 2026-12-01: q4_0, q4_1, q5_0, q5_1, q8_0, mxfp4, q2_K ... q6_K, iq2_xxs, iq2_xs, iq2_s,
#: iq3_xxs, iq3_s, iq1_s, iq4_xs, iq4_nl.  iq1_m, tq1_0 and tq2_0 are not in it: they are
#: dequantised to fp16 for cuBLAS (or multiplied by the mat-vec kernels), so they compute in fp16.
#: (mxfp4 keeps the registry's fp4 format: on Blackwell MMQ multiplies it on the fp4 MMA.)
MMQ_TYPES: frozenset[str] = frozenset({
    "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "mxfp4", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k",
    "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq4_xs", "iq4_nl",
})


def ggml_formats() -> dict[str, NumberFormat]:
    """NumberFormats of the quantised GGML weight types.

    The types of :data:`MMQ_TYPES` multiply on int8 (then fp16, then bf16:
    :func:`~roofline_decode.formats.number_format.ggml_format`); the others in fp16, as the
    dequantise-to-fp16 path does.
    """
    formats: dict[str, NumberFormat] = {}
    for t in GGML_TYPES.values():
        if t.name in PLAIN_TYPES or t.name in NOT_STORAGE_TYPES:
            continue
        description = f"GGML {t.name}: blocks of {t.block_size} in {t.type_size} B ({t.layout}); ggml-common.h"
        if t.name in MMQ_TYPES:
            formats[t.name] = ggml_format(t.name, t.bits_per_element, description)
        else:
            formats[t.name] = NumberFormat(
                name=t.name, bits_per_element=t.bits_per_element, compute_precision="fp16",
                description=description + "; no MMQ kernel: dequantised to fp16 for cuBLAS",
            )
    return formats
