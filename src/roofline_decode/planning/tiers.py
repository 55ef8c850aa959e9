"""Offload to a slower memory tier: part of the KV cache (oldest tokens) and/or of the weights.

Placement: ``kv_fraction`` of every sequence's resident KV cache (its oldest tokens; for
sliding-window layers, of the window they keep) and ``weight_fraction`` of the weights live in
the tier.  Every decode step still reads all of them, so per device:

* device memory moves ``(1 − w)·weights read + (1 − f)·KV read + KV written`` (new tokens are
  written to device memory, they are the newest);
* the tier delivers ``w·weights read + f·KV read`` at ``tier.read_bandwidth × links``.

Serial floor (default): device time + tier time, what a layer that fetches its offloaded
bytes on demand pays; offloading to a tier slower than device memory never makes it faster.
Overlapped: max of the two (perfect prefetch): both links then stream at once, so a small
offloaded share can beat device memory alone, by at most the tier's share of the summed
bandwidth (PCIe 5.0 x16 adds 2% to an H100's 3.35 TB/s) — an optimistic bound, not a plan.  Compute and tensor-
parallel communication are added as in :mod:`roofline_decode.floors.parallel`.  Each device
has its own tier link (one PCIe/CXL port per GPU); for DDR5 tiers ``links`` is the number of
channels read in parallel (a CPU that attends over offloaded KV, as in FlexGen, reads host
DRAM; a GPU reading host DRAM is limited by the slower of DRAM and its PCIe link — compose
with ``min`` yourself).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import formulas as f
from .._typing import Broadcastable, FloatArray
from ..errors import InvalidValueError
from ..units import GB, format_bytes, format_seconds
from ..checks import check_slo_ms, flag, fraction, positive, renamed, whole_number
from ..floors.grid import DEFAULT_CONTEXT
from ..floors.parallel import DEFAULT_COLLECTIVE_LATENCY, tensor_parallel_floor
from .layouts import layout_decode_floor, planned_layout

if TYPE_CHECKING:
    from ..floors.routing import Routing
    from ..specs.accelerator import Accelerator, MemoryTier
    from ..specs.model import Model
    from ..specs.parallel import Parallel

__all__ = ["OffloadFloor", "TierAnswer", "offload_floor", "required_tier_bandwidth", "can_tier_feed"]


@dataclass(frozen=True)
class OffloadFloor:
    """Decode floor with part of the bytes in a slower tier (per device, SI units, arrays)."""

    model: str
    accelerator: str
    tier: str
    kv_fraction: float
    weight_fraction: float
    num_devices: int
    batch: np.ndarray
    context: np.ndarray
    device_bytes: np.ndarray
    tier_bytes: np.ndarray
    device_resident_bytes: np.ndarray
    tier_resident_bytes: np.ndarray
    device_time_s: np.ndarray
    tier_time_s: np.ndarray
    memory_time_s: np.ndarray
    compute_time_s: np.ndarray
    communication_time_s: np.ndarray
    step_time_s: np.ndarray
    hbm_only_step_time_s: np.ndarray
    tokens_per_s: np.ndarray
    tier_bandwidth: float
    overlapped: bool
    notes: tuple[str, ...] = ()
    parallel: str | None = None  # the layout's text when one was given (``parallel=``)

    @property
    def slowdown(self) -> np.ndarray:
        """Step time relative to keeping every byte in device memory [1].

        >= 1 for the serial floor; the overlapped floor can dip just below 1 (see the module docstring)."""
        ratio: np.ndarray = self.step_time_s / self.hbm_only_step_time_s
        return ratio


def _tier(tier: MemoryTier | str | None) -> MemoryTier | None:
    from ..catalog import load_memory_tier

    return None if tier is None else load_memory_tier(tier)


def offload_floor(model: Model | str, accelerator: Accelerator | str, tier: MemoryTier | str | None,
                  batch: Broadcastable = 1, context: Broadcastable = DEFAULT_CONTEXT, *, kv_fraction: float = 0.0,
                  weight_fraction: float = 0.0, num_devices: int = 1, links: int = 1, overlapped: bool = False,
                  collective_latency: float = DEFAULT_COLLECTIVE_LATENCY, link_bandwidth: float | None = None,
                  overlap_communication: bool = False, routing: Routing | str | float = "uniform",
                  parallel: Parallel | str | None = None, node_size: int | None = None,
                  scale_out_bandwidth: float | None = None) -> OffloadFloor:
    """Decode floor with ``kv_fraction`` of the KV cache and ``weight_fraction`` of the weights in ``tier``.

    ``num_devices`` is a tensor-parallel degree; ``parallel`` a whole layout instead
    (:class:`~roofline_decode.Parallel` or its text; ``num_devices`` must then stay 1): the
    fractions are of the busiest device's bytes (:mod:`roofline_decode.planning.layouts`), and
    ``node_size`` and ``scale_out_bandwidth`` override its links.  A pipeline (``pp`` > 1) is
    timed stage after stage by the layout floor, which knows no tier: with ``pp`` > 1 the
    fractions must be 0 (the hbm-only floor of the layout).

    Examples
    --------
    Llama-3.1-8B on an H100 SXM, batch 16 at 32K tokens, half the KV cache over PCIe 5.0 x16:
    the step goes from 25 ms to 560 ms.

    >>> r = offload_floor("llama-3.1-8b", "h100-sxm", "pcie5-x16", batch=16, context=32768, kv_fraction=0.5)
    >>> round(float(r.hbm_only_step_time_s) * 1e3), round(float(r.step_time_s) * 1e3)
    (25, 560)
    """
    from ..catalog import load_accelerator, load_model

    model, accelerator = load_model(model), load_accelerator(accelerator)
    tier = _tier(tier)
    kv_fraction = fraction("kv_fraction", kv_fraction)
    weight_fraction = fraction("weight_fraction", weight_fraction)
    if tier is None and (kv_fraction or weight_fraction):
        raise InvalidValueError("tier", None, "a memory tier id (see list_memory_tiers()) when offloading")
    links = whole_number("links", links)
    overlapped = flag("overlapped", overlapped)
    overlap_communication = flag("overlap_communication", overlap_communication)
    layout = planned_layout(parallel)
    if layout is not None:
        return _layout_offload(model, accelerator, tier, batch, context, layout, kv_fraction, weight_fraction,
                               whole_number("num_devices", num_devices), links, overlapped,
                               dict(collective_latency=collective_latency, link_bandwidth=link_bandwidth,
                                    overlap_communication=overlap_communication, routing=routing,
                                    node_size=node_size, scale_out_bandwidth=scale_out_bandwidth))
    base = tensor_parallel_floor(model, accelerator, batch, context, num_devices,
                                 collective_latency=collective_latency, link_bandwidth=link_bandwidth,
                                 overlap_communication=overlap_communication, routing=routing)
    from ..floors.parallel import device_traffic

    traffic = device_traffic(model, base.batch, base.context, base.num_devices, routing)
    tier_bytes = weight_fraction * traffic.weight_read_bytes + kv_fraction * traffic.kv_read_bytes
    device_bytes = base.bytes_read_per_device - tier_bytes
    tier_bandwidth = tier.read_bandwidth * links if tier is not None else float("inf")
    bandwidth = accelerator.memory_bandwidth
    device_time = f.memory_time(device_bytes, bandwidth)
    tier_time = tier_bytes / tier_bandwidth
    memory = (f.overlapped_tiered_memory_time if overlapped else f.tiered_memory_time)(
        device_bytes, bandwidth, tier_bytes, tier_bandwidth
    )
    comm = base.communication_time_s
    core = np.maximum(memory, base.compute_time_s)
    step = np.maximum(core, comm) if overlap_communication else core + comm
    return OffloadFloor(
        model=model.name, accelerator=base.accelerator, tier=(tier.id or tier.name) if tier else "none",
        kv_fraction=kv_fraction, weight_fraction=weight_fraction, num_devices=base.num_devices,
        batch=base.batch, context=base.context, device_bytes=device_bytes, tier_bytes=tier_bytes,
        device_resident_bytes=(1 - weight_fraction) * traffic.weight_bytes + (1 - kv_fraction) * traffic.kv_bytes,
        tier_resident_bytes=weight_fraction * traffic.weight_bytes + kv_fraction * traffic.kv_bytes,
        device_time_s=device_time, tier_time_s=tier_time, memory_time_s=memory,
        compute_time_s=base.compute_time_s, communication_time_s=comm, step_time_s=step,
        hbm_only_step_time_s=base.step_time_s, tokens_per_s=f.tokens_per_second(base.batch, step),
        tier_bandwidth=tier_bandwidth, overlapped=overlapped, notes=base.notes,
    )


def _layout_offload(model: Model, accelerator: Accelerator, tier: MemoryTier | None, batch: Broadcastable,
                    context: Broadcastable, layout: Parallel, kv_fraction: float, weight_fraction: float,
                    num_devices: int, links: int, overlapped: bool, options: dict[str, Any]) -> OffloadFloor:
    """:func:`offload_floor` under ``layout``: the busiest device's bytes, the same tier rule."""
    if num_devices != 1:
        raise InvalidValueError("num_devices", num_devices, "1 when parallel= is given (the layout holds the degrees)")
    if layout.pp > 1 and (kv_fraction or weight_fraction):
        raise InvalidValueError("parallel.pp", layout.pp, "1 when part of the KV cache or weights is offloaded "
                                                          "(a pipeline's stages are timed without a tier)")
    base = layout_decode_floor(model, accelerator, batch, context, layout, **options)
    weight_read, kv_read = base.weight_read_bytes_per_device, base.kv_read_bytes_per_device
    tier_bytes: np.ndarray = np.asarray(weight_fraction * weight_read + kv_fraction * kv_read, dtype=np.float64)
    device_bytes = base.bytes_read_per_device - tier_bytes
    tier_bandwidth = tier.read_bandwidth * links if tier is not None else float("inf")
    bandwidth = accelerator.memory_bandwidth
    device_time = f.memory_time(device_bytes, bandwidth)
    tier_time: np.ndarray = tier_bytes / tier_bandwidth
    comm = base.communication_time_s
    if layout.pp > 1:  # nothing offloaded (refused above): the pipeline's own step
        memory, step = base.memory_time_s, base.step_time_s
    else:
        memory = (f.overlapped_tiered_memory_time if overlapped else f.tiered_memory_time)(
            device_bytes, bandwidth, tier_bytes, tier_bandwidth)
        core = np.maximum(memory, base.compute_time_s)
        step = np.maximum(core, comm) if options["overlap_communication"] else core + comm
    weights, kv = base.weight_bytes_per_device, base.kv_bytes_per_device
    return OffloadFloor(
        model=model.name, accelerator=base.accelerator, tier=(tier.id or tier.name) if tier else "none",
        kv_fraction=kv_fraction, weight_fraction=weight_fraction, num_devices=base.num_devices,
        batch=base.batch, context=base.context, device_bytes=device_bytes, tier_bytes=tier_bytes,
        device_resident_bytes=(1 - weight_fraction) * weights + (1 - kv_fraction) * kv,
        tier_resident_bytes=weight_fraction * weights + kv_fraction * kv,
        device_time_s=device_time, tier_time_s=tier_time, memory_time_s=memory,
        compute_time_s=base.compute_time_s, communication_time_s=comm, step_time_s=step,
        hbm_only_step_time_s=base.step_time_s, tokens_per_s=f.tokens_per_second(base.batch, step),
        tier_bandwidth=tier_bandwidth, overlapped=overlapped, notes=base.notes, parallel=str(layout),
    )


