"""Core subcommands: ``floor``, ``list``, ``show`` and ``demo``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .common import (Subparsers, add_model_arguments, add_parallel_arguments, add_routing_argument, emit_records,
                     layout_flag, link_options, load_model_from_args, number_list, parallel_from_args, positive)
from ..errors import InvalidValueError
from ..floors.grid import DEFAULT_CONTEXT
from ..specs.accelerator import CATEGORIES, Accelerator
from ..units import GB, TFLOP, format_number
from ..units import format_table

if TYPE_CHECKING:
    from ..floors.layers import LayerTable
    from ..floors.layout_result import ParallelFloor
    from ..floors.results import DecodeFloor
    from ..specs.accelerator import MemoryTier
    from ..specs.model import Model

#: The built-in default of ``demo``: a model and a spread of catalog accelerators.
DEMO_MODEL = "llama-3.1-8b"
DEMO_GPUS = ("a100-80gb-sxm", "h100-sxm", "h200-sxm", "mi300x", "l4")
DEMO_BATCH = (1, 8, 64, 256)
DEMO_CONTEXT = 4096


def register(subparsers: Subparsers) -> None:
    floor = subparsers.add_parser("floor", help="decode step floors of a model on accelerators")
    add_model_arguments(floor)
    floor.add_argument("--batch", type=number_list, default=[1], help="comma-separated batch sizes (default 1)")
    floor.add_argument("--context", type=number_list, default=[DEFAULT_CONTEXT],
                       help=f"comma-separated contexts (default {DEFAULT_CONTEXT}, as decode_floor; 0: weights only)")
    floor.add_argument("--sparse", action="store_true", help="use 2:4 sparse peaks instead of dense")
    add_routing_argument(floor)
    floor.add_argument("--latency", metavar="PROFILE",
                       help="add the serial chain of a latency profile (preset id from 'list latency', or a .toml file)")
    floor.add_argument("--energy", action="store_true",
                       help="add energy per token: the data-movement floor (sourced pJ/bit of the memory) and the "
                            "estimate at board power")
    floor.add_argument("--price-per-hour", type=positive("--price-per-hour"), metavar="USD",
                       help="price of one device-hour: adds dollars per million output tokens")
    floor.add_argument("--engine", metavar="NAME",
                       help="also the expected step time with a 90%% band from an engine profile "
                            "(llama.cpp-cuda, llama.cpp-metal, gpt-fast, exllama, hf-eager, ...; see docs/how_close_is_the_floor.md)")
    floor.add_argument("--per-layer", action="store_true",
                       help="split each step by layer kind (attention, recurrent mixer, MLP, MoE router/shared/routed "
                            "experts, embedding, lm_head): bytes, FLOPs, intensity, times and bound of each")
    floor.add_argument("--format", choices=("table", "json", "csv"), default="table")
    add_parallel_arguments(floor)
    floor.set_defaults(handler=run_floor)

    listing = subparsers.add_parser("list", help="list catalog ids")
    listing.add_argument("what", choices=("models", "gpus", "tiers", "formats", "latency"))
    listing.add_argument("--vendor", help="gpus only: one vendor (NVIDIA, AMD, Intel, Apple, Google, AWS, Qualcomm, SambaNova; any case)")
    listing.add_argument("--category", choices=CATEGORIES,
                         help="gpus only: datacenter, workstation, consumer, soc (laptop/SoC, unified memory) or cpu")
    listing.set_defaults(handler=run_list)

    show = subparsers.add_parser("show", help="every figure of an accelerator or tier with unit, kind and source; or a model")
    show.add_argument("id", help="accelerator, memory tier or model id (or a spec/config path)")
    show.set_defaults(handler=run_show)

    demo = subparsers.add_parser("demo", help="floors of a default model on several accelerators, and a ridge plot")
    demo.add_argument("--out", default="demo-output", help="folder for the plot (default demo-output)")
    demo.set_defaults(handler=run_demo)


def run_floor(args: argparse.Namespace) -> int:
    from ..floors.sweeps import sweep

    model = load_model_from_args(args)
    layout = parallel_from_args(args)
    if args.per_layer and (args.energy or args.price_per_hour is not None or args.engine is not None):
        raise InvalidValueError("--per-layer", "with --energy/--price-per-hour/--engine", "one of them at a time")
    try:
        result = sweep([model], args.gpu, batch=args.batch, context=args.context, sparse=args.sparse,
                       routing=args.routing, latency=args.latency, parallel=layout, **link_options(args))
    except InvalidValueError as exc:
        raise layout_flag(exc) from None
    if args.engine is not None:
        from .measure import expected_records, expected_table

        if layout is not None and (layout.ep > 1 or layout.attention_dp > 1):
            raise InvalidValueError("--engine", f"{args.engine} with {layout}", "a tensor x pipeline layout (--tp, "
                                    "--pp) for a decode step: the engine profiles have no term for --ep or --dp "
                                    "there; `roofline-decode serve --engine` takes any layout")
        records = expected_records(model, args.gpu, args.batch, args.context, args.engine, args.routing, layout)
        spread = layout is not None and layout.num_devices > 1
        shown = "\n\n".join(parallel_table(floor) for floor in result) if spread else str(result)  # type: ignore[arg-type]
        print(shown + "\n\n" + expected_table(records) if args.format == "table"
              else emit_records(records, args.format))
        return 0
    if args.per_layer:  # under a layout of several devices: the busiest device's rows and its link time
        tables = [floor.layers() for floor in result]
        print("\n\n".join(str(t) + _communication_line(t) for t in tables) if args.format == "table"
              else emit_records([record for t in tables for record in t.to_records()], args.format))
        return 0
    spread = layout is not None and layout.num_devices > 1
    if spread and args.format == "table" and not (args.energy or args.price_per_hour is not None):
        print("\n\n".join(parallel_table(floor) for floor in result))  # type: ignore[arg-type]  # ParallelFloors
        return 0
    if not (args.energy or args.price_per_hour is not None):
        print(str(result) if args.format == "table" else emit_records(result.to_records(), args.format))
        return 0
    from ..floors.energy import ENERGY_RECORD_KEYS

    keep = (ENERGY_RECORD_KEYS if args.energy else ()) + (
        ("price_per_hour", "usd_per_million_tokens") if args.price_per_hour is not None else ())
    if args.format != "table":
        records = [{**record, **{k: v for k, v in extra.items() if k in keep}}
                   for floor in result
                   for record, extra in zip(floor.to_records(), floor.energy_records(args.price_per_hour))]
        print(emit_records(records, args.format))
        return 0
    print("\n\n".join((parallel_table(floor) if spread else str(floor))  # type: ignore[arg-type]
                       + "\n\n" + energy_table(floor, args.energy, args.price_per_hour) for floor in result))
    return 0


def _communication_line(table: LayerTable) -> str:
    """The link time of a layout's per-layer table (its communication row), or nothing."""
    import numpy as np

    rows = [row for row in table if row.kind == "communication"]
    if not rows:
        return ""
    times = ", ".join(format_number(float(t) * 1e3) for t in np.ravel(rows[0].time_s))
    totals = table.floor
    return (f"\nlayout {getattr(totals, 'layout', '')}: the rows are the busiest of its "
            f"{getattr(totals, 'num_devices', 1)} devices; communication (its link time per step, no bytes or FLOPs "
            f"in the rows above): {times} ms")


