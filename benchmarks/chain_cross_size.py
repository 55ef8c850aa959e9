"""Cross-size calibration with and without a per-layer latency (serial-chain issue, item 4).

The single-GPU gpt-fast rows (one A100-80GB at 330 W, batch 1, bf16 / int8 / int4-g32
weights; tests/data/measured/gpt_fast.csv) are fitted with two models of the step time by
ordinary least squares on the rows of the smaller models (7B and 8B) and asked for the rows of
the 70B models:

* per-step overhead:  T = t0          + bytes / (eta * BW)
* per-layer latency:  T = L * t_layer + bytes / (eta * BW)

Both have two parameters; only the second lets the fixed cost grow with depth (32 -> 80
layers).  The errors printed are (predicted - measured) / measured.

Then the same question through the library: ``calibrate`` on the 32-layer rows with its fixed
cost per step (``fixed_cost="step"``, issue 16's form) and per layer (the default for rows of one
depth), predicting the 80-layer rows (the "size" split of the extrapolation protocol; relative
least squares, physical bounds, model chosen by cross-validation).

Run: ``python benchmarks/chain_cross_size.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from roofline_decode import decode_floor, load_model
from roofline_decode.measure import calibrate
from roofline_decode.measure.extrapolation import protocol_splits
from roofline_decode.measure.published import load_published

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "measured" / "gpt_fast.csv"


def single_gpu_points() -> list[dict]:
    """(label, layers, memory floor [s], measured step [s]) of each distinct single-GPU row."""
    points, seen = [], set()
    for row in load_published(DATA).rows:
        if row.num_devices != 1:
            continue
        key = (row.model, str(row.weight_format))
        if key in seen:  # the README repeats its single-GPU rows in the parallelism table
            continue
        seen.add(key)
        model = load_model(row.model, weights=row.weight_format, kv=row.kv_format)
        floor = decode_floor(model, row.accelerator, batch=row.batch, context=row.context)
        points.append(dict(label=f"{row.model} {model.weight_format.name}", layers=model.num_layers,
                           memory=float(floor.memory_time_s), measured=row.batch / row.tokens_per_s))
    return points


def fit_and_predict(train: list[dict], test: list[dict], per_layer: bool) -> np.ndarray:
    """Least squares on ``train`` for (fixed cost, 1/eta); relative errors on ``test``."""
    def design(points):
        fixed = np.array([p["layers"] if per_layer else 1.0 for p in points])
        return np.column_stack([fixed, [p["memory"] for p in points]])

    y = np.array([p["measured"] for p in train])
    coef, *_ = np.linalg.lstsq(design(train), y, rcond=None)
    predicted = design(test) @ coef
    measured = np.array([p["measured"] for p in test])
    return coef, (predicted - measured) / measured


def main() -> None:
    points = single_gpu_points()
    small = [p for p in points if p["layers"] == 32]
    large = [p for p in points if p["layers"] == 80]
    print(f"fit on {len(small)} rows of 32-layer models, predict {len(large)} rows of 80-layer models")
    for per_layer, name in ((False, "per-step overhead t0"), (True, "per-layer latency t_layer")):
        (fixed, inverse_eta), errors = fit_and_predict(small, large, per_layer)
        unit = "us per layer" if per_layer else "us per step"
        print(f"\n{name}: fixed cost {fixed * 1e6:.1f} {unit}, eta {1 / inverse_eta:.3f}")
        for p, e in zip(large, errors):
            print(f"  {p['label']:<28} {100 * e:+6.1f}%")
        print(f"  median |error| {100 * np.median(np.abs(errors)):.1f}%, max {100 * np.max(np.abs(errors)):.1f}%")
    library()


def library() -> None:
    """calibrate() per step and per layer on the protocol's gpt-fast size split."""
    split = next(s for s in protocol_splits() if s.axis == "size" and s.data_set.startswith("gpt-fast"))
    print(f"\ncalibrate() on {len(split.fit)} rows ({split.description}), predicting {len(split.held_out)} rows")
    for fixed_cost in ("step", "layer"):
        cal = calibrate(list(split.fit), split.accelerator, fixed_cost=fixed_cost)
        errors = np.array([float(cal.predict(m.model, batch=m.batch, context=m.context).step_time_s) / m.step_time_s - 1
                           for m in split.held_out])
        print(f"  per {fixed_cost:5s} ({cal.model_name}): fixed cost {cal.full[0] * 1e6:.1f} us per {fixed_cost}, "
              f"eta {cal.bandwidth_efficiency:.3f}; errors " + " ".join(f"{100 * e:+.1f}%" for e in errors)
              + f"; median {100 * np.median(np.abs(errors)):.1f}%, max {100 * np.max(np.abs(errors)):.1f}%")


if __name__ == "__main__":
    main()