def required_tier_bandwidth(model: Model | str, accelerator: Accelerator | str, batch: Broadcastable = 1,
                            context: Broadcastable = DEFAULT_CONTEXT, *, slo_ms: float | None = None,
                            kv_fraction: float = 0.0, weight_fraction: float = 0.0, num_devices: int = 1,
                            overlapped: bool = False, slo_ms_per_token: float | None = None,
                            **parallel: Any) -> FloatArray:
    """Tier read bandwidth [B/s] per device for the step to take at most ``slo_ms``.

    A target aggregate rate R tokens/s is the same as ``slo_ms = 1000·B / R``.
    +inf when device memory, compute or communication alone already take the whole target.

    Examples
    --------
    >>> bw = required_tier_bandwidth("llama-3.1-8b", "h100-sxm", 16, 32768, slo_ms=100, kv_fraction=0.5)
    >>> round(float(bw) / 1e9)
    403
    """
    slo_ms = positive("slo_ms", renamed("slo_ms", slo_ms, "slo_ms_per_token", slo_ms_per_token), "a finite time > 0 in milliseconds")
    floor = offload_floor(model, accelerator, None, batch, context, num_devices=num_devices, **parallel)
    from ..catalog import load_accelerator, load_model
    from ..floors.parallel import device_traffic

    model = load_model(model)
    overlapped = flag("overlapped", overlapped)
    weight_fraction, kv_fraction = fraction("weight_fraction", weight_fraction), fraction("kv_fraction", kv_fraction)
    layout = planned_layout(parallel.get("parallel"))
    weight_read: Any
    kv_read: Any
    if layout is None:
        traffic = device_traffic(model, floor.batch, floor.context, floor.num_devices)
        weight_read, kv_read = traffic.weight_read_bytes, traffic.kv_read_bytes
    else:  # the busiest device's bytes of the layout (the stages of a pipeline are timed without a tier)
        if layout.pp > 1 and (kv_fraction or weight_fraction):
            raise InvalidValueError("parallel.pp", layout.pp, "1 when part of the KV cache or weights is offloaded "
                                                              "(a pipeline's stages are timed without a tier)")
        spread = layout_decode_floor(model, load_accelerator(accelerator), floor.batch, floor.context, layout,
                                     routing=parallel.get("routing", "uniform"))
        weight_read, kv_read = spread.weight_read_bytes_per_device, spread.kv_read_bytes_per_device
    tier_bytes = weight_fraction * weight_read + kv_fraction * kv_read
    device_bytes = floor.device_bytes - tier_bytes
    # the time left for memory once communication is paid (compute must also fit the target)
    target = slo_ms / 1e3 - floor.communication_time_s
    target = np.where(floor.compute_time_s > target, 0.0, target)
    bandwidth = load_accelerator(accelerator).memory_bandwidth
    required = f.required_tier_bandwidth(tier_bytes, target, device_bytes, bandwidth, overlapped=overlapped)
    if overlapped:
        fits = (target > 0) & (device_bytes / bandwidth <= target)
        required = np.where(fits, required, np.inf)
    return np.asarray(required, dtype=np.float64)


