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

import re
from typing import Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .errors import InvalidValueError, UnknownFormatError

__all__ = [
    "ComputePrecision",
    "COMPUTE_PRECISIONS",
    "NumberFormat",
    "FORMATS",
    "GGML_FALLBACKS",
    "get_format",
    "ggml_format",
    "group_quantized",
    "list_formats",
]

ComputePrecision = Literal["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4"]
#: Keys of :attr:`Accelerator.peak_flops`, highest precision first.
COMPUTE_PRECISIONS: tuple[ComputePrecision, ...] = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")


def _is_compute_precision(name: object) -> TypeGuard[ComputePrecision]:
    """Whether ``name`` is one of :data:`COMPUTE_PRECISIONS` (a key of the peak tables)."""
    return name in COMPUTE_PRECISIONS

# Where a device lacks a peak for the format's own precision, kernels run on the next one.
_FALLBACKS: dict[str, tuple[ComputePrecision, ...]] = {
    "fp32": ("fp32",),
    "tf32": ("tf32", "fp32"),
    "bf16": ("bf16", "fp16"),
    "fp16": ("fp16", "bf16"),
    "fp8": ("fp8", "bf16", "fp16"),
    "int8": ("int8", "bf16", "fp16"),
    "fp4": ("fp4", "fp8", "bf16", "fp16"),
}

#: Fallback chain of GGML block formats (q4_0, q8_0, K-quants): llama.cpp multiplies them with
#: its MMQ kernels on int8 (tensor-core MMA since llama.cpp PR #7676 for q4_0..q8_0 and #7860
#: for q4_K..q6_K: https://github.com/ggml-org/llama.cpp/pull/7676,
#: https://github.com/ggml-org/llama.cpp/pull/7860, read 2026-11-30); without int8 it
#: dequantises to fp16 for cuBLAS, and bf16 is the last resort.
GGML_FALLBACKS: tuple[ComputePrecision, ...] = ("int8", "fp16", "bf16")


