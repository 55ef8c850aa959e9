"""The serial chain in decode_floor, sweep, the CLI and the numpy kernel."""

from __future__ import annotations

import json

import numpy as np
import pytest

from roofline_decode import RECORD_KEYS, Model, decode_floor, load_model, sweep
from roofline_decode.cli import main
from roofline_decode.kernel import DecodeKernel
from roofline_decode.kernel.chain import chain_model, host_latency_profile, measure_operation_latency, run_chain_validation
from roofline_decode.kernel.probe import BandwidthReport, host_accelerator
from roofline_decode.specs.latency import LatencyProfile, load_latency_profile



def test_without_profile_the_floor_is_unchanged():
    strict = decode_floor("llama-3.1-8b", "h100-sxm", batch=[1, 64], context=4096)
    assert strict.latency_profile is None
    assert np.all(strict.chain_time_s == 0)
    assert float(strict.step_time_s[0]) * 1e3 == pytest.approx(4.64, abs=0.005)  # the README's figure


def test_llama_1b_is_latency_bound_with_eager_launches_on_h200():
    # 16 layers x 10 kernels x 4 us = 0.64 ms > 2.606 GB / 4.8 TB/s = 0.543 ms
    r = decode_floor("llama-3.2-1b", "h200-sxm", batch=1, context=4096, latency="eager-launch")
    assert float(r.chain_time_s) == pytest.approx(16 * 10 * 4e-6)
    assert float(r.memory_time_s) == pytest.approx(2605883392 / 4.8e12)
    assert str(r.bound) == "latency"
    assert float(r.step_time_s) == pytest.approx(0.64e-3)
    assert float(r.tokens_per_s) == pytest.approx(1 / 0.64e-3)
    # with CUDA graphs (1.3 us) the weight stream binds again
    assert str(decode_floor("llama-3.2-1b", "h200-sxm", batch=1, context=4096, latency="cuda-graph-h100").bound) == "memory"


def test_step_latency_counts_once_per_step():
    mine = LatencyProfile(name="mine", operation_latency=1e-6, operations_per_layer=5, step_latency=50e-6)
    r = decode_floor("llama-3.1-8b", "h100-sxm", latency=mine)
    assert float(r.chain_time_s) == pytest.approx(32 * 5e-6 + 50e-6)
    assert r.latency_profile == "mine"


def test_records_and_table_show_the_chain():
    r = decode_floor("llama-3.2-1b", "h200-sxm", batch=[1, 256], context=4096, latency="eager-launch")
    records = r.to_records()
    assert all(tuple(rec)[:len(RECORD_KEYS)] == RECORD_KEYS for rec in records)
    assert records[0]["bound"] == "latency" and records[1]["bound"] == "memory"
    assert records[0]["chain_time_s"] == pytest.approx(0.64e-3)
    text = str(r)
    assert "chain ms" in text and "eager-launch" in text
    assert "chain ms" not in str(decode_floor("llama-3.2-1b", "h200-sxm"))
    assert "<th>chain ms</th>" in r._repr_html_()


def test_sweep_takes_the_profile():
    result = sweep(["llama-3.2-1b"], ["h100-sxm", "h200-sxm"], batch=[1, 8], context=[0, 1024], latency="eager-launch")
    assert all(float(f.chain_time_s.max()) == pytest.approx(0.64e-3) for f in result)
    assert result[1].bound[0, 0] == "latency"


