"""Energy and cost per output token: Llama-3.1-8B and -70B on H100, H200, MI300X and B200.

Prints the table of issue 17's closing note (checked in as docs/energy.md, section "Per-token
energy and cost of four data-center GPUs"; a test keeps the page current): for batch 1 and 64
at a 4K context, in bf16,

* **J/token floor**: the data-movement energy floor, bytes moved x the access energy of the
  device's memory technology (HBM3 4.29 pJ/bit, HBM3E 2.4 pJ/bit, both *derived*; see
  ``memory_energy/``), summed over the devices of the plan, per generated token;
* **J/token @ board power**: an *estimate*, not a floor: the devices at their full board power
  (the spec's ``tdp``) for the floor's step time, per generated token;
* **$/M output tokens**: devices x price per device-hour x step time / tokens, at the example
  price below (no price list ships; give your own).

Llama-3.1-70B in bf16 (141 GB of weights) does not fit one 80 GB H100: every row runs on the
smallest tensor-parallel degree among 1, 2, 4, 8 whose weights and KV cache fit each device's
usable memory (the planning rule of :func:`roofline_decode.planning.usable_memory`), shown in
the TP column; energy and cost count every device of the plan.  The TP floors assume the
all-reduces overlap perfectly, so they flatter multi-device rows.

It also draws the throughput-interactivity frontier of Llama-3.1-70B on the four devices (TP 1,
2, 4, 8; batch 1 ... 1024; points that do not fit memory as grey crosses).

Run: ``python examples/energy_cost_table.py [OUTPUT_DIR]`` (or set ``ROOFLINE_EXAMPLES_OUT``;
default: ``<temp dir>/roofline_decode_examples``).  Prints the table at the example price of
3.00 $/device-hour and writes ``frontier_70b.png``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from roofline_decode.planning import frontier  # noqa: E402
from roofline_decode.plotting import frontier_plot, save  # noqa: E402

MODELS = ("llama-3.1-8b", "llama-3.1-70b")
DEVICES = ("h100-sxm", "h200-sxm", "mi300x", "b200")
BATCHES = (1, 64)
CONTEXT = 4096
TP = (1, 2, 4, 8)
#: The dated example price of docs/energy.md: $3.00 per device-hour, an illustrative round
#: number for a rented data-center GPU as of 2026-11-30, not a quote.
EXAMPLE_PRICE_PER_HOUR = 3.00


def energy_cost_rows(price_per_hour: float = EXAMPLE_PRICE_PER_HOUR) -> list[dict[str, object]]:
    """One row per (model, device, batch): the smallest fitting TP degree and its figures (SI)."""
    rows: list[dict[str, object]] = []
    for model in MODELS:
        front = frontier(model, list(DEVICES), CONTEXT, batch=list(BATCHES), tp=TP, price_per_hour=price_per_hour)
        for device in DEVICES:
            for batch in BATCHES:
                fitting = [p for p in front.points
                           if p.accelerator == device and p.batch == batch and p.fits]
                if not fitting:
                    rows.append({"model": model, "accelerator": device, "batch": batch, "tp": None})
                    continue
                p = min(fitting, key=lambda q: q.num_devices)
                rows.append({"model": model, "accelerator": device, "batch": batch, "tp": p.num_devices,
                             "joules_per_token_floor": p.joules_per_token_floor,
                             "joules_per_token_at_board_power": p.joules_per_token_at_board_power,
                             "usd_per_million_tokens": p.usd_per_million_tokens,
                             "tokens_per_s_per_user": p.tokens_per_s_per_user})
    return rows


def energy_cost_table(price_per_hour: float = EXAMPLE_PRICE_PER_HOUR) -> str:
    """The rows of :func:`energy_cost_rows` as a Markdown table."""
    lines = [f"| model | device | batch | TP | J/token floor | J/token @ board power | "
             f"$/M output tokens @ ${price_per_hour:.2f}/device-h | tokens/s per user |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for row in energy_cost_rows(price_per_hour):
        head = f"| {row['model']} | {row['accelerator']} | {row['batch']} |"
        if row["tp"] is None:
            lines.append(head + " does not fit 8 devices | | | | |")
            continue
        lines.append(f"{head} {row['tp']} | {row['joules_per_token_floor']:.4f} | "
                     f"{row['joules_per_token_at_board_power']:.3f} | {row['usd_per_million_tokens']:.3f} | "
                     f"{row['tokens_per_s_per_user']:.1f} |")
    return "\n".join(lines)


def output_dir() -> Path:
    """Where the figure goes: the first argument, else $ROOFLINE_EXAMPLES_OUT, else a temp folder."""
    default = Path(tempfile.gettempdir()) / "roofline_decode_examples"
    return Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ROOFLINE_EXAMPLES_OUT") or default)


def main() -> None:
    print(energy_cost_table())
    ax = frontier_plot("llama-3.1-70b", list(DEVICES), CONTEXT, tp=TP)
    path = save(ax, output_dir() / "frontier_70b.png")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
