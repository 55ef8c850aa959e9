"""The ``request`` subcommand: TTFT, TPOT and end-to-end floors of a request, with speculation.

``roofline-decode request --model llama-3.1-8b --gpu h100-sxm --prompt 2K --output 512 --batch 1,32``
prints one table per accelerator (table), or records (json, csv): one per batch × prompt ×
output.  With ``--draft ID`` or ``--mtp-layers N`` each record also carries the speculative
decoding floor at the request's mean decode context (``speculative_*`` keys; the per-token
time at the mean context is a lower bound of the mean per-token time, as a step time is convex
in the context).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .common import Subparsers, add_model_arguments, emit_records, load_model_from_args, number_list
from ..errors import InvalidValueError
from ..units import format_number
from ..units import format_table

if TYPE_CHECKING:
    from .._typing import ArrayOrExpr
    from ..floors.request import RequestFloor
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model

#: speculative keys added to each record
SPECULATIVE_KEYS = ("speculative_draft", "speculative_k", "speculative_acceptance", "speculative_speedup",
                    "speculative_tpot_s", "speculative_e2e_latency_s", "speculative_break_even_acceptance",
                    "speculative_best_k", "speculative_max_useful_batch")


def register(subparsers: Subparsers) -> None:
    request = subparsers.add_parser(
        "request", help="time to first token, time per output token and end-to-end floors of a request",
        description="Floors of a static batch of requests: the prefill yields the first token, then output - 1 "
                    "decode steps at contexts prompt ... prompt + output - 2.",
    )
    add_model_arguments(request)
    request.add_argument("--prompt", type=number_list, required=True, help="prompt tokens, comma-separated (2K = 2048)")
    request.add_argument("--output", type=number_list, required=True, help="output tokens, comma-separated")
    request.add_argument("--batch", type=number_list, default=[1], help="requests served together (default 1)")
    request.add_argument("--chunk", type=number_list, help="chunked-prefill size in tokens (default: one chunk)")
    request.add_argument("--cached", type=number_list, default=[0], help="prompt tokens already in the prefix cache")
    request.add_argument("--shared-prefix", type=number_list, default=[0], metavar="TOKENS",
                         help="leading prompt tokens every request of the batch shares (KV stored once)")
    request.add_argument("--cascade", action="store_true",
                         help="a shared-prefix (cascade) kernel reads the shared prefix once per decode step")
    request.add_argument("--draft", metavar="ID", help="speculative decoding with this draft model")
    request.add_argument("--mtp-layers", type=int, metavar="N", help="speculative decoding with N-layer MTP heads")
    request.add_argument("--k", type=int, help="tokens drafted per round (default 4)")
    request.add_argument("--acceptance", type=float, help="per-token acceptance rate, 0 ... 1 (default 0.7)")
    request.add_argument("--sparse", action="store_true", help="use 2:4 sparse peaks instead of dense")
    request.add_argument("--routing", choices=("uniform", "identical"), default="uniform",
                         help="MoE routing: uniform (expected experts, default) or identical (the strict floor)")
    request.add_argument("--format", choices=("table", "json", "csv"), default="table")
    request.set_defaults(handler=run_request)


def _one(name: str, values: list[float]) -> float:
    if len(values) != 1:
        raise InvalidValueError(name, ",".join(f"{v:g}" for v in values), "one value")
    return values[0]


def run_request(args: argparse.Namespace) -> int:
    from ..catalog import load_accelerator
    from ..floors.request import mean_decode_context, request_floor

    speculative = args.draft is not None or args.mtp_layers is not None
    if not speculative and (args.k is not None or args.acceptance is not None):
        raise InvalidValueError("--k/--acceptance", args.k if args.k is not None else args.acceptance,
                                "options of speculative decoding: give --draft ID or --mtp-layers N")
    model = load_model_from_args(args)
    batch = np.asarray(args.batch, dtype=float)[:, None, None]
    prompt = np.asarray(args.prompt, dtype=float)[None, :, None]
    output = np.asarray(args.output, dtype=float)[None, None, :]
    chunk = None if args.chunk is None else _one("--chunk", args.chunk)
    blocks: list[str] = []
    records: list[dict[str, Any]] = []
    for gpu in args.gpu:
        device = load_accelerator(gpu)
        r = request_floor(model, device, prompt, output, batch, chunk=chunk, cached=_one("--cached", args.cached),
                          shared_prefix=_one("--shared-prefix", args.shared_prefix), cascade=args.cascade,
                          sparse=args.sparse, routing=args.routing)
        rows = r.to_records()
        notes: tuple[str, ...] = ()
        if speculative:
            notes = tuple(n for n in _add_speculative(args, model, device, r, rows, mean_decode_context)
                          if n not in r.notes)
        records += rows
        blocks.append(str(r) + (_speculative_table(rows, notes) if speculative else ""))
    print("\n\n".join(blocks) if args.format == "table" else emit_records(records, args.format))
    return 0


def _add_speculative(args: argparse.Namespace, model: Model, device: Accelerator, r: RequestFloor,
                     rows: list[dict[str, Any]],
                     mean_decode_context: Callable[[np.ndarray, np.ndarray], ArrayOrExpr]) -> tuple[str, ...]:
    """Add the speculative keys to ``rows``; returns the speculative floor's notes."""
    from ..floors.speculative import speculative_floor

    k = 4 if args.k is None else args.k
    acceptance = 0.7 if args.acceptance is None else args.acceptance
    context = np.maximum(mean_decode_context(r.prompt, r.output), r.prompt)
    s = speculative_floor(model, device, draft=args.draft, mtp_layers=args.mtp_layers, k=k, acceptance=acceptance,
                          batch=r.batch, context=context, sparse=args.sparse, routing=args.routing)
    columns = {
        "speculative_speedup": s.speedup, "speculative_tpot_s": s.time_per_token_s,
        "speculative_break_even_acceptance": s.break_even_acceptance, "speculative_best_k": s.best_k,
        "speculative_max_useful_batch": s.max_useful_batch,
    }
    flat = {key: np.broadcast_to(value, r.batch.shape).ravel() for key, value in columns.items()}
    steps = np.broadcast_to(r.output - 1, r.batch.shape).ravel()
    ttft = np.broadcast_to(r.ttft_s, r.batch.shape).ravel()
    for i, row in enumerate(rows):
        row.update({"speculative_draft": s.draft, "speculative_k": int(k), "speculative_acceptance": float(acceptance)})
        for key, column in flat.items():
            value = float(column[i])
            whole = key in ("speculative_best_k", "speculative_max_useful_batch") and np.isfinite(value)
            row[key] = int(value) if whole else value
        row["speculative_e2e_latency_s"] = float(ttft[i] + steps[i] * flat["speculative_tpot_s"][i])
    return s.notes


