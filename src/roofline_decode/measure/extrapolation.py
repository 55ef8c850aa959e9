"""The extrapolation protocol: how well does a calibration predict runs it has not seen?

Three splits, each run on the published measurements shipped with the library
(``shared/reference/measured/``, copied to ``tests/data/measured``), per data set (one device,
one engine, one campaign):

* **batch** — fit on the rows with batch B <= 8, predict the rows with 16 <= B <= 64;
* **context** — fit on the rows at the two shortest contexts, predict the rows whose context
  is 4 to 16 times the longest fitted one;
* **format** — with three weight formats of one model, fit on two and predict the third (each
  format held out in turn);
* **size** — with models of several depths (layers L), fit on the rows of the shallowest model(s)
  and predict those of the deepest: the fixed cost of a step must transfer to another depth.

A data set enters a split only where it has rows on both sides.  Per split and data set the
protocol reports the held-out rows' relative errors (predicted / measured - 1: median, 90th
percentile and maximum of the absolute value) and the fraction of held-out rows inside the
prediction band.  What the shipped data holds (and lacks) is listed in
``docs/how_close_is_the_floor.md``.

Examples
--------
>>> sorted({(s.axis, s.data_set) for s in protocol_splits()})[:2]
[('batch', 'knlp B200 Qwen2.5-7B (HF eager)'), ('batch', 'knlp H100 Qwen2.5-7B + Llama-3.1-8B (HF eager)')]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..specs.accelerator import Accelerator
from .calibrate import Measurement, calibrate
from .published import load_published
from .rows import MeasurementRow

__all__ = ["DataSet", "Split", "SplitResult", "data_sets", "protocol_splits", "run_protocol", "measured_dir",
           "BATCH_FIT_MAX", "BATCH_HELD_OUT", "CONTEXT_RATIO"]

#: Batch split: fit on B <= 8, predict 16 <= B <= 64.
BATCH_FIT_MAX = 8
BATCH_HELD_OUT = (16, 64)
#: Context split: predict contexts 4x to 16x the longest fitted one.
CONTEXT_RATIO = (4, 16)


def measured_dir() -> Path:
    """The folder holding the published CSVs: ``tests/data/measured`` of a source checkout."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "tests" / "data" / "measured"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("tests/data/measured not found: the protocol runs from a source checkout")


@dataclass(frozen=True)
class DataSet:
    """Rows of one device, engine and campaign, as :class:`Measurement` objects."""

    name: str
    accelerator: Any
    rows: tuple[MeasurementRow, ...]
    measurements: tuple[Measurement, ...]


@dataclass(frozen=True)
class _SplitName:
    """The axis a split extrapolates along, its data set and its description."""

    axis: str
    data_set: str
    description: str


@dataclass(frozen=True)
class Split(_SplitName):
    """One fit / held-out partition of a data set."""

    accelerator: Any
    fit: tuple[Measurement, ...]
    held_out: tuple[Measurement, ...]


@dataclass(frozen=True)
class SplitResult(_SplitName):
    """Held-out errors of one split (several splits of an axis and data set are pooled)."""

    errors: np.ndarray
    inside: np.ndarray
    n_fit: int
    chosen: tuple[str, ...]
    units: tuple[str, ...] = ()

    @property
    def median(self) -> float:
        return float(np.median(np.abs(self.errors)))

    @property
    def p90(self) -> float:
        return float(np.percentile(np.abs(self.errors), 90))

    @property
    def max(self) -> float:
        return float(np.max(np.abs(self.errors)))

    @property
    def coverage(self) -> float:
        """Fraction of held-out rows inside the band (NaN bands count as outside)."""
        return float(np.mean(self.inside))

    def to_record(self) -> dict[str, Any]:
        return {"axis": self.axis, "data_set": self.data_set, "description": self.description,
                "fit_rows": self.n_fit, "held_out_rows": int(self.errors.size), "median": self.median,
                "p90": self.p90, "max": self.max, "coverage": self.coverage, "models": list(self.chosen),
                "fixed_cost": list(self.units)}


def _measurement(row: MeasurementRow) -> Measurement:
    from .compare import resolve_model

    model = resolve_model(row.model, row.weight_format, row.kv_format)
    return Measurement(model=model, batch=row.batch, context=row.context, step_time_s=row.step_time,
                       tensor_parallel=row.num_devices)


def _data_set(name: str, rows: list[MeasurementRow]) -> DataSet:
    return DataSet(name=name, accelerator=rows[0].accelerator, rows=tuple(rows),
                   measurements=tuple(_measurement(r) for r in rows))


