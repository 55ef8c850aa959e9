"""The times of a decode step on one device: memory, compute, serial chain, critical batch.

:func:`timed_step` turns a step's bytes and FLOPs (:mod:`roofline_decode.floors.traffic`) into a
:class:`~roofline_decode.floors.results.DecodeFloor`; :func:`step_times` is its roofline
arithmetic (on a grid's arrays, or on the floats of one point: the scalar fast path calls it
too), :func:`step_assumptions` the notes every point shares, :func:`chain_time` the serial chain
under a latency profile and :func:`load_profile` loads (and remembers) one.  Separate from
:mod:`roofline_decode.floors.decode`: :func:`~roofline_decode.floors.decode.decode_floor` and
:func:`~roofline_decode.floors.sweeps.sweep` both time their grids here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .. import formulas as f
from .critical_batch import decode_critical_batch
from .results import DecodeFloor
from .limits import grid_limits
from .peaks import Peaks, effective_peak, group_peaks
from .routing import UNIFORM, Routing
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from .traffic import StepTerms, StepTraffic

if TYPE_CHECKING:
    # latency profiles are loaded on first use (four pydantic models a plain floor never needs)
    from ..specs.latency import LatencyProfile

__all__ = ["chain_time", "step_times", "step_assumptions"]


def load_profile(latency: LatencyProfile | str) -> LatencyProfile:
    """:func:`~roofline_decode.specs.latency.load_latency_profile` (imported on first use); a
    preset id loaded before costs one ``stat`` of its file (a changed file loads again)."""
    if isinstance(latency, str):
        hit = _PROFILES.get(latency)
        if hit is not None:
            try:
                if os.stat(hit[0]).st_mtime_ns == hit[1]:
                    return hit[2]
            except OSError:
                pass
    from ..specs.latency import load_latency_profile

    if not isinstance(latency, str) or latency.endswith(".toml"):
        return load_latency_profile(latency)
    from ..specs.data_files import bundled_file

    path = bundled_file("latency_profiles", latency, "latency profile")  # UnknownIdError for a wrong id
    stamp = os.stat(path).st_mtime_ns  # before the file is read: a change while it is read is seen
    profile = load_latency_profile(latency)
    _PROFILES[latency] = (str(path), stamp, profile)
    return profile


#: preset id -> (its file, the file's mtime [ns], the profile) of the last load by that id
_PROFILES: dict[str, tuple[str, int, LatencyProfile]] = {}


def chain_time(model: Model, profile: LatencyProfile | None) -> float:
    """Serial chain of one step of ``model`` on one device under ``profile`` [s] (0 without one)."""
    if profile is None:
        return 0.0
    return float(f.serial_chain_time(model.num_layers, profile.operations_per_layer, profile.operation_latency,
                                     step_latency=profile.step_latency))


class StepTimes(NamedTuple):
    """The roofline of a step at each point (arrays, or numpy floats at one point)."""

    bytes_total: Any  # [B]
    memory_time: Any  # [s]
    compute_time: Any  # [s]
    step_time: Any  # max(T_mem, T_comp, T_chain) [s]
    tokens_per_s: Any  # [1/s]
    per_sequence_tokens_per_s: Any  # [1/s]
    arithmetic_intensity: Any  # [FLOP/B]
    peak_flops: float | np.ndarray  # the effective peak [FLOP/s]: a float for one peak (or one point)
    ridge_point: float | np.ndarray  # [FLOP/B], likewise


def step_times(traffic: StepTraffic | StepTerms, group_flops: Mapping[str, Any], batch: Any, peaks: Peaks,
               bandwidth: float, chain: Any) -> StepTimes:
    """Times of a step of ``traffic`` (FLOPs split into ``group_flops``) at ``batch`` on a device
    of ``peaks`` and ``bandwidth`` with a serial chain of ``chain`` seconds: T_step =
    max(T_mem, T_comp, T_chain).  A group without a published peak adds no compute time; no
    peak at all leaves the memory time (``compute_time`` 0)."""
    bytes_total = traffic.weight_bytes + traffic.kv_read_bytes + traffic.kv_write_bytes
    memory = f.memory_time(bytes_total, bandwidth)
    compute = peaks.time_of(traffic.flops, group_flops) if peaks.bounded else np.zeros_like(memory)
    peak = effective_peak(traffic.flops, compute, peaks)
    step = np.maximum(f.step_time(memory, compute), chain)
    return StepTimes(bytes_total, memory, compute, step, f.tokens_per_second(batch, step), 1.0 / step,
                     f.arithmetic_intensity(traffic.flops, bytes_total), _scalar_or_array(peak),
                     _scalar_or_array(f.ridge_point(peak, bandwidth)))


def step_assumptions(model: Model, peaks: Peaks, routing: Routing, profile: LatencyProfile | None) -> tuple[str, ...]:
    """The notes every point of a step shares: the peaks' fallbacks, the latency profile's
    chain, the MoE routing assumption."""
    notes = peaks.notes
    if profile is not None:
        notes = (*notes, f"serial chain from latency profile {profile.label!r} "
                         f"({profile.operations_per_layer:g} operations per layer at {profile.operation_latency * 1e6:.3g} us): "
                         "an estimate for that runtime, not a physical floor")
    return notes + tuple(n for n in (routing.note(model),) if n)


def timed_step(model: Model, accelerator: Accelerator, batch: np.ndarray, context: np.ndarray, traffic: StepTraffic,
           sparse: bool, context_input: np.ndarray, routing: Routing = UNIFORM,
           profile: LatencyProfile | None = None) -> DecodeFloor:
    """Times of a step on one device; ``context_input`` is the context before broadcasting
    against the batch, on which the critical batch (a function of context only, and of the
    measured expert count) is solved."""
    # Each FLOP group at its own peak; a group without a published peak on this device adds
    # no compute time (memory bound kept).
    peaks = group_peaks(model, accelerator, sparse)
    bandwidth = accelerator.memory_bandwidth
    chain = np.broadcast_to(chain_time(model, profile), np.shape(traffic.flops))
    times = step_times(traffic, traffic.group_flops, batch, peaks, bandwidth, chain)
    experts = routing.experts_read(model, batch)
    critical = np.broadcast_to(decode_critical_batch(model, context_input, peaks, bandwidth, routing), context.shape)
    limits = grid_limits(model, accelerator, batch, context, context_input)
    assumptions = step_assumptions(model, peaks, routing, profile)
    return DecodeFloor(
        model=model.name, accelerator=accelerator.id or accelerator.name,
        weight_format=model.weight_format.name, kv_format=model.kv_format.name, compute_precision=peaks.summary(),
        batch=batch, context=context, weight_bytes=traffic.weight_bytes, kv_read_bytes=traffic.kv_read_bytes,
        kv_write_bytes=traffic.kv_write_bytes, bytes_total=times.bytes_total, flops=traffic.flops,
        memory_time_s=times.memory_time, compute_time_s=times.compute_time, step_time_s=times.step_time,
        tokens_per_s=times.tokens_per_s, per_sequence_tokens_per_s=times.per_sequence_tokens_per_s,
        arithmetic_intensity=times.arithmetic_intensity, ridge_point=times.ridge_point, critical_batch=critical,
        memory_bandwidth=bandwidth, peak_flops=times.peak_flops, spec=model,
        compute_precisions=peaks.precisions, group_peak_flops=peaks.peaks, group_flops=traffic.group_flops,
        notes=assumptions + limits.notes, routing=routing.kind,
        experts_read=np.broadcast_to(experts, context.shape), _routing=routing, fits=limits.fits,
        max_batch=limits.max_batch, kv_bytes_per_sequence=limits.kv_bytes_per_sequence,
        usable_memory=limits.usable_memory, beyond_positions=limits.beyond_positions, assumptions=assumptions,
        chain_time_s=chain, latency_profile=None if profile is None else profile.label, device=accelerator,
    )


def _scalar_or_array(value: float | np.ndarray) -> float | np.ndarray:
    """A float for a single peak (as before groups were timed apart), else the array."""
    return value if isinstance(value, np.ndarray) and value.ndim else float(value)
