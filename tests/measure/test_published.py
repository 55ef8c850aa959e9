"""The published decode timings (tests/data/measured/, copied from shared/reference/measured/):
every valid row is at or above its floor, and the known-invalid rows are flagged."""

from pathlib import Path

import pytest

from roofline_decode import load_accelerator
from roofline_decode.measure import EXCEEDS_MEMORY, IMPOSSIBLE, compare, load_published
from roofline_decode.measure.published import (
    GPT_FAST_MEAN_CONTEXT,
    exl2_format,
    gptq_format,
    kv_read_layer_model,
    mi250x_gcd,
    rtx_3090_ti,
)

DATA = Path(__file__).parents[1] / "data" / "measured"
FILES = ["gpt_fast.csv", "exllama.csv", "knlp_full_model_decode.csv", "knlp_attention_microbench.csv"]

# knlp bpa_large_model_decode_latency, Gemma-2-27B on H200 (CSV lines 86-88): 10.7, 8.9 and 9.1 ms
# per token, below the bf16 weight-streaming time (54 GB / 4.8 TB/s = 11.3 ms): early stop at EOS.
KNOWN_IMPOSSIBLE = {f"knlp_full_model_decode.csv:{line}" for line in (86, 87, 88)}
# Qwen2.5-72B bf16 (145 GB of weights) on one A100-80GB: more than the device holds, and
# device_map="auto" offloaded part of the model to the host (CSV notes).  Llama-3.1-70B bf16 on
# one H200 (lines 89-91, also offloaded by device_map="auto") is not flagged since issue 21 item 3:
# its 141.1e9 B (131.4 GiB) of weights fit the H200's 141 GiB under planning's capacity rule
# (vendor GB read as GiB); the old check compared them with 141e9 B.  Its CSV notes still say so.
KNOWN_OFFLOADED = {f"knlp_full_model_decode.csv:{line}" for line in (101, 102, 103)}


@pytest.fixture(scope="module")
def published():
    return {name: load_published(DATA / name) for name in FILES}


@pytest.fixture(scope="module")
def comparisons(published):
    return {name: compare(p.rows) for name, p in published.items()}


def test_rows_are_placed_or_skipped_with_a_reason(published):
    for name, p in published.items():
        assert p.rows, name
        assert all(reason for _, reason in p.skipped)
        lines = sum(1 for _ in (DATA / name).open()) - 1
        assert len(p.rows) + len(p.skipped) == lines, name


def test_every_valid_row_is_at_or_above_its_floor(comparisons):
    for name, comparison in comparisons.items():
        for c in comparison:
            if c.row.source in KNOWN_IMPOSSIBLE:
                continue
            assert c.measured_step_time_s >= c.floor_step_time_s, (c.row.source, c.row.describe())
            assert 0 < c.efficiency <= 1 and 0 < c.bandwidth_utilisation <= 1
            assert IMPOSSIBLE not in c.flags


def test_known_invalid_rows_are_flagged(comparisons):
    flagged = {c.row.source for comp in comparisons.values() for c in comp.impossible}
    assert flagged == KNOWN_IMPOSSIBLE
    offloaded = {c.row.source for comp in comparisons.values() for c in comp if EXCEEDS_MEMORY in c.flags}
    assert offloaded == KNOWN_OFFLOADED


def test_gemma_row_is_faster_than_the_weight_floor(comparisons):
    (first,) = [c for c in comparisons["knlp_full_model_decode.csv"] if c.row.source.endswith(":86")]
    assert first.measured_step_time_s == pytest.approx(10.743e-3)
    assert first.floor_step_time_s > 11e-3 and first.efficiency > 1


def test_gpt_fast_mapping(published):
    rows = published["gpt_fast.csv"].rows
    assert GPT_FAST_MEAN_CONTEXT == 104  # decode steps at contexts 5 ... 203 (the prefill yields token 1)
    assert {r.context for r in rows} == {104}
    assert {str(r.weight_format) for r in rows} == {"bf16", "int8", "int4-g32"}
    oom = [reason for _, reason in published["gpt_fast.csv"].skipped]
    assert oom and all("OOM" in reason for reason in oom)


def test_gpt_fast_bandwidth_close_to_published(comparisons):
    # gpt-fast's "Memory Bandwidth" = model size x tok/s: 1397.31 GB/s for Llama-2-7B bf16 on one A100
    (c,) = [c for c in comparisons["gpt_fast.csv"] if c.row.source == "gpt_fast.csv:2"]
    assert c.achieved_bandwidth / 1e9 == pytest.approx(1397.31, rel=0.01)


def test_exllama_formats_and_devices(published):
    rows = published["exllama.csv"].rows
    assert gptq_format(128).bits_per_element == pytest.approx(4 + 20 / 128)
    assert exl2_format(2.5).bytes_per_element == pytest.approx(2.5 / 8)
    devices = {getattr(r.accelerator, "id", r.accelerator) for r in rows}
    assert devices == {"rtx-4090", "rtx-3090-ti"}
    split = [reason for where, reason in published["exllama.csv"].skipped if "split" in reason]
    assert len(split) == 8
    assert rtx_3090_ti().memory_bandwidth == 1008e9 and rtx_3090_ti().peak_flops == {}
    assert {r.context for r in rows} == {64, 1984, 0}


def test_mi250x_gcd_is_half_the_package():
    package, gcd = load_accelerator("mi250x"), mi250x_gcd()
    assert gcd.memory_bandwidth == package.memory_bandwidth / 2
    assert gcd.peak_flops["bf16"] == package.peak_flops["bf16"] / 2


def test_microbenchmark_kv_bytes_match_the_publication(comparisons):
    rows = comparisons["knlp_attention_microbench.csv"]
    fp16 = [c for c in rows if "fp16_fp16" in c.row.label]
    assert len(fp16) == 70
    for c in fp16:  # kv_bytes_MB = B * T * 4096 bytes
        assert c.bytes_moved == pytest.approx(c.row.kv_bytes, rel=1e-4)
        assert c.achieved_bandwidth == pytest.approx(c.row.bandwidth, rel=0.01)
    assert kv_read_layer_model().kv_bytes_per_token == 4096


def test_missing_published_file_is_a_measurement_file_error(tmp_path):
    from roofline_decode.measure import MeasurementFileError

    with pytest.raises(MeasurementFileError, match="cannot read"):
        load_published(tmp_path / "gpt_fast.csv")


def test_a_published_row_with_an_empty_number_names_the_row(tmp_path):
    from roofline_decode.measure import MeasurementFileError

    header, first, *_ = (DATA / "knlp_attention_microbench.csv").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "micro.csv"
    path.write_text(header + "\n" + first.replace(",0.0561,", ",,") + "\n", encoding="utf-8")
    with pytest.raises(MeasurementFileError) as info:
        load_published(path)
    assert info.value.row == 1 and "micro.csv" in str(info.value)
