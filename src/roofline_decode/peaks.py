"""The compute peak a decode step runs at: precision fallback, sparse fallback, no peak at all."""

from __future__ import annotations

from .formats import NumberFormat
from .specs.accelerator import Accelerator

__all__ = ["NO_COMPUTE_PEAK", "compute_peak"]

#: The one wording for a device that publishes no compute peak for the precision a model
#: computes in.  Its value: ``peak_flops``, ``ridge_point`` and ``critical_batch`` are NaN (not
#: defined), ``compute_time_s`` is 0 (no compute bound: the floor is the memory time); JSON
#: writes null, CSV an empty cell, the table ``n/a``.  Distinct from a critical batch of +inf
#: ("memory-bound at any batch"; JSON ``"inf"``), which is a derived fact about a device that
#: has a peak.
NO_COMPUTE_PEAK = "no compute peak published"


def compute_peak(weight_format: NumberFormat, accelerator: Accelerator, sparse: bool = False,
                 role: str = "weights") -> tuple[str, float, tuple[str, ...]]:
    """(compute precision, peak [FLOP/s], notes) a step of ``weight_format`` weights runs at
    (``role`` names what is in that format in the notes: "weights", "KV cache", ...).

    The format's compute precision, else the next of its fallbacks the device publishes a
    peak for (fp8 weights on an A100 compute in bf16; a note says so).  With ``sparse`` each
    precision takes its 2:4 sparse peak where one is published, else its dense peak, with a
    note (a sparse peak is never below the dense one, so the floor still holds).  No peak at
    all: ``(NO_COMPUTE_PEAK, nan, notes)``.

    Examples
    --------
    >>> from roofline_decode import load_accelerator, load_model
    >>> compute_peak(load_model("llama-3.1-8b").weight_format, load_accelerator("mi300x"), sparse=True)[:2]
    ('bf16', 1307400000000000.0)
    """
    name = accelerator.id or accelerator.name
    candidates = weight_format.compute_fallbacks
    for precision in candidates:
        notes = []
        if precision != candidates[0]:
            notes.append(f"{weight_format.name} {role} compute in {precision}: no {candidates[0]} peak "
                         f"published for {name}")
        if sparse and precision in accelerator.sparse_peak_flops:
            return precision, float(accelerator.sparse_peak_flops[precision]), tuple(notes)
        if precision in accelerator.peak_flops:
            if sparse:
                notes.append(f"no sparse {precision} peak published for {name}: the dense {precision} peak is used")
            return precision, float(accelerator.peak_flops[precision]), tuple(notes)
    return NO_COMPUTE_PEAK, float("nan"), (
        f"{NO_COMPUTE_PEAK} for {name} ({weight_format.name} {role}): compute time not bounded, "
        "the floor is the memory time",)