def _cell(value: float | int) -> str:
    """A whole number as it is, NaN (needs a compute peak the device lacks) as n/a."""
    return "n/a" if isinstance(value, float) and np.isnan(value) else str(value)


def _number(value: float, digits: int) -> str:
    """``format_number``, NaN as n/a."""
    return "n/a" if np.isnan(value) else format_number(value, digits)


def _speculative_table(rows: list[dict[str, Any]], notes: tuple[str, ...] = ()) -> str:
    first = rows[0]
    header = (f"\nwith speculative decoding ({first['speculative_draft']}, k = {first['speculative_k']}, "
              f"acceptance {first['speculative_acceptance']:g}; at each request's mean decode context)")
    table = [[str(r["batch"]), str(r["prompt"]), str(r["output"]), _number(r["speculative_speedup"], 4),
              _number(r["speculative_tpot_s"] * 1e3, 4), _number(r["speculative_e2e_latency_s"] * 1e3, 4),
              _number(r["speculative_break_even_acceptance"], 3), _cell(r["speculative_best_k"]),
              _cell(r["speculative_max_useful_batch"])] for r in rows]
    return header + "\n" + "\n".join([format_table(["batch", "prompt", "output", "speedup", "TPOT ms", "E2E ms",
                                                   "break-even a", "best k", "max batch"], table, align="right"),
                                     *(f"note: {note}" for note in notes)])
