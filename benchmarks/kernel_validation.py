"""Validate the decode floor against the numpy kernel on this machine; print the figures.

Runs (about five minutes on a 2-core machine):

1. the bandwidth probe (before and after the sweeps; the floor uses the faster read, the
   stricter choice for "never faster than the floor"); each sweep runs twice and keeps, per
   point, the quieter pass (other jobs only add time), after waiting for idle CPUs;
2. a batch-1 context sweep of the ~1 GB fp32 validation model: achieved bandwidth against the
   probe, and the straight-line fit of step time against context (R²);
3. a batch sweep at a short context: aggregate tokens/s, the batch where it saturates, and the
   floor's critical batch;
4. the skinny-matmul experiment: how fast BLAS streams one weight matrix for a batch of B rows
   in three layouts (see docs/validate.md).

Prints figures and whether each target holds; asserts nothing (tests never time things).
Usage: ``python benchmarks/kernel_validation.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from roofline_decode import decode_floor
from roofline_decode.kernel import host_accelerator, measure_bandwidth, run_validation, validation_model
from roofline_decode.kernel.decode import TILED_GEMV_MAX_BATCH, tiled_gemv
from roofline_decode.kernel.probe import BandwidthReport


def wait_for_quiet(limit_s: float = 120.0) -> None:
    """Wait (up to ``limit_s``) until the CPUs are > 90% idle for 3 s: other jobs spoil timings."""
    def sample():
        with open("/proc/stat") as handle:
            values = [int(v) for v in handle.readline().split()[1:9]]
        return values[3], sum(values)
    if not os.path.exists("/proc/stat"):
        return
    quiet, deadline = 0, time.monotonic() + limit_s
    while quiet < 3 and time.monotonic() < deadline:
        idle0, total0 = sample()
        time.sleep(1.0)
        idle1, total1 = sample()
        quiet = quiet + 1 if (idle1 - idle0) >= 0.9 * max(total1 - total0, 1) else 0
    if quiet < 3:
        print(f"(the CPUs were not quiet within {limit_s:.0f} s: figures below may be pessimistic)")


def best_of(passes: int, *args, **kwargs):
    """Run the sweep ``passes`` times; keep each point's pass with the lowest median step time.

    Other jobs on a shared machine only ever add time, so the quietest pass is the best
    estimate of what the kernel does; the floor check is stricter with it, not looser.
    """
    runs = []
    for _ in range(passes):
        wait_for_quiet()
        runs.append(run_validation(*args, **kwargs))
    return [min(points, key=lambda m: m.median_s) for points in zip(*runs)]


def r_squared(x, y) -> float:
    slope, intercept = np.polyfit(x, y, 1)
    residual = np.sum((y - (slope * x + intercept)) ** 2)
    return float(1 - residual / np.sum((y - np.mean(y)) ** 2))


def skinny_matmul(rows: int, cols: int, batches, repeats: int = 5) -> dict[str, list[float]]:
    """Weight GB/s of ``X @ W`` for a (rows × cols) float32 matrix in three layouts."""
    rng = np.random.default_rng(0)
    w_in_out = rng.random((rows, cols), dtype=np.float32)  # the kernel's layout: (in, out)
    w_out_in = np.ascontiguousarray(w_in_out.T)             # PyTorch's nn.Linear layout: (out, in)
    results: dict[str, list[float]] = {
        "X @ W (in,out) GEMM": [], "X @ W.T (out,in) GEMM": [], "B GEMVs, no reuse": [], "B GEMVs per 4 MiB tile": [],
    }
    for b in batches:
        x = rng.random((b, rows), dtype=np.float32)
        cases = {
            "X @ W (in,out) GEMM": lambda: x @ w_in_out,
            "X @ W.T (out,in) GEMM": lambda: x @ w_out_in.T,
            "B GEMVs, no reuse": lambda: [x[i] @ w_in_out for i in range(b)],
            "B GEMVs per 4 MiB tile": lambda: tiled_gemv(x, w_in_out),
        }
        for name, func in cases.items():
            func()
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                func()
                times.append(time.perf_counter() - start)
            results[name].append(w_in_out.nbytes / float(np.median(times)) / 1e9)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="0.2 GB model, shorter sweeps")
    args = parser.parse_args()
    quick = args.quick
    model = validation_model(quick=quick)
    contexts = [256, 1024, 2048, 4096] if quick else [256, 2048, 4096, 8192, 12288, 16384]
    batches = [1, 2, 4, 8, 16, 32] if quick else [1, 2, 4, 8, 16, 32, 64, 128]
    short = 256

    wait_for_quiet()
    before = measure_bandwidth()
    print(f"probe (before): {before}")
    t0 = time.perf_counter()
    probe_host = host_accelerator(before)
    passes = 1 if quick else 2
    by_context = best_of(passes, model, probe_host, batch=[1], context=contexts, warmup=3, repeats=9)
    by_batch = best_of(passes, model, probe_host, batch=batches, context=[short], repeats=5)
    small = [2, 3, 4, 6, 8]
    gemm_only = best_of(passes, model, probe_host, batch=small, context=[short], repeats=5, matmul="gemm")
    tiled_only = best_of(passes, model, probe_host, batch=small, context=[short], repeats=5, matmul="tiled-gemv")
    sweep_s = time.perf_counter() - t0
    wait_for_quiet()
    after = measure_bandwidth()
    print(f"probe (after):  {after}")
    best = before if before.read_bandwidth >= after.read_bandwidth else after
    # The floor is built on the fastest single probe pass (STREAM's best rate) of either probe:
    # the kernel's figures keep each point's quietest pass too, so both sides read the machine
    # at its best.  The sustained (median) read is what "% of read" compares with.
    peak_read = max(before.peak_read_bandwidth, after.peak_read_bandwidth)
    host = host_accelerator(BandwidthReport(
        read_bandwidth=peak_read, copy_bandwidth=best.copy_bandwidth,
        fp32_flops=max(before.fp32_flops, after.fp32_flops), array_bytes=best.array_bytes,
        cache_bytes=best.cache_bytes, repeats=best.repeats, threads=best.threads, kernels=best.kernels))
    read = best.read_bandwidth
    print(f"floor bandwidth: {peak_read / 1e9:.1f} GB/s (fastest probe pass); sustained read (median): "
          f"{read / 1e9:.1f} GB/s")
    print(f"model: {model.name}, {model.streamed_parameters * 4 / 1e9:.3f} GB fp32 weights per step; "
          f"sweeps took {sweep_s:.0f} s")

    def floor_s(b, t):
        return float(decode_floor(model, host, batch=b, context=t).step_time_s)

    # figures use each point's median step time (robust to other jobs); the floor check uses
    # the fastest single step, the strictest reading
    def gbs(m):
        return (m.weight_bytes + m.kv_read_bytes + m.kv_write_bytes) / m.median_s / 1e9

    print("\n-- batch 1, context sweep (median of 9 steps) --")
    print(f"{'context':>8} {'median ms':>9} {'min ms':>7} {'floor ms':>9} {'med/floor':>9} {'GB/s':>6} {'% read':>7}")
    for m in by_context:
        f = floor_s(1, m.context)
        print(f"{m.context:>8} {m.median_s * 1e3:>9.2f} {m.min_s * 1e3:>7.2f} {f * 1e3:>9.2f} "
              f"{m.median_s / f:>9.3f} {gbs(m):>6.1f} {100 * gbs(m) * 1e9 / read:>6.0f}%")
    x = np.array([m.context for m in by_context], float)
    y = np.array([m.median_s for m in by_context])
    r2 = r_squared(x, y)
    slope = np.polyfit(x, y, 1)[0]
    print(f"step time vs context: R² = {r2:.4f} (target >= 0.98), slope {slope * 1e6:.2f} µs/token = "
          f"{model.kv_bytes_per_token / slope / 1e9:.1f} GB/s on the KV cache")
    first = min(by_context + [m for m in by_batch if m.batch == 1], key=lambda m: (m.context, m.median_s))
    print(f"batch 1 at context {first.context}: {gbs(first):.1f} GB/s = {100 * gbs(first) * 1e9 / read:.0f}% of the "
          f"probe's read bandwidth {read / 1e9:.1f} GB/s (target >= 70%)")

    print(f"\n-- batch sweep, context {short} (median of 5 steps) --")
    print(f"{'batch':>6} {'median ms':>9} {'floor ms':>9} {'med/floor':>9} {'tokens/s':>9} {'floor tok/s':>11} "
          f"{'GB/s':>6} {'GFLOP/s':>8}")
    for m in by_batch:
        f = floor_s(m.batch, short)
        print(f"{m.batch:>6} {m.median_s * 1e3:>9.2f} {f * 1e3:>9.2f} {m.median_s / f:>9.3f} {m.batch / m.median_s:>9.1f} "
              f"{m.batch / f:>11.1f} {gbs(m):>6.1f} {m.flops / m.median_s / 1e9:>8.1f}")
    rates = [m.batch / m.median_s for m in by_batch]
    saturation = next(m.batch for m, r in zip(by_batch, rates) if r >= 0.9 * max(rates))
    floor = decode_floor(model, host, batch=1, context=short)
    print(f"tokens/s: {rates[0]:.1f} at batch 1 -> {max(rates):.1f} max; saturates (>= 90% of max) at batch "
          f"{saturation}; rises at every doubling: {all(b > a for a, b in zip(rates, rates[1:]))}")
    print(f"floor: ridge point {floor.ridge_point:.2f} FLOP/B, critical batch {float(floor.critical_batch):.1f}")

    print(f"\n-- the kernel's small-batch products, context {short} (auto = tiled GEMVs up to B = {TILED_GEMV_MAX_BATCH}) --")
    print(f"{'batch':>6} {'GEMM ms':>9} {'tiled ms':>9} {'GEMM tok/s':>10} {'tiled tok/s':>11}")
    for g, t in zip(gemm_only, tiled_only):
        print(f"{g.batch:>6} {g.median_s * 1e3:>9.2f} {t.median_s * 1e3:>9.2f} {g.batch / g.median_s:>10.1f} "
              f"{t.batch / t.median_s:>11.1f}")

    ratios = [(m.min_s / floor_s(m.batch, m.context), m.batch, m.context)
              for m in by_context + by_batch + gemm_only + tiled_only]
    worst = min(ratios)
    print(f"\nfastest step relative to its floor: {worst[0]:.3f} x floor at batch {worst[1]}, context {worst[2]} "
          f"(target: every point >= 0.98)")

    wait_for_quiet()
    print("\n-- skinny matmul: weight GB/s of one (2048 x 16384) fp32 matrix (134 MB) for B rows --")
    sizes = [1, 2, 4, 8, 16, 32, 64]
    found = skinny_matmul(2048, 16384, sizes)
    print(f"{'layout':>22} " + " ".join(f"{'B=' + str(b):>7}" for b in sizes))
    for name, values in found.items():
        print(f"{name:>22} " + " ".join(f"{v:>7.1f}" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
