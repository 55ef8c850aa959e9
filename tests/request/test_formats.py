"""weights= and kv= on every estimator, as decode_floor, load_model and the CLI apply them (issue 30 item 4)."""

from __future__ import annotations

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode.errors import UnknownFormatError

MODEL, GPU = "llama-3.1-8b", "h100-sxm"


def _same(a, b) -> None:
    """Every record of two results equal (the formats given by keyword or by a loaded model)."""
    assert a.to_records() == b.to_records()


@pytest.mark.parametrize("call", [
    lambda m, **kw: rd.decode_floor(m, GPU, [1, 64], 4096, **kw),
    lambda m, **kw: rd.sweep(m, GPU, [1, 64], [1024, 4096], **kw),
    lambda m, **kw: rd.prefill_floor(m, GPU, [512, 8192], **kw),
    lambda m, **kw: rd.mixed_step_floor(m, GPU, 64, 2048, [0, 512], **kw),
    lambda m, **kw: rd.request_floor(m, GPU, 2048, 64, [1, 8], **kw),
    lambda m, **kw: rd.speculative_floor(m, GPU, draft="llama-3.2-1b", batch=[1, 8], context=4096, **kw),
], ids=["decode", "sweep", "prefill", "mixed_step", "request", "speculative"])
def test_formats_by_keyword_equal_a_model_loaded_in_them(call):
    loaded = rd.load_model(MODEL, weights="fp8", kv="fp8")
    _same(call(MODEL, weights="fp8", kv="fp8"), call(loaded))
    assert call(MODEL).to_records() != call(loaded).to_records()
    _same(call(MODEL, weights=None, kv=None), call(MODEL))  # None keeps the model's formats


def test_one_byte_weights_and_kv_halve_the_bytes_of_a_prefill():
    """Llama-3.1-8B has one weight format for every group: every weight byte read is
    parameters x b_w, and every KV byte written tokens x 2 x 8 x 128 x 32 x b_kv, so bf16 -> fp8
    halves both exactly (and leaves the FLOPs alone)."""
    bf16 = rd.prefill_floor(MODEL, GPU, 4096)
    fp8 = rd.prefill_floor(MODEL, GPU, 4096, weights="fp8", kv="fp8")
    assert float(fp8.weight_bytes) == float(bf16.weight_bytes) / 2
    assert float(fp8.kv_write_bytes) == float(bf16.kv_write_bytes) / 2 == 4096 * 2 * 8 * 128 * 32
    assert float(fp8.flops) == float(bf16.flops)
    assert (fp8.weight_format, fp8.kv_format) == ("fp8_e4m3", "fp8_e4m3")


def test_results_name_their_formats():
    r = rd.request_floor(MODEL, GPU, 2048, 16, weights="int4-g32", kv="fp8")
    record = r.to_records()[0]
    assert (record["weight_format"], record["kv_format"]) == ("int4-g32", "fp8_e4m3")
    assert "int4-g32 weights, fp8_e4m3 KV" in str(r)
    m = rd.mixed_step_floor(MODEL, GPU, 8, 1024, 256, kv="fp8")
    assert (m.weight_format, m.kv_format) == ("bf16", "fp8_e4m3")
    s = rd.speculative_floor(MODEL, GPU, mtp_layers=1, weights="fp8", context=4096)
    assert s.to_records()[0]["weight_format"] == "fp8_e4m3" and "fp8_e4m3 weights" in str(s)


def test_mtp_heads_take_the_target_formats_and_a_draft_model_keeps_its_own():
    target_fp8 = rd.speculative_floor(MODEL, GPU, draft="llama-3.2-1b", weights="fp8", context=4096)
    plain = rd.speculative_floor(MODEL, GPU, draft="llama-3.2-1b", context=4096)
    assert np.array_equal(target_fp8.draft_time_s, plain.draft_time_s)  # the 1B draft stays in bf16
    assert float(target_fp8.plain_step_s) < float(plain.plain_step_s)
    mtp = rd.speculative_floor(MODEL, GPU, mtp_layers=1, weights="fp8", context=4096)
    mtp_plain = rd.speculative_floor(MODEL, GPU, mtp_layers=1, context=4096)
    assert float(mtp.draft_time_s) < float(mtp_plain.draft_time_s)


def test_an_unknown_format_names_the_field():
    with pytest.raises(UnknownFormatError, match="weight_format"):
        rd.prefill_floor(MODEL, GPU, 2048, weights="fp9")
    with pytest.raises(UnknownFormatError, match="kv_format"):
        rd.request_floor(MODEL, GPU, 2048, 4, kv="fp9")
