"""Plausibility checks on hardware figures: catch unit slips, admit every real device.

A bandwidth typed in GB/s where B/s is meant (``memory_bandwidth=3350``) is off by 1e9 and gives
a step time of months; a peak typed in TFLOP/s is off by 1e12.  The ranges below are wide enough
for every real device, from a small CPU or SoC (a few GB/s, a few GFLOP/s, a few hundred MB) to
wafer-scale parts (Cerebras WSE-3: 21 PB/s of on-chip SRAM, 44 GB), and narrow enough that a
figure in the wrong unit falls outside them (DESIGN.md §4b).  A figure outside them raises an
error naming the field, the value and the likely mistake; ``plausibility_checks=False`` on the
spec (``plausibility_checks = false`` in a spec file) turns the checks off for exotic hardware.

Ranges (SI units)

============  ===========  ===========
quantity      lowest       highest
============  ===========  ===========
bandwidth     1e8 B/s      1e17 B/s      (0.1 GB/s .. 100 PB/s)
peak          1e8 FLOP/s   1e19 FLOP/s   (0.1 GFLOP/s .. 10 EFLOP/s)
capacity      1e7 B        1e16 B        (10 MB .. 10 PB)
============  ===========  ===========

A memory bandwidth above :data:`DRAM_BANDWIDTH_MAX` (50 TB/s) is refused unless the spec's
``memory_type`` names on-chip SRAM: no DRAM device comes near it (HBM3E parts read 8 TB/s: B200,
B300, MI355X; announced HBM4 parts about 20 TB/s), while a bandwidth typed in TB/s where the
datasheet prints GB/s lands there (a consumer card's "256 GB/s" as 256 TB/s).  Only SRAM devices
go beyond (a Groq LPU, 80 TB/s; Cerebras WSE-3, 21 PB/s), and they say so: ``memory_type = "SRAM"``.

Peaks of different widths are ordered: a lower-precision peak (fp8, int8 < bf16, fp16 < tf32,
fp32) more than 100 times *below* a higher-precision one is a unit slip (TOP/s typed as GOP/s).
Real hardware can sit below by less: Pascal GeForce cards run fp16 at 1/64 of fp32, and a V100
runs int8 (DP4A) at half its fp16 tensor rate, so the factor is 100, not 1.

Examples
--------
>>> range_problem("memory_bandwidth", 3350, "bandwidth")
'3350 B/s is outside [1e+08, 1e+17] B/s: did you mean 3350 GB/s = 3.35e+12 B/s or 3350 MB/s = 3.35e+09 B/s?'
>>> range_problem("memory_bandwidth", 3.35e12, "bandwidth") is None
True
>>> dram_bandwidth_problem(2.56e14, "GDDR6").split("?")[0]
'256 TB/s is above the 50 TB/s of any DRAM device: did you mean 256 GB/s = 2.56e+11 B/s (GB/s typed as TB/s)'
>>> dram_bandwidth_problem(2.1e16, "SRAM") is None
True
"""

from __future__ import annotations

import math

__all__ = ["RANGES", "range_problem", "order_problems", "PRECISION_BITS", "ORDER_FACTOR", "DRAM_BANDWIDTH_MAX",
           "on_chip_memory", "dram_bandwidth_problem"]

#: (lowest, highest, SI unit, typical value, units a slip is likely made in) per quantity.
RANGES: dict[str, tuple[float, float, str, float, tuple[tuple[str, float], ...]]] = {
    "bandwidth": (1e8, 1e17, "B/s", 1e12, (("GB/s", 1e9), ("TB/s", 1e12), ("MB/s", 1e6))),
    "peak": (1e8, 1e19, "FLOP/s", 1e14, (("TFLOP/s", 1e12), ("GFLOP/s", 1e9), ("PFLOP/s", 1e15))),
    "capacity": (1e7, 1e16, "B", 1e11, (("GB", 1e9), ("TB", 1e12), ("MB", 1e6))),
}

