"""The worked example: 20 GB per step through 1 TB/s is at least 20 ms, and batching shares the pass.

Reproduces the back-of-the-envelope argument for why decode is memory-bound: "reading 20 GB
each step through 1 TB/s takes at least 20 ms, at most 50 steps/s, and batching four requests
shares that pass".  The accelerator is a custom :class:`roofline_decode.Accelerator` with
exactly 1 TB/s (and 100 TFLOP/s bf16, 80 GB); the model is a 10.4-billion-parameter dense
transformer in bf16 — Llama-3.1-8B's architecture with 43 instead of 32 layers — whose decode
step reads 19.8 GB of weights (its 20.9 GB of stored weights less the embedding table, of
which a step gathers only one row per sequence).  The floor gives ≈ 20 ms per step and ≈ 50 steps/s at batch 1; at batch 4 the
step costs the same pass (the weights are read once for all four sequences), so the aggregate
rate is four times higher while each sequence still sees ≈ 50 tokens/s.

Run: ``python examples/worked_example_20gb.py [OUTPUT_DIR]`` (or set ``ROOFLINE_EXAMPLES_OUT``;
default: ``<temp dir>/roofline_decode_examples``).  Writes ``worked_example_20gb.png``.
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
from roofline_decode.plotting import batch_plot, breakdown_plot, save  # noqa: E402
from roofline_decode.units import GB, TB, TFLOP  # noqa: E402

ACCELERATOR = rd.Accelerator(name="1 TB/s accelerator", memory_bandwidth=1 * TB, memory_capacity=80 * GB,
                             peak_flops={"bf16": 100 * TFLOP})
MODEL = rd.load_model("llama-3.1-8b").replace(num_layers=43, name="10.4B dense (Llama-3.1-8B with 43 layers)")


def output_dir() -> Path:
    """First argument, else $ROOFLINE_EXAMPLES_OUT, else a folder in the temp directory."""
    default = Path(tempfile.gettempdir()) / "roofline_decode_examples"
    return Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ROOFLINE_EXAMPLES_OUT") or default)


def main() -> None:
    print(f"model: {MODEL.name}, {MODEL.parameter_count / 1e9:.2f} B parameters, "
          f"{MODEL.weight_bytes / GB:.1f} GB of bf16 weights stored")
    floor = rd.decode_floor(MODEL, ACCELERATOR, batch=[1, 4], context=0)
    for i, batch in enumerate(floor.batch):
        print(f"batch {batch:g}: reads {floor.bytes_total[i] / GB:.2f} GB per step -> step >= "
              f"{floor.step_time_s[i] * 1e3:.2f} ms, <= {1 / floor.step_time_s[i]:.1f} steps/s; "
              f"{floor.tokens_per_s[i]:.1f} tokens/s in all, {floor.per_sequence_tokens_per_s[i]:.1f} per sequence "
              f"({floor.bound[i]}-bound)")
    print(f"batching 4 requests: {floor.tokens_per_s[1] / floor.tokens_per_s[0]:.3f}x the tokens/s "
          f"for {floor.step_time_s[1] / floor.step_time_s[0]:.4f}x the step time")

    figure, (left, right) = plt.subplots(1, 2, figsize=(15, 5.5), layout="constrained")
    batch_plot(MODEL, ACCELERATOR, batch=range(1, 65), context=0, ax=left)
    breakdown_plot(MODEL, ACCELERATOR, batch=range(1, 65), context=0, ax=right)
    path = save(figure, output_dir() / "worked_example_20gb.png")
    plt.close(figure)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
