"""A STREAM-like bandwidth probe and an fp32 GEMM probe of the host CPU.

Memory bandwidth is measured on arrays far larger than the last-level cache (16 × LLC and at
least 256 MiB by default; the LLC summed over its instances, one per socket or core complex),
so every pass streams from DRAM:

* **read** kernels sum an array: numpy's ``add.reduce`` split over one thread per core (numpy
  releases the GIL), and BLAS products with a vector of ones, ``A @ 1`` and ``1 @ A`` (the
  second is the memory access of a batch-1 decode step, ``x @ W``); the read bandwidth is the
  fastest of their medians;
* **copy**: ``np.copyto`` split over the same threads, counted as read + write bytes.

Each kernel runs once to warm up, then ``repeats`` times; the median time is kept.  The fp32
peak is the median rate of a square float32 GEMM (n = 2048), which is what BLAS sustains, not a
datasheet number.  :func:`host_accelerator` turns the figures into an
:class:`~roofline_decode.Accelerator` with kind ``"measured"`` and a source saying how.

References: McCalpin, "Memory Bandwidth and Machine Balance in Current High Performance
Computers", IEEE TCCA Newsletter, 1995 (the STREAM copy/scale/add/triad kernels).
"""

from __future__ import annotations

import datetime
import os
import platform
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict, Unpack

import numpy as np

from ..errors import InvalidValueError
from ..specs.accelerator import Accelerator, Figure, Source

__all__ = ["BandwidthReport", "ProbeOptions", "measure_bandwidth", "measure_gemm_flops", "host_accelerator", "last_level_cache_bytes"]

_MIB = 2**20


def last_level_cache_bytes(default: int = 32 * _MIB, *, root: str | Path = "/sys/devices/system/cpu",
                           cpus: Iterable[int] | None = None) -> int:
    """Total size of the last-level cache [B] that the CPUs this process may use share.

    The highest cache level found under ``root`` (``cpuN/cache/index*``) for each CPU in
    ``cpus`` (default: this process's CPU affinity), summed over its distinct instances (a
    cache shared by several CPUs counts once): a machine with one L3 per socket or per core
    complex caches their sum, and arrays sized on one instance could partly stay cached.
    Falls back to ``default`` where sysfs does not say (not Linux, a container hiding it).
    """
    if cpus is None:
        cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    instances: dict[tuple[int, str, str], int] = {}  # (level, type, CPUs sharing it) -> bytes
    for cpu in cpus:
        for index in Path(root, f"cpu{cpu}", "cache").glob("index*"):
            try:
                level = int((index / "level").read_text())
                kind = (index / "type").read_text().strip() if (index / "type").exists() else ""
                shared = (index / "shared_cpu_list").read_text().strip()
                text = (index / "size").read_text().strip()
                size = int(text.rstrip("KMG")) * {"K": 1024, "M": _MIB, "G": 2**30}.get(text[-1:], 1)
            except (OSError, ValueError):
                continue
            instances[(level, kind, shared)] = size
    if not instances:
        return default
    top = max(level for level, _, _ in instances)
    return sum(size for (level, _, _), size in instances.items() if level == top)


def _pass_times(func: Callable[[], object], repeats: int) -> np.ndarray:
    func()  # warm-up: page faults, thread start-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return np.asarray(times)


def _median_time(func: Callable[[], object], repeats: int) -> float:
    return float(np.median(_pass_times(func, repeats)))


