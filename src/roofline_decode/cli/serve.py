"""The ``serve`` subcommand: floors of the serving-benchmark metrics for closed-loop clients.

``roofline-decode serve --model qwen3-32b-fp8 --kv fp8 --gpu h100-sxm --concurrency 128 --isl 4096
--osl 128,256,512 --tp 4`` prints TTFT, TPOT (= ITL), E2E, requests/s and output tokens/s per
GPU and per user (:func:`~roofline_decode.floors.serving.serving_floor`), one table per
accelerator (table) or one record per concurrency × ISL × OSL (json, csv).  ``--disagg`` serves
prompts on prefill workers and decodes on decode workers (``--prefill-tp``, ``--decode-tp``,
``--prefill-workers``, ``--decode-workers``; the KV crosses ``--link-gbps``); with ``--rate``
it also prints the prefill and decode workers that rate needs
(:func:`~roofline_decode.floors.disaggregation.balanced_workers`).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .common import Subparsers, add_model_arguments, emit_records, load_model_from_args, number_list
from ..errors import InvalidValueError


def register(subparsers: Subparsers) -> None:
    serve = subparsers.add_parser(
        "serve", help="TTFT, TPOT, E2E and throughput floors of closed-loop serving (aggregated or disaggregated)",
        description="Floors of the metrics vLLM benchmark_serving and SGLang bench_serving report for C clients "
                    "each sending ISL-token prompts and reading OSL output tokens, in steady state.  Times are "
                    "floors, rates ceilings; the derivation is in docs/serving.md.",
    )
    add_model_arguments(serve)
    serve.add_argument("--concurrency", type=number_list, required=True, help="clients, comma-separated (1,8,64)")
    serve.add_argument("--isl", type=number_list, required=True, help="input (prompt) tokens, comma-separated")
    serve.add_argument("--osl", type=number_list, required=True, help="output tokens, comma-separated (>= 2)")
    for flag, what in (("--tp", "tensor-parallel degree"), ("--pp", "pipeline stages"), ("--ep", "expert-parallel degree"),
                       ("--dp", "attention data-parallel degree")):
        serve.add_argument(flag, type=int, default=1, help=f"{what} of a replica (default 1)")
    serve.add_argument("--disagg", action="store_true", help="disaggregated prefill and decode workers")
    serve.add_argument("--prefill-tp", type=int, help="tensor-parallel degree of a prefill worker (default --tp)")
    serve.add_argument("--decode-tp", type=int, help="tensor-parallel degree of a decode worker (default --tp)")
    serve.add_argument("--prefill-workers", type=int, default=1, help="prefill workers (--disagg, default 1)")
    serve.add_argument("--decode-workers", type=int, default=1, help="decode workers (--disagg, default 1)")
    serve.add_argument("--link-gbps", type=float, metavar="GB/S",
                       help="per-direction GB/s of the link the KV crosses (--disagg; default the device's)")
    serve.add_argument("--rate", type=float, metavar="REQ/S",
                       help="with --disagg: also the prefill and decode workers this request rate needs")
    serve.add_argument("--chunk", type=number_list, help="chunked-prefill size in tokens (default: none)")
    serve.add_argument("--max-batch", type=int, help="most requests a worker runs at once (max_num_seqs)")
    serve.add_argument("--routing", choices=("uniform", "identical"), default="uniform",
                       help="MoE routing: uniform (expected experts, default) or identical (the strict floor)")
    serve.add_argument("--format", choices=("table", "json", "csv"), default="table")
    serve.set_defaults(handler=run_serve)


def _layout(args: argparse.Namespace, tp: int | None, flag: str) -> int:
    """The tensor-parallel degree of a worker; the other layout flags must stay 1 for now."""
    for name in ("pp", "ep", "dp"):
        value = getattr(args, name)
        if value != 1:
            raise InvalidValueError(f"--{name}", value, "1: serving floors split a worker by tensor parallelism (--tp)")
    degree = args.tp if tp is None else tp
    if degree < 1:
        raise InvalidValueError(flag, degree, "a whole number of devices >= 1")
    return int(degree)


def _one(name: str, values: list[float] | None) -> float | None:
    if values is None:
        return None
    if len(values) != 1:
        raise InvalidValueError(name, ",".join(f"{v:g}" for v in values), "one value")
    return values[0]


def run_serve(args: argparse.Namespace) -> int:
    from ..catalog import load_accelerator
    from ..floors.disaggregation import balanced_workers
    from ..floors.serving import serving_floor

    model = load_model_from_args(args)
    concurrency = np.asarray(args.concurrency, dtype=float)[:, None, None]
    isl = np.asarray(args.isl, dtype=float)[None, :, None]
    osl = np.asarray(args.osl, dtype=float)[None, None, :]
    link = None if args.link_gbps is None else args.link_gbps * 1e9
    if not args.disagg:
        for name, value in (("--prefill-tp", args.prefill_tp), ("--decode-tp", args.decode_tp),
                            ("--link-gbps", args.link_gbps), ("--rate", args.rate)):
            if value is not None:
                raise InvalidValueError(name, value, "an option of disaggregated serving: add --disagg")
        if args.prefill_workers != 1 or args.decode_workers != 1:
            raise InvalidValueError("--prefill-workers/--decode-workers", (args.prefill_workers, args.decode_workers),
                                    "options of disaggregated serving: add --disagg")
    options: dict[str, Any] = dict(routing=args.routing, chunk=_one("--chunk", args.chunk), max_batch=args.max_batch)
    if args.disagg:
        options.update(mode="disaggregated", prefill_parallel=_layout(args, args.prefill_tp, "--prefill-tp"),
                       decode_parallel=_layout(args, args.decode_tp, "--decode-tp"),
                       prefill_workers=args.prefill_workers, decode_workers=args.decode_workers, link_bandwidth=link)
    else:
        options["parallel"] = _layout(args, None, "--tp")
    blocks: list[str] = []
    records: list[dict[str, Any]] = []
    for gpu in args.gpu:
        device = load_accelerator(gpu)
        r = serving_floor(model, device, concurrency, isl, osl, **options)
        records += r.to_records()
        block = str(r)
        if args.disagg and args.rate is not None:
            running = np.broadcast_to(r.running_batch, r.tpot_s.shape)
            b = balanced_workers(model, device, isl, osl, np.maximum(running, 1.0).max(), request_rate=args.rate,
                                 prefill_parallel=options["prefill_parallel"], decode_parallel=options["decode_parallel"],
                                 routing=args.routing, chunk=options["chunk"])
            block += "\n\n" + str(b)
        blocks.append(block)
    print("\n\n".join(blocks) if args.format == "table" else emit_records(records, args.format))
    return 0
