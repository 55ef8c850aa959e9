"""``validate``: time the numpy decode kernel on this machine against its decode floor."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from typing import TYPE_CHECKING

from .common import Subparsers, number_list, positive
from ..errors import InvalidValueError, MissingExtraError
from ..units import format_table

if TYPE_CHECKING:
    from ..kernel.probe import BandwidthReport
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model

#: Default grids: (batch, context) for a full run and for ``--quick``.
DEFAULT_GRID = ((1, 4, 16, 64), (256, 2048))
QUICK_GRID = ((1, 8), (128, 1024))


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "validate", help="time a numpy decode step on this CPU against its floor (probes the bandwidth)",
        description=(
            "Probe this machine's memory bandwidth and fp32 rate, time a float32 decode step of a "
            "model with about 1 GB of weights (0.2 GB with --quick) over a batch x context grid, "
            "and compare every point with its floor. Writes measurements.csv and measured_vs_floor.png."
        ),
    )
    parser.add_argument("--quick", action="store_true", help="smaller model, grid and probe (about a minute)")
    parser.add_argument("--batch", type=number_list, help="comma-separated batch sizes (default 1,4,16,64; quick 1,8)")
    parser.add_argument("--context", type=number_list, help="comma-separated contexts (default 256,2048; quick 128,1024)")
    parser.add_argument("--model", help="catalog id or config.json to run instead of the built-in validation model")
    parser.add_argument("--repeats", type=int, default=None, help="timed steps per point (default 5; quick 3)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps per point (default 2)")
    parser.add_argument("--bandwidth", type=positive("--bandwidth"), metavar="GB/s",
                        help="use this memory bandwidth instead of probing (with --fp32-peak)")
    parser.add_argument("--fp32-peak", type=positive("--fp32-peak"), metavar="GFLOP/s",
                        help="use this fp32 peak instead of probing (with --bandwidth)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights (default 0)")
    parser.add_argument("--out", default="validate-output", help="folder for the CSV and the plot (default validate-output)")
    parser.add_argument("--chain", action="store_true",
                        help="instead of the grid: measure the time of one dependent operation on this CPU and "
                             "time batch-1 steps of models from tiny to large against all three constraints "
                             "(bandwidth, compute, serial chain)")
    parser.set_defaults(handler=run_validate)


def _host(args: argparse.Namespace) -> tuple[BandwidthReport, Accelerator, str]:
    from ..kernel.probe import BandwidthReport, host_accelerator, last_level_cache_bytes, measure_bandwidth

    if (args.bandwidth is None) != (args.fp32_peak is None):
        raise InvalidValueError("--bandwidth/--fp32-peak", args.bandwidth or args.fp32_peak,
                                "both given (skip the probe) or neither (probe this machine)")
    if args.bandwidth is not None:
        report = BandwidthReport(read_bandwidth=args.bandwidth * 1e9, copy_bandwidth=args.bandwidth * 1e9,
                                 fp32_flops=args.fp32_peak * 1e9, array_bytes=0, cache_bytes=last_level_cache_bytes(),
                                 repeats=0, threads=0, kernels={"given on the command line": args.bandwidth * 1e9})
        described = (f"read {args.bandwidth:.1f} GB/s, fp32 {args.fp32_peak:.1f} GFLOP/s "
                     "(given with --bandwidth and --fp32-peak, not probed)")
    else:
        print("probing memory bandwidth and fp32 GEMM rate ...", file=sys.stderr, flush=True)
        report = measure_bandwidth(**({"repeats": 5} if args.quick else {}))
        described = str(report)
    return report, host_accelerator(report), described


def _check_memory(model: Model, batches: list[int], contexts: list[int]) -> None:
    kv = max(batches) * (max(contexts) + 1) * model.num_layers * 2 * model.num_kv_heads * model.head_dim * 4
    weights = 4 * (model.parameter_count + (model.vocab_size * model.hidden_size if model.tie_word_embeddings else 0))
    try:
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return
    if kv + weights > 0.8 * available:
        raise InvalidValueError(
            "batch x context", f"{max(batches)} x {max(contexts)}",
            f"a grid whose fp32 weights ({weights / 1e9:.1f} GB) and largest KV cache ({kv / 1e9:.1f} GB) "
            f"fit in 80% of the available memory ({available / 1e9:.1f} GB)",
        )


def run_chain(args: argparse.Namespace) -> int:
    """``validate --chain``: the per-operation time and the three constraints on this CPU."""
    from ..kernel.chain import host_latency_profile, measure_operation_latency, run_chain_validation

    repeats = args.repeats if args.repeats is not None else (10 if args.quick else 20)
    if repeats < 1:
        raise InvalidValueError("--repeats", repeats, "an integer >= 1")
    report, host, described = _host(args)
    print(f"host: {host.name}\n  {described}", flush=True)
    latency = measure_operation_latency(repeats=10 * repeats)
    print(f"serial chain: {latency}", flush=True)
    points = run_chain_validation(host, host_latency_profile(latency),
                                  hidden_sizes=(16, 64, 256, 1024) if args.quick else (16, 64, 256, 1024, 2048),
                                  repeats=repeats)
    header = ("d", "weights MB", "measured ms", "memory ms", "compute ms", "chain ms", "binds", "measured/floor")
    rows = [(str(p.hidden_size), f"{p.weight_bytes / 1e6:.3g}", f"{p.measured_s * 1e3:.3f}",
             f"{p.memory_time_s * 1e3:.3f}", f"{p.compute_time_s * 1e3:.3f}", f"{p.chain_time_s * 1e3:.3f}",
             p.bound, f"{p.measured_over_floor:.2f}") for p in points]
    print(format_table(header, rows, align="right"))
    print("batch 1, 4 Llama-like fp32 layers, 16 cached tokens; floor = max(memory, compute, chain); "
          "the fastest of the timed steps is shown")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from ..kernel.runner import check_arguments, plot_measurements, run_validation, validation_model, write_csv

    if args.chain:
        return run_chain(args)

    grid = QUICK_GRID if args.quick else DEFAULT_GRID
    repeats = args.repeats if args.repeats is not None else (3 if args.quick else 5)
    # every argument is checked before the probe and the sweep, which take minutes
    batches, contexts = check_arguments(args.batch or grid[0], args.context or grid[1], args.warmup, repeats, args.seed)
    if args.model:
        from ..catalog import load_model

        model = load_model(args.model)
    else:
        model = validation_model(quick=args.quick)
    model = model.with_precision(weights="fp32", kv="fp32", activations="fp32", experts="fp32")
    from ..kernel.model_weights import check_supported

    check_supported(model)
    _check_memory(model, batches, contexts)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidValueError("--out", args.out, f"a folder (not a file) that can be created and written: {exc.strerror}") from None
    report, host, described = _host(args)
    print(f"host: {host.name}\n  {described}", flush=True)
    print(f"model: {model.name}, {model.streamed_parameters * 4 / 1e9:.3f} GB of fp32 weights read per step "
          f"(+ KV), ridge point {host.ridge_point('fp32'):.2f} FLOP/B", flush=True)
    rows = run_validation(model, host, batches, contexts, warmup=args.warmup, repeats=repeats, seed=args.seed)

    header = ("batch", "context", "measured ms", "floor ms", "measured/floor", "tokens/s", "GB/s", "% of read BW")
    lines = []
    for m in rows:
        lines.append((str(m.batch), str(m.context), f"{m.mean_s * 1e3:.2f} ± {m.std_s * 1e3:.2f}",
                      f"{m.floor_s * 1e3:.2f}", f"{m.measured_over_floor:.2f}", f"{m.tokens_per_s:.1f}",
                      f"{m.bw_GBs:.1f}", f"{100 * m.bw_GBs * 1e9 / host.memory_bandwidth:.0f}%"))
    print(format_table(header, lines, align="right"))
    below = [m for m in rows if m.measured_over_floor < 1.0]
    if below:
        print(f"note: {len(below)} point(s) ran faster than the floor (measured/floor < 1): the probe "
              "underestimated this machine's bandwidth or peak, or the machine was busy while probing")

    print(f"wrote {write_csv(rows, out / 'measurements.csv')}")
    try:
        path = plot_measurements(rows, out / "measured_vs_floor.png",
                                 title=f"{model.name} (fp32) on {host.name}: {report.read_bandwidth / 1e9:.1f} GB/s read")
        print(f"wrote {path}")
    except MissingExtraError as exc:
        print(f"skipping the plot: {exc}", file=sys.stderr)
    return 0