def parallel_table(floor: ParallelFloor) -> str:
    """The table of a floor under a layout of several devices: the busiest device's view."""
    headers = ["batch", "context", "weights GB/dev", "KV GB/dev", "read GB/dev", "TFLOP/dev", "mem ms", "comp ms",
               "comm ms", "step ms", "tokens/s", "bound"]
    rows = [[format_number(r["batch"]), format_number(r["context"]), format_number(r["weight_bytes_per_device"] / GB),
             format_number(r["kv_bytes_per_device"] / GB), format_number(r["bytes_read_per_device"] / GB),
             format_number(r["flops_per_device"] / TFLOP), format_number(r["memory_time_s"] * 1e3),
             format_number(r["compute_time_s"] * 1e3), format_number(r["communication_time_s"] * 1e3),
             format_number(r["step_time_s"] * 1e3), format_number(r["tokens_per_s"]), r["bound"]]
            for r in floor.to_records()]
    title = (f"{floor.model} on {floor.num_devices} x {floor.accelerator} ({floor.parallel}), the busiest device per "
             "step; tokens/s over all devices")
    return "\n".join([title, format_table(headers, rows, align="right", indent="  "),
                      *[f"  note: {note}" for note in floor.notes]])


def energy_table(floor: DecodeFloor | ParallelFloor, energy: bool, price_per_hour: float | None) -> str:
    """The energy and cost lines of ``floor --energy/--price-per-hour`` for one floor."""
    records = floor.to_records()
    extras = floor.energy_records(price_per_hour)
    headers = ["batch", "context"]
    if energy:
        headers += ["J/token floor", "J/token @board", "tokens/J floor"]
    if price_per_hour is not None:
        headers += [f"$/M tokens @{price_per_hour:g}/h"]

    def shown(value: float | None) -> str:
        return "n/a" if value is None else format_number(value)

    rows: list[list[str]] = []
    for record, extra in zip(records, extras):
        row = [format_number(record["batch"]), format_number(record["context"])]
        if energy:
            row += [shown(extra["joules_per_token_floor"]), shown(extra["joules_per_token_at_board_power"]),
                    shown(extra["tokens_per_joule_floor"])]
        if price_per_hour is not None:
            row += [shown(extra["usd_per_million_tokens"])]
        rows.append(row)
    lines = [format_table(headers, rows, align="right", indent="  ")]
    if energy:
        lines += [f"  note: {note}" for note in floor.energy_notes]
    if price_per_hour is not None:
        lines.append(f"  note: cost = {price_per_hour:g} per device-hour x step time / tokens, the device busy at "
                     "this batch (idle time and prefill not included)")
    return "\n".join(lines)


