"""The ``plan`` subcommand: capacity and bandwidth verdicts for a model on accelerators."""

from __future__ import annotations

import argparse

from .common import (
    Subparsers, add_model_arguments, add_parallel_arguments, add_routing_argument, emit_records, fraction, link_options,
    load_model_from_args, non_negative, parallel_from_args, positive, up_to, whole_number,
)
from ..checks import MAX_LATENCY

EXAMPLE = (
    "example: roofline-decode plan --model llama-3.1-70b --gpu h100-sxm --gpu h200-sxm "
    "--batch 16 --context 32768 --slo-ms 50 [--tp 2 | --dp 8 --ep 8] [--offload-kv 0.5 --tier pcie5-x16]"
)


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "plan", help="does it fit, is it fast enough, how many devices: verdicts per accelerator",
        description="Capacity (fits?) and bandwidth (meets the per-token target?) verdicts, and the smallest "
                    "tensor-parallel device count that does both.", epilog=EXAMPLE,
    )
    add_model_arguments(parser)
    parser.add_argument("--batch", type=whole_number("--batch", 1), required=True, help="sequences decoded together")
    parser.add_argument("--context", type=whole_number("--context", 0), required=True, help="tokens each sequence holds (32768 or 32K)")
    parser.add_argument("--slo-ms", type=positive("--slo-ms"), help="per-token target in milliseconds")
    parser.add_argument("--max-devices", type=whole_number("--max-devices", 1), default=8,
                        help="largest device count searched (default 8)")
    parser.add_argument("--reserve-gib", type=non_negative("--reserve-gib"), default=2.0, help="runtime reserve per device in GiB (default 2)")
    parser.add_argument("--offload-kv", type=fraction("--offload-kv"), default=0.0,
                        help="fraction of the KV cache (oldest tokens) kept in --tier")
    parser.add_argument("--offload-weights", type=fraction("--offload-weights"), default=0.0,
                        help="fraction of the weights kept in --tier")
    parser.add_argument("--tier", metavar="ID", help="memory tier for offload (roofline-decode list tiers)")
    parser.add_argument("--collective-us", type=up_to("--collective-us", MAX_LATENCY * 1e6), default=5.0,
                        help="fixed cost of one all-reduce in microseconds (default 5)")
    add_routing_argument(parser)
    add_parallel_arguments(parser)
    parser.add_argument("--prompt", type=whole_number("--prompt", 1),
                        help="with --output: add the request floor (TTFT, TPOT, latency) of this prompt length")
    parser.add_argument("--output", type=whole_number("--output", 1), help="output tokens per request (with --prompt)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.set_defaults(handler=run_plan)


def run_plan(args: argparse.Namespace) -> int:
    from ..errors import InvalidValueError
    from ..planning import plan
    from .common import layout_flag
    from ..units import GiB

    if (args.offload_kv or args.offload_weights) and not args.tier:
        raise InvalidValueError("--tier", None, "a memory tier id when --offload-kv or --offload-weights is set")
    layout = parallel_from_args(args)
    # a pure tensor-parallel layout keeps the tp= path (the same numbers); any other is a layout
    links = link_options(args)
    tensor_only = (layout is None or (layout.tp == layout.num_devices and layout.moe_tp == layout.tp)) and (
        links["node_size"] is None and links["scale_out_bandwidth"] is None)
    try:
        result = plan(
            load_model_from_args(args), args.gpu, batch=args.batch, context=args.context, slo_ms=args.slo_ms,
            tp=args.tp if tensor_only else 1, parallel=None if tensor_only else layout, reserve=args.reserve_gib * GiB,
            offload_kv=args.offload_kv, offload_weights=args.offload_weights, tier=args.tier,
            max_devices=args.max_devices, collective_latency=args.collective_us * 1e-6,
            link_bandwidth=links["link_bandwidth"], routing=args.routing, prompt=args.prompt, output=args.output,
            **({} if tensor_only else {"node_size": links["node_size"],
                                       "scale_out_bandwidth": links["scale_out_bandwidth"]}),
        )
    except InvalidValueError as exc:
        raise layout_flag(exc) from None
    if args.format == "json":
        print(emit_records(result.to_records(), "json"))
    else:
        print(result)
        if args.tier:
            print(f"offload: {args.offload_kv:g} of the KV cache and {args.offload_weights:g} of the weights in {args.tier}")
    return 0