@dataclass(frozen=True)
class BandwidthReport:
    """Sustained bandwidths [B/s] and fp32 rate [FLOP/s] of the host, with how they were measured.

    ``read_bandwidth`` is the fastest read kernel's median; ``kernels`` holds every kernel's
    median bandwidth by name.  ``peak_read_bandwidth`` is the fastest single pass of any read
    kernel, STREAM's own "best rate" convention: on a shared machine other jobs only slow a
    pass down, so it is the closest reading of what the memory can do, and the strictest
    bandwidth to build a floor on.
    """

    read_bandwidth: float
    copy_bandwidth: float
    fp32_flops: float
    array_bytes: int
    cache_bytes: int
    repeats: int
    threads: int
    kernels: dict[str, float] = field(default_factory=dict)
    peak_read_bandwidth: float = 0.0

    def __str__(self) -> str:
        parts = ", ".join(f"{k} {v / 1e9:.1f}" for k, v in self.kernels.items())
        return (
            f"read {self.read_bandwidth / 1e9:.1f} GB/s, copy {self.copy_bandwidth / 1e9:.1f} GB/s "
            f"({parts} GB/s; {self.array_bytes / _MIB:.0f} MiB arrays, LLC {self.cache_bytes / _MIB:.0f} MiB, "
            f"median of {self.repeats}), fp32 GEMM {self.fp32_flops / 1e9:.1f} GFLOP/s"
        )


def measure_gemm_flops(size: int = 2048, repeats: int = 5) -> float:
    """Median rate of a square float32 matrix product ``size`` × ``size`` [FLOP/s]."""
    rng = np.random.default_rng(0)
    a = rng.random((size, size), dtype=np.float32)
    b = rng.random((size, size), dtype=np.float32)
    out = np.empty_like(a)
    return 2.0 * size**3 / _median_time(lambda: np.matmul(a, b, out=out), repeats)


class ProbeOptions(TypedDict, total=False):
    """Keyword arguments of :func:`measure_bandwidth` that :func:`host_accelerator` passes on."""

    array_bytes: int | None
    repeats: int
    threads: int | None
    gemm_size: int