@dataclass(frozen=True)
class TierAnswer:
    """A plain answer to "can this tier feed decode at this batch and context?"."""

    ok: bool
    message: str
    floor: OffloadFloor
    required_bandwidth: float | None

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return self.message


def can_tier_feed(model: Model | str, accelerator: Accelerator | str, tier: MemoryTier | str, batch: int = 1, context: int = DEFAULT_CONTEXT, *, kv_fraction: float = 0.0,
                  weight_fraction: float = 0.0, slo_ms: float | None = None, slo_ms_per_token: float | None = None,
                  **options: Any) -> TierAnswer:
    """Whether ``tier`` can feed decode with the offloaded bytes, in one sentence.

    With ``slo_ms``: yes when the (serial) step meets it.  Without: yes when the tier
    is not the bottleneck, i.e. its transfer takes no longer than the device-memory reads it
    would run beside (then perfect prefetch hides it entirely).

    Examples
    --------
    >>> print(can_tier_feed("llama-3.1-8b", "h100-sxm", "pcie5-x16", 16, 32768, kv_fraction=0.5))
    No: pcie5-x16 must deliver 34.36 GB per step per device at 63 GB/s = 545.4 ms, against 14.7 ms for the HBM part; the step floor rises from 24.99 ms to 560.1 ms (22.4x).
    """
    slo_ms = check_slo_ms(renamed("slo_ms", slo_ms, "slo_ms_per_token", slo_ms_per_token))
    answer = offload_floor(model, accelerator, tier, batch, context, kv_fraction=kv_fraction,
                           weight_fraction=weight_fraction, **options)
    if answer.step_time_s.size != 1:
        raise InvalidValueError("batch/context", (batch, context), "a single batch and context")
    step, tier_time, device_time = (float(answer.step_time_s), float(answer.tier_time_s), float(answer.device_time_s))
    base = float(answer.hbm_only_step_time_s)
    detail = (
        f"{answer.tier} must deliver {format_bytes(float(answer.tier_bytes))} per step per device at "
        f"{answer.tier_bandwidth / GB:.4g} GB/s = {format_seconds(tier_time)}, against "
        f"{format_seconds(device_time, 3)} for the HBM part; the step floor rises from {format_seconds(base)} to "
        f"{format_seconds(step)} ({step / base:.3g}x)."
    )
    required = None
    if slo_ms is not None:
        ok = step <= slo_ms / 1e3
        required = float(required_tier_bandwidth(
            model, accelerator, batch, context, slo_ms=slo_ms, kv_fraction=kv_fraction,
            weight_fraction=weight_fraction, **{k: v for k, v in options.items() if k != "links"}))
        need = "no tier is fast enough" if not np.isfinite(required) else f"it needs {required / GB:.4g} GB/s"
        verdict = f"{'Yes' if ok else 'No'} for {slo_ms:g} ms per token ({need}): "
    else:
        ok = tier_time <= device_time
        verdict = "Yes: " if ok else "No: "
    return TierAnswer(ok=ok, message=verdict + detail, floor=answer, required_bandwidth=required)
