"""Number formats: bits per element include block scales; compute precision per DESIGN §4."""

import pytest

from roofline_decode import InvalidValueError, RooflineError, UnknownFormatError, get_format, group_quantized
from roofline_decode.formats import FORMATS


@pytest.mark.parametrize(
    "name, bits, compute",
    [
        ("fp32", 32, "fp32"),
        ("bf16", 16, "bf16"),
        ("fp16", 16, "fp16"),
        ("fp8_e4m3", 8, "fp8"),
        ("fp8_e5m2", 8, "fp8"),
        ("int8", 8, "bf16"),  # weight-only: dequantised, multiplies in bf16
        ("int4", 4, "bf16"),
        ("q8_0", 8.5, "int8"),  # GGML: 32 x int8 + fp16 scale = 34 B / 32; llama.cpp MMQ: int8
        ("q4_0", 4.5, "int8"),  # GGML: 32 x int4 + fp16 scale = 18 B / 32; llama.cpp MMQ: int8
        ("mxfp4", 4.25, "fp4"),  # OCP MX: 32 x E2M1 + E8M0 scale
        ("nvfp4", 4.5, "fp4"),  # 16 x E2M1 + E4M3 scale
    ],
)
def test_builtin_formats(name, bits, compute):
    fmt = get_format(name)
    assert fmt.bits_per_element == bits
    assert fmt.bytes_per_element == bits / 8
    assert fmt.compute_precision == compute


def test_group_quantized_issue_example():
    # int4, group 32, 16-bit scale and zero point per group = 5 bits
    assert group_quantized(4, 32, scale_bits=16, zero_point_bits=16).bits_per_element == 5.0
    assert get_format("int4-g32").bits_per_element == 5.0
    assert get_format("int4_g128-sym").bits_per_element == 4 + 16 / 128


def test_aliases_and_passthrough():
    assert get_format("fp8").name == "fp8_e4m3"
    assert get_format("BFloat16").name == "bf16"
    fmt = get_format("q4_0")
    assert get_format(fmt) is fmt


def test_fallbacks_order():
    assert get_format("mxfp4").compute_fallbacks[:2] == ("fp4", "fp8")
    assert get_format("fp8").compute_fallbacks == ("fp8", "bf16", "fp16")


@pytest.mark.parametrize("name", ["q4_0", "q8_0"])
def test_ggml_block_formats_multiply_on_int8_then_fp16(name):
    # llama.cpp MMQ (PR #7676) multiplies GGML blocks on int8 tensor cores; without an int8
    # peak the weights are dequantised to fp16 for cuBLAS.
    assert get_format(name).compute_fallbacks == ("int8", "fp16", "bf16")


def test_fallback_chain_must_start_with_the_compute_precision():
    from roofline_decode.formats import NumberFormat

    with pytest.raises(ValueError, match="must start with compute_precision"):
        NumberFormat(name="x", bits_per_element=4, compute_precision="int8", fallbacks=("fp16",))


def test_unknown_format_lists_close_matches():
    with pytest.raises(UnknownFormatError) as info:
        get_format("bf61", field="weights")
    message = str(info.value)
    assert "bf61" in message and "bf16" in message and "weights" in message
    assert isinstance(info.value, RooflineError)


@pytest.mark.parametrize("kwargs", [dict(element_bits=0, group_size=32), dict(element_bits=4, group_size=0),
                                    dict(element_bits=4, group_size=32, scale_bits=-1)])
def test_group_quantized_rejects_bad_values(kwargs):
    with pytest.raises(InvalidValueError):
        group_quantized(**kwargs)


def test_every_format_is_at_most_32_bits():
    assert all(0 < f.bits_per_element <= 32 for f in FORMATS.values())
