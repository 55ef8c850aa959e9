"""Benchmark: decode_floor throughput on a large (batch, context) grid, and import time.

Targets: >= 5 million grid points per second on a 2-core machine for a 1,000 x 1,000 grid
(issue 2; issue 18 keeps it >= 20 M with routing, fits and notes); ``import roofline_decode``
under 0.25 s.  Per-call times are in ``per_call.py``.  Prints figures; asserts nothing.

Run: ``python benchmarks/decode_floor_throughput.py``
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import numpy as np


def time_import(repeats: int = 5, statement: str = "import roofline_decode") -> float:
    """Median wall time of ``statement`` in fresh interpreters [s]."""
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    samples = [float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(repeats)]
    return statistics.median(samples)


def time_grid(model: str, gpu: str, side: int = 1000, repeats: int = 7) -> tuple[float, int]:
    """Median seconds for one decode_floor call on a side x side grid, and the point count."""
    import roofline_decode as rd

    batch = np.arange(1, side + 1, dtype=float)[:, None]
    context = np.linspace(0, 131072, side)[None, :]
    model_spec, device = rd.load_model(model), rd.load_accelerator(gpu)
    rd.decode_floor(model_spec, device, batch, context)  # warm up (page faults, caches)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        rd.decode_floor(model_spec, device, batch, context)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), side * side


def main() -> None:
    print(f"import roofline_decode: {time_import() * 1e3:.1f} ms (median of 5 fresh interpreters; target < 250 ms)")
    # the names load lazily: numpy, pydantic and the catalog are paid for at first use
    first = "import roofline_decode as rd; rd.decode_floor('llama-3.1-8b', 'h100-sxm')"
    print(f"import + first decode_floor (numpy, pydantic, one model and one spec file): {time_import(3, first) * 1e3:.0f} ms")
    for model in ("llama-3.1-8b", "mixtral-8x7b", "deepseek-v3"):
        try:
            seconds, points = time_grid(model, "h100-sxm")
        except Exception as exc:  # a model family not yet supported by this checkout
            print(f"{model}: skipped ({exc})")
            continue
        print(f"decode_floor {model} on h100-sxm, {points:,} points: {seconds * 1e3:.1f} ms "
              f"-> {points / seconds / 1e6:.1f} M points/s (target >= 20 on an unloaded machine)")


if __name__ == "__main__":
    main()
