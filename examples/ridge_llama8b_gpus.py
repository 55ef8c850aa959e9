"""Llama-3.1-8B on A100, H100, H200 and MI300X: where decode sits on each roofline.

Shows the decode operating points of a batch sweep (1 to 1024 sequences) at a short context
(256 tokens) and a typical one (4096 tokens) on the rooflines of four accelerators, with each
ridge point (dense bf16 peak / memory bandwidth) marked.  At 256 tokens batching carries the
step to the ridge at a critical batch of a few hundred; at 4096 tokens every sequence's KV
reads keep the arithmetic intensity near 30 FLOP/B, far below every ridge, so decode stays
memory-bound at any batch.

Run: ``python examples/ridge_llama8b_gpus.py [OUTPUT_DIR]`` (or set ``ROOFLINE_EXAMPLES_OUT``;
default: ``<temp dir>/roofline_decode_examples``).  Writes ``ridge_llama8b_gpus.png``.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import roofline_decode as rd  # noqa: E402
from roofline_decode.plotting import ridge_plot, save  # noqa: E402

MODEL = "llama-3.1-8b"
GPUS = ["a100-80gb-sxm", "h100-sxm", "h200-sxm", "mi300x"]
BATCHES = [2**k for k in range(11)]
CONTEXTS = [256, 4096]


def output_dir() -> Path:
    """First argument, else $ROOFLINE_EXAMPLES_OUT, else a folder in the temp directory."""
    default = Path(tempfile.gettempdir()) / "roofline_decode_examples"
    return Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ROOFLINE_EXAMPLES_OUT") or default)


def main() -> None:
    for floor in rd.sweep([MODEL], GPUS, batch=[1], context=CONTEXTS):
        critical = ", ".join(f"{math.ceil(b)} at {t:g} tokens" if math.isfinite(b) else f"none at {t:g} tokens"
                             for b, t in zip(floor.critical_batch.ravel(), floor.context.ravel()))
        print(f"{floor.accelerator:14s} ridge {floor.ridge_point:6.1f} FLOP/B; "
              f"batch 1 at {CONTEXTS[0]} tokens: {floor.step_time_s.ravel()[0] * 1e3:.2f} ms/step; critical batch {critical}")
    ax = ridge_plot(MODEL, GPUS, batch=BATCHES, context=CONTEXTS)
    path = save(ax, output_dir() / "ridge_llama8b_gpus.png")
    plt.close(ax.figure)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