def data_sets(folder: str | Path | None = None) -> dict[str, DataSet]:
    """The shipped data sets the protocol uses, by name (see the module docstring)."""
    folder = Path(folder) if folder is not None else measured_dir()
    knlp = load_published(folder / "knlp_full_model_decode.csv").rows
    gpt_fast = load_published(folder / "gpt_fast.csv").rows
    exllama = load_published(folder / "exllama.csv").rows

    def device(row: MeasurementRow) -> str | None:
        return row.accelerator.id if isinstance(row.accelerator, Accelerator) else row.accelerator

    out = {
        "knlp B200 Qwen2.5-7B (HF eager)": [r for r in knlp if device(r) == "b200" and r.label.startswith("b200_exp")],
        "knlp H100 Qwen2.5-7B + Llama-3.1-8B (HF eager)": [r for r in knlp if r.label.startswith("h100_latency_prime")],
        "gpt-fast A100 Llama-2-7B x1": [r for r in gpt_fast if r.model == "llama-2-7b" and device(r) == "a100-80gb-sxm"
                                        and r.num_devices == 1],
        "gpt-fast A100 Llama-2-70B x8": [r for r in gpt_fast if r.model == "llama-2-70b" and r.num_devices == 8],
        "gpt-fast A100 Llama 7B/8B/70B x1": [r for r in gpt_fast if device(r) == "a100-80gb-sxm" and r.num_devices == 1],
        "ExLlamaV2 RTX 3090 Ti Llama-2-7B EXL2": [r for r in exllama if device(r) == "rtx-3090-ti"
                                                  and r.label.startswith("exllamav2 Llama2 7B exl2")],
        "ExLlamaV2 RTX 4090 Llama-2-7B EXL2": [r for r in exllama if device(r) == "rtx-4090"
                                               and r.label.startswith("exllamav2 Llama2 7B exl2")],
        "ExLlama RTX 4090 LLaMA 7B/13B GPTQ": [r for r in exllama if r.label.startswith("exllama ")],
    }
    return {name: _data_set(name, _unique(rows)) for name, rows in out.items() if rows}


def _unique(rows: list[MeasurementRow]) -> list[MeasurementRow]:
    """Drop exact repeats (a table printed twice in one source), keep the first."""
    seen: set[tuple[object, ...]] = set()
    out: list[MeasurementRow] = []
    for r in rows:
        key = (r.model, str(r.weight_format), str(r.kv_format), r.batch, r.context, r.num_devices, r.step_time, r.label)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def _split(axis: str, ds: DataSet, description: str, fit_mask: Sequence[bool] | np.ndarray,
           held_mask: Sequence[bool] | np.ndarray) -> Split | None:
    fit = tuple(m for m, keep in zip(ds.measurements, fit_mask) if keep)
    held = tuple(m for m, keep in zip(ds.measurements, held_mask) if keep)
    if len(fit) < 2 or not held:
        return None
    return Split(axis=axis, data_set=ds.name, description=description, accelerator=ds.accelerator, fit=fit, held_out=held)


def protocol_splits(folder: str | Path | None = None) -> list[Split]:
    """Every split of the protocol that the shipped data supports."""
    splits: list[Split | None] = []
    for ds in data_sets(folder).values():
        batch = np.array([m.batch for m in ds.measurements])
        context = np.array([m.context for m in ds.measurements])
        lo, hi = BATCH_HELD_OUT
        splits.append(_split("batch", ds, f"fit B <= {BATCH_FIT_MAX}, predict {lo} <= B <= {hi}",
                             batch <= BATCH_FIT_MAX, (batch >= lo) & (batch <= hi)))
        contexts = np.unique(context)
        if contexts.size >= 3:
            longest_fit = contexts[1]
            r0, r1 = CONTEXT_RATIO
            splits.append(_split(
                "context", ds, f"fit T <= {longest_fit:g}, predict {r0 * longest_fit:g} <= T <= {r1 * longest_fit:g}",
                context <= longest_fit, (context >= r0 * longest_fit) & (context <= r1 * longest_fit)))
        names = sorted({m.model.weight_format.name for m in ds.measurements})
        if len(names) == 3 and len({m.model.name for m in ds.measurements}) == 1:
            for held_name in names:
                is_held = np.array([m.model.weight_format.name == held_name for m in ds.measurements])
                splits.append(_split("format", ds, "fit two weight formats, predict the third", ~is_held, is_held))
        layers = np.array([m.model.num_layers for m in ds.measurements])
        depths = np.unique(layers)
        if depths.size >= 2:
            splits.append(_split("size", ds, f"fit L = {depths[0]}, predict L = {depths[-1]}",
                                 layers == depths[0], layers == depths[-1]))
    return [s for s in splits if s is not None]


Fit = Callable[..., Any]


def run_protocol(splits: list[Split], fit: Fit = calibrate, level: float = 0.9) -> list[SplitResult]:
    """Fit each split with ``fit(measurements, accelerator, level=level)`` and score its held-out rows.

    Splits of the same axis and data set (the three format hold-outs) are pooled into one result.
    """
    pooled: dict[tuple[str, str], dict[str, Any]] = {}
    for split in splits:
        calibration = fit(list(split.fit), split.accelerator, level=level)
        errors, inside = [], []
        for m in split.held_out:
            p = calibration.predict(m.model, batch=m.batch, context=m.context, tensor_parallel=m.tensor_parallel)
            step, lower, upper = float(p.step_time_s), float(p.lower_s), float(p.upper_s)
            errors.append(step / m.step_time_s - 1.0)
            inside.append(bool(lower <= m.step_time_s <= upper))
        entry = pooled.setdefault((split.axis, split.data_set), {
            "description": split.description, "errors": [], "inside": [], "n_fit": 0, "chosen": [], "units": []})
        entry["errors"] += errors
        entry["inside"] += inside
        entry["n_fit"] = max(entry["n_fit"], len(split.fit))
        entry["chosen"].append(getattr(calibration, "model_name", "t0 + bytes/(eta BW)"))
        entry["units"].append(getattr(calibration, "fixed_cost", "step"))
    return [SplitResult(axis=axis, data_set=name, description=e["description"], errors=np.array(e["errors"]),
                        inside=np.array(e["inside"]), n_fit=e["n_fit"], chosen=tuple(e["chosen"]), units=tuple(e["units"]))
            for (axis, name), e in pooled.items()]
