"""The named number formats and their look-up: :func:`get_format`, :func:`list_formats`.

The built-in formats (fp32 ... nvfp4, GGML q4_0/q8_0), the GGML block types of
:mod:`roofline_decode.formats.ggml_types` with their exact bits, aliases (``"float16"``,
``"e4m3"`` ...) and the ``int<bits>-g<group>[-sym]`` pattern of group-quantised integers.
"""

from __future__ import annotations

import re

from ..errors import InvalidValueError, UnknownFormatError
from .ggml_types import PLAIN_TYPES, ggml_formats
from .number_format import ComputePrecision, NumberFormat, ggml_format, group_quantized

__all__ = ["FORMATS", "format_of_type", "get_format", "list_formats"]


def _fmt(name: str, bits: float, compute: ComputePrecision, description: str) -> NumberFormat:
    return NumberFormat(name=name, bits_per_element=bits, compute_precision=compute, description=description)


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

# the GGML block types (q4_k, q6_k, iq4_xs, tq1_0, ...) with their exact bits
for _name, _format in ggml_formats().items():
    FORMATS.setdefault(_name, _format)

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


def format_of_type(name: str) -> NumberFormat:
    """The NumberFormat of a GGML type name (f32/f16/bf16 map to fp32/fp16/bf16)."""
    plain = PLAIN_TYPES.get(name, name)
    if plain is None:
        raise ValueError(f"GGML type {name} is not a weight format")
    return get_format(plain)