def run_list(args: argparse.Namespace) -> int:
    from .. import catalog
    from ..catalog_docs import headline_peak, printed
    from ..formats import FORMATS
    from ..floors.capacity import device_memory
    from ..units import GiB

    if args.what != "gpus" and (args.vendor is not None or args.category is not None):
        raise InvalidValueError("--vendor/--category", f"list {args.what}", "only with 'list gpus'")
    if args.what == "models":
        rows = []
        for model_id in catalog.list_models():
            meta = catalog.model_metadata(model_id)
            rows.append([model_id, meta.get("name", ""), meta.get("params_stated", "")])
        print(format_table(["id", "name", "parameters (stated)"], rows))
    elif args.what == "gpus":
        rows, fell_back, vendors = [], False, set()
        for gpu_id in catalog.list_accelerators():
            gpu = catalog.load_accelerator(gpu_id)
            vendors.add(_vendor_word(gpu.vendor))
            if args.vendor is not None and _vendor_word(gpu.vendor).casefold() != args.vendor.strip().casefold():
                continue
            if args.category is not None and gpu.category != args.category:
                continue
            memory = gpu.figures.get("memory_capacity")
            headline = headline_peak(gpu)
            peak = ridge = "-"
            if headline is not None:
                precision, value = headline
                peak = f"{value / TFLOP:.6g}" + ("" if precision == "bf16" else f" ({precision})")
                ridge = f"{gpu.ridge_point(precision):.4g}"
                fell_back |= precision != "bf16"
            rows.append([
                gpu_id, gpu.name, printed(memory) if memory else f"{gpu.memory_capacity / GB:g} GB",
                f"{gpu.memory_bandwidth / GB:.6g} GB/s", peak, ridge, gpu.category or "-",
                f"{device_memory(gpu) / GiB:.4g}",
            ])
        if args.vendor is not None and not rows and _vendor_word(args.vendor.strip()).casefold() not in {
            v.casefold() for v in vendors
        }:
            raise InvalidValueError("--vendor", args.vendor, "one of " + ", ".join(sorted(vendors - {"-"})))
        if not rows:
            print("no accelerator matches " + " ".join(
                f"--{name} {value}" for name, value in (("vendor", args.vendor), ("category", args.category)) if value))
            return 0
        print(format_table(["id", "name", "memory", "bandwidth", "dense bf16 TFLOP/s", "ridge FLOP/B", "category",
                            "device GiB"], rows))
        print("device GiB: what the accelerator itself can fill (vendor GB read as GiB, less ECC or the unified-memory "
              "share), before the runtime reserve; see docs/your_own_device.md")
        if fell_back:
            print("(fp16): no bf16 peak published; the dense fp16 peak and its ridge point are shown")
    elif args.what == "tiers":
        rows = []
        for tier_id in catalog.list_memory_tiers():
            tier = catalog.load_memory_tier(tier_id)
            figure = tier.figures.get("bandwidth")
            rows.append([tier_id, tier.name, printed(figure) if figure else f"{tier.bandwidth / GB:.4g} GB/s",
                         tier.direction])
        print(format_table(["id", "name", "bandwidth", "meaning"], rows))
    elif args.what == "latency":
        from ..specs.latency import list_latency_profiles, load_latency_profile

        rows = []
        for profile_id in list_latency_profiles():
            p = load_latency_profile(profile_id)
            rows.append([profile_id, f"{p.operation_latency * 1e6:.3g}", f"{p.operations_per_layer:g}",
                         f"{p.collective_latency * 1e6:.3g}", f"{p.step_latency * 1e6:.3g}", p.name])
        print(format_table(["id", "op us", "ops/layer", "collective us", "step us", "name"], rows))
    else:
        rows = [[f.name, format_number(f.bits_per_element), f.compute_precision, f.description] for f in FORMATS.values()]
        print(format_table(["format", "bits/element", "computes on", "description"], rows))
    return 0


