"""Print the host bandwidth probe's figures: every kernel, at two array sizes and thread counts.

The probe streams arrays of at least 4 × the last-level cache; this script shows how the read
and copy figures depend on the array size (4 × and 16 × the LLC) and on the threads used by
the numpy kernels (the BLAS read kernel uses BLAS's own threads), and prints the resulting
host Accelerator.  Usage: ``python benchmarks/bandwidth_probe.py``.  Asserts nothing.
"""

from __future__ import annotations

import os
import sys

from roofline_decode.kernel import host_accelerator, measure_bandwidth
from roofline_decode.kernel.probe import last_level_cache_bytes


def main() -> int:
    cache = last_level_cache_bytes()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    print(f"last-level cache {cache / 2**20:.0f} MiB, {cpus} CPUs; "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    print(f"{'array':>9} {'threads':>7} {'read_sum':>9} {'read_blas':>9} {'blas_t':>7} {'copy':>6} {'GEMM GFLOP/s':>12}")
    report = None
    for multiple in (4, 16):
        for threads in sorted({1, cpus}):
            report = measure_bandwidth(array_bytes=multiple * cache, threads=threads, repeats=7)
            k = report.kernels
            print(f"{report.array_bytes / 2**20:>7.0f}Mi {threads:>7} {k['read_sum'] / 1e9:>9.1f} "
                  f"{k['read_blas'] / 1e9:>9.1f} {k['read_blas_t'] / 1e9:>7.1f} {k['copy'] / 1e9:>6.1f} {report.fp32_flops / 1e9:>12.1f}")
    host = host_accelerator(report)
    print(f"\n{host.name}: memory_bandwidth {host.memory_bandwidth / 1e9:.1f} GB/s "
          f"({host.figures['memory_bandwidth'].kind}), fp32 peak {host.peak_flops['fp32'] / 1e9:.1f} GFLOP/s, "
          f"ridge point {host.ridge_point('fp32'):.2f} FLOP/B")
    print(f"source: {host.sources['probe'].title}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
