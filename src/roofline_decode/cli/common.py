"""Argument types and output helpers shared by the CLI subcommands."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

from ..errors import InvalidValueError

if TYPE_CHECKING:
    from ..specs.model import Model

#: What each subcommand module's ``register`` receives (``parser.add_subparsers()``).
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


#: Suffixes of token counts, binary as context lengths are named: ``32K`` = 32,768 tokens,
#: ``10M`` = 10 x 2**20 = 10,485,760 (Llama 4 Scout's "10M" context, its max_position_embeddings).
COUNT_SUFFIXES = {"k": 2**10, "K": 2**10, "m": 2**20, "M": 2**20}


def _scaled_number(text: str) -> float:
    """``text`` as a float; a trailing K multiplies by 1024 and M by 1024**2 (``32K`` = 32768,
    ``10M`` = 10485760 tokens; lower case alike).  ValueError for anything else."""
    text = text.strip()
    scale = COUNT_SUFFIXES.get(text[-1:], 1)
    return float(text[:-1] if scale > 1 else text) * scale


#: How a count may be written, for the messages
_COUNT_FORMS = "numbers like 8, 1e3, 32K (= 32768) or 10M (= 10485760)"


def number_list(text: str) -> list[float]:
    """Parse ``"1,8,64"`` (also ``1e3``, ``4k``, ``32K``, ``10M``) into numbers; an argparse type."""
    values: list[float] = []
    for part in text.split(","):
        try:
            value = _scaled_number(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of {_COUNT_FORMS}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r}: values must be finite")
        values.append(int(value) if value.is_integer() else value)
    return values


def routing_value(text: str) -> str | float:
    """``--routing``: ``uniform``, ``identical`` or a measured number of distinct experts per
    MoE layer (an argparse type; the range [k, E] is checked against the model later)."""
    if text in ("uniform", "identical"):
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"routing must be 'uniform', 'identical' or a number of distinct experts per MoE layer, got {text!r}"
        ) from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"routing must be a finite number of experts, got {text!r}")
    return value


def add_routing_argument(parser: argparse.ArgumentParser) -> None:
    """--routing uniform|identical|COUNT (MoE routing assumption of the floor)."""
    parser.add_argument(
        "--routing", type=routing_value, default="uniform", metavar="uniform|identical|COUNT",
        help="MoE routing: uniform (default, expected experts of independent routing), identical (every sequence "
             "picks the same k experts: the strict floor) or a measured mean count of distinct experts per layer",
    )


def add_model_arguments(parser: argparse.ArgumentParser, gpu_required: bool = True) -> None:
    """--model, --gpu (repeatable), --weights, --kv."""
    parser.add_argument("--model", required=True, help="catalog model id (or the Hugging Face repository id of a "
                        "bundled model, e.g. meta-llama/Llama-3.1-8B), a config.json, its folder or a .gguf file")
    parser.add_argument(
        "--gpu", action="append", required=gpu_required, metavar="ID",
        help="accelerator id or path to a spec TOML; repeat for several",
    )
    parser.add_argument("--weights", metavar="FMT", help="weight format (bf16, fp8, int8, int4-g32, q4_0, mxfp4 ...)")
    parser.add_argument("--kv", metavar="FMT", help="KV-cache format (bf16, fp8 ...)")


def load_model_from_args(args: argparse.Namespace) -> Model:
    from ..catalog import load_model

    return load_model(args.model, weights=args.weights, kv=args.kv)


def emit_records(records: list[dict[str, Any]], fmt: str) -> str:
    """Records as JSON (a list of objects) or CSV.

    Numbers that are not finite get one spelling each: NaN (not defined, e.g. the ridge point
    of a device with no compute peak published) is JSON ``null`` and an empty CSV cell; +inf
    (e.g. a critical batch where the step is memory-bound at any batch) is ``"inf"`` in both
    (``float("inf")`` reads it back).  A list (notes, flags) is a JSON array and one CSV cell
    joined by ``"; "``.
    """
    if fmt == "json":
        return json.dumps([{k: jsonable(v) for k, v in r.items()} for r in records], indent=2)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(records[0]) if records else [], lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: _csv_cell(v) for k, v in r.items()} for r in records)
    return buffer.getvalue().rstrip("\n")


def jsonable(value: Any) -> Any:
    # JSON has no NaN or infinity: NaN (not defined) is null, +/-inf the strings "inf"/"-inf"
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _csv_cell(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return ""
    if isinstance(value, (list, tuple)):
        return "; ".join(str(v) for v in value)
    return value


def _number_type(name: str, allowed: str, accept: Callable[[float], bool]) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be {allowed}, got {text!r}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f"{name} must be {allowed}, got {text!r}")
        return value

    return parse


def positive(name: str) -> Callable[[str], float]:
    """An argparse type for a finite number > 0 named ``name``."""
    return _number_type(name, "a finite number > 0", lambda value: math.isfinite(value) and value > 0)


def non_negative(name: str) -> Callable[[str], float]:
    """An argparse type for a finite number >= 0 named ``name``."""
    return _number_type(name, "a finite number >= 0", lambda value: math.isfinite(value) and value >= 0)


def up_to(name: str, high: float) -> Callable[[str], float]:
    """An argparse type for a finite number from 0 to ``high`` named ``name``."""
    return _number_type(name, f"a finite number from 0 to {high:g}", lambda value: 0 <= value <= high)


def fraction(name: str) -> Callable[[str], float]:
    """An argparse type for a number in [0, 1] named ``name``."""
    return _number_type(name, "a number in [0, 1]", lambda value: 0 <= value <= 1)


def whole_number(name: str, low: int) -> Callable[[str], int]:
    """An argparse type for a whole number from ``low`` to 2**53 named ``name`` (``32K`` allowed);
    beyond 2**53 a float no longer holds every whole number, and no count of the library is that large."""

    def parse(text: str) -> int:
        try:
            value = _scaled_number(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number ({_COUNT_FORMS}), got {text!r}") from None
        if not value.is_integer() or value < low:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number >= {low}, got {text!r}")
        if value > 2**53:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number from {low} to 2**53, got {text!r}")
        return int(value)

    return parse


#: the flag of each layout field (a refusal names the flag the user typed)
_LAYOUT_FLAGS = {"tp": "--tp", "pp": "--pp", "ep": "--ep", "attention_dp": "--dp", "dp": "--dp", "moe_tp": "--moe-tp"}


def add_parallel_arguments(parser: argparse.ArgumentParser) -> None:
    """--tp --pp --ep --dp --moe-tp (a parallel layout, roofline_decode.Parallel) and the link
    overrides --link-gbps --node-size --scale-out-gbps."""
    group = parser.add_argument_group("parallel layout (AIConfigurator/TensorRT-LLM convention: tp x dp = ep x moe-tp "
                                      "devices per stage, tp x dp x pp devices)")
    group.add_argument("--tp", type=whole_number("--tp", 1), default=1, help="tensor-parallel degree (default 1)")
    group.add_argument("--pp", type=whole_number("--pp", 1), default=1, help="pipeline stages (default 1)")
    group.add_argument("--ep", type=whole_number("--ep", 1), default=1, help="expert-parallel degree (default 1)")
    group.add_argument("--dp", type=whole_number("--dp", 1), default=1, help="attention data-parallel groups (default 1)")
    group.add_argument("--moe-tp", type=whole_number("--moe-tp", 1), default=None,
                       help="tensor split of each expert (default tp x dp / ep)")
    group.add_argument("--link-gbps", type=positive("--link-gbps"), metavar="GB/s",
                       help="scale-up link bandwidth per direction in GB/s (default: the device's interconnect)")
    group.add_argument("--node-size", type=whole_number("--node-size", 1), metavar="N",
                       help="devices per scale-up (NVLink) domain, e.g. 8 for an HGX node")
    group.add_argument("--scale-out-gbps", type=positive("--scale-out-gbps"), metavar="GB/s",
                       help="scale-out (NIC) bandwidth per device and direction in GB/s")


def layout_flag(exc: InvalidValueError) -> InvalidValueError:
    """``exc`` renamed after the command-line flag of the layout field it names (as is otherwise)."""
    field = exc.field.split(".")[-1] if exc.field.split(".")[0] in ("Parallel", "parallel") else None
    if field in _LAYOUT_FLAGS:
        return InvalidValueError(_LAYOUT_FLAGS[field], exc.value, exc.allowed)
    return exc


def parallel_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~roofline_decode.Parallel` of --tp --pp --ep --dp --moe-tp (None: all 1 and
    no --moe-tp); a bad layout raises an InvalidValueError naming the flag."""
    from ..specs.parallel import Parallel

    degrees = {"tp": args.tp, "pp": args.pp, "ep": args.ep, "attention_dp": args.dp, "moe_tp": args.moe_tp}
    if all(v in (1, None) for v in degrees.values()):
        return None
    try:
        return Parallel(**degrees)
    except InvalidValueError as exc:
        raise layout_flag(exc) from None


def link_options(args: argparse.Namespace) -> dict[str, Any]:
    """The link overrides of --link-gbps --node-size --scale-out-gbps, in SI units."""
    return {"link_bandwidth": None if args.link_gbps is None else args.link_gbps * 1e9, "node_size": args.node_size,
            "scale_out_bandwidth": None if args.scale_out_gbps is None else args.scale_out_gbps * 1e9}


__all__ = ["add_parallel_arguments", "parallel_from_args", "layout_flag", "link_options", "number_list", "routing_value", "add_routing_argument", "add_model_arguments", "load_model_from_args", "emit_records", "positive", "non_negative",
           "fraction", "InvalidValueError", "whole_number"]