def _vendor_word(vendor: str | None) -> str:
    # "Intel (Habana)" is filtered as Intel
    return (vendor or "-").split(" (")[0]


def _device_memory_line(accelerator: Accelerator) -> str:
    """'device memory: ...' with the rule behind it (ECC figure, unified-memory share)."""
    from ..catalog_docs import printed
    from ..floors.capacity import device_memory, gpu_memory_share
    from ..units import GiB

    why = []
    if accelerator.category:
        why.append(f"category {accelerator.category}")
    if accelerator.usable_memory_capacity is not None and "usable_memory" in accelerator.figures:
        why.append(f"the runtime exposes {printed(accelerator.figures['usable_memory'])}")
    share = gpu_memory_share(accelerator)
    if accelerator.unified_memory:
        if accelerator.gpu_memory_share is None and share < 1:
            why.append(f"unified: {share:.3g} of it by macOS's default GPU wired limit (gpu_memory_share overrides)")
        elif share < 1:
            why.append(f"unified: gpu_memory_share {share:g}")
        else:
            why.append("unified: all of it counted (set gpu_memory_share for what the OS keeps)")
    return f"device memory: {device_memory(accelerator) / GiB:.4g} GiB" + (f" ({'; '.join(why)})" if why else "")


def _show_hardware(spec: Accelerator | MemoryTier) -> str:
    from ..catalog_docs import headline_peak, printed

    lines = [f"{spec.name}  [{spec.id}]"]
    if spec.path:
        lines.append(f"  file: {spec.path}")
    about = [(label, getattr(spec, attr, None)) for label, attr in
             (("vendor", "vendor"), ("form factor", "form_factor"), ("memory type", "memory_type"), ("direction", "direction"))]
    if any(value for _, value in about):
        lines.append("  " + "; ".join(f"{label}: {value}" for label, value in about if value))
    rows = [[key, printed(fig), fig.kind, fig.source] for key, fig in spec.figures.items()]
    table = format_table(("figure", "as printed", "kind", "source"), rows, indent="  ").splitlines()
    lines.append(table[0])
    for row_line, fig in zip(table[1:], spec.figures.values()):
        lines.append(row_line)
        for label in ("derivation", "structure", "note"):
            if getattr(fig, label, None):
                lines.append(f"      {label}: {getattr(fig, label)}")
    if not spec.figures:
        lines.append("  (no figures with provenance: built from plain numbers)")
    link = getattr(spec, "interconnect", None)
    if link is not None:
        lines.append(f"  interconnect: {link.name}: {link.direction.replace('_', ' ')}, {link.scope.replace('_', ' ')}"
                     f" = {link.per_direction_bandwidth / GB:.6g} GB/s per direction")
        if link.note:
            lines.append(f"      note: {link.note}")
    if isinstance(spec, Accelerator):  # a memory tier has no device memory or peak
        lines.append("  " + _device_memory_line(spec))
        headline = headline_peak(spec)
        if headline is not None:
            lines.append(f"  ridge point (dense {headline[0]}): {spec.ridge_point(headline[0]):.4g} FLOP/B")
    if spec.notes:
        lines.append(f"  notes: {spec.notes}")
    lines.append("  sources:")
    for key, source in spec.sources.items():
        by = f", {source.publisher}" if source.publisher else ""
        lines.append(f"    {key}: {source.title}{by}, {source.url} (retrieved {source.retrieved})")
    return "\n".join(lines)


