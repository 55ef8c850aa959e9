"""Measurement subcommands: ``compare`` (measured vs floor), ``calibrate`` (fit, and predict the
rows) and ``predict`` (a saved calibration at new batches and contexts)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import Subparsers, add_routing_argument, emit_records, number_list, whole_number, jsonable
from ..errors import InvalidValueError
from ..floors.grid import DEFAULT_CONTEXT
from ..units import format_table

if TYPE_CHECKING:
    from ..measure.calibrate import CalibratedPrediction
    from ..measure.compare import Comparison
    from ..measure.rows import MeasurementRow
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model


def register(subparsers: Subparsers) -> None:
    compare = subparsers.add_parser("compare", help="measured decode timings next to their floors")
    _common(compare)
    compare.add_argument("--tolerance", type=float, default=0.0,
                         help="relative slack before a row below its floor is flagged (default 0)")
    add_routing_argument(compare)
    compare.add_argument("--format", choices=("table", "json", "csv"), default="table")
    compare.set_defaults(handler=run_compare)

    calibrate = subparsers.add_parser(
        "calibrate", help="fit efficiencies and overheads to measured runs (engine outputs accepted); predict the rest")
    _common(calibrate)
    add_routing_argument(calibrate)
    calibrate.add_argument("--fit-rows", metavar="I,J,...",
                           help="1-based rows to fit on (default: all); the others are predicted")
    calibrate.add_argument("--weighting", choices=("relative", "absolute"), default="relative")
    calibrate.add_argument("--fixed-cost", choices=("auto", "layer", "step"), default="auto",
                           help="unit of the fixed cost t0: per layer of the model predicted, per step, or auto "
                                "(per layer when the rows share one depth, else chosen by cross-validation)")
    calibrate.add_argument("--level", type=float, default=0.9, help="coverage of the prediction band (default 0.9)")
    calibrate.add_argument("--format", choices=("table", "json"), default="table")
    calibrate.add_argument("--save", metavar="FIT.json", help="write the calibration for `predict --calibration`")
    calibrate.set_defaults(handler=run_calibrate)

    predict = subparsers.add_parser(
        "predict", help="calibrated step times with bands from a saved calibration, or expected ones from an engine "
                        "profile (updated by your runs)")
    predict.add_argument("--calibration", metavar="FIT.json", help="written by `calibrate --save`")
    predict.add_argument("--engine", metavar="NAME", help="an engine profile instead of a calibration (llama.cpp-cuda, "
                                                          "vllm, ...; with --gpu)")
    predict.add_argument("--gpu", metavar="ID", help="accelerator id or spec TOML (with --engine)")
    predict.add_argument("--runs", nargs="+", metavar="FILE",
                         help="with --engine: your measured runs of this model on this device (any file `calibrate` "
                              "reads); they update the profile's scale and narrow the band")
    predict.add_argument("--model", required=True, help="catalog model id or path to a config.json")
    predict.add_argument("--weights", metavar="FMT", help="weight format (default: the model's)")
    predict.add_argument("--kv", metavar="FMT", help="KV-cache format (default: the model's)")
    predict.add_argument("--batch", type=number_list, default=[1], help="comma-separated batch sizes (default 1)")
    predict.add_argument("--context", type=number_list, default=[DEFAULT_CONTEXT],
                         help=f"comma-separated contexts (default {DEFAULT_CONTEXT}, as Calibration.predict)")
    predict.add_argument("--tp", type=whole_number("--tp", 1), default=1, help="tensor-parallel devices (default 1)")
    predict.add_argument("--pp", type=whole_number("--pp", 1), default=1, help="pipeline stages (default 1)")
    add_routing_argument(predict)
    predict.add_argument("--format", choices=("table", "json", "csv"), default="table")
    predict.set_defaults(handler=run_predict)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="measurement CSV/JSON, a published CSV, or engine output: llama-bench (json, jsonl, csv, "
                             "md), llama-batched-bench (table, jsonl), vLLM / SGLang serving results, SGLang "
                             "bench_one_batch jsonl")
    parser.add_argument("--model", help="model id or config.json for every row (default: each row's model)")
    parser.add_argument("--gpu", help="accelerator id or spec TOML for every row (default: each row's)")
    parser.add_argument("--weights", metavar="FMT", help="weight format for rows that do not state one")
    parser.add_argument("--kv", metavar="FMT", help="KV-cache format for rows that do not state one")
    parser.add_argument("--tp", type=whole_number("--tp", 1), default=None,
                        help="tensor-parallel devices of rows that do not state them")
    parser.add_argument("--pp", type=whole_number("--pp", 1), default=None,
                        help="pipeline stages of rows that do not state them")
    parser.add_argument("--plot", metavar="PNG", help="also write a plot of measured vs floor (vs calibrated)")


def _read(args: argparse.Namespace) -> list[MeasurementRow]:
    from ..measure.engines import engine_layout, load_engine_results
    from ..measure.published import load_published, published_layout
    from ..measure.rows import load_measurements

    defaults = {"weight_format": args.weights, "kv_format": args.kv, "num_devices": args.tp,
                "pipeline_parallel": args.pp}
    rows: list[MeasurementRow] = []
    args.skipped = []  # the skipped rows are summarised in one line once the command succeeds
    for path in args.files:
        if published_layout(path):  # these state their own device counts
            found = load_published(path)
            formats = {"weight_format": args.weights, "kv_format": args.kv}
            found.rows = [r.replace(**{k: v for k, v in formats.items() if v is not None and getattr(r, k) is None})
                          for r in found.rows]
        elif engine_layout(path):
            found = load_engine_results(path, **defaults)
        else:
            rows += load_measurements(path, **defaults)
            continue
        args.skipped += found.skipped
        rows += found.rows
    return rows


def _device_id(device: Accelerator | str | None) -> str | None:
    return device if isinstance(device, str) or device is None else (device.id or device.name)


def model_id_of(model: Model | str | None) -> str | None:
    return model if isinstance(model, str) or model is None else model.name


def _select(rows: list[MeasurementRow], args: argparse.Namespace
            ) -> tuple[list[MeasurementRow], Accelerator | str | None, str | None]:
    """Rows measured on --gpu / with --model when some rows match; otherwise the options
    override every row.  Returns (rows, device to use or None, model to use or None).

    With --model, rows that state no model (llama-bench output) take it, and rows of another
    model are left out and listed among the skipped rows (once silently dropped when a file
    beside them stated the model).  Without --model, a row that states no model is refused,
    naming it."""
    device, model = args.gpu, args.model
    if device is not None:
        matching = [r for r in rows if _device_id(r.accelerator) == device]
        if matching:
            rows = matching
            device = next((r.accelerator for r in matching if not isinstance(r.accelerator, str)), device)
    if model is not None:
        if any(model_id_of(r.model) == model for r in rows):
            others = [r for r in rows if r.model is not None and model_id_of(r.model) != model]
            args.skipped = list(getattr(args, "skipped", [])) + [
                (r.source or r.describe(), f"model {model_id_of(r.model)}, not --model {model}") for r in others]
            rows = [r if r.model is not None else r.replace(model=model) for r in rows
                    if r.model is None or model_id_of(r.model) == model]
            model = None
    else:
        missing = [r for r in rows if r.model is None]
        if missing:
            named = ", ".join(r.source or r.describe() for r in missing[:3]) + (" ..." if len(missing) > 3 else "")
            raise InvalidValueError("--model", None, f"a model for the {len(missing)} row(s) that state none ({named})")
    if not rows:
        raise InvalidValueError("file", " ".join(args.files), "at least one measurement row")
    return rows, device, model


def _report_skipped(args: argparse.Namespace) -> None:
    """One stderr line summarising the rows a published file had that could not be placed."""
    skipped = getattr(args, "skipped", [])
    if skipped:
        shown = "; ".join(f"{where}: {reason}" for where, reason in skipped[:3])
        more = f"; and {len(skipped) - 3} more" if len(skipped) > 3 else ""
        files = ", ".join(Path(f).name for f in args.files)
        print(f"skipped {len(skipped)} row(s) of {files}: {shown}{more}", file=sys.stderr)


def _plot_path(text: str | None) -> Path | None:
    """The file --plot writes (``.png`` added when it has no suffix, as matplotlib does), checked
    before any work: not empty, not a folder, in a folder that exists."""
    if text is None:
        return None
    path = Path(text)
    if not text.strip() or text.endswith(("/", "\\")) or path.is_dir():
        raise InvalidValueError("--plot", text, "a file name such as plot.png (not empty, not a folder)")
    if not path.suffix:
        path = path.with_name(path.name + ".png")
    if not path.parent.is_dir():
        raise InvalidValueError("--plot", text, f"a file in an existing folder ({path.parent} does not exist)")
    return path


def _plot(path: Path, comparison: Comparison, predictions: Sequence[CalibratedPrediction] | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from ..measure.plot import plot_measurements

    ax = plot_measurements(comparison, predictions)
    figure = ax.figure
    assert isinstance(figure, Figure)  # plot_measurements drew on a new figure of its own
    figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(figure)
    print(f"plot written to {path}", file=sys.stderr)


def run_compare(args: argparse.Namespace) -> int:
    from ..measure.compare import compare

    plot_path = _plot_path(args.plot)
    rows, device, model = _select(_read(args), args)
    # --routing uniform (the default) leaves each row's own routing; another value sets every row's
    comparison = compare(rows, model, device, tolerance=args.tolerance,
                         routing=None if args.routing == "uniform" else args.routing)
    if args.format == "table":
        from ..measure.compare import FASTER_THAN_UNIFORM

        print(comparison)
        bad = comparison.impossible
        if bad:
            print(f"\n{len(bad)} row(s) faster than the strict floor: check units, early stop, or caching")
        skewed = [c for c in comparison if FASTER_THAN_UNIFORM in c.flags]
        if skewed:
            print(f"\n{len(skewed)} MoE row(s) between the strict (identical-routing) and the uniform-routing floor: "
                  "possible with correlated or skewed routing")
    else:
        records = comparison.to_records()
        if args.format == "csv":
            for record in records:
                record["flags"] = "; ".join(record["flags"])
        print(emit_records(records, args.format))
    if plot_path:
        _plot(plot_path, comparison)
    _report_skipped(args)
    return 0


def _indices(text: str | None, n: int) -> list[int]:
    if not text:
        return list(range(n))
    try:
        picked = [int(part) - 1 for part in text.split(",") if part.strip()]
    except ValueError:
        raise InvalidValueError("--fit-rows", text, "comma-separated 1-based row numbers") from None
    bad = [i + 1 for i in picked if not 0 <= i < n]
    if bad:
        raise InvalidValueError("--fit-rows", bad[0], f"row numbers between 1 and {n}")
    return sorted(set(picked))


def run_calibrate(args: argparse.Namespace) -> int:
    from ..measure.calibrate import Measurement, calibrate
    from ..measure.compare import compare, resolve_accelerator, resolve_model

    plot_path = _plot_path(args.plot)
    if args.save is not None:  # checked before any work, like --plot
        save = Path(args.save)
        if not args.save.strip() or save.is_dir() or not save.parent.is_dir():
            raise InvalidValueError("--save", args.save, "a file name such as fit.json in an existing folder")
    rows, device, model = _select(_read(args), args)
    rows = [r for r in rows if r.scope == "decode_step"]
    if not rows:
        raise InvalidValueError("file", " ".join(args.files), "full decode-step rows to calibrate (not kernel timings)")
    if device is None:
        devices = {_device_id(r.accelerator) for r in rows}
        if len(devices) != 1:
            raise InvalidValueError("--gpu", None, f"one device; the rows were measured on {', '.join(map(str, sorted(devices, key=str)))}")
        device = rows[0].accelerator
    device = resolve_accelerator(device)
    models = [resolve_model(model or r.model, r.weight_format, r.kv_format) for r in rows]
    fit_rows = _indices(args.fit_rows, len(rows))
    routing = [args.routing if args.routing != "uniform" else r.routing for r in rows]
    measurements = [Measurement(model=models[i], batch=rows[i].batch, context=rows[i].context,
                                step_time_s=rows[i].step_time, tensor_parallel=rows[i].num_devices,
                                pipeline_parallel=rows[i].pipeline_parallel, routing=routing[i]) for i in fit_rows]
    calibration = calibrate(measurements, device, weighting=args.weighting, level=args.level,
                            fixed_cost=args.fixed_cost)
    predictions = [calibration.predict(m, batch=r.batch, context=r.context, tensor_parallel=r.num_devices,
                                       pipeline_parallel=r.pipeline_parallel, routing=g)
                   for m, r, g in zip(models, rows, routing)]
    comparison = compare(rows, model, device, routing=None if args.routing == "uniform" else args.routing)
    left_out = {fit_rows[j] for j, _ in calibration.excluded}
    records = []
    for i, (row, c, p) in enumerate(zip(rows, comparison, predictions)):
        records.append({
            "row": i + 1, "label": row.describe(), "fitted": i in fit_rows and i not in left_out,
            "left_out": i in left_out,
            "measured_step_time_s": row.step_time, "floor_step_time_s": c.floor_step_time_s,
            "calibrated_step_time_s": float(p.step_time_s), "lower_s": float(p.lower_s), "upper_s": float(p.upper_s),
            "relative_error": float(p.step_time_s) / row.step_time - 1.0,
        })
    if args.format == "json":
        payload = {"calibration": calibration.to_dict(),
                   "rows": [{k: jsonable(v) for k, v in r.items()} for r in records]}
        print(json.dumps(payload, indent=2))
    else:
        print(calibration)
        print()
        print(_table(records))
    if plot_path:
        _plot(plot_path, comparison, predictions)
    if args.save:
        try:
            calibration.save(args.save)
        except OSError as exc:
            raise InvalidValueError("--save", args.save, f"a writable path ({exc.strerror or exc})") from None
        print(f"calibration written to {args.save}", file=sys.stderr)
    _report_skipped(args)
    return 0


def _expected_from_runs(args: argparse.Namespace) -> int:
    """``predict --engine NAME --gpu ID [--runs FILE...]``: the profile's expectation, updated by the runs."""
    import numpy as np

    from ..catalog import load_accelerator, load_model
    from ..measure.expected import UserRun, expected

    if args.gpu is None:
        raise InvalidValueError("--gpu", None, "the accelerator to expect on (with --engine)")
    model = load_model(args.model, weights=args.weights, kv=args.kv)
    device = load_accelerator(args.gpu)
    runs = []
    if args.runs:
        reader = argparse.Namespace(files=args.runs, weights=args.weights, kv=args.kv, tp=None, pp=None)
        rows = _read(reader)
        others = [r for r in rows if r.accelerator is not None and _device_id(r.accelerator) != (device.id or device.name)]
        if others:
            print(f"left out {len(others)} run(s) measured on another device (first: {others[0].source or others[0].describe()})",
                  file=sys.stderr)
        runs = [UserRun(batch=r.batch, context=r.context, step_time_s=r.step_time,
                        model=None if r.model is None else load_model(r.model, weights=r.weight_format, kv=r.kv_format))
                for r in rows if r not in others and r.scope == "decode_step"]
        if not runs:
            raise InvalidValueError("--runs", " ".join(args.runs), f"decode-step runs on {device.id or device.name}")
    batch = np.asarray(args.batch, dtype=float)[:, None]
    context = np.asarray(args.context, dtype=float)[None, :]
    e = expected(model, device, batch=batch, context=context, engine=args.engine, tensor_parallel=args.tp,
                 pipeline_parallel=args.pp, routing=args.routing, runs=runs or None)
    records = [{"model": model.name, "accelerator": device.id or device.name, "engine": args.engine,
                "batch": float(args.batch[i]), "context": float(args.context[j]),
                "floor_step_time_s": float(e.floor_step_time_s[i, j]), "expected_step_time_s": float(e.step_time_s[i, j]),
                "lower_s": float(e.lower_s[i, j]), "upper_s": float(e.upper_s[i, j]),
                "tokens_per_s": float(e.tokens_per_s[i, j]), "fits": bool(e.fits[i, j]), "basis": e.basis,
                "label": e.label} for i, j in np.ndindex(e.step_time_s.shape)]
    print(emit_records(records, args.format) if args.format != "table" else expected_table(records))
    return 0


