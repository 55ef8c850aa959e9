"""The number format itself: bits per stored element and the compute class it multiplies in.

:class:`NumberFormat` and the constructors of its families (:func:`group_quantized`,
:func:`ggml_format`); the named formats and the look-up by name are in
:mod:`roofline_decode.formats.registry`.
"""

from __future__ import annotations

from typing import Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import InvalidValueError

__all__ = ["ComputePrecision", "COMPUTE_PRECISIONS", "NumberFormat", "GGML_FALLBACKS", "ggml_format",
           "group_quantized", "is_compute_precision"]

ComputePrecision = Literal["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4"]
#: Keys of :attr:`Accelerator.peak_flops`, highest precision first.
COMPUTE_PRECISIONS: tuple[ComputePrecision, ...] = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")


def is_compute_precision(name: object) -> TypeGuard[ComputePrecision]:
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


def ggml_format(name: str, bits: float, description: str) -> NumberFormat:
    """A GGML block format: multiplies on int8 (llama.cpp MMQ), see :data:`GGML_FALLBACKS`."""
    return NumberFormat(name=name, bits_per_element=bits, compute_precision="int8", fallbacks=GGML_FALLBACKS,
                        description=description + "; llama.cpp MMQ multiplies on int8 (else fp16, bf16)")