class NumberFormat(BaseModel):
    """A storage format for weights or KV-cache entries.

    Parameters
    ----------
    name : str
        Canonical name, e.g. ``"bf16"``, ``"q4_0"``, ``"int4-g32"``.
    bits_per_element : float
        Stored bits per element **including** block scales and zero points [bit].
    compute_precision : str
        The dense peak the matrix products run on (a key of ``Accelerator.peak_flops``): the
        fastest precision a real kernel for the format uses.
    fallbacks : tuple of str, optional
        Peak keys tried in order when the device lacks ``compute_precision`` (starting with
        it); default: the chain of ``compute_precision`` (fp8 -> bf16 -> fp16, ...).
    description : str
        One line saying what the format is and where its layout is defined.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    bits_per_element: float = Field(gt=0, le=64)
    compute_precision: ComputePrecision
    fallbacks: tuple[ComputePrecision, ...] | None = None
    description: str = ""

    @model_validator(mode="after")
    def _chain_starts_with_precision(self) -> NumberFormat:
        if self.fallbacks is not None and self.fallbacks[:1] != (self.compute_precision,):
            raise ValueError(f"fallbacks {self.fallbacks!r} must start with compute_precision {self.compute_precision!r}")
        return self

    @property
    def bytes_per_element(self) -> float:
        """Stored bytes per element [B], block scales included."""
        return self.bits_per_element / 8.0

    @property
    def compute_fallbacks(self) -> tuple[ComputePrecision, ...]:
        """Peak keys tried in order when looking up the compute rate on a device."""
        return self.fallbacks or _FALLBACKS[self.compute_precision]

    def __str__(self) -> str:
        return self.name


def group_quantized(
    element_bits: int,
    group_size: int,
    scale_bits: int = 16,
    zero_point_bits: int = 0,
    name: str | None = None,
) -> NumberFormat:
    """Describe a group-quantised integer format (weight-only; multiplies in bf16).

    .. math:: b = b_{elem} + (b_{scale} + b_{zero}) / g

    Parameters
    ----------
    element_bits : int
        Bits of each quantised element [bit], 1..8.
    group_size : int
        Elements sharing one scale (and zero point), >= 1.
    scale_bits, zero_point_bits : int
        Bits of the per-group scale and zero point [bit].
    name : str, optional
        Name to give the format; defaults to ``int<bits>-g<group>``.

    Examples
    --------
    gpt-fast's int4 (group 32, bf16 scale and zero point) stores 5 bits per weight:

    >>> group_quantized(4, 32, scale_bits=16, zero_point_bits=16).bits_per_element
    5.0
    """
    for field, value, low, high in (
        ("element_bits", element_bits, 1, 8),
        ("group_size", group_size, 1, 1 << 20),
        ("scale_bits", scale_bits, 0, 32),
        ("zero_point_bits", zero_point_bits, 0, 32),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InvalidValueError(field, value, f"an integer in [{low}, {high}]")
    bits = element_bits + (scale_bits + zero_point_bits) / group_size
    return NumberFormat(
        name=name or f"int{element_bits}-g{group_size}",
        bits_per_element=bits,
        compute_precision="bf16",
        description=(
            f"{element_bits}-bit integers in groups of {group_size} with a {scale_bits}-bit scale"
            + (f" and a {zero_point_bits}-bit zero point" if zero_point_bits else "")
            + " per group; weight-only, dequantised to bf16"
        ),
    )


def _fmt(name: str, bits: float, compute: ComputePrecision, description: str) -> NumberFormat:
    return NumberFormat(name=name, bits_per_element=bits, compute_precision=compute, description=description)


def ggml_format(name: str, bits: float, description: str) -> NumberFormat:
    """A GGML block format: multiplies on int8 (llama.cpp MMQ), see :data:`GGML_FALLBACKS`."""
    return NumberFormat(name=name, bits_per_element=bits, compute_precision="int8", fallbacks=GGML_FALLBACKS,
                        description=description + "; llama.cpp MMQ multiplies on int8 (else fp16, bf16)")


#: The built-in formats by canonical name.
FORMATS: dict[str, NumberFormat] = {
    f.name: f
    for f in (
        _fmt("fp32", 32, "fp32", "IEEE 754 binary32"),
        _fmt("bf16", 16, "bf16", "bfloat16 (8-bit exponent, 7-bit mantissa)"),
        _fmt("fp16", 16, "fp16", "IEEE 754 binary16"),
        _fmt("fp8_e4m3", 8, "fp8", "OCP FP8 E4M3 (per-tensor scale, negligible)"),
        _fmt("fp8_e5m2", 8, "fp8", "OCP FP8 E5M2 (per-tensor scale, negligible)"),
        _fmt("int8", 8, "bf16", "int8 weight-only with per-channel scales (negligible); dequantised to bf16"),
        _fmt("int8_w8a8", 8, "int8", "int8 weights and activations; multiplies on the int8 peak"),
        _fmt("int4", 4, "bf16", "int4 weight-only without scales (see int4-g<group> for scales)"),
        ggml_format("q8_0", 8.5, "GGML q8_0: blocks of 32 int8 + one fp16 scale (34 B / 32)"),
        ggml_format("q4_0", 4.5, "GGML q4_0: blocks of 32 int4 + one fp16 scale (18 B / 32)"),
        _fmt("mxfp4", 4.25, "fp4", "OCP MX FP4 (E2M1): blocks of 32 + one E8M0 scale (17 B / 32)"),
        _fmt("nvfp4", 4.5, "fp4", "NVIDIA NVFP4 (E2M1): blocks of 16 + one FP8 E4M3 scale (9 B / 16)"),
    )
}

def _add_ggml_formats() -> None:
    """The GGML block types (q4_k, q6_k, iq4_xs, tq1_0, ...) with their exact bits."""
    from .files.ggml_types import ggml_formats

    for name, fmt in ggml_formats().items():
        FORMATS.setdefault(name, fmt)


_add_ggml_formats()

_ALIASES = {
    "float32": "fp32", "f32": "fp32", "bfloat16": "bf16", "float16": "fp16", "half": "fp16",
    "f16": "fp16", "fp8": "fp8_e4m3", "e4m3": "fp8_e4m3", "e5m2": "fp8_e5m2",
    "fp8-e4m3": "fp8_e4m3", "fp8-e5m2": "fp8_e5m2", "w8a8": "int8_w8a8",
}
_GROUP_PATTERN = re.compile(r"^int(\d)-g(\d+)(-sym)?$")


def list_formats() -> list[str]:
    """Names of the built-in formats (aliases and the ``int<b>-g<g>`` pattern not listed)."""
    return list(FORMATS)


def get_format(name: str | NumberFormat, field: str = "format") -> NumberFormat:
    """Look up a number format by name (or pass a :class:`NumberFormat` through).

    Raises
    ------
    UnknownFormatError
        If the name is not a known format; the message lists close matches.
    """
    if isinstance(name, NumberFormat):
        return name
    if not isinstance(name, str):
        raise InvalidValueError(field, name, "a format name such as 'bf16' or 'q4_0'")
    key = name.strip().lower().replace("_g", "-g")
    key = _ALIASES.get(key, key)
    if key in FORMATS:
        return FORMATS[key]
    match = _GROUP_PATTERN.match(key)
    if match:
        bits, group, symmetric = int(match[1]), int(match[2]), bool(match[3])
        return group_quantized(bits, group, 16, 0 if symmetric else 16, name=key)
    raise UnknownFormatError(name, [*FORMATS, "int4-g32", "int4-g128-sym"], field=field)
