"""Layer 3: ``decode_floor``, orchestrating the formulas for a Model on an Accelerator.

Every field of the result broadcasts like numpy over ``batch`` and ``context``; the result
keeps every intermediate term so a user can see *why* a step takes what it takes.

This module is the public surface and the one-point entry :func:`decode_floor` (with its scalar
fast path, :mod:`roofline_decode.floors.fast_path`).  The parts live beside it, each one idea:
:mod:`~roofline_decode.floors.traffic` (bytes and FLOPs of a step), :mod:`~roofline_decode.floors.peaks` (the
peak each FLOP group runs at), :mod:`~roofline_decode.floors.critical_batch`,
:mod:`~roofline_decode.floors.step_timing` (the times of a step on one device),
:mod:`~roofline_decode.floors.results` (:class:`DecodeFloor`) and :mod:`~roofline_decode.floors.sweeps`
(:func:`sweep`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

import numpy as np

from .. import catalog as _catalog
from .._typing import Broadcastable
from .routing import Routing, resolve_routing
from ..specs.accelerator import Accelerator
from ..specs.model import Model

if TYPE_CHECKING:
    # latency profiles are loaded on first use (four pydantic models a plain floor never needs)
    from ..specs.latency import LatencyProfile
    from ..specs.parallel import Parallel
    from .layout_result import ParallelFloor

from ..checks import flag
from .grid import DEFAULT_CONTEXT, KvLike, WeightsLike, broadcast_grid, checked_array
from .results import DecodeFloor
from .step_timing import load_profile, timed_step
from .traffic import step_traffic

__all__ = ["DecodeFloor", "decode_floor"]


@overload
def decode_floor(
    model: Model | str,
    accelerator: Accelerator | str,
    batch: Broadcastable = 1,
    context: Broadcastable = DEFAULT_CONTEXT,
    *,
    sparse: bool = False,
    routing: Broadcastable | Routing = "uniform",
    latency: LatencyProfile | str | None = None,
    weights: WeightsLike = None,
    kv: KvLike = None,
    parallel: None = None,
    mla_layout: str = "sharded",
    link_bandwidth: float | None = None,
    node_size: int | None = None,
    scale_out_bandwidth: float | None = None,
) -> DecodeFloor: ...


@overload
def decode_floor(
    model: Model | str,
    accelerator: Accelerator | str,
    batch: Broadcastable = 1,
    context: Broadcastable = DEFAULT_CONTEXT,
    *,
    sparse: bool = False,
    routing: Broadcastable | Routing = "uniform",
    latency: LatencyProfile | str | None = None,
    weights: WeightsLike = None,
    kv: KvLike = None,
    parallel: Parallel | str,
    mla_layout: str = "sharded",
    link_bandwidth: float | None = None,
    node_size: int | None = None,
    scale_out_bandwidth: float | None = None,
) -> DecodeFloor | ParallelFloor: ...


def decode_floor(
    model: Model | str,
    accelerator: Accelerator | str,
    batch: Broadcastable = 1,
    context: Broadcastable = DEFAULT_CONTEXT,
    *,
    sparse: bool = False,
    routing: Broadcastable | Routing = "uniform",
    latency: LatencyProfile | str | None = None,
    weights: WeightsLike = None,
    kv: KvLike = None,
    parallel: Parallel | str | None = None,
    mla_layout: str = "sharded",
    link_bandwidth: float | None = None,
    node_size: int | None = None,
    scale_out_bandwidth: float | None = None,
) -> DecodeFloor | ParallelFloor:
    """The fastest possible decode step of ``model`` on ``accelerator``.

    Parameters
    ----------
    model : Model or str
        A :class:`Model` or a catalog id.
    accelerator : Accelerator or str
        An :class:`Accelerator` or a catalog id.
    batch : array_like
        Sequences decoded together B [1], >= 1 (a fractional value is a mean batch).
    context : array_like
        Tokens already cached per sequence T [1], >= 0; broadcasts against ``batch``.  Default
        :data:`~roofline_decode.floors.grid.DEFAULT_CONTEXT` (4096, as the CLI and the plots);
        0 is the weights-only step, the fastest any context allows.
        Both follow the one rule of :func:`checked_array` (real numbers up to 2**53; no
        booleans, complex numbers or strings).
    sparse : bool
        Use 2:4 structured-sparsity peaks (off: dense peaks, DESIGN.md §4); where the device
        publishes no sparse peak for the precision, the dense one is used and ``notes`` says so.
    routing : {"uniform", "identical"} or array_like
        MoE routing assumption (:mod:`roofline_decode.floors.routing`): ``"uniform"`` (the expected
        distinct experts of independent, uniform routing), ``"identical"`` (every sequence
        picks the same k experts: the strict floor for any routing), or a measured mean number
        of distinct experts per MoE layer in [k, min(E, k·B)], broadcasting with ``batch``.
        Ignored by dense models (a count is refused).
    latency : LatencyProfile or str, optional
        A latency profile (or a preset id, e.g. ``"cuda-graph-h100"``) that adds the step's
        serial chain :func:`~roofline_decode.formulas.serial_chain_time` as a third
        constraint: the step becomes max(T_mem, T_comp, T_chain) and ``bound`` may read
        ``"latency"``.  None (default): the strict floor, no positive latency assumed.
    weights, kv : str, NumberFormat or dict, optional
        Serve the model in these weight and KV-cache formats, as
        :func:`~roofline_decode.load_model` applies them (``weights="fp8"``, ``kv="fp8"``, a
        llama.cpp preset, a dict per weight group); None (default) keeps the model's.
    parallel : Parallel or str, optional
        A parallel layout (:class:`~roofline_decode.Parallel`, or its text: ``"tp8"``,
        ``"dp8 ep8"``): the step of ``batch`` sequences on ``parallel.num_devices`` devices,
        seen from the busiest one (:mod:`roofline_decode.floors.layout`).  None (default) or a
        one-device layout: the single-device floor.
    mla_layout : {"sharded", "replicated"}
        An MLA model's latent projections and cache under ``tp`` > 1, as in
        :func:`~roofline_decode.floors.parallel.tensor_parallel_floor`.
    link_bandwidth, node_size, scale_out_bandwidth : optional
        Overrides of the device's links for a layout: per-direction scale-up bandwidth [B/s],
        devices per scale-up domain, per-device scale-out bandwidth [B/s]
        (:mod:`roofline_decode.floors.layout_links`).

    Returns
    -------
    DecodeFloor or ParallelFloor
        Every term of the floor, broadcast over batch and context; a
        :class:`~roofline_decode.floors.parallel.ParallelFloor` for a layout of several devices.

    Examples
    --------
    Llama-3.1-8B in bf16 on an H100 SXM, batch 1 at 4096 tokens: about 5 ms per token.

    >>> r = decode_floor("llama-3.1-8b", "h100-sxm", batch=1, context=4096)
    >>> round(float(r.step_time_s) * 1e3, 2), str(r.bound)
    (4.64, 'memory')

    With CUDA-graph kernel latencies, Llama-3.2-1B's 16 layers of 10 dependent kernels take
    0.21 ms, below its 0.74 ms weight stream: the chain binds only for smaller steps.

    >>> r = decode_floor("llama-3.2-1b", "h100-sxm", batch=1, context=1024, latency="cuda-graph-h100")
    >>> round(float(r.chain_time_s) * 1e3, 3), str(r.bound)
    (0.208, 'memory')

    gpt-oss-120b on a GB10-class device at batch 8: the strict (identical-routing) floor reads
    4 experts per layer instead of 28.7.

    >>> [float(decode_floor("gpt-oss-120b", "h100-sxm", batch=8, routing=r).experts_read)
    ...  for r in ("identical", 12.0)]
    [4.0, 12.0]

    DeepSeek-V3 on eight H200s, attention DP with expert parallelism, 256 sequences at 4K: each
    device reads 1/8 of the experts the batch touches and the attention weights whole.

    >>> r = decode_floor("deepseek-v3", "h200-sxm", batch=256, context=4096, parallel="dp8 ep8")
    >>> r.num_devices, round(float(r.weight_read_bytes_per_device) / 1e9, 1), str(r.bound)
    (8, 99.0, 'memory')
    """
    if parallel is not None:
        spread = _layout_floor(model, accelerator, batch, context, sparse, routing, latency, weights, kv, parallel,
                               mla_layout, link_bandwidth, node_size, scale_out_bandwidth)
        if spread is not None:
            return spread
    if sparse.__class__ is not bool:  # 'false' is a true string: a switch is True or False
        sparse = flag("sparse", sparse)
    if type(model) is not Model or weights is not None or kv is not None:  # a loaded spec passes as it is
        model = _catalog.load_model(model, weights=weights, kv=kv)
    if type(accelerator) is not Accelerator:
        accelerator = _catalog.load_accelerator(accelerator)
    if routing.__class__ is str and routing in ("uniform", "identical"):  # one point: the fast path
        profile = None if latency is None else load_profile(latency)
        floor: DecodeFloor | None = (_FAST or _scalar_floor())[0](model, accelerator, batch, context, sparse,
                                                                   resolve_routing(routing, model), profile)
        if floor is not None:
            return floor
    batch_array = checked_array("batch", batch, 1.0, inclusive=True)
    context_array = checked_array("context", context, 0.0, inclusive=True)
    chosen = resolve_routing(routing, model, batch_array)
    if chosen.measured is not None:  # a count per batch: the grid takes its shape too
        batch_array = np.broadcast_to(batch_array, np.broadcast_shapes(batch_array.shape, chosen.measured.shape))
    context_input = context_array  # the critical batch depends on the context alone
    batch_array, context_array = broadcast_grid(batch=batch_array, context=context_array)
    traffic = step_traffic(model, batch_array, context_array, chosen)
    profile = None if latency is None else load_profile(latency)
    return timed_step(model, accelerator, batch_array, context_array, traffic, sparse, context_input, chosen, profile)


def _layout_floor(model: Model | str, accelerator: Accelerator | str, batch: Broadcastable, context: Broadcastable,
                  sparse: bool, routing: Broadcastable | Routing, latency: LatencyProfile | str | None,
                  weights: WeightsLike, kv: KvLike, parallel: Parallel | str, mla_layout: str,
                  link_bandwidth: float | None, node_size: int | None,
                  scale_out_bandwidth: float | None) -> ParallelFloor | None:
    """``decode_floor`` under a layout of several devices, or None for one device (the plain
    floor answers)."""
    from .layout import Options, chain_of, check_layout, decode_layout_floor, layout_of
    from .layout_links import link_bandwidth_of

    layout = layout_of(parallel)
    if layout is None or layout.num_devices == 1:
        return None
    model = _catalog.load_model(model, weights=weights, kv=kv)
    accelerator = _catalog.load_accelerator(accelerator)
    check_layout(model, layout)
    batch_array = checked_array("batch", batch, 1.0, inclusive=True)
    context_array = checked_array("context", context, 0.0, inclusive=True)
    chosen = resolve_routing(routing, model, batch_array)
    if chosen.measured is not None:
        batch_array = np.broadcast_to(batch_array, np.broadcast_shapes(batch_array.shape, chosen.measured.shape))
    batch_array, context_array = broadcast_grid(batch=batch_array, context=context_array)
    options = Options(link_bandwidth=link_bandwidth, node_size=node_size, scale_out_bandwidth=scale_out_bandwidth,
                      mla_layout=mla_layout, sparse=flag("sparse", sparse))
    profile = None if latency is None else load_profile(latency)
    link = link_bandwidth_of(accelerator, link_bandwidth, layout.num_devices)[0]
    chain, chain_notes = chain_of(model, layout, batch_array, link, profile)
    return decode_layout_floor(model, accelerator, batch_array, context_array, layout, chosen, options, check=False,
                               chain=chain, chain_notes=chain_notes,
                               latency_profile=None if profile is None else profile.label)


def _scalar_floor() -> list[Any]:
    """[:func:`roofline_decode.floors.fast_path.scalar_floor`] (imported once, on first use: a plain
    ``import roofline_decode`` stays light)."""
    if not _FAST:
        from .fast_path import scalar_floor

        _FAST.append(scalar_floor)
    return _FAST


_FAST: list[Any] = []
