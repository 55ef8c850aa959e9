"""Capacity planning for a 70B model: which batch × context pairs fit, and which meet a latency target.

Shows the batch × context plane of Llama-3.1-70B with fp8 weights and fp8 KV cache on one
H200 (141 GB, 4.8 TB/s) and one MI300X (192 GB, 5.3 TB/s), shaded by verdict — fits and
memory-bound, fits and compute-bound, does not fit — with the contour where the decode step
floor (the time between two tokens of one sequence) equals a 25 ms/token target.  (In bf16
the 141 GB of weights leave an H200 little room for KV cache.)  Memory is the planning rule of
:mod:`roofline_decode.planning` (printed GB read as GiB, minus a 2 GiB reserve).  The maps show two planning lessons: long contexts run out of memory
long before batching runs out of bandwidth, and a full device reads all its memory every
step, so a latency target tighter than usable memory / bandwidth caps the batch before
capacity does.

Run: ``python examples/capacity_map_70b.py [OUTPUT_DIR]`` (or set ``ROOFLINE_EXAMPLES_OUT``;
default: ``<temp dir>/roofline_decode_examples``).  Writes ``capacity_map_70b.png``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import roofline_decode as rd  # noqa: E402
from roofline_decode.plotting import capacity_map, max_batch, save  # noqa: E402

MODEL = "llama-3.1-70b"
SLO_MS = 25.0
CASES = [("h200-sxm", "fp8", "fp8"), ("mi300x", "fp8", "fp8")]


def output_dir() -> Path:
    """First argument, else $ROOFLINE_EXAMPLES_OUT, else a folder in the temp directory."""
    default = Path(tempfile.gettempdir()) / "roofline_decode_examples"
    return Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ROOFLINE_EXAMPLES_OUT") or default)


def main() -> None:
    figure, axes = plt.subplots(1, 2, figsize=(16, 6.5), layout="constrained")
    for ax, (gpu, weights, kv) in zip(axes, CASES):
        model = rd.load_model(MODEL, weights=weights, kv=kv)
        limits = ", ".join(f"{max_batch(model, gpu, t):.0f} at {t // 1024}k" for t in (4096, 32768, 131072))
        print(f"{MODEL} ({weights} weights, {kv} KV) on {gpu}: largest batch {limits}")
        capacity_map(model, gpu, slo_ms=SLO_MS, ax=ax)
    path = save(figure, output_dir() / "capacity_map_70b.png")
    plt.close(figure)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