def _experts(model: Model) -> str:
    if not model.is_moe:
        return "dense"
    shared = model.shared_expert_intermediate_size
    return (f"{model.num_experts_per_token} of {model.num_experts}, width {model.moe_intermediate_size}"
            + (f", shared width {shared}" if shared else ""))


def _show_model(model: Model, stated: str | None = None) -> str:
    rows = [
        *([("parameters (stated)", stated)] if stated else []),
        ("parameters", f"{model.parameter_count:,}"),
        ("active parameters", f"{model.active_parameter_count:,}"),
        ("layers (global / sliding)", f"{model.num_layers} ({model.num_global_layers} / {model.num_sliding_layers})"
         + "".join(f", {n} {kind}" for n, kind in ((model.num_chunked_layers, "chunked"),
                                                   (model.num_sparse_layers, "sparse"),
                                                   (model.num_recurrent_layers, "recurrent")) if n)),
        ("hidden, heads, KV heads, head_dim", f"{model.hidden_size}, {model.num_heads}, {model.num_kv_heads}, {model.head_dim}"),
        ("intermediate", str(model.intermediate_size)),
        ("vocab", str(model.vocab_size)),
        ("experts (k of E)", _experts(model)),
        ("MLA latent", str(model.kv_lora_rank) if model.is_mla else "no"),
        ("weights", f"{model.weight_format.name}: {model.weight_bytes / GB:.4g} GB"),
        ("KV per token", f"{model.kv_bytes_per_token:,.0f} B ({model.kv_format.name})"),
        ("source", model.source or "-"),
    ]
    return "\n".join([model.name] + [f"  {k:36s} {v}" for k, v in rows])


def run_show(args: argparse.Namespace) -> int:
    from .. import catalog
    from ..errors import UnknownIdError
    from ..specs.spec_file import load_spec_file

    ident = args.id
    if ident in catalog.list_models():
        print(_show_model(catalog.load_model(ident), catalog.model_metadata(ident).get("params_stated")))
    elif ident.endswith(".json"):
        print(_show_model(catalog.load_model(ident)))
    elif ident.endswith(".toml"):
        print(_show_hardware(load_spec_file(ident)))
    elif ident in catalog.list_accelerators():
        print(_show_hardware(catalog.load_accelerator(ident)))
    elif ident in catalog.list_memory_tiers():
        print(_show_hardware(catalog.load_memory_tier(ident)))
    elif ident and catalog._is(Path(ident), "dir"):  # a Hugging Face model folder holding a config.json
        print(_show_model(catalog.load_model(ident)))
    else:
        raise UnknownIdError(
            "accelerator, tier or model", ident,
            catalog.list_accelerators() + catalog.list_memory_tiers() + catalog.list_models(),
        )
    return 0


def run_demo(args: argparse.Namespace) -> int:
    from ..floors.sweeps import sweep

    from ..planning import max_batch

    result = sweep([DEMO_MODEL], list(DEMO_GPUS), batch=list(DEMO_BATCH), context=[DEMO_CONTEXT])
    print(result)
    # Capacity is a separate constraint from the bandwidth floor: say where the batches fit.
    print(f"\nCapacity at {DEMO_CONTEXT} tokens per sequence (largest batch whose weights and KV cache fit):")
    for gpu in DEMO_GPUS:
        print(f"  {gpu:16s} {int(max_batch(DEMO_MODEL, gpu, DEMO_CONTEXT)):>5d} sequences")
    print()
    print(write_demo_plot(args.out))
    return 0


def write_demo_plot(out: str) -> str:
    """Write the demo's ridge-point plot; returns a line saying where (or why not).

    The plot places the demo model's decode steps (batch 1 to 1024) on the roofline of every
    demo accelerator at a short context (256 tokens, where batching reaches the ridge) and at
    the demo context (where KV reads keep decode memory-bound at any batch).
    """
    from pathlib import Path

    from ..errors import MissingExtraError

    try:
        from ..plotting import ridge_plot, save
        from ..plotting import headless

        plt = headless()
    except MissingExtraError as exc:
        return f"(no plot written: {exc})"
    ax = ridge_plot(DEMO_MODEL, list(DEMO_GPUS), batch=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
                    context=[256, DEMO_CONTEXT])
    path = save(ax, Path(out) / "ridge.png", dpi=120)
    plt.close(ax.figure)
    return f"ridge-point plot written to {path}"
