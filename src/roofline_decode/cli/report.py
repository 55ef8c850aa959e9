"""``roofline-decode report``: one self-contained HTML page of a model's floors on accelerators."""

from __future__ import annotations

import argparse

from .common import (Subparsers, add_model_arguments, add_parallel_arguments, layout_flag, link_options, number_list,
                     parallel_from_args, positive, whole_number)
from ..floors.grid import DEFAULT_CONTEXT


def register(subparsers: Subparsers) -> None:
    report = subparsers.add_parser(
        "report", help="an HTML report (no network needed to open it): floors, limits, per-layer table, plots, "
                       "device sources, and a batch/context control")
    add_model_arguments(report)
    report.add_argument("--batch", type=number_list, default=[1], help="the chosen batch (default 1)")
    report.add_argument("--context", type=number_list, default=[DEFAULT_CONTEXT],
                        help=f"the chosen context (default {DEFAULT_CONTEXT})")
    report.add_argument("--routing", choices=("uniform", "identical"), default="uniform",
                        help="MoE routing: uniform (default) or identical (the strict floor)")
    report.add_argument("--sparse", action="store_true", help="use 2:4 sparse peaks instead of dense")
    report.add_argument("--isl", type=whole_number("--isl", 1), metavar="TOKENS",
                        help="input (prompt) tokens per request: with --osl, a serving section (--batch clients)")
    report.add_argument("--osl", type=whole_number("--osl", 2), metavar="TOKENS", help="output tokens per request")
    report.add_argument("--gpus", type=whole_number("--gpus", 1), metavar="N",
                        help="GPUs available: with --isl/--osl, a deployment-search section per --gpu (the one-line "
                             "answer, the floor-optimal frontier and its plot; roofline-decode deploy)")
    report.add_argument("--ttft-ms", type=positive("--ttft-ms"), metavar="MS", help="TTFT SLO of the search [ms]")
    report.add_argument("--tpot-ms", type=positive("--tpot-ms"), metavar="MS", help="TPOT SLO of the search [ms]")
    report.add_argument("--price-per-hour", type=positive("--price-per-hour"), metavar="USD",
                        help="price of one GPU-hour, for the search's cost per million output tokens")
    report.add_argument("--engine", metavar="NAME",
                        help="an engine profile (vllm, sglang, llama.cpp-cuda ...): the expected step time, tokens/s "
                             "and, with --isl/--osl, TTFT and TPOT with 90%% bands (expected numbers are not floors)")
    report.add_argument("-o", "--output", required=True, metavar="FILE", help="the HTML file to write")
    add_parallel_arguments(report)
    report.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    from ..errors import InvalidValueError
    from ..report import report

    for name in ("batch", "context"):
        if len(getattr(args, name)) != 1:
            raise InvalidValueError(f"--{name}", ",".join(f"{v:g}" for v in getattr(args, name)),
                                    "one number (the page's control moves over a grid of its own)")
    if not args.output.lower().endswith((".html", ".htm")):
        raise InvalidValueError("--output", args.output, "a file ending in .html or .htm")
    if (args.isl is None) != (args.osl is None):
        raise InvalidValueError("--isl/--osl", f"{args.isl}/{args.osl}", "both, for the serving section (or neither)")
    if args.gpus is not None and args.isl is None:
        raise InvalidValueError("--gpus", args.gpus, "with --isl and --osl (the deployment search's requests)")
    for name in ("ttft_ms", "tpot_ms", "price_per_hour"):
        if getattr(args, name) is not None and args.gpus is None:
            raise InvalidValueError(f"--{name.replace('_', '-')}", getattr(args, name), "only with --gpus (the search)")
    if args.engine is not None:
        from ..measure.engine_profile import load_engine_profile

        try:
            load_engine_profile(args.engine)
        except InvalidValueError as exc:
            raise InvalidValueError("--engine", args.engine, exc.allowed) from None
    layout = parallel_from_args(args)
    try:
        report(args.model, args.gpu, batch=args.batch[0], context=args.context[0], weights=args.weights, kv=args.kv,
               routing=args.routing, sparse=args.sparse, parallel=layout, input_length=args.isl,
               output_length=args.osl, gpus=args.gpus, ttft=None if args.ttft_ms is None else args.ttft_ms * 1e-3,
               tpot=None if args.tpot_ms is None else args.tpot_ms * 1e-3, price_per_hour=args.price_per_hour,
               engine=args.engine, output=args.output, **link_options(args))
    except InvalidValueError as exc:
        raise layout_flag(exc) from None
    print(f"report written to {args.output}")
    return 0