def run_predict(args: argparse.Namespace) -> int:
    import numpy as np

    from ..catalog import load_model
    from ..measure.calibration_io import load_calibration

    if (args.calibration is None) == (args.engine is None):
        raise InvalidValueError("--calibration/--engine", args.calibration or args.engine,
                                "exactly one of them: a saved calibration or an engine profile")
    if args.engine is not None:
        return _expected_from_runs(args)
    if args.runs or args.gpu:
        raise InvalidValueError("--runs/--gpu", args.gpu or " ".join(args.runs), "only with --engine")
    calibration = load_calibration(args.calibration)
    model = load_model(args.model, weights=args.weights, kv=args.kv)
    batch = np.asarray(args.batch, dtype=float)[:, None]
    context = np.asarray(args.context, dtype=float)[None, :]
    p = calibration.predict(model, batch=batch, context=context, tensor_parallel=args.tp,
                            pipeline_parallel=args.pp, routing=args.routing)
    shape = p.step_time_s.shape
    records = []
    for i, j in np.ndindex(shape):
        records.append({
            "model": model.name, "weight_format": model.weight_format.name, "kv_format": model.kv_format.name,
            "accelerator": calibration.accelerator.id or calibration.accelerator.name, "tp": args.tp, "pp": args.pp,
            "batch": float(args.batch[i]), "context": float(args.context[j]),
            "floor_step_time_s": float(p.floor_step_time_s[i, j]), "step_time_s": float(p.step_time_s[i, j]),
            "lower_s": float(p.lower_s[i, j]), "upper_s": float(p.upper_s[i, j]),
            "tokens_per_s": float(p.tokens_per_s[i, j]), "bound": str(p.bound[i, j]),
            "fits": bool(p.fits[i, j]),
        })
    if not all(r["fits"] for r in records):
        print(f"{sum(not r['fits'] for r in records)} point(s) do not fit the usable memory of {args.tp * args.pp} x "
              f"{records[0]['accelerator']} (weights + KV of the batch): no such run exists", file=sys.stderr)
    if args.format != "table":
        print(emit_records(records, args.format))
        return 0
    print(f"{model.name} ({model.weight_format.name} weights, {model.kv_format.name} KV) on "
          f"{args.tp * args.pp} x {records[0]['accelerator']}: calibration {calibration.model_name}, "
          f"band {calibration.level:.0%}, fixed cost {calibration.fixed_cost_s(model) * 1e3:.4g} ms per step "
          f"(per {calibration.fixed_cost}{f', L = {model.num_layers}' if calibration.fixed_cost == 'layer' else ''})")
    headers = ["B", "T", "floor ms", "calibrated ms", "band ms", "tok/s", "bound", "fits"]
    lines = []
    for r in records:
        band = "-" if r["lower_s"] != r["lower_s"] else f"{r['lower_s'] * 1e3:.4g}..{r['upper_s'] * 1e3:.4g}"
        lines.append([f"{r['batch']:g}", f"{r['context']:g}", f"{r['floor_step_time_s'] * 1e3:.4g}",
                      f"{r['step_time_s'] * 1e3:.4g}", band, f"{r['tokens_per_s']:.4g}", r["bound"],
                      "yes" if r["fits"] else "NO"])
    print(format_table(headers, lines))
    return 0


