"""The per-layer table under a layout: ParallelFloor.layers() (the busiest device's rows plus a
communication row) and `floor --per-layer` with a multi-device layout."""

import json
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from roofline_decode import Parallel, decode_floor, list_models
from roofline_decode.cli import main
from roofline_decode.errors import InvalidValueError
from roofline_decode.floors.parallel import pipeline_parallel_floor, tensor_parallel_floor

DEVICE_TOTALS = {"weight_bytes": "weight_read_bytes_per_device", "kv_read_bytes": "kv_read_bytes_per_device",
                 "kv_write_bytes": "kv_write_bytes_per_device", "flops": "flops_per_device",
                 "bytes_total": "bytes_read_per_device", "memory_time_s": "memory_time_s",
                 "compute_time_s": "compute_time_s"}
LAYOUTS = ["tp2", "tp4", "tp8", "tp2 pp2", "dp2", "dp4 ep4", "dp8 ep8", "tp2 dp2 ep4", "tp4 ep2", "tp8 pp2", "dp2 pp2"]


def assert_device_rows_add_up(floor):
    table = floor.layers()
    assert [row.kind for row in table][-1] == "communication"
    for name, total in DEVICE_TOTALS.items():
        parts = np.array([np.broadcast_to(getattr(row, name), floor.shape) for row in table])
        assert np.all(parts >= 0), name
        sums = np.array([math.fsum(column) for column in parts.reshape(len(table), -1).T]).reshape(floor.shape)
        assert np.allclose(sums, np.broadcast_to(getattr(floor, total), floor.shape), rtol=1e-12, atol=0), name
    communication = table["communication"]
    assert np.array_equal(np.broadcast_to(communication.time_s, floor.shape),
                          np.broadcast_to(floor.communication_time_s, floor.shape))
    assert set(np.ravel(communication.bound)) == {"communication"}
    return table


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(list_models()), st.sampled_from(LAYOUTS), st.integers(1, 1024), st.integers(0, 131_072),
       st.sampled_from(["uniform", "identical"]), st.sampled_from(["sharded", "replicated"]))
def test_device_rows_add_up_for_every_bundled_model_and_layout(model_id, layout, batch, context, routing, mla):
    try:
        floor = decode_floor(model_id, "h200-sxm", batch=batch, context=context, routing=routing, parallel=layout,
                             mla_layout=mla)
    except InvalidValueError:  # a layout this model cannot take (heads, experts, layers)
        assume(False)
    assert_device_rows_add_up(floor)


def test_device_rows_over_a_grid_and_records():
    floor = decode_floor("deepseek-v3", "h200-sxm", batch=[16, 256], context=[[1024], [32768]], parallel="dp8 ep8")
    table = assert_device_rows_add_up(floor)
    records = table.to_records()
    assert len(records) == 4 * len(table) and {r["accelerator"] for r in records} == {"h200-sxm"}
    assert [r["layer"] for r in records if r["bound"] == "communication"] == ["communication"] * 4


def test_tensor_split_by_hand_on_llama_3_1_70b():
    """tp4: the norm vectors whole on every device, the k/v projections and KV cache 8 KV heads / 4,
    everything else a quarter."""
    one = decode_floor("llama-3.1-70b", "h100-sxm", batch=8, context=4096).layers()
    four = decode_floor("llama-3.1-70b", "h100-sxm", batch=8, context=4096, parallel="tp4").layers()
    assert float(four["norms and biases"].weight_bytes) == float(one["norms and biases"].weight_bytes)
    for kind in ("MLP (dense)", "lm_head", "embedding"):
        assert float(four[kind].weight_bytes) == pytest.approx(float(one[kind].weight_bytes) / 4, rel=1e-15)
        assert float(four[kind].flops) == pytest.approx(float(one[kind].flops) / 4, rel=1e-15)
    # 8 KV heads over 4 devices: 2 each, the cache split 4 ways like the rest of the attention
    assert float(four["attention (full)"].kv_read_bytes) == float(one["attention (full)"].kv_read_bytes) / 4
    assert float(four["attention (full)"].weight_bytes) == pytest.approx(
        float(one["attention (full)"].weight_bytes) / 4, rel=1e-15)


def test_kv_heads_replicated_beyond_their_count():
    """tp16 on 8 KV heads: each device keeps one KV head, 1/8 of the cache (not 1/16)."""
    one = decode_floor("llama-3.1-70b", "h100-sxm", batch=8, context=4096).layers()
    sixteen = decode_floor("llama-3.1-70b", "h100-sxm", batch=8, context=4096, parallel="tp16").layers()
    assert float(sixteen["attention (full)"].kv_read_bytes) == float(one["attention (full)"].kv_read_bytes) / 8


def test_expert_parallel_routed_row_is_the_even_share_of_the_whole_batch():
    whole = decode_floor("deepseek-v3", "h200-sxm", batch=256, context=4096).layers()
    table = decode_floor("deepseek-v3", "h200-sxm", batch=256, context=4096, parallel="dp8 ep8").layers()
    assert float(table["MoE routed experts"].weight_bytes) == pytest.approx(
        float(whole["MoE routed experts"].weight_bytes) / 8, rel=1e-12)
    # attention DP: the attention weights whole, the KV cache of 256 / 8 sequences
    assert float(table["attention (MLA)"].weight_bytes) == pytest.approx(
        float(whole["attention (MLA)"].weight_bytes), rel=1e-15)
    assert float(table["attention (MLA)"].kv_read_bytes) == pytest.approx(
        float(whole["attention (MLA)"].kv_read_bytes) / 8, rel=1e-15)


def test_the_tensor_parallel_wrapper_has_rows_and_a_pipeline_of_micro_batches_is_refused():
    assert_device_rows_add_up(tensor_parallel_floor("llama-3.1-70b", "h100-sxm", batch=[1, 32], context=8192,
                                                    num_devices=4, collective_latency=5e-6,
                                                    overlap_communication=False))
    with pytest.raises(InvalidValueError, match="floor"):
        pipeline_parallel_floor("llama-3.1-70b", "h100-sxm", 8, 4096, 2, 4).layers()
    with pytest.raises(InvalidValueError, match="routing"):
        decode_floor("gpt-oss-120b", "h100-sxm", batch=8, parallel="tp2", routing=12.0).layers()
    with pytest.raises(InvalidValueError, match="decode step"):
        from roofline_decode import prefill_floor
        prefill_floor("llama-3.1-70b", "h100-sxm", 1024, parallel=Parallel(tp=4)).layers()


def test_cli_per_layer_under_a_layout(capsys):
    assert main(["floor", "--model", "deepseek-v3", "--gpu", "h200-sxm", "--batch", "256", "--dp", "8", "--ep", "8",
                 "--per-layer"]) == 0
    out = capsys.readouterr().out
    assert "communication" in out and "layout dp8 ep8: the rows are the busiest of its 8 devices" in out
    assert main(["floor", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--batch", "8", "--tp", "4", "--per-layer",
                 "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    floor = decode_floor("llama-3.1-70b", "h100-sxm", batch=8, parallel="tp4")
    assert math.fsum(r["bytes_total"] for r in records) == pytest.approx(float(floor.bytes_read_per_device), rel=1e-12)
    for argv, flag in ((["--tp", "3"], "--tp"), (["--ep", "2"], "--ep")):
        assert main(["floor", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--per-layer", *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and flag in err
