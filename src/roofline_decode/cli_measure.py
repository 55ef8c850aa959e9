"""Measurement subcommands: ``compare`` (measured vs floor) and ``calibrate`` (fit and predict)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .cli_common import add_routing_argument, emit_records, _jsonable
from .errors import InvalidValueError
from .views_table import format_table


def register(subparsers) -> None:
    compare = subparsers.add_parser("compare", help="measured decode timings next to their floors")
    _common(compare)
    compare.add_argument("--tolerance", type=float, default=0.0,
                         help="relative slack before a row below its floor is flagged (default 0)")
    add_routing_argument(compare)
    compare.add_argument("--format", choices=("table", "json", "csv"), default="table")
    compare.set_defaults(handler=run_compare)

    calibrate = subparsers.add_parser("calibrate", help="fit bandwidth efficiency and step overhead; predict the rest")
    _common(calibrate)
    calibrate.add_argument("--fit-rows", metavar="I,J,...",
                           help="1-based rows to fit on (default: all); the others are predicted")
    calibrate.add_argument("--weighting", choices=("relative", "absolute"), default="relative")
    calibrate.add_argument("--level", type=float, default=0.9, help="coverage of the prediction band (default 0.9)")
    calibrate.add_argument("--format", choices=("table", "json"), default="table")
    calibrate.set_defaults(handler=run_calibrate)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="CSV or JSON of measurement rows, or one of the published CSVs")
    parser.add_argument("--model", help="model id or config.json for every row (default: each row's model)")
    parser.add_argument("--gpu", help="accelerator id or spec TOML for every row (default: each row's)")
    parser.add_argument("--weights", metavar="FMT", help="weight format for rows that do not state one")
    parser.add_argument("--kv", metavar="FMT", help="KV-cache format for rows that do not state one")
    parser.add_argument("--plot", metavar="PNG", help="also write a plot of measured vs floor (vs calibrated)")


def _read(args: argparse.Namespace):
    from .measure.published import load_published, published_layout
    from .measure.rows import load_measurements

    defaults = {"weight_format": args.weights, "kv_format": args.kv}
    if published_layout(args.file):
        published = load_published(args.file)
        args.skipped = published.skipped  # summarised in one line once the command succeeds
        rows = published.rows
        if args.weights or args.kv:
            rows = [r.replace(**{k: v for k, v in (("weight_format", r.weight_format or args.weights),
                                                    ("kv_format", r.kv_format or args.kv)) if v is not None})
                    for r in rows]
        return rows
    return load_measurements(args.file, **defaults)


def _device_id(device) -> str | None:
    return device if isinstance(device, str) or device is None else (device.id or device.name)


def _model_id(model) -> str | None:
    return model if isinstance(model, str) or model is None else model.name


def _select(rows, args: argparse.Namespace):
    """Rows measured on --gpu / with --model when some rows match; otherwise the options
    override every row.  Returns (rows, device to use or None, model to use or None)."""
    device, model = args.gpu, args.model
    if device is not None:
        matching = [r for r in rows if _device_id(r.accelerator) == device]
        if matching:
            rows = matching
            device = next((r.accelerator for r in matching if not isinstance(r.accelerator, str)), device)
    if model is not None:
        matching = [r for r in rows if _model_id(r.model) == model]
        if matching:
            rows, model = matching, None
    if not rows:
        raise InvalidValueError("file", args.file, "at least one measurement row")
    return rows, device, model


def _report_skipped(args: argparse.Namespace) -> None:
    """One stderr line summarising the rows a published file had that could not be placed."""
    skipped = getattr(args, "skipped", [])
    if skipped:
        shown = "; ".join(f"{where}: {reason}" for where, reason in skipped[:3])
        more = f"; and {len(skipped) - 3} more" if len(skipped) > 3 else ""
        print(f"skipped {len(skipped)} row(s) of {Path(args.file).name}: {shown}{more}", file=sys.stderr)


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


def _plot(path: Path, comparison, predictions=None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .measure.plot import plot_measurements

    ax = plot_measurements(comparison, predictions)
    ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(ax.figure)
    print(f"plot written to {path}", file=sys.stderr)


def run_compare(args: argparse.Namespace) -> int:
    from .measure.compare import compare

    plot_path = _plot_path(args.plot)
    rows, device, model = _select(_read(args), args)
    comparison = compare(rows, model, device, tolerance=args.tolerance, routing=args.routing)
    if args.format == "table":
        from .measure.compare import FASTER_THAN_UNIFORM

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
    from .measure.calibrate import Measurement, calibrate
    from .measure.compare import compare, resolve_accelerator, resolve_model

    plot_path = _plot_path(args.plot)
    rows, device, model = _select(_read(args), args)
    rows = [r for r in rows if r.num_devices == 1 and r.scope == "decode_step"]
    if not rows:
        raise InvalidValueError("file", args.file, "single-device full decode-step rows to calibrate")
    if device is None:
        devices = {_device_id(r.accelerator) for r in rows}
        if len(devices) != 1:
            raise InvalidValueError("--gpu", None, f"one device; the rows were measured on {', '.join(map(str, sorted(devices, key=str)))}")
        device = rows[0].accelerator
    device = resolve_accelerator(device)
    models = [resolve_model(model or r.model, r.weight_format, r.kv_format) for r in rows]
    fit_rows = _indices(args.fit_rows, len(rows))
    measurements = [Measurement(model=models[i], batch=rows[i].batch, context=rows[i].context,
                                step_time_s=rows[i].step_time) for i in fit_rows]
    calibration = calibrate(measurements, device, weighting=args.weighting, level=args.level)
    predictions = [calibration.predict(m, batch=r.batch, context=r.context) for m, r in zip(models, rows)]
    comparison = compare(rows, model, device)
    records = []
    for i, (row, c, p) in enumerate(zip(rows, comparison, predictions)):
        records.append({
            "row": i + 1, "label": row.describe(), "fitted": i in fit_rows,
            "measured_step_time_s": row.step_time, "floor_step_time_s": c.floor_step_time_s,
            "calibrated_step_time_s": float(p.step_time_s), "lower_s": float(p.lower_s), "upper_s": float(p.upper_s),
            "relative_error": float(p.step_time_s) / row.step_time - 1.0,
        })
    if args.format == "json":
        payload = {"calibration": calibration.to_dict(),
                   "rows": [{k: _jsonable(v) for k, v in r.items()} for r in records]}
        print(json.dumps(payload, indent=2))
    else:
        print(calibration)
        print()
        print(_table(records))
    if plot_path:
        _plot(plot_path, comparison, predictions)
    _report_skipped(args)
    return 0


def _table(records: list[dict]) -> str:
    headers = ["#", "row", "fit", "measured ms", "floor ms", "calibrated ms", "band ms", "error"]
    lines = []
    for r in records:
        band = ("-" if r["lower_s"] != r["lower_s"]
                else f"{r['lower_s'] * 1e3:.4g}..{r['upper_s'] * 1e3:.4g}")
        lines.append([str(r["row"]), r["label"], "yes" if r["fitted"] else "", f"{r['measured_step_time_s'] * 1e3:.4g}",
                      f"{r['floor_step_time_s'] * 1e3:.4g}", f"{r['calibrated_step_time_s'] * 1e3:.4g}", band,
                      f"{r['relative_error']:+.1%}"])
    return format_table(headers, lines)
