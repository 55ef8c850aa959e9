"""The times of a decode step on one device: memory, compute, serial chain, critical batch.

:func:`timed_step` turns a step's bytes and FLOPs (:mod:`roofline_decode.floors.traffic`) into a
:class:`~roofline_decode.floors.results.DecodeFloor`; :func:`chain_time` is the serial chain under a
latency profile and :func:`load_profile` loads (and remembers) one.  Separate from
:mod:`roofline_decode.floors.decode`: :func:`~roofline_decode.floors.decode.decode_floor` and
:func:`~roofline_decode.floors.sweeps.sweep` both time their grids here.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from .. import formulas as f
from .critical_batch import closed_form_critical_batch
from .results import DecodeFloor
from .limits import grid_limits
from .peaks import effective_peak, group_peaks
from .routing import UNIFORM, Routing
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from .traffic import StepTraffic

if TYPE_CHECKING:
    # latency profiles are loaded on first use (four pydantic models a plain floor never needs)
    from ..specs.latency import LatencyProfile

__all__ = ["chain_time"]


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


def timed_step(model: Model, accelerator: Accelerator, batch: np.ndarray, context: np.ndarray, traffic: StepTraffic,
           sparse: bool, context_input: np.ndarray, routing: Routing = UNIFORM,
           profile: LatencyProfile | None = None) -> DecodeFloor:
    """Times of a step on one device; ``context_input`` is the context before broadcasting
    against the batch, on which the critical batch (a function of context only, and of the
    measured expert count) is solved."""
    # Each FLOP group at its own peak; a group without a published peak on this device adds
    # no compute time (memory bound kept).
    peaks = group_peaks(model, accelerator, sparse)
    notes = peaks.notes
    has_peak = peaks.bounded
    bandwidth = accelerator.memory_bandwidth
    bytes_total = traffic.weight_bytes + traffic.kv_read_bytes + traffic.kv_write_bytes
    memory = f.memory_time(bytes_total, bandwidth)
    compute = peaks.compute_time(traffic) if has_peak else np.zeros_like(memory)
    peak = effective_peak(traffic.flops, compute, peaks)
    chain = np.broadcast_to(chain_time(model, profile), memory.shape)
    step = np.maximum(f.step_time(memory, compute), chain)
    experts = routing.experts_read(model, batch)
    if profile is not None:
        notes = (*notes, f"serial chain from latency profile {profile.label!r} "
                         f"({profile.operations_per_layer:g} operations per layer at {profile.operation_latency * 1e6:.3g} us): "
                         "an estimate for that runtime, not a physical floor")
    if not has_peak:
        critical = np.full(np.shape(context_input), np.nan)
    elif model.is_moe and routing.kind != "uniform":  # experts held fixed: closed form
        fixed = routing.experts_read(model, np.ones(()))  # k, or the measured count
        critical = closed_form_critical_batch(model, context_input, peaks, bandwidth, np.broadcast_to(fixed, np.shape(fixed)))
    elif model.is_moe:  # Newton's method: solve once per distinct context
        contexts, inverse = np.unique(context_input, return_inverse=True)
        critical = closed_form_critical_batch(model, contexts, peaks, bandwidth)[inverse].reshape(context_input.shape)
    else:
        critical = closed_form_critical_batch(model, context_input, peaks, bandwidth)
    critical = np.broadcast_to(critical, context.shape)
    limits = grid_limits(model, accelerator, batch, context, context_input)
    assumptions = notes + tuple(n for n in (routing.note(model),) if n)
    return DecodeFloor(
        model=model.name, accelerator=accelerator.id or accelerator.name,
        weight_format=model.weight_format.name, kv_format=model.kv_format.name, compute_precision=peaks.summary(),
        batch=batch, context=context, weight_bytes=traffic.weight_bytes, kv_read_bytes=traffic.kv_read_bytes,
        kv_write_bytes=traffic.kv_write_bytes, bytes_total=bytes_total, flops=traffic.flops,
        memory_time_s=memory, compute_time_s=compute, step_time_s=step,
        tokens_per_s=f.tokens_per_second(batch, step), per_sequence_tokens_per_s=1.0 / step,
        arithmetic_intensity=f.arithmetic_intensity(traffic.flops, bytes_total),
        ridge_point=_scalar_or_array(f.ridge_point(peak, bandwidth)), critical_batch=critical,
        memory_bandwidth=bandwidth, peak_flops=_scalar_or_array(peak), spec=model,
        compute_precisions=peaks.precisions, group_peak_flops=peaks.peaks, group_flops=traffic.group_flops,
        notes=assumptions + limits.notes, routing=routing.kind,
        experts_read=np.broadcast_to(experts, context.shape), _routing=routing, fits=limits.fits,
        max_batch=limits.max_batch, kv_bytes_per_sequence=limits.kv_bytes_per_sequence,
        usable_memory=limits.usable_memory, beyond_positions=limits.beyond_positions, assumptions=assumptions,
        chain_time_s=chain, latency_profile=None if profile is None else profile.label, device=accelerator,
    )


def _scalar_or_array(value: float | np.ndarray) -> float | np.ndarray:
    """A float for a single peak (as before groups were timed apart), else the array."""
    return float(value) if np.ndim(value) == 0 else value
