"""Number formats: bits per stored element (block scales included) and the compute class.

A format answers two questions for the estimator (DESIGN.md §4):

* how many **bytes** one element occupies in memory, *including* any per-block scale or zero
  point (q4_0 stores 32 four-bit values plus one fp16 scale: 4.5 bits per element);
* on which **dense peak** the matrix products run: the fastest precision a real kernel for
  that format multiplies in, falling back along :attr:`NumberFormat.compute_fallbacks` where
  the device publishes no peak for it.  Weight-only formats (int4, int4-g<group>, int8
  weight-only, GPTQ/AWQ) are dequantised and multiply in bf16; fp8 and fp4 formats multiply in
  fp8 / fp4; GGML block formats (q4_0, q8_0, K-quants) multiply on int8 where the device has an
  int8 peak (llama.cpp's MMQ kernels quantise the activations to q8_1 blocks and run int8
  tensor-core MMA), else dequantised to fp16 (cuBLAS), else bf16.

Formats are looked up by name with :func:`get_format`.  Group-quantised integer formats are
described with :func:`group_quantized` or by the name pattern ``int<bits>-g<group>``
(16-bit scale and 16-bit zero point per group, as in gpt-fast) and ``int<bits>-g<group>-sym``
(16-bit scale only).

The package: :mod:`~roofline_decode.formats.number_format` (the format itself),
:mod:`~roofline_decode.formats.ggml_types` (GGML block types),
:mod:`~roofline_decode.formats.registry` (named formats, look-up) and
:mod:`~roofline_decode.formats.llama_quant` (llama.cpp's per-tensor quantisation mixtures).

Examples
--------
>>> get_format("q4_0").bits_per_element
4.5
>>> get_format("int4-g32").bits_per_element   # 4 + (16 + 16) / 32
5.0
>>> get_format("mxfp4").compute_precision
'fp4'
>>> get_format("q4_0").compute_fallbacks
('int8', 'fp16', 'bf16')
"""

from __future__ import annotations

from .number_format import (
    COMPUTE_PRECISIONS, GGML_FALLBACKS, ComputePrecision, NumberFormat, ggml_format, group_quantized,
    is_compute_precision,
)
from .registry import FORMATS, get_format, list_formats

__all__ = [
    "ComputePrecision",
    "COMPUTE_PRECISIONS",
    "NumberFormat",
    "FORMATS",
    "GGML_FALLBACKS",
    "get_format",
    "ggml_format",
    "group_quantized",
    "is_compute_precision",
    "list_formats",
]