#: Width class of each compute precision, for the ordering check (equal widths are not compared:
#: int8 may sit below fp8, fp16 below bf16).
PRECISION_BITS = {"fp32": 32, "tf32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "fp4": 4}

#: A lower-precision peak this many times below a higher-precision one is refused.
ORDER_FACTOR = 100.0


def _number(value: float) -> str:
    return f"{value:g}"


def range_problem(field: str, value: float, quantity: str) -> str | None:
    """What is wrong with ``value`` [SI] for ``quantity`` ("bandwidth", "peak", "capacity"),
    with the likely mistake; None when it is plausible (or not a finite number: other checks
    report that)."""
    low, high, unit, typical, slips = RANGES[quantity]
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0 or low <= value <= high:
        return None
    where = f"{_number(value)} {unit} is outside [{low:g}, {high:g}] {unit}"
    if value < low:
        fits = [(name, value * scale) for name, scale in slips if low <= value * scale <= high]
        fits.sort(key=lambda item: abs(math.log10(item[1] / typical)))
        if fits:
            guesses = [f"{_number(value)} {name} = {si:.3g} {unit}" for name, si in fits[:2]]
            return f"{where}: did you mean {' or '.join(guesses)}?"
        return f"{where}: is it in {unit}?"
    return f"{where}: a value already in {unit} multiplied by its unit again?"


def order_problems(field: str, peaks: dict[str, float]) -> list[str]:
    """Lower-precision peaks more than :data:`ORDER_FACTOR` below a higher-precision one."""
    problems = []
    for low_name, low_value in peaks.items():
        for high_name, high_value in peaks.items():
            if PRECISION_BITS.get(low_name, 0) < PRECISION_BITS.get(high_name, 0) and low_value * ORDER_FACTOR < high_value:
                problems.append(
                    f"{field}.{low_name}={low_value:.4g} FLOP/s is more than {ORDER_FACTOR:g} times below "
                    f"{field}.{high_name}={high_value:.4g} FLOP/s; a lower precision runs at least about as fast "
                    f"on real hardware: a figure in the wrong unit (GFLOP/s for TFLOP/s)?"
                )
    return problems


#: Highest memory bandwidth of a device whose memory is DRAM (HBM, GDDR, LPDDR, DDR) or not
#: stated [B/s]: HBM3E parts read 8 TB/s (B200, B300, MI355X), announced HBM4 parts about
#: 20 TB/s; 50 TB/s leaves room above them.  On-chip SRAM devices go beyond.
DRAM_BANDWIDTH_MAX = 5e13


def on_chip_memory(memory_type: str | None) -> bool:
    """True when ``memory_type`` names on-chip SRAM ("SRAM", "on-chip SRAM", ...)."""
    return memory_type is not None and "sram" in memory_type.lower()


def dram_bandwidth_problem(value: float, memory_type: str | None) -> str | None:
    """What is wrong with a memory bandwidth of ``value`` [B/s] for a device whose memory is
    ``memory_type`` (None: not stated): above :data:`DRAM_BANDWIDTH_MAX` only on-chip SRAM is
    that fast, so the likely slip is a bandwidth printed in GB/s typed as TB/s (a factor 1000).
    None when plausible (or not a finite number: other checks report that)."""
    if (not isinstance(value, (int, float)) or not math.isfinite(value) or value <= DRAM_BANDWIDTH_MAX
            or on_chip_memory(memory_type)):
        return None
    memory = f"memory_type {memory_type!r}" if memory_type else "no memory_type"
    return (f"{_number(value / 1e12)} TB/s is above the {_number(DRAM_BANDWIDTH_MAX / 1e12)} TB/s of any DRAM device: "
            f"did you mean {_number(value / 1e12)} GB/s = {value / 1e3:.3g} B/s (GB/s typed as TB/s)? The fastest HBM "
            f"devices read about 8 TB/s; only on-chip SRAM goes beyond, and the spec says {memory} "
            '(memory_type = "SRAM" for an SRAM device)')
