"""The bandwidth probe on a small array (4 × the last-level cache) and the host Accelerator it builds."""

import os
from pathlib import Path

import numpy as np
import pytest

from roofline_decode import Accelerator, InvalidValueError, decode_floor, load_model
from roofline_decode.kernel import host_accelerator, measure_bandwidth
from roofline_decode.kernel.probe import last_level_cache_bytes


@pytest.fixture(scope="module")
def report():
    return measure_bandwidth(array_bytes=4 * last_level_cache_bytes(), repeats=1, gemm_size=256)


def test_report_holds_every_kernel(report):
    assert set(report.kernels) == {"read_sum", "read_blas", "read_blas_t", "copy"}
    assert all(v > 0 for v in report.kernels.values())
    assert report.read_bandwidth == max(report.kernels[k] for k in ("read_sum", "read_blas", "read_blas_t"))
    assert report.copy_bandwidth == report.kernels["copy"]
    # the fastest single pass is at least the fastest median (equal with one repeat)
    assert report.peak_read_bandwidth >= report.read_bandwidth
    assert report.array_bytes >= 3.9 * report.cache_bytes and report.fp32_flops > 0
    assert "GB/s" in str(report)


def test_host_accelerator_is_measured_and_usable(report):
    host = host_accelerator(report)
    assert isinstance(host, Accelerator) and host.id == "host"
    assert host.memory_bandwidth == report.read_bandwidth
    assert host.peak("fp32") == ("fp32", report.fp32_flops)
    for key in ("memory_bandwidth", "peak_flops.fp32", "memory_capacity"):
        assert host.figures[key].kind == "measured"
        assert "STREAM-like" in host.source_of(key).title
    fp32 = decode_floor(load_model("llama-3.2-1b", weights="fp32", kv="fp32"), host, batch=1, context=128)
    assert fp32.compute_precision == "fp32" and fp32.peak_flops == report.fp32_flops
    # numpy has no bf16 products: a bf16 model on the host is bounded by memory alone
    assert np.isnan(decode_floor("llama-3.2-1b", host, batch=1, context=128).peak_flops)  # no compute peak published


def _sysfs_size(text: str) -> int:
    text = text.strip()
    return int(text.rstrip("KMG")) * {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)


def test_last_level_cache_is_read_from_this_hosts_sysfs():
    """Where Linux lists the caches, the answer comes from them and not from the fallback.

    (The default fallback, 32 MiB, passes any plausibility threshold - and happens to be the
    L3 of some hosts - so the fallback is replaced by a sentinel here.)"""
    sentinel = 7
    found = last_level_cache_bytes(sentinel)
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    caches = []  # (level, size) of every cache index the CPUs list, read independently
    for cpu in cpus:
        for index in Path(f"/sys/devices/system/cpu/cpu{cpu}/cache").glob("index*"):
            if (index / "level").is_file() and (index / "size").is_file():
                caches.append((int((index / "level").read_text()), _sysfs_size((index / "size").read_text())))
    if not caches:  # not Linux, or a container hiding sysfs: the fallback is the answer
        assert found == sentinel
        return
    top = max(level for level, _ in caches)
    top_sizes = [size for level, size in caches if level == top]
    # one instance at least, every CPU's own instance at most (shared instances count once)
    assert max(top_sizes) <= found <= sum(top_sizes)


def test_last_level_cache_sums_its_instances(tmp_path):
    """Two L3 slices of 32 MiB (one per pair of CPUs): 64 MiB for all four CPUs, 32 MiB for one pair."""
    for cpu in range(4):
        caches = [(1, "Data", "32K", str(cpu)), (1, "Instruction", "32K", str(cpu)), (2, "Unified", "512K", str(cpu)),
                  (3, "Unified", "32768K", "0-1" if cpu < 2 else "2-3")]
        for i, (level, kind, size, shared) in enumerate(caches):
            index = tmp_path / f"cpu{cpu}" / "cache" / f"index{i}"
            index.mkdir(parents=True)
            for name, text in (("level", str(level)), ("type", kind), ("size", size), ("shared_cpu_list", shared)):
                (index / name).write_text(text + "\n")
    assert last_level_cache_bytes(root=tmp_path, cpus=range(4)) == 64 * 2**20
    assert last_level_cache_bytes(root=tmp_path, cpus=[0, 1]) == 32 * 2**20
    assert last_level_cache_bytes(7, root=tmp_path / "missing", cpus=[0]) == 7


@pytest.mark.parametrize("kwargs, field", [(dict(array_bytes=1024), "array_bytes"), (dict(repeats=0), "repeats"),
                                           (dict(threads=0), "threads"), (dict(array_bytes=2.0**40 + 0.5), "array_bytes"),
                                           (dict(gemm_size=0), "gemm_size")])
def test_bad_probe_arguments(kwargs, field):
    with pytest.raises(InvalidValueError, match=field):
        measure_bandwidth(**kwargs)
