"""One path for every step floor on several devices: a :class:`~roofline_decode.Parallel` layout.

:func:`layout_floor` times the busiest device of a layout: its share of the step's bytes and
FLOPs (:mod:`~roofline_decode.floors.layout_traffic`: attention DP, tensor and expert splits,
then ``pp`` even stages), its link time (:mod:`~roofline_decode.floors.layout_links`), and
step = max(memory, compute, communication) per stage (the strict floor: collectives overlap and
have no fixed latency), through :func:`~roofline_decode.formulas.pipeline_step_time` when there
are stages or micro-batches.  :func:`decode_layout_floor` is ``decode_floor(parallel=...)``;
the prefill and mixed-step floors build their shares and call :func:`layout_floor`;
:func:`~roofline_decode.floors.parallel.tensor_parallel_floor` and
:func:`~roofline_decode.floors.parallel.pipeline_parallel_floor` are thin wrappers of it.

Pipeline stages take the even split of *all* bytes and FLOPs, embedding and lm_head included: a
lower bound for any real split, whose busiest stage moves at least the average.
:func:`check_layout` refuses layouts a model cannot take.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import formulas as f
from .._typing import FloatArray
from ..errors import InvalidValueError
from .capacity import onchip_cache_note
from .layout_links import layout_communication, layout_links
from .layout_result import ParallelFloor
from .layout_traffic import StepShare, decode_share, mla_layout_of, rank_traffic
from .peaks import group_peaks
from .routing import Routing

if TYPE_CHECKING:
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model
    from ..specs.latency import LatencyProfile
    from ..specs.parallel import Parallel

__all__ = ["ParallelFloor", "Options", "check_layout", "layout_of", "layout_floor", "decode_layout_floor", "tensor_parallel_chain",
           "chain_of", "prefill_layout_floor"]


def layout_of(parallel: object) -> Parallel | None:
    """``parallel`` as a :class:`~roofline_decode.Parallel` (a layout, its text such as
    ``"tp8ep8dp8"``, or a dict of degrees), None for None."""
    from ..specs.parallel import Parallel

    if parallel is None or isinstance(parallel, Parallel):
        return parallel
    if isinstance(parallel, str):
        return Parallel.parse(parallel)
    if isinstance(parallel, dict):
        return Parallel(**parallel)
    raise InvalidValueError("parallel", parallel, "a Parallel layout, its text such as 'tp8ep8dp8', a dict of "
                                                  "degrees, or None (one device)")


def check_layout(model: Model, layout: Parallel) -> None:
    """Refuse a layout ``model`` cannot take: attention heads not split evenly by ``tp`` (KV
    heads may be replicated when tp > H_kv and tp is a multiple of H_kv), experts not split
    evenly by ``ep`` (or ``ep`` > 1 on a dense model), more stages than layers.

    Raises
    ------
    InvalidValueError
        Naming the degree (``parallel.tp``, ``parallel.ep``, ``parallel.pp``), its value and why.
    """
    tp, ep, pp = layout.tp, layout.ep, layout.pp
    if model.num_heads % tp:
        raise InvalidValueError("parallel.tp", tp, f"a divisor of the {model.num_heads} attention heads of {model.name}")
    kv = model.num_kv_heads
    if not model.is_mla and (kv % tp if tp <= kv else tp % kv):
        raise InvalidValueError("parallel.tp", tp, f"a divisor of the {kv} KV heads of {model.name}, or a multiple of "
                                                   "them (each KV head replicated tp / H_kv times)")
    if ep > 1 and not model.is_moe:
        raise InvalidValueError("parallel.ep", ep, f"1: {model.name} is a dense model (no routed experts)")
    if model.is_moe and (ep > model.num_experts or model.num_experts % ep):
        raise InvalidValueError("parallel.ep", ep, f"a divisor of the {model.num_experts} routed experts of {model.name}")
    if pp > model.num_layers:
        raise InvalidValueError("parallel.pp", pp, f"at most the {model.num_layers} layers of {model.name}")


@dataclass(frozen=True)
class Options:
    """How a layout's step is timed (the defaults: the strict floor).

    ``collective_latency`` [s] per collective and pipeline hand-off; ``overlap_communication``:
    max(memory, compute, communication) (else communication after max(memory, compute));
    ``link_bandwidth``, ``node_size``, ``scale_out_bandwidth``: overrides of the device's links
    (:func:`~roofline_decode.floors.layout_links.layout_links`); ``mla_layout``; ``microbatches``
    of a pipeline; ``sparse`` peaks; ``domain_notes``: say when the scale-up domain is unknown."""

    collective_latency: float = 0.0
    overlap_communication: bool = True
    link_bandwidth: float | None = None
    node_size: int | None = None
    scale_out_bandwidth: float | None = None
    mla_layout: str = "sharded"
    microbatches: int = 1
    sparse: bool = False
    domain_notes: bool = True


def layout_floor(model: Model, accelerator: Accelerator, layout: Parallel, share: StepShare, *, batch: np.ndarray,
                 context: np.ndarray, tokens: Any, logits_tokens: Any, options: Options = Options(),
                 routing: Routing | None = None, chain: Any = None, chain_notes: tuple[str, ...] = (),
                 strategy: str = "layout", step: str = "decode", tokens_per_step: Any = None,
                 prefill_tokens: Any = 0.0, prefill_context: Any = 0.0, latency_profile: str | None = None,
                 lead_notes: tuple[str, ...] = (), needs_peak: Any = False) -> ParallelFloor:
    """The busiest device's floor of a step under ``layout``.

    ``share`` is one attention-DP group's share of one micro-batch's step
    (:func:`~roofline_decode.floors.layout_traffic.decode_share`,
    :func:`~roofline_decode.floors.layout_traffic.even_share`); ``tokens`` the step's tokens
    (all groups, one micro-batch) and ``logits_tokens`` those that get logits, for the
    collectives; ``tokens_per_step`` the tokens ``tokens_per_s`` counts (default ``batch``);
    ``chain`` a serial chain [s] the step cannot beat (``chain_notes`` say what it is);
    ``routing`` adds its note (None: no routing note); ``lead_notes`` come first; ``needs_peak``
    (a bool or a mask over the grid): where a step has no time without a compute peak (it
    carries prefill tokens), compute and step times are NaN on a device without any peak."""
    o = options
    n, pp, m = layout.num_devices, layout.pp, o.microbatches
    links = layout_links(accelerator, layout, o.link_bandwidth, o.node_size, o.scale_out_bandwidth,
                         o.domain_notes and strategy == "layout")
    notes = [*lead_notes, *links.notes]
    if routing is not None and (note := routing.note(model)):
        notes.append(note)
    traffic = rank_traffic(model, share, layout, o.mla_layout)
    read = traffic.weight_read_bytes + traffic.kv_read_bytes + traffic.kv_write_bytes
    if pp > 1:
        read = read / pp
    memory = f.memory_time(read, accelerator.memory_bandwidth)
    peaks = group_peaks(model, accelerator, o.sparse)
    compute = peaks.time_of(traffic.flops, traffic.group_flops, pp)
    if strategy == "layout":
        notes.extend(peaks.notes)
        if not peaks.bounded and np.any(needs_peak):
            compute = np.where(needs_peak, np.nan, compute)
            notes.append("a step that carries prefill tokens needs a compute peak: its step time is not given (NaN)")
    comm = layout_communication(model, layout, links, tokens, logits_tokens, o.collective_latency)
    if layout.devices_per_stage == 1:
        comm = np.zeros_like(memory)
    elif np.shape(comm) != np.shape(memory):
        comm = comm + np.zeros_like(memory)
    stage_comm = comm / pp if pp > 1 else comm
    stage = (np.maximum(np.maximum(memory, compute), stage_comm) if o.overlap_communication
             else np.maximum(memory, compute) + stage_comm)
    hop: Any = 0.0
    if pp > 1:  # a stage hands the micro-batch's activations on, spread over the devices of a stage
        handed = tokens if layout.devices_per_stage == 1 else tokens / layout.devices_per_stage
        hop = o.collective_latency + handed * model.hidden_size * model.activation_format.bytes_per_element / links.scale_up
    step_time = (np.asarray(f.pipeline_step_time(stage, pp, m, hop), dtype=np.float64) if pp > 1 or m > 1 else stage)
    chain_time: Any = np.zeros_like(step_time)
    if chain is not None:
        chain_time = chain_time + chain
        step_time = np.maximum(step_time, chain_time)
        notes.extend(chain_notes)
    if layout.devices_per_stage > 1 and (o.collective_latency > 0 or not o.overlap_communication):
        notes.append(f"collectives at {o.collective_latency * 1e6:.3g} us each"
                     + ("" if o.overlap_communication else ", on the critical path after memory and compute")
                     + ": an estimate for such a runtime, not a floor (the strict floor: collective_latency=0, "
                     "overlap_communication=True)")
    mla = _mla_notes(model, layout.tp, o.mla_layout, traffic.replicated_parameters, notes)
    kv_heads = (1 if mla == "replicated" else layout.tp) if model.is_mla else model.num_kv_heads
    replication = max(layout.tp / kv_heads, 1.0)
    if replication > 1:
        notes.append(f"{layout.tp} devices > {kv_heads} KV heads: each KV head is replicated on {replication:g} devices")
    weight_resident, kv_resident = (traffic.weight_bytes / pp, traffic.kv_bytes / pp) if pp > 1 else (
        traffic.weight_bytes, traffic.kv_bytes)
    onchip = onchip_cache_note(weight_resident + kv_resident, accelerator, per_device=n > 1)
    if onchip:
        notes.append(onchip)
    if model.num_recurrent_layers and layout.tp > 1 and traffic.state_share > 1 / layout.tp:
        notes.append(f"{layout.tp} devices > {model.recurrent_heads} recurrent heads: each head's state is replicated "
                     f"on {layout.tp / model.recurrent_heads:g} devices")
    produced = batch if tokens_per_step is None else tokens_per_step

    def per_device(value: Any) -> Any:  # a stage's share of the rank's bytes or FLOPs, all micro-batches
        return value if pp == 1 and m == 1 else np.asarray(value) / pp * m

    def rounds(value: Any) -> Any:  # a stage's time or bytes for all micro-batches
        return value if m == 1 else value * m

    return ParallelFloor(
        model=model.name, spec=model, accelerator=accelerator.id or accelerator.name, strategy=strategy, num_devices=n,
        batch=batch, context=context, weight_bytes_per_device=weight_resident, kv_bytes_per_device=kv_resident,
        bytes_read_per_device=rounds(read), memory_time_s=rounds(memory), compute_time_s=rounds(compute),
        communication_time_s=comm + pp * hop if pp > 1 else comm, step_time_s=step_time,
        tokens_per_s=f.tokens_per_second(produced, step_time), kv_replication=replication,
        link_bandwidth=links.scale_up, collective_latency=o.collective_latency, notes=tuple(notes),
        chain_time_s=chain_time, latency_profile=latency_profile, device=accelerator, mla_layout=mla,
        parallel=layout, step=step, weight_read_bytes_per_device=per_device(traffic.weight_read_bytes),
        expert_read_bytes_per_device=per_device(traffic.expert_read_bytes),
        kv_read_bytes_per_device=per_device(traffic.kv_read_bytes),
        kv_write_bytes_per_device=per_device(traffic.kv_write_bytes), flops_per_device=per_device(traffic.flops),
        prefill_tokens=prefill_tokens, prefill_context=prefill_context,
        routing=None if routing is None or not model.is_moe else routing.kind, scale_up_domain=links.domain,
        scale_out_bandwidth=links.scale_out, tokens_per_step=produced,
        group_flops_per_device=(traffic.group_flops if pp == 1 and m == 1
                                else {g: np.asarray(v) / pp * m for g, v in traffic.group_flops.items()}),
    )


def _mla_notes(model: Model, tp: int, mla_layout: str, replicated: int, notes: list[str]) -> str | None:
    """The MLA layout of the result (None for other attention), its note appended on tp > 1."""
    layout = mla_layout_of(mla_layout) if model.is_mla else None
    if layout == "replicated" and tp > 1:
        notes.append(f"mla_layout='replicated' (the serving engines' convention, not the strict floor): MLA latent "
                     f"projections q_a and kv_a ({replicated:,} parameters) and the latent cache are "
                     "held whole by every device; the strict floor is mla_layout='sharded'")
    elif layout == "sharded" and tp > 1:
        notes.append(f"mla_layout='sharded' (the strict floor): MLA latent projections q_a and kv_a split {tp} ways (two "
                     "all-gathers of the latents per layer, left out) and the latent cache by context; serving "
                     "engines replicate them: mla_layout='replicated'")
    return layout


def tensor_parallel_chain(model: Model, batch: np.ndarray, n: int, link: float,
                           profile: LatencyProfile) -> FloatArray | float:
    """Serial chain of one tensor-parallel step [s]: every layer's dependent operations and its two
    all-reduces in series, then the embedding all-reduce and the logits all-gather (each at the
    profile's collective latency plus its link time), plus the per-step cost."""
    b_act = model.activation_format.bytes_per_element
    if n > 1:
        alpha = profile.collective_latency
        per_layer_collective = f.ring_all_reduce_time(batch * model.hidden_size * b_act, n, link, alpha)
        outside = (f.ring_all_reduce_time(batch * model.hidden_size * b_act, n, link, alpha)
                   + f.ring_all_gather_time(batch * model.vocab_size * b_act, n, link, alpha))
    else:
        per_layer_collective = outside = 0.0
    chain: FloatArray | float = f.serial_chain_time(
        model.num_layers, profile.operations_per_layer, profile.operation_latency, 2 if n > 1 else 0,
        per_layer_collective, step_latency=profile.step_latency + outside)
    return chain


def decode_layout_floor(model: Model, accelerator: Accelerator, batch: np.ndarray, context: np.ndarray,
                        layout: Parallel, routing: Routing, options: Options = Options(), *,
                        check: bool = True, strategy: str = "layout", chain: Any = None,
                        chain_notes: tuple[str, ...] = (), latency_profile: str | None = None,
                        routing_note: bool = True) -> ParallelFloor:
    """The floor of a decode step of ``batch`` sequences at ``context`` under ``layout`` (the
    grid already checked and broadcast): ``decode_floor(parallel=...)``."""
    if check:
        check_layout(model, layout)
    micro = batch if options.microbatches == 1 else batch / options.microbatches
    share = decode_share(model, micro, context, routing, layout.attention_dp, resident_batch=batch)
    return layout_floor(model, accelerator, layout, share, batch=batch, context=context, tokens=micro,
                        logits_tokens=micro, options=options, routing=routing if routing_note else None, chain=chain,
                        chain_notes=chain_notes, strategy=strategy, latency_profile=latency_profile)


def chain_of(model: Model, layout: Parallel, tokens: np.ndarray, link: float,
             profile: LatencyProfile | None) -> tuple[Any, tuple[str, ...]]:
    """The serial chain of a step under ``profile`` (:func:`tensor_parallel_chain` over the
    ``tp`` devices of a group, with its tokens) and its note; (None, ()) without a profile."""
    if profile is None:
        return None, ()
    tp = layout.tp
    group = tokens if layout.attention_dp == 1 else tokens / layout.attention_dp
    note = (f"serial chain from latency profile {profile.label!r}: {profile.operations_per_layer:g} operations "
            f"per layer at {profile.operation_latency * 1e6:.3g} us"
            + (f" and 2 all-reduces per layer at {profile.collective_latency * 1e6:.3g} us + link time" if tp > 1 else "")
            + ", one after another: an estimate for that runtime, not a physical floor")
    return tensor_parallel_chain(model, group, tp, link, profile), (note,)


def prefill_layout_floor(model: Model, accelerator: Accelerator, layout: Parallel, options: Options, traffic: Any,
                         batch: np.ndarray, prompt: np.ndarray, chunk: np.ndarray, cached: np.ndarray,
                         new: np.ndarray, experts: tuple[int, int, int], routing: Routing) -> ParallelFloor:
    """``prefill_floor(parallel=...)``: the prefill whose bytes and FLOPs are ``traffic``
    (``new`` tokens per sequence after ``cached``, in chunks, routed experts ``experts`` = (L_moe,
    E or k, k) as the prefill formulas take them) on the busiest device of ``layout``."""
    from ..formulas import prefill as fp
    from .capacity import kv_bytes_per_sequence
    from .layout_traffic import step_share
    from .traffic import streamed_terms

    check_layout(model, layout)
    _, row, b_w = streamed_terms(model)
    expert_bytes: Any = 0.0
    if model.is_moe:
        expert_bytes = fp.prefill_weight_bytes(batch, new, chunk, 0, 0, 0, model.vocab_size, b_w, *experts,
                                               model.expert_parameters, model.routed_expert_format.bytes_per_element)
    rows = fp.prefill_weight_bytes(batch, new, chunk, 0, 0, row, model.vocab_size, b_w)
    tokens = batch * new
    share = step_share(traffic, tokens=tokens, kv_resident=batch * kv_bytes_per_sequence(model, prompt),
                       expert_bytes=expert_bytes, gathered_bytes=rows, dp=layout.attention_dp)
    return layout_floor(model, accelerator, layout, share, batch=batch, context=cached, tokens=tokens,
                        logits_tokens=batch, options=options, routing=routing, step="prefill",
                        tokens_per_step=tokens, prefill_tokens=new, prefill_context=cached, needs_peak=True)