def test_cli_floor_latency(capsys):
    assert main(["floor", "--model", "llama-3.2-1b", "--gpu", "h200-sxm", "--latency", "eager-launch",
                 "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)[0]
    assert record["bound"] == "latency" and record["chain_time_s"] == pytest.approx(0.64e-3)
    assert main(["floor", "--model", "llama-3.2-1b", "--gpu", "h200-sxm", "--latency", "no-such"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "latency profile" in err and "eager-launch" in err
    assert main(["list", "latency"]) == 0
    assert "cuda-graph-h100" in capsys.readouterr().out


def ops(model: Model) -> int:
    kernel = DecodeKernel(model, batch=2, max_context=4)
    kernel.fill_cache(3)
    return kernel.step([1, 2])[1].operations


@pytest.mark.parametrize("gated, per_layer", [(True, 16), (False, 15)])
def test_kernel_counts_dependent_operations_per_layer(gated, per_layer):
    # norm, q, k, v, rotary q, rotary k, attention, cache write, o, residual, norm,
    # (gate,) up, activation, down, residual; outside: gather, final norm, lm_head
    base = Model(name="t", num_layers=2, hidden_size=16, num_heads=4, num_kv_heads=2, head_dim=4,
                 intermediate_size=32, vocab_size=50, mlp_gated=gated)
    two, five = ops(base), ops(base.replace(num_layers=5))
    assert (five - two) / 3 == per_layer
    assert two - 2 * per_layer == 3


def test_kernel_counts_moe_operations():
    moe = Model(name="m", num_layers=1, hidden_size=16, num_heads=4, num_kv_heads=2, head_dim=4,
                intermediate_size=32, vocab_size=50, num_experts=4, num_experts_per_token=1, moe_intermediate_size=8)
    kernel = DecodeKernel(moe, batch=2, max_context=4)
    kernel.fill_cache(3)
    _, counts = kernel.step([1, 2])
    touched = counts.experts_touched[0]
    # the dense layer's 16 minus its 4 MLP operations, + router, top-k, combine + 4 per expert run
    assert counts.operations == 3 + 12 + 3 + 4 * touched


def test_measured_operation_latency_and_host_profile():
    latency = measure_operation_latency(repeats=3)
    assert (latency.per_layer, latency.outside_layers, latency.operations) == (16, 3, 8 * 16 + 3)
    profile = host_latency_profile(latency)
    assert profile.operations_per_layer == 16
    assert profile.step_latency == pytest.approx(3 * latency.seconds)
    # the profile reproduces the tiny step's chain: L·16·t + 3·t = ops·t
    tiny = chain_model(8, 8)
    floor = decode_floor(tiny, "h100-sxm", latency=profile)
    assert float(floor.chain_time_s) == pytest.approx(latency.operations * latency.seconds)


def test_chain_validation_reports_all_three_constraints():
    host = host_accelerator(BandwidthReport(read_bandwidth=2e10, copy_bandwidth=2e10, fp32_flops=1e11,
                                            array_bytes=2**28, cache_bytes=2**25, repeats=1, threads=1))
    slow = LatencyProfile(name="slow", operation_latency=1e-5, operations_per_layer=16)
    points = run_chain_validation(host, slow, hidden_sizes=(16, 512), repeats=1)
    assert [p.bound for p in points] == ["latency", "memory"]
    small, large = points
    assert small.chain_time_s == pytest.approx(4 * 16 * 1e-5)
    assert large.memory_time_s > large.chain_time_s
    assert large.weight_bytes > 100 * small.weight_bytes
    assert all(p.floor_s == max(p.memory_time_s, p.compute_time_s, p.chain_time_s) for p in points)


@pytest.mark.parametrize("width", [0, 12, 7.5])
def test_chain_model_rejects_bad_width(width):
    from roofline_decode.errors import InvalidValueError

    with pytest.raises(InvalidValueError, match="hidden_size"):
        chain_model(width)


def test_tensor_parallel_chain_by_hand():
    from roofline_decode.formulas import ring_all_gather_time, ring_all_reduce_time, serial_chain_time
    from roofline_decode.planning import tensor_parallel_floor

    model = load_model("llama-3.1-70b", weights="fp8")
    r = tensor_parallel_floor(model, "h200-sxm", batch=1, context=4096, num_devices=8, latency="cuda-graph-h100")
    link = r.link_bandwidth
    b_act = model.activation_format.bytes_per_element
    all_reduce = 6e-6 + 2 * 7 / 8 * 8192 * b_act / link
    assert float(ring_all_reduce_time(8192 * b_act, 8, link, 6e-6)) == pytest.approx(all_reduce)
    outside = all_reduce + float(ring_all_gather_time(128256 * b_act, 8, link, 6e-6))
    expected = 80 * (10 * 1.3e-6 + 2 * all_reduce) + outside
    assert float(r.chain_time_s) == pytest.approx(expected, rel=1e-12)
    assert float(r.chain_time_s) == pytest.approx(float(serial_chain_time(80, 10, 1.3e-6, 2, all_reduce)) + outside)
    # 8.8 GB of fp8 weights per H200 stream in 1.85 ms: the chain (2.02 ms) binds
    assert float(r.memory_time_s) < float(r.chain_time_s) == pytest.approx(float(r.step_time_s))
    assert r.latency_profile == "cuda-graph-h100" and any("serial chain" in n for n in r.notes)
    # without a profile: no chain, the strict floor unchanged
    strict = tensor_parallel_floor(model, "h200-sxm", batch=1, context=4096, num_devices=8)
    assert float(strict.chain_time_s) == 0 and float(strict.step_time_s) == pytest.approx(float(r.memory_time_s))
    # one device: the chain has no collectives
    one = tensor_parallel_floor(model, "h200-sxm", batch=1, context=4096, num_devices=1, latency="cuda-graph-h100")
    assert float(one.chain_time_s) == pytest.approx(80 * 10 * 1.3e-6)


def test_a_preset_loaded_by_id_is_reused_until_its_file_changes(tmp_path, monkeypatch):
    """decode_floor remembers a latency preset by id (one stat per call); an edited file is seen."""
    import os
    import shutil

    from roofline_decode.floors import step_timing
    from roofline_decode.errors import UnknownIdError
    from roofline_decode.specs import data_files

    shutil.copytree(data_files.bundled_folder("latency_profiles"), tmp_path / "latency_profiles")
    monkeypatch.setattr(data_files, "_PACKAGE_DIR", tmp_path)
    monkeypatch.setattr(step_timing, "_PROFILES", {})
    first = decode_floor("llama-3.2-1b", "h100-sxm", 1, 1024, latency="cuda-graph-h100")
    again = decode_floor("llama-3.2-1b", "h100-sxm", 1, 1024, latency="cuda-graph-h100")
    assert float(again.chain_time_s) == float(first.chain_time_s)
    path = tmp_path / "latency_profiles" / "cuda-graph-h100.toml"
    path.write_text(path.read_text(encoding="utf-8").replace("value = 1.3\n", "value = 2.6\n", 1), encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    edited = decode_floor("llama-3.2-1b", "h100-sxm", 1, 1024, latency="cuda-graph-h100")
    assert float(edited.chain_time_s) > float(first.chain_time_s)
    path.unlink()
    with pytest.raises(UnknownIdError):
        decode_floor("llama-3.2-1b", "h100-sxm", 1, 1024, latency="cuda-graph-h100")