def measure_bandwidth(array_bytes: int | None = None, repeats: int = 7, threads: int | None = None,
                      gemm_size: int = 2048) -> BandwidthReport:
    """Measure the host's sustained read and copy bandwidth, and its fp32 GEMM rate.

    Parameters
    ----------
    array_bytes : int, optional
        Bytes of the streamed array; default 16 × the last-level cache, at least 256 MiB.
        Must be at least 4 × the last-level cache, or the probe would measure the cache.
    repeats : int
        Timed repetitions per kernel (after one warm-up); the median is kept.
    threads : int, optional
        Threads for the numpy kernels (default: the CPUs this process may use).
    gemm_size : int
        Side of the square float32 GEMM that measures the fp32 rate.

    Returns
    -------
    BandwidthReport
    """
    cache = last_level_cache_bytes()
    if array_bytes is None:
        array_bytes = max(16 * cache, 256 * _MIB)
    if int(array_bytes) != array_bytes or array_bytes < 4 * cache:
        raise InvalidValueError("array_bytes", array_bytes, f"an integer >= 4 x the last-level cache ({4 * cache} B)")
    array_bytes = int(array_bytes)
    if int(gemm_size) != gemm_size or gemm_size < 1:
        raise InvalidValueError("gemm_size", gemm_size, "an integer >= 1")
    if int(repeats) != repeats or repeats < 1:
        raise InvalidValueError("repeats", repeats, "an integer >= 1")
    if threads is None:
        threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if int(threads) != threads or threads < 1:
        raise InvalidValueError("threads", threads, "an integer >= 1")
    rows = array_bytes // (4 * 16384)
    source = np.ones((rows, 16384), dtype=np.float32)  # written: every page is real memory
    target = np.empty_like(source)
    target.fill(0.0)
    nbytes = source.nbytes
    ones, ones_t = np.ones(source.shape[1], dtype=np.float32), np.ones(source.shape[0], dtype=np.float32)
    chunks = max(4 * threads, 16)  # more chunks than threads evens out their finishing times
    src_parts, dst_parts = np.array_split(source, chunks), np.array_split(target, chunks)
    with ThreadPoolExecutor(threads) as pool:
        times = {
            "read_sum": _pass_times(lambda: list(pool.map(np.add.reduce, src_parts, [None] * chunks)), repeats),
            "read_blas": _pass_times(lambda: source @ ones, repeats),
            "read_blas_t": _pass_times(lambda: ones_t @ source, repeats),
            "copy": _pass_times(lambda: list(pool.map(np.copyto, dst_parts, src_parts)), repeats) / 2,
        }
    del source, target
    kernels = {name: nbytes / float(np.median(t)) for name, t in times.items()}
    return BandwidthReport(
        read_bandwidth=max(v for k, v in kernels.items() if k.startswith("read")), copy_bandwidth=kernels["copy"],
        fp32_flops=measure_gemm_flops(gemm_size, repeats=max(3, repeats // 2)), array_bytes=int(nbytes),
        cache_bytes=cache, repeats=int(repeats), threads=threads, kernels=kernels,
        peak_read_bandwidth=max(nbytes / float(t.min()) for k, t in times.items() if k.startswith("read")),
    )


def _memory_capacity() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return float(line.split()[1]) * 1024
    except OSError:
        pass
    return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def host_accelerator(report: BandwidthReport | None = None, **probe_options: Unpack[ProbeOptions]) -> Accelerator:
    """The host CPU as an :class:`~roofline_decode.Accelerator`, from measured figures.

    ``memory_bandwidth`` is the probe's read bandwidth, ``peak_flops["fp32"]`` the measured
    GEMM rate, ``memory_capacity`` the OS's total memory.  Each figure is recorded in
    :attr:`~roofline_decode.Accelerator.figures` with kind ``"measured"`` and the source
    ``"probe"``, which says how it was measured.

    Parameters
    ----------
    report : BandwidthReport, optional
        Figures already measured; otherwise :func:`measure_bandwidth` runs with ``probe_options``.

    Examples
    --------
    >>> report = BandwidthReport(read_bandwidth=2.5e10, copy_bandwidth=2.0e10, fp32_flops=1.4e11,
    ...                          array_bytes=2**29, cache_bytes=2**25, repeats=7, threads=2)
    >>> host = host_accelerator(report)
    >>> host.memory_bandwidth, host.figures["memory_bandwidth"].kind, round(host.ridge_point("fp32"), 2)
    (25000000000.0, 'measured', 5.6)
    """
    report = report or measure_bandwidth(**probe_options)
    capacity = _memory_capacity()
    how = (
        f"STREAM-like probe of roofline_decode.kernel.probe: median of {report.repeats} passes over "
        f"{report.array_bytes / _MIB:.0f} MiB float32 arrays (last-level cache {report.cache_bytes / _MIB:.0f} MiB), "
        f"{report.threads} threads; read = fastest of a threaded sum and two BLAS products with ones; "
        f"fp32 peak = median square float32 GEMM"
    )
    today = datetime.date.today().isoformat()
    figures = {
        "memory_bandwidth": Figure(value=round(report.read_bandwidth / 1e9, 3), unit="GB/s", kind="measured",
                                   source="probe", si_value=report.read_bandwidth,
                                   note=f"copy (read + write) {report.copy_bandwidth / 1e9:.1f} GB/s"),
        "peak_flops.fp32": Figure(value=round(report.fp32_flops / 1e9, 3), unit="GFLOP/s", kind="measured",
                                  source="probe", si_value=report.fp32_flops),
        "memory_capacity": Figure(value=capacity, unit="B", kind="measured", source="probe", si_value=capacity,
                                  note="MemTotal reported by the operating system"),
    }
    return Accelerator(
        id="host", name=f"host CPU ({_cpu_name()})", vendor=None, memory_type="host DRAM",
        memory_capacity=capacity, memory_bandwidth=report.read_bandwidth, peak_flops={"fp32": report.fp32_flops},
        figures=figures, sources={"probe": Source(title=how, url="local measurement (no URL)", retrieved=today)},
        notes=str(report),
    )
