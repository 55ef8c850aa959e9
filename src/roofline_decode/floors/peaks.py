"""The compute peak a decode step runs at: precision fallback, sparse fallback, no peak at all.

:func:`compute_peak` looks up one format's peak on one device; :func:`group_peaks` does it for every
FLOP group of a model (:data:`~roofline_decode.floors.traffic.COMPUTE_GROUPS`) and :class:`Peaks` times
a step's FLOPs at those peaks.  Separate from :mod:`roofline_decode.floors.decode` because every floor
(decode, prefill, parallel plans, the symbolic view and the scalar fast path) times its FLOPs here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .. import formulas as f
from ..formats import NumberFormat
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from .traffic import GroupFlops, StepTraffic, compute_formats

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


@dataclass(frozen=True)
class Peaks:
    """Per FLOP group: the precision used and its peak [FLOP/s] on one device (NaN: none
    published; such a group adds no compute time), and the notes of the lookups."""

    precisions: dict[str, str]
    peaks: dict[str, float]
    notes: tuple[str, ...] = ()

    @cached_property
    def bounded(self) -> bool:
        """Whether some group has a published peak."""
        return any(not np.isnan(p) for p in self.peaks.values())

    @cached_property
    def uniform(self) -> bool:
        """Every group at the same peak (or none with a peak)."""
        values = list(self.peaks.values())
        if all(np.isnan(p) for p in values):
            return True
        return not any(np.isnan(p) for p in values) and len(set(values)) == 1

    def compute_time(self, traffic: StepTraffic, share: float = 1) -> np.ndarray:
        """T_comp = Σ_g (FLOPs_g / share) / F_g [s] of a step's traffic (``share``: devices
        splitting the FLOPs); see :meth:`time_of`."""
        time: np.ndarray = self.time_of(traffic.flops, traffic.group_flops, share)
        return time

    def time_of(self, flops: Any, group_flops: Mapping[str, Any], share: float = 1) -> Any:
        """T_comp = Σ_g (FLOPs_g / share) / F_g [s] of ``flops`` split into ``group_flops``
        (arrays, or numbers at one point); FLOPs / F when every group has the same peak F (bit
        for bit what a single-precision model had before groups were timed apart).  Groups
        without a peak add nothing."""
        if self.uniform and self.bounded:
            return f.compute_time(flops if share == 1 else flops / share, next(iter(self.peaks.values())))
        zero = np.zeros(np.shape(flops))
        # each group's FLOPs as computed (a matrix group on the batch axis alone): the same sums
        # element by element, broadcast once by the addition of the full-grid terms and ``zero``
        flops_of = group_flops.compact if isinstance(group_flops, GroupFlops) else group_flops.__getitem__
        return zero + sum(f.compute_time(flops_of(g) if share == 1 else flops_of(g) / share, peak)
                          for g, peak in self.peaks.items() if not np.isnan(peak))

    def summary(self) -> str:
        """One precision name if all groups share it, else each precision with its groups:
        "fp8 (attention projections, mlp, routed experts), bf16 (router, lm_head, attention scores)"."""
        names = list(dict.fromkeys(self.precisions.values()))
        if len(names) == 1:
            return names[0]
        return ", ".join(f"{name} ({', '.join(_LABELS.get(g, g) for g, p in self.precisions.items() if p == name)})"
                         for name in names)


_LABELS = {"attention": "attention projections", "shared_experts": "shared experts", "experts": "routed experts",
           "attention_scores": "attention scores"}


_ROLES = {"attention_scores": "KV cache", "experts": "routed-expert weights"}


def group_peaks(model: Model, accelerator: Accelerator, sparse: bool) -> Peaks:
    """The peak each FLOP group runs at (:func:`compute_peak` of its format)."""
    precisions, peaks, notes = {}, {}, {}
    for group, fmt in compute_formats(model).items():
        role = _ROLES.get(group, "weights" if model.has_uniform_weights else f"{group} weights")
        precisions[group], peaks[group], found = compute_peak(fmt, accelerator, sparse, role=role)
        notes.update(dict.fromkeys(found))
    missing = [g for g, p in peaks.items() if np.isnan(p)]
    if missing:  # one note: the first group's (none has a peak), or the groups without one
        first = next(n for n in notes if n.startswith(NO_COMPUTE_PEAK))
        notes = {n: None for n in notes if not n.startswith(NO_COMPUTE_PEAK)}
        if len(missing) == len(peaks):
            notes[first] = None
        else:
            notes[f"{NO_COMPUTE_PEAK} for {', '.join(missing)}: those FLOPs add no compute time"] = None
    return Peaks(precisions, peaks, tuple(notes))


def effective_peak(flops: np.ndarray, compute_time: np.ndarray, peaks: Peaks) -> float | np.ndarray:
    """F_eff = FLOPs / T_comp [FLOP/s]: the single peak when all groups share it (a float),
    NaN when no group has one, else an array."""
    if not peaks.bounded:
        return float("nan")
    if peaks.uniform:
        return next(iter(peaks.peaks.values()))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(compute_time > 0, flops / np.where(compute_time > 0, compute_time, 1.0), np.nan)
