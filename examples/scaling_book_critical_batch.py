"""The Scaling Book's critical batch: about 240 sequences for bf16 weights on a TPU v5e.

Reproduces the critical batch of "How to Scale Your Model" (Austin et al., 2025; Part 7,
"All About Transformer Inference", https://jax-ml.github.io/scaling-book/inference/): with
bf16 weights every weight byte read feeds one multiply-add per sequence, 2 FLOPs per 2 bytes,
so a decode step turns compute-bound once the batch reaches the chip's ridge point,
``B* = C / W_hbm = 1.97e14 FLOP/s / 8.2e11 B/s ≈ 240``; with int8 weights (half the bytes, the
same bf16 FLOPs) it is about 120.  The accelerator is a custom
:class:`roofline_decode.Accelerator` built from exactly the book's figures (the catalog's
``tpu-v5e`` has the datasheet's 819 GB/s).  The model is Llama-3.1-70B (the book's serving
example); the critical batch is a ratio of FLOPs to bytes, unchanged when the model is
sharded over many 16 GB chips.  The floors give 240.4 (bf16) and 120.2 (int8) at context 0 —
a little above the ratio because each sequence also gathers its own embedding row — and show
the book's caveat: the KV cache raises the critical batch with context (548 at 1024 tokens).

Run: ``python examples/scaling_book_critical_batch.py [OUTPUT_DIR]`` (or set
``ROOFLINE_EXAMPLES_OUT``; default: ``<temp dir>/roofline_decode_examples``).  Writes
``scaling_book_critical_batch.png``.
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

#: TPU v5e as the Scaling Book states it: 1.97e14 bf16 FLOP/s, 8.2e11 B/s of HBM bandwidth, 16 GB.
TPU_V5E = rd.Accelerator(name="TPU v5e (Scaling Book figures)", memory_bandwidth=8.2e11,
                         memory_capacity=16e9, peak_flops={"bf16": 1.97e14})
MODEL = "llama-3.1-70b"
CONTEXTS = [0, 1024]
BATCHES = [2**k for k in range(11)]


def output_dir() -> Path:
    """First argument, else $ROOFLINE_EXAMPLES_OUT, else a folder in the temp directory."""
    default = Path(tempfile.gettempdir()) / "roofline_decode_examples"
    return Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ROOFLINE_EXAMPLES_OUT") or default)


def main() -> None:
    print(f"ridge point of {TPU_V5E.name}: {TPU_V5E.ridge_point('bf16'):.1f} FLOP/B")
    figure, axes = plt.subplots(1, 2, figsize=(16, 6.5), layout="constrained")
    for ax, weights in zip(axes, ("bf16", "int8")):
        model = rd.load_model(MODEL, weights=weights)
        floor = rd.decode_floor(model, TPU_V5E, batch=1, context=CONTEXTS)
        cells = ", ".join(f"{b:.1f} at context {t:g}" if math.isfinite(b) else f"none at context {t:g}"
                          for b, t in zip(floor.critical_batch, floor.context))
        print(f"{weights} weights (compute in {floor.compute_precision}): critical batch {cells}")
        ridge_plot(model, TPU_V5E, batch=BATCHES, context=CONTEXTS, ax=ax)
    path = save(figure, output_dir() / "scaling_book_critical_batch.png")
    plt.close(figure)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
