"""Time one serving_floor call (a sweep of 256 concurrencies) per layout and mode; prints, asserts nothing.

The deployment search calls serving_floor once per layout x mode, vectorised over concurrency:
``python benchmarks/serving_per_call.py`` prints the mean of 50 calls (best of 3 runs).
"""

from __future__ import annotations

import time

import numpy as np

import roofline_decode as rd


def per_call(model: rd.Model, concurrency: np.ndarray, repeats: int = 50, **options: object) -> float:
    rd.serving_floor(model, "h100-sxm", concurrency, 4096, 512, **options)  # warm the caches
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeats):
            rd.serving_floor(model, "h100-sxm", concurrency, 4096, 512, **options)
        best = min(best, (time.perf_counter() - start) / repeats)
    return best


def decode_per_call(model: rd.Model, concurrency: np.ndarray, repeats: int = 50) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeats):
            rd.decode_floor(model, "h100-sxm", concurrency, 4096)
        best = min(best, (time.perf_counter() - start) / repeats)
    return best


def main() -> None:
    concurrency = np.arange(1, 257, dtype=float)
    reference = decode_per_call(rd.load_model("llama-3.1-8b"), concurrency)
    print(f"reference: decode_floor over the same 256 batches {reference * 1e3:.3f} ms per call "
          "(the machine's speed; ratios below)")
    for name in ("llama-3.1-8b", "qwen3-235b-a22b"):
        model = rd.load_model(name)
        layouts = [None, "tp2", "tp8"] if not model.is_moe else [None, "tp8", "tp8ep8"]
        for parallel in layouts:
            for mode in ("aggregated", "disaggregated"):
                try:
                    seconds = per_call(model, concurrency, parallel=parallel, mode=mode)
                except rd.InvalidValueError as exc:
                    print(f"{name:16} {str(parallel):8} {mode:14} refused: {exc}")
                    continue
                print(f"{name:16} {str(parallel):8} {mode:14} {seconds * 1e3:7.3f} ms per call (256 concurrencies), "
                      f"{seconds / reference:4.1f} x decode_floor")


if __name__ == "__main__":
    main()
