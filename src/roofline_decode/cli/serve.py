"""The ``serve`` subcommand: floors of the serving-benchmark metrics for closed-loop clients.

``roofline-decode serve --model qwen3-32b-fp8 --kv fp8 --gpu h100-sxm --concurrency 128 --isl 4096
--osl 128,256,512 --tp 4`` prints TTFT, TPOT (= ITL), E2E, requests/s and output tokens/s per
GPU and per user (:func:`~roofline_decode.floors.serving.serving_floor`), one table per
accelerator (table) or one record per concurrency × ISL × OSL (json, csv); the layout of a
replica is ``--tp --pp --ep --dp --moe-tp``.  ``--disagg`` serves prompts on prefill workers and
decodes on decode workers (``--prefill tp4``, ``--decode dp8ep8``, ``--prefill-workers``,
``--decode-workers``; the KV crosses ``--kv-link-gbps``); with ``--rate``
it also prints the prefill and decode workers that rate needs
(:func:`~roofline_decode.floors.disaggregation.balanced_workers`).  ``--engine NAME`` (aggregated
serving) also prints the expected TTFT and TPOT of an engine profile with their 90 % bands beside
the floors (:func:`~roofline_decode.measure.expected.expected` with ``prompt=`` and ``output=``;
the layout's devices as one tensor-parallel group, as the profiles were fitted).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .common import (Subparsers, add_model_arguments, add_parallel_arguments, emit_records, layout_flag, link_options,
                     load_model_from_args, number_list, parallel_from_args, positive, whole_number)
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
    add_parallel_arguments(serve)
    disagg = serve.add_argument_group("disaggregated prefill and decode")
    disagg.add_argument("--disagg", action="store_true", help="prompts on prefill workers, decode on decode workers")
    disagg.add_argument("--prefill", metavar="LAYOUT", help="layout of a prefill worker, e.g. tp4 (default: the "
                        "--tp ... layout)")
    disagg.add_argument("--decode", metavar="LAYOUT", help="layout of a decode worker, e.g. dp8ep8 (default: the "
                        "--tp ... layout)")
    disagg.add_argument("--prefill-workers", type=whole_number("--prefill-workers", 1), default=1,
                        help="prefill workers (default 1)")
    disagg.add_argument("--decode-workers", type=whole_number("--decode-workers", 1), default=1,
                        help="decode workers (default 1)")
    disagg.add_argument("--kv-link-gbps", type=positive("--kv-link-gbps"), metavar="GB/s",
                        help="per-direction GB/s of the link the KV crosses (default: NVLink within a node, else "
                             "the NIC)")
    disagg.add_argument("--rate", type=positive("--rate"), metavar="REQ/S",
                        help="also the prefill and decode workers this request rate needs")
    serve.add_argument("--chunk", type=number_list, help="chunked-prefill size in tokens (default: none)")
    serve.add_argument("--max-batch", type=whole_number("--max-batch", 1),
                       help="most requests a worker runs at once (max_num_seqs)")
    serve.add_argument("--routing", choices=("uniform", "identical"), default="uniform",
                       help="MoE routing: uniform (expected experts, default) or identical (the strict floor)")
    serve.add_argument("--engine", metavar="NAME",
                       help="also the expected TTFT and TPOT with 90%% bands from an engine profile (vllm, sglang, "
                            "tensorrt-llm, ...; aggregated serving)")
    serve.add_argument("--format", choices=("table", "json", "csv"), default="table")
    serve.set_defaults(handler=run_serve)


def _layout(text: str | None, default: Any, flag: str) -> Any:
    """The layout of ``flag`` (its text parsed), or ``default``; a bad one names the flag."""
    if text is None:
        return default
    from ..specs.parallel import Parallel

    try:
        return Parallel.parse(text)
    except (InvalidValueError, ValueError) as exc:
        allowed = exc.allowed if isinstance(exc, InvalidValueError) else str(exc).splitlines()[0]
        raise InvalidValueError(flag, text, f"a layout such as tp4 or dp8ep8 ({allowed})") from None


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
    parallel = parallel_from_args(args)
    if args.engine is not None:
        _engine_check(args)
    if not args.disagg:
        for name, value in (("--prefill", args.prefill), ("--decode", args.decode),
                            ("--kv-link-gbps", args.kv_link_gbps), ("--rate", args.rate)):
            if value is not None:
                raise InvalidValueError(name, value, "an option of disaggregated serving: add --disagg")
        if args.prefill_workers != 1 or args.decode_workers != 1:
            raise InvalidValueError("--prefill-workers/--decode-workers", (args.prefill_workers, args.decode_workers),
                                    "options of disaggregated serving: add --disagg")
    options: dict[str, Any] = dict(routing=args.routing, chunk=_one("--chunk", args.chunk), max_batch=args.max_batch,
                                   **link_options(args))
    if args.disagg:
        options.update(mode="disaggregated", prefill_parallel=_layout(args.prefill, parallel, "--prefill"),
                       decode_parallel=_layout(args.decode, parallel, "--decode"),
                       prefill_workers=args.prefill_workers, decode_workers=args.decode_workers,
                       kv_link_bandwidth=None if args.kv_link_gbps is None else args.kv_link_gbps * 1e9)
    else:
        options["parallel"] = parallel
    blocks: list[str] = []
    records: list[dict[str, Any]] = []
    for gpu in args.gpu:
        device = load_accelerator(gpu)
        try:
            r = serving_floor(model, device, concurrency, isl, osl, **options)
        except InvalidValueError as exc:
            raise layout_flag(exc) from None
        records += r.to_records()
        block = str(r)
        if args.disagg and args.rate is not None:
            running = np.broadcast_to(r.running_batch, r.tpot_s.shape)
            b = balanced_workers(model, device, isl, osl, np.maximum(running, 1.0).max(), request_rate=args.rate,
                                 prefill_parallel=options["prefill_parallel"], decode_parallel=options["decode_parallel"],
                                 routing=args.routing, chunk=options["chunk"])
            block += "\n\n" + str(b)
        blocks.append(block)
    if args.engine is not None:
        records = _expected_records(model, args, parallel)
        blocks.append(_expected_table(records))
    print("\n\n".join(blocks) if args.format == "table" else emit_records(records, args.format))
    return 0


def _engine_check(args: argparse.Namespace) -> None:
    """``--engine`` takes aggregated serving without a chunk or batch limit (what the profiles model)."""
    for name, value in (("--disagg", args.disagg or None), ("--chunk", args.chunk), ("--max-batch", args.max_batch)):
        if value is not None:
            raise InvalidValueError("--engine", args.engine, f"aggregated serving without {name} (the engine profiles "
                                                             "expect the steady step of serving_floor's default)")


def _expected_records(model: Any, args: argparse.Namespace, parallel: Any) -> list[dict[str, Any]]:
    """One record per accelerator, concurrency, ISL and OSL: the floors of ``parallel`` (None: one
    device) and the expected TTFT and TPOT with their 90 % bands."""
    from ..measure.expected import expected

    records = []
    for gpu in args.gpu:
        for isl in args.isl:
            for osl in args.osl:
                e = expected(model, gpu, batch=np.asarray(args.concurrency, dtype=float), engine=args.engine,
                             parallel=parallel, routing=args.routing, prompt=isl, output=osl)
                assert e.ttft_s is not None and e.ttft_lower_s is not None and e.ttft_upper_s is not None
                assert e.ttft_floor_s is not None
                for i, clients in enumerate(args.concurrency):
                    records.append({
                        "model": model.name, "accelerator": gpu, "engine": args.engine, "concurrency": float(clients),
                        "input_length": float(isl), "output_length": float(osl),
                        "ttft_floor_s": float(e.ttft_floor_s[i]), "expected_ttft_s": float(e.ttft_s[i]),
                        "ttft_lower_s": float(e.ttft_lower_s[i]), "ttft_upper_s": float(e.ttft_upper_s[i]),
                        "tpot_floor_s": float(e.floor_step_time_s[i]), "expected_tpot_s": float(e.step_time_s[i]),
                        "tpot_lower_s": float(e.lower_s[i]), "tpot_upper_s": float(e.upper_s[i]),
                        "basis": e.basis, "label": e.label})
    return records


def _expected_table(records: list[dict[str, Any]]) -> str:
    from ..units import format_table

    def band(r: dict[str, Any], key: str) -> str:
        return f"{r[key + '_lower_s'] * 1e3:.4g}..{r[key + '_upper_s'] * 1e3:.4g}"

    headers = ["gpu", "C", "ISL", "OSL", "TTFT floor ms", "expected ms", "90% band ms", "TPOT floor ms",
               "expected ms", "90% band ms"]
    lines = [[r["accelerator"], f"{r['concurrency']:g}", f"{r['input_length']:g}", f"{r['output_length']:g}",
              f"{r['ttft_floor_s'] * 1e3:.4g}", f"{r['expected_ttft_s'] * 1e3:.4g}", band(r, "ttft"),
              f"{r['tpot_floor_s'] * 1e3:.4g}", f"{r['expected_tpot_s'] * 1e3:.4g}", band(r, "tpot")] for r in records]
    labels = dict.fromkeys(f"{r['accelerator']}: {r['label']}" for r in records)
    return (f"expected with engine profile {records[0]['engine']} (a floor is a strict bound; the expectation "
            "and its band are not)\n" + format_table(headers, lines) + "\n" + "\n".join(labels))
