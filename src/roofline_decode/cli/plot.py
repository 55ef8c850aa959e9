"""The ``plot`` subcommand: ridge, batch, context, breakdown and capacity-map plots to a file.

``roofline-decode plot ridge --model llama-3.1-8b --gpu h100-sxm --gpu mi300x -o ridge.png``;
the extension of ``-o`` picks PNG, SVG or PDF.  Needs the ``plot`` extra (matplotlib).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TypeVar

from .common import Subparsers, add_model_arguments, load_model_from_args, number_list, positive, whole_number
from ..errors import InvalidValueError
from ..floors.grid import DEFAULT_CONTEXT

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..specs.model import Model

#: Plot kinds, in the order of ``--help``.
KINDS = ("ridge", "batch", "context", "breakdown", "map", "ttft", "speculative", "frontier")
#: Kinds that compare several ``--gpu``.
SEVERAL_GPU_KINDS = ("ridge", "ttft", "frontier")
#: Options that only the request plots take, by kind.
REQUEST_OPTIONS = {"prompt": ("ttft",), "chunk": ("ttft",), "draft": ("speculative",), "mtp_layers": ("speculative",),
                   "k": ("speculative",), "acceptance": ("speculative",), "tp": ("frontier",), "y": ("frontier",),
                   "price_per_hour": ("frontier",), "gpus": ("frontier",), "isl": ("frontier",), "osl": ("frontier",),
                   "ttft_ms": ("frontier",), "tpot_ms": ("frontier",)}
#: Options of plot frontier that only its deployment search (--gpus) takes.
DEPLOY_OPTIONS = ("isl", "osl", "ttft_ms", "tpot_ms")
#: Kinds that draw a per-token latency target given with ``--slo-ms``.
SLO_KINDS = ("batch", "context", "map")
#: Kinds that draw the serial chain of a ``--latency`` profile.
LATENCY_KINDS = ("ridge", "batch")


def register(subparsers: Subparsers) -> None:
    plot = subparsers.add_parser(
        "plot", help="draw a decode plot (ridge, batch, context, breakdown, map) to PNG, SVG or PDF",
        description="Draw a decode plot to a file; the extension of -o picks PNG, SVG or PDF.",
    )
    plot.add_argument("kind", choices=KINDS, help="ridge: roofline of one or more --gpu; batch: tokens/s and "
                      "ms/token vs batch; context: step time vs context; breakdown: bytes and time terms; "
                      "map: batch x context verdicts; ttft: time to first token vs prompt length of one or more --gpu; "
                      "speculative: speculative-decoding speedup vs batch (--draft or --mtp-layers); "
                      "frontier: tokens/s per device vs tokens/s per user of one or more --gpu over batch and --tp "
                      "(with --gpus N: the deployment search's frontier on N GPUs, aggregated and disaggregated)")
    add_model_arguments(plot)
    plot.add_argument("--batch", type=number_list, help="comma-separated batch sizes (each plot has a default)")
    plot.add_argument("--context", type=number_list,
                      help=f"comma-separated contexts in tokens (4k = 4096; default {DEFAULT_CONTEXT} where a plot takes one)")
    plot.add_argument("--over", choices=("batch", "context"), help="breakdown: the axis to sweep")
    plot.add_argument("--slo-ms", type=positive("--slo-ms"), metavar="MS",
                      help="per-token latency target [ms] (batch, context, map)")
    plot.add_argument("--sparse", action="store_true", help="use 2:4 sparse peaks instead of dense")
    plot.add_argument("--latency", metavar="PROFILE",
                      help="draw the serial chain of a latency profile as a third ceiling (ridge, batch; "
                           "preset id from 'list latency' or a .toml file)")
    plot.add_argument("--prompt", type=number_list, help="ttft: comma-separated prompt lengths (2K = 2048)")
    plot.add_argument("--chunk", type=number_list, help="ttft: chunked-prefill size in tokens")
    plot.add_argument("--draft", metavar="ID", help="speculative: draft model id or config path")
    plot.add_argument("--mtp-layers", type=int, metavar="N", help="speculative: multi-token-prediction heads of N layers")
    plot.add_argument("--k", type=int, help="speculative: tokens drafted per round (default 4)")
    plot.add_argument("--acceptance", type=number_list, help="speculative: comma-separated acceptance rates, 0 ... 1")
    plot.add_argument("--tp", type=number_list, help="frontier: comma-separated tensor-parallel degrees (default 1,2,4,8)")
    plot.add_argument("--parallel", action="append", metavar="LAYOUT",
                      help="a parallel layout such as tp8, 'dp8 ep8' or tp4pp2 (roofline_decode.Parallel): the busiest "
                           "device's share is drawn; frontier: repeat it for one curve per layout (instead of --tp)")
    plot.add_argument("--y", choices=("throughput", "energy", "energy_at_board_power", "cost"),
                      help="frontier: the y axis (default throughput; cost needs --price-per-hour)")
    plot.add_argument("--price-per-hour", type=positive("--price-per-hour"), metavar="USD",
                      help="frontier: price of one device-hour, for --y cost")
    plot.add_argument("--gpus", type=whole_number("--gpus", 1), metavar="N",
                      help="frontier: GPUs of the deployment search (roofline-decode deploy), one --gpu")
    plot.add_argument("--isl", type=whole_number("--isl", 1), help="frontier --gpus: input tokens per request (default 1024)")
    plot.add_argument("--osl", type=whole_number("--osl", 2), help="frontier --gpus: output tokens per request (default 1024)")
    plot.add_argument("--ttft-ms", type=positive("--ttft-ms"), metavar="MS", help="frontier --gpus: TTFT SLO [ms]")
    plot.add_argument("--tpot-ms", type=positive("--tpot-ms"), metavar="MS", help="frontier --gpus: TPOT SLO [ms]")
    plot.add_argument("--dpi", type=positive("--dpi"), default=150, help="resolution of PNG output, 20 to 1200 (default 150)")
    plot.add_argument("-o", "--output", required=True, metavar="FILE", help="output file: .png, .svg or .pdf")
    plot.set_defaults(handler=run_plot)


_Default = TypeVar("_Default", float, None)


def _one(values: list[float] | None, default: _Default, flag: str = "--context") -> float | _Default:
    if values is None:
        return default
    if len(values) != 1:
        raise InvalidValueError(flag, ",".join(f"{v:g}" for v in values), f"one {flag.lstrip('-')} for this plot")
    return values[0]


def run_plot(args: argparse.Namespace) -> int:
    from ..plotting import check_output_path, headless

    check_output_path(args.output)  # a bad extension fails before any work
    if args.kind not in SEVERAL_GPU_KINDS and len(args.gpu) > 1:
        raise InvalidValueError("--gpu", ",".join(args.gpu), f"one accelerator for 'plot {args.kind}' "
                                "(only 'plot ridge', 'plot ttft' and 'plot frontier' compare several)")
    for option, kinds in REQUEST_OPTIONS.items():
        given = getattr(args, option)
        if given is not None and args.kind not in kinds:
            flag = "--" + option.replace("_", "-")
            raise InvalidValueError(flag, given, f"an option only of plot {', '.join(kinds)}")
    if args.slo_ms is not None and args.kind not in SLO_KINDS:
        raise InvalidValueError("--slo-ms", args.slo_ms, f"a target only with plot {', '.join(SLO_KINDS)}")
    if args.latency is not None and args.kind not in LATENCY_KINDS:
        raise InvalidValueError("--latency", args.latency, f"a profile only with plot {', '.join(LATENCY_KINDS)}")
    if args.over is not None and args.kind != "breakdown":
        raise InvalidValueError("--over", args.over, "an axis only with plot breakdown")
    layouts = _layouts(args)
    plt = headless()  # files only: never open a window
    from .. import plotting

    model = load_model_from_args(args)
    gpu = args.gpu[0]
    common: dict[str, Any] = dict(sparse=args.sparse)
    if layouts is not None and args.kind != "frontier":
        common["parallel"] = layouts[0]
    try:
        if args.kind == "ridge":
            ax = plotting.ridge_plot(model, args.gpu, batch=args.batch, context=args.context, latency=args.latency,
                                     **common)
        elif args.kind == "batch":
            ax = plotting.batch_plot(model, gpu, batch=args.batch, context=_one(args.context, DEFAULT_CONTEXT),
                                     slo_ms=args.slo_ms, latency=args.latency, **common)
        elif args.kind == "context":
            ax = plotting.context_plot(model, gpu, context=args.context, batch=args.batch,
                                       slo_ms=args.slo_ms, **common)
        elif args.kind == "breakdown":
            ax = plotting.breakdown_plot(model, gpu, batch=args.batch, context=args.context, over=args.over, **common)
        elif args.kind == "ttft":
            ax = plotting.ttft_plot(model, args.gpu, prompt=args.prompt, batch=_one(args.batch, 1, "--batch"),
                                    chunk=_one(args.chunk, None, "--chunk"), **common)
        elif args.kind == "speculative":
            ax = plotting.speculative_plot(model, gpu, draft=args.draft, mtp_layers=args.mtp_layers, k=4 if args.k is None else args.k,
                                           batch=args.batch, acceptance=args.acceptance,
                                           context=_one(args.context, DEFAULT_CONTEXT), **common)
        elif args.kind == "frontier" and args.gpus is not None:
            ax = _deployment_frontier(args, model)
        elif args.kind == "frontier":
            for option in DEPLOY_OPTIONS:
                if getattr(args, option) is not None:
                    raise InvalidValueError("--" + option.replace("_", "-"), getattr(args, option),
                                            "an option of the deployment frontier only: add --gpus N")
            if args.sparse:
                raise InvalidValueError("--sparse", True, "dense peaks only for plot frontier (tensor-parallel floors)")
            if args.y == "cost" and args.price_per_hour is None:
                raise InvalidValueError("--y", "cost", "a price: add --price-per-hour")
            if layouts is not None and args.tp is not None:
                raise InvalidValueError("--tp", ",".join(f"{v:g}" for v in args.tp), "either --tp or --parallel for plot frontier")
            ax = plotting.frontier_plot(model, args.gpu, context=_one(args.context, DEFAULT_CONTEXT), batch=args.batch,
                                        tp=(1, 2, 4, 8) if args.tp is None and layouts is None else args.tp,
                                        parallel=layouts, y=args.y or "throughput", price_per_hour=args.price_per_hour)
        else:
            ax = plotting.capacity_map(model, gpu, batch=args.batch, context=args.context, slo_ms=args.slo_ms, **common)
    except InvalidValueError as exc:  # a layout the model refuses (heads, experts, layers) names --parallel
        if exc.field.split(".")[0] in ("parallel", "Parallel"):
            raise InvalidValueError("--parallel", exc.value, exc.allowed) from None
        raise
    try:
        path = plotting.save(ax, args.output, dpi=args.dpi)
    finally:
        plt.close(ax.figure)
    print(f"{args.kind} plot written to {path}")
    return 0


def _layouts(args: argparse.Namespace) -> list[Any] | None:
    """The layouts of ``--parallel`` (None when not given), refused by the flag's name: one per plot
    but ``plot frontier``, which draws a curve per layout; the deployment search (--gpus) takes none."""
    if args.parallel is None:
        return None
    from ..specs.parallel import Parallel

    if args.kind == "frontier" and args.gpus is not None:
        raise InvalidValueError("--parallel", ",".join(args.parallel),
                                "no layout with --gpus: the deployment search tries every layout")
    if args.kind != "frontier" and len(args.parallel) > 1:
        raise InvalidValueError("--parallel", ",".join(args.parallel), f"one layout for plot {args.kind}")
    try:
        return [Parallel.parse(text) for text in args.parallel]
    except InvalidValueError as exc:
        raise InvalidValueError("--parallel", exc.value, exc.allowed) from None


def _deployment_frontier(args: argparse.Namespace, model: Model) -> Axes:
    """``plot frontier --gpus N``: :func:`~roofline_decode.plotting.deployment_frontier_plot`."""
    from .. import plotting

    if len(args.gpu) > 1:
        raise InvalidValueError("--gpu", ",".join(args.gpu), "one accelerator for the deployment frontier (--gpus)")
    for option in ("batch", "context", "tp", "y", "price_per_hour"):
        if getattr(args, option) is not None:
            raise InvalidValueError("--" + option.replace("_", "-"), getattr(args, option),
                                    "no such option with --gpus (the deployment search sets its own grid)")
    if args.sparse:
        raise InvalidValueError("--sparse", True, "dense peaks only for the deployment frontier")
    return plotting.deployment_frontier_plot(
        model, args.gpu[0], args.gpus, 1024 if args.isl is None else args.isl, 1024 if args.osl is None else args.osl,
        ttft=None if args.ttft_ms is None else args.ttft_ms * 1e-3,
        tpot=None if args.tpot_ms is None else args.tpot_ms * 1e-3)
