"""The ``deploy`` subcommand: the floor-optimal deployments of a model on N GPUs, and the best under SLOs.

``roofline-decode deploy --model deepseek-v3 --gpu h200-sxm --gpus 16 --isl 1024 --osl 1024
--ttft-ms 2000 --tpot-ms 50``: one line with the answer first, then the frontier table
(:func:`roofline_decode.planning.deployments`).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from .common import Subparsers, jsonable, positive, whole_number

if TYPE_CHECKING:
    from ..planning.deployments import Deployments

EXAMPLE = ("example: roofline-decode deploy --model deepseek-v3 --gpu h200-sxm --gpus 16 --isl 1024 --osl 1024 "
           "--ttft-ms 2000 --tpot-ms 50 [--price-per-hour 3.5] [--mode agg|disagg|both] [--json]")
#: --mode -> the modes searched
MODES = {"agg": ("aggregated",), "disagg": ("disaggregated",), "both": ("aggregated", "disaggregated")}


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "deploy", help="search every layout on N GPUs: the floor-optimal frontier and the best deployment under SLOs",
        description="Every aggregated (replicas of a TP/PP/EP/DP layout) and disaggregated (prefill + decode "
                    "workers) deployment of a model on N GPUs, over client counts: floors of TTFT and TPOT, "
                    "ceilings of tokens/s per GPU and per user.  The frontier is an upper bound no real "
                    "deployment exceeds.", epilog=EXAMPLE,
    )
    parser.add_argument("--model", required=True, help="catalog model id, a config.json or its folder")
    parser.add_argument("--gpu", required=True, metavar="ID", help="accelerator id or path to a spec TOML")
    parser.add_argument("--weights", metavar="FMT", help="weight format (bf16, fp8, int4-g32 ...)")
    parser.add_argument("--kv", metavar="FMT", help="KV-cache format (bf16, fp8 ...)")
    parser.add_argument("--gpus", type=whole_number("--gpus", 1), required=True, help="GPUs available")
    parser.add_argument("--isl", type=whole_number("--isl", 1), required=True, help="input tokens per request (1K = 1024)")
    parser.add_argument("--osl", type=whole_number("--osl", 2), required=True, help="output tokens per request, >= 2")
    parser.add_argument("--ttft-ms", type=positive("--ttft-ms"), metavar="MS", help="time-to-first-token SLO [ms]")
    parser.add_argument("--tpot-ms", type=positive("--tpot-ms"), metavar="MS", help="time-per-output-token SLO [ms]")
    parser.add_argument("--price-per-hour", type=positive("--price-per-hour"), metavar="USD",
                        help="price of one GPU-hour, for the cost per million output tokens")
    parser.add_argument("--mode", choices=tuple(MODES), default="both", help="aggregated, disaggregated or both (default)")
    parser.add_argument("--kv-link-gbps", type=positive("--kv-link-gbps"), metavar="GBPS",
                        help="per-direction bandwidth [GB/s] a prompt's KV crosses to a decode worker "
                             "(default: NVLink inside a domain, else the NIC)")
    parser.add_argument("--json", action="store_true", help="the answer, the best point and the frontier as JSON")
    parser.set_defaults(handler=run_deploy)


def run_deploy(args: argparse.Namespace) -> int:
    from ..planning import deployments

    result = deployments(
        args.model, args.gpu, args.gpus, args.isl, args.osl, weights=args.weights, kv=args.kv,
        ttft=None if args.ttft_ms is None else args.ttft_ms * 1e-3, tpot=None if args.tpot_ms is None else args.tpot_ms * 1e-3,
        price_per_hour=args.price_per_hour, modes=MODES[args.mode],
        kv_link_bandwidth=None if args.kv_link_gbps is None else args.kv_link_gbps * 1e9,
    )
    if args.json:
        print(json.dumps(as_json(result), indent=2))
    else:
        print(render(result))
    return 0


def as_json(result: Deployments) -> dict[str, Any]:
    """The answer, the search's size, the best point and the frontier (SI units; NaN as null)."""
    best = result.best
    return {
        "answer": result.answer(), "model": result.model, "accelerator": result.accelerator, "gpus": result.gpus,
        "isl": result.isl, "osl": result.osl, "ttft_s": result.ttft, "tpot_s": result.tpot,
        "layouts": len(result.layouts), "candidates": result.candidates, "points": result.evaluated,
        "best": None if best is None else {k: jsonable(v) for k, v in best.as_record().items()},
        "frontier": [{k: jsonable(v) for k, v in p.as_record().items()} for p in result.frontier()],
        "notes": list(result.notes),
    }


def render(result: Deployments) -> str:
    """The answer, then the frontier table (slowest per user first; ``*`` marks the points
    meeting the SLOs), then what was searched."""
    from ..units import format_table

    priced = result.price_per_hour is not None
    headers = ["", "mode", "deployment", "GPUs", "clients", "TTFT ms", "TPOT ms", "tok/s/GPU", "tok/s/user"]
    headers += ["$/M tok"] if priced else []
    rows = []
    for p in result.frontier():
        meets = ((result.ttft is None or p.ttft_s <= result.ttft) and (result.tpot is None or p.tpot_s <= result.tpot))
        row = ["*" if meets else "", "agg" if p.mode == "aggregated" else "disagg", p.label, f"{p.devices}",
               f"{p.concurrency:,}", f"{p.ttft_s * 1e3:,.0f}", f"{p.tpot_s * 1e3:,.1f}", f"{p.tokens_per_s_per_gpu:,.0f}",
               f"{p.tokens_per_s_per_user:,.1f}"]
        if priced:
            row.append("" if p.usd_per_million_tokens is None else f"{p.usd_per_million_tokens:,.3g}")
        rows.append(row)
    lines = [result.answer(), ""]
    if rows:
        lines += ["floor-optimal frontier (an upper bound no real deployment exceeds; * meets the SLOs):",
                  format_table(headers, rows)]
    lines.append(f"searched {result.evaluated:,} points of {len(result.layouts)} layouts that fit "
                 f"({result.candidates} the model takes), ISL {result.isl:,}, OSL {result.osl:,}")
    lines += [f"note: {note}" for note in result.notes]
    return "\n".join(lines)