def _table(records: list[dict[str, Any]]) -> str:
    headers = ["#", "row", "fit", "measured ms", "floor ms", "calibrated ms", "band ms", "error"]
    lines: list[list[str]] = []
    for r in records:
        band = ("-" if r["lower_s"] != r["lower_s"]
                else f"{r['lower_s'] * 1e3:.4g}..{r['upper_s'] * 1e3:.4g}")
        lines.append([str(r["row"]), r["label"], "yes" if r["fitted"] else ("left out" if r.get("left_out") else ""), f"{r['measured_step_time_s'] * 1e3:.4g}",
                      f"{r['floor_step_time_s'] * 1e3:.4g}", f"{r['calibrated_step_time_s'] * 1e3:.4g}", band,
                      f"{r['relative_error']:+.1%}"])
    return format_table(headers, lines)


def expected_records(model: Model, gpus: Sequence[str], batch: Sequence[float], context: Sequence[float],
                     engine: str, routing: str | float = "uniform", parallel: Any = None) -> list[dict[str, Any]]:
    """One record per device, batch and context: the floor, the expected step time and its band
    (``parallel``: a tensor x pipeline layout, or None for one device)."""
    import numpy as np

    from ..measure.expected import expected

    records = []
    for gpu in gpus:
        e = expected(model, gpu, batch=np.asarray(batch, dtype=float)[:, None],
                     context=np.asarray(context, dtype=float)[None, :], engine=engine, routing=routing,
                     parallel=parallel)
        for i, j in np.ndindex(e.step_time_s.shape):
            records.append({
                "model": model.name, "accelerator": gpu, "engine": engine, "batch": float(batch[i]),
                "context": float(context[j]), "floor_step_time_s": float(e.floor_step_time_s[i, j]),
                "expected_step_time_s": float(e.step_time_s[i, j]), "lower_s": float(e.lower_s[i, j]),
                "upper_s": float(e.upper_s[i, j]), "tokens_per_s": float(e.tokens_per_s[i, j]),
                "fits": bool(e.fits[i, j]), "basis": e.basis, "label": e.label,
            })
    return records


def expected_table(records: list[dict[str, Any]]) -> str:
    """The ``floor --engine`` table: expected step time with its 90 % band beside the floor."""
    headers = ["gpu", "B", "T", "floor ms", "expected ms", "90% band ms", "tok/s", "fits"]
    lines = [[r["accelerator"], f"{r['batch']:g}", f"{r['context']:g}", f"{r['floor_step_time_s'] * 1e3:.4g}",
              f"{r['expected_step_time_s'] * 1e3:.4g}", f"{r['lower_s'] * 1e3:.4g}..{r['upper_s'] * 1e3:.4g}",
              f"{r['tokens_per_s']:.4g}", "yes" if r["fits"] else "NO"] for r in records]
    labels = dict.fromkeys(f"{r['accelerator']}: {r['label']}" for r in records)
    return format_table(headers, lines) + "\n" + "\n".join(labels)
