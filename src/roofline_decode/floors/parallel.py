"""Decode floors on several devices: tensor parallelism (default) and pipeline parallelism.

Tensor parallelism over n devices (Megatron):

* every weight matrix is split n ways, except the k/v projections, which split only up to
  H_kv ways: beyond n = H_kv each KV head (and its cache) is **replicated** on n / H_kv
  devices, so per-device KV bytes stop shrinking.  Norm vectors are replicated.
* MLA (``mla_layout``): the strict floor (``"sharded"``, default) splits the latent
  down-projections q_a and kv_a n ways like every other matrix (two small all-gathers of the
  latents per layer) and the latent cache by context (vLLM's decode context parallelism), both
  valid implementations; ``"replicated"`` is the serving engines' convention: q_a and kv_a whole
  on every device with their FLOPs (vLLM ``ReplicatedLinear``), and the latent cache too
  (treated as H_kv = 1).  The sharded layout's extra collectives are left out of the floor:
  the replicated layout needs none, and the floor takes each term (memory, compute,
  communication) at the smaller of the two.
* the state of recurrent layers (Mamba, Gated DeltaNet) and its update FLOPs split over the
  recurrent heads (``Model.recurrent_heads``: Gated DeltaNet's value heads, Mamba-2's SSM
  heads), up to n = H_rec ways (:func:`~roofline_decode.formulas.recurrent_state_share`; vLLM
  gives each rank ``num_v_heads // tp`` heads), not over the KV heads of the attention layers.
* two all-reduces per layer of B·d activations (activation_format bytes), each costing
  ``collective_latency + 2(n−1)/n · size / link_bandwidth`` (ring), plus one all-reduce of the
  vocab-parallel embedding's B·d output and one all-gather of the B·V vocab-parallel logits
  (``collective_latency + (n−1)/n · size / link_bandwidth``).
* the strict floor (default): no fixed latency, communication overlapped,
  step = max(memory, compute, communication).  The realistic variant is explicit:
  ``collective_latency=DEFAULT_COLLECTIVE_LATENCY, overlap_communication=False`` puts the
  collectives between layers on the critical path, step = max(memory, compute) + communication;
  that result is an estimate for such a runtime (a note says so), not a floor.

Link bandwidth: ``Accelerator.interconnect.per_direction_bandwidth`` (half a bidirectional
headline).  An ``aggregate`` figure (NVSwitch, meshes) is taken as what each device can send
in a ring: exact for NVSwitch, optimistic for AMD/Gaudi full meshes (pass ``link_bandwidth=``
the per-peer figure, e.g. 64e9 for MI300X, for a realistic estimate).  A ``per_peer`` figure
(NVLink bridges) is the ring's per-hop bandwidth; a bridge joins only two cards, so beyond two
devices the result carries a note.

Collective latency: :data:`DEFAULT_COLLECTIVE_LATENCY` = 5 µs per collective, slightly below
measured small-message NVLink all-reduces (about 6 µs on 2 H100s with CUDA graphs, NCCL issue
#1259; 10 µs on 2 and 34 µs on 8 A100s ring without, nccl-tests issue #123): the realistic
variant's figure and the pipeline hand-off's default.  Added serially it is not a floor (a
runtime may overlap or fuse collectives), so the tensor-parallel default is 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .energy import EnergyAndCost
from ..specs.latency import load_latency_profile

from .. import formulas as f
from .._typing import ArrayOrExpr, Broadcastable, FloatArray
from ..errors import InvalidValueError
from ..checks import flag, non_negative, positive, whole_number
from .capacity import kv_bytes_per_sequence, onchip_cache_note
from .grid import DEFAULT_CONTEXT

if TYPE_CHECKING:
    from .routing import Routing
    from ..specs.accelerator import Accelerator
    from ..specs.latency import LatencyProfile
    from ..specs.model import Model

__all__ = [
    "DEFAULT_COLLECTIVE_LATENCY",
    "MLA_LAYOUTS",
    "ParallelFloor",
    "tensor_parallel_floor",
    "pipeline_parallel_floor",
    "device_traffic",
    "link_bandwidth_of",
]

#: Fixed cost of one all-reduce or stage hand-off [s] (see the module docstring).
DEFAULT_COLLECTIVE_LATENCY = 5e-6

#: Layouts of an MLA model's latent projections and cache under tensor parallelism: ``"sharded"``
#: (the strict floor, default) and ``"replicated"`` (serving engines; see the module docstring).
MLA_LAYOUTS = ("sharded", "replicated")


@dataclass(frozen=True)
class DeviceTraffic:
    """What one of n tensor-parallel devices holds and moves per step (arrays, SI units)."""

    weight_bytes: float  # resident
    kv_bytes: np.ndarray  # resident at the context
    weight_read_bytes: np.ndarray
    kv_read_bytes: np.ndarray
    kv_write_bytes: np.ndarray
    flops: np.ndarray
    kv_share: float
    group_flops: dict[str, np.ndarray] = field(default_factory=dict)  # per FLOP group (estimate.COMPUTE_GROUPS), one device
    replicated_parameters: int = 0  # MLA latent projections held whole by every device (mla_layout="replicated")
    state_share: float = 1.0  # of the recurrent state and its FLOPs (formulas.recurrent_state_share)


def latent_projection_parameters(model: Model) -> int:
    """Parameters of the MLA latent down-projections [1]: q_a (d × r_q, when the query is
    compressed) and kv_a (d × (r_kv + d_rope)) of every layer.

    Serving engines shard the per-head projections (q_b, kv_b, o) by heads but replicate the
    down-projections, whose outputs every head needs (vLLM ``ReplicatedLinear`` for
    ``q_a_proj`` / ``kv_a_proj_with_mqa`` in ``deepseek_v2.py``): every tensor-parallel device
    holds them whole under ``mla_layout="replicated"``.  0 for other attention.

    Examples
    --------
    >>> from roofline_decode import load_model
    >>> latent_projection_parameters(load_model("deepseek-v3"))  # 61 · 7168 · (1536 + 512 + 64)
    923467776
    """
    if not model.is_mla:
        return 0
    return model.num_layers * model.hidden_size * (model.q_lora_rank + model.kv_lora_rank + model.qk_rope_head_dim)


def _latency(collective_latency: float) -> float:
    return non_negative("collective_latency", collective_latency, "a finite time >= 0 in seconds")


def _grid(batch: Broadcastable, context: Broadcastable) -> tuple[np.ndarray, np.ndarray]:
    from .grid import broadcast_grid, checked_array

    b = checked_array("batch", batch, 1.0, inclusive=True)
    t = checked_array("context", context, 0.0, inclusive=True)
    b, t = broadcast_grid(batch=b, context=t)  # two names in, two arrays out
    return b, t


def device_traffic(model: Model, batch: np.ndarray, context: np.ndarray, num_devices: int = 1,
                   routing: Routing | str | float = "uniform", mla_layout: str = "sharded") -> DeviceTraffic:
    """Per-device resident bytes, bytes moved and FLOPs under n-way tensor parallelism
    (routed experts read under ``routing``, :mod:`roofline_decode.floors.routing`).

    The KV cache splits over the KV heads (:func:`~roofline_decode.formulas.kv_head_share`; an
    MLA latent cache by context, or not at all under ``mla_layout="replicated"``), the state of
    recurrent layers and its update FLOPs over the recurrent heads
    (:func:`~roofline_decode.formulas.recurrent_state_share`), everything else n ways but the
    replicated parts (norm vectors; MLA latent projections under ``"replicated"``)."""
    from .traffic import step_traffic
    from .routing import resolve_routing

    n = num_devices
    total = step_traffic(model, batch, context, resolve_routing(routing, model, batch))
    whole_latent = model.is_mla and _mla_layout(mla_layout) == "replicated"
    latent = latent_projection_parameters(model) if whole_latent else 0
    replicated = (model.group_format("norms").bytes_per_element * model.parameter_groups["layer_vector"]
                  + model.group_format("attention").bytes_per_element * latent)
    # a sharded latent cache splits by context: n ways, as if it had n heads
    kv_heads = (1 if whole_latent else n) if model.is_mla else model.num_kv_heads
    share = float(f.kv_head_share(kv_heads, n))
    b_attention = model.group_format("attention").bytes_per_element
    kv_proj = 0.0 if model.is_mla else b_attention * model.num_layers * 2 * model.hidden_size * model.num_kv_heads * model.head_dim
    # the recurrent state (read, written and resident: B x its bytes per sequence) and its FLOPs
    state_share = float(f.recurrent_state_share(model.recurrent_heads or n, n))
    state = batch * model.recurrent_state_bytes_per_sequence
    state_flops = f.recurrent_update_flops(batch, model.num_recurrent_layers, model.recurrent_flops_per_token)

    def split(total_bytes: float | np.ndarray) -> ArrayOrExpr:
        return f.sharded_bytes(total_bytes - replicated - kv_proj, replicated + kv_proj * share, n)

    def cache(total_bytes: np.ndarray) -> np.ndarray:  # KV by KV heads, the state by recurrent heads
        return (total_bytes - state) * share + state * state_share

    latent_flops = f.matmul_flops(batch, latent) * (1 - 1 / n) if latent else 0.0
    extra = {"attention": latent_flops, "attention_scores": state_flops * (state_share - 1 / n)}
    kv_resident = batch * kv_bytes_per_sequence(model, context)
    return DeviceTraffic(
        weight_bytes=float(split(model.weight_bytes)),
        kv_bytes=cache(kv_resident),
        weight_read_bytes=split(total.weight_bytes),
        kv_read_bytes=cache(total.kv_read_bytes),
        kv_write_bytes=cache(total.kv_write_bytes),
        flops=total.flops / n + latent_flops + extra["attention_scores"],
        kv_share=share,
        group_flops={g: v / n + extra.get(g, 0.0) for g, v in total.group_flops.items()},
        replicated_parameters=latent,
        state_share=state_share,
    )


def _mla_layout(value: object) -> str:
    if not isinstance(value, str) or value not in MLA_LAYOUTS:
        raise InvalidValueError("mla_layout", value, "'sharded' (the strict floor) or 'replicated' (serving engines)")
    return str(value)


def link_bandwidth_of(accelerator: Accelerator, link_bandwidth: float | None, num_devices: int) -> tuple[float, list[str]]:
    """Per-direction link bandwidth [B/s] for n devices, and notes on what it means."""
    notes: list[str] = []
    if num_devices == 1:
        return float("inf"), notes
    if link_bandwidth is not None:
        return positive("link_bandwidth", link_bandwidth, "a finite bandwidth > 0 in B/s"), notes
    link = accelerator.interconnect
    if link is None:
        raise InvalidValueError(
            "link_bandwidth", None,
            f"a per-direction link bandwidth in B/s (link_bandwidth=..., or --link-gbps on the command "
            f"line): {accelerator.name} has no interconnect figure",
        )
    if link.scope == "per_peer" and num_devices > 2:
        notes.append(f"{link.name} is a per-peer bridge joining two cards; {num_devices} devices assume every hop gets it")
    return float(link.per_direction_bandwidth), notes


@dataclass(frozen=True)
class ParallelFloor(EnergyAndCost):
    """Decode floor of a model on n devices (arrays broadcast over batch × context, SI units).

    Per-device fields are for the busiest device; ``tokens_per_s`` is aggregate over the batch.
    Energy and cost (:class:`~roofline_decode.floors.energy.EnergyAndCost`) count all ``num_devices``
    devices: bytes moved = ``bytes_read_per_device`` x devices (the split is even), board power
    and price x devices.
    """

    model: str
    accelerator: str
    strategy: str
    num_devices: int
    batch: np.ndarray
    context: np.ndarray
    weight_bytes_per_device: float
    kv_bytes_per_device: np.ndarray
    bytes_read_per_device: np.ndarray
    memory_time_s: np.ndarray
    compute_time_s: np.ndarray
    communication_time_s: np.ndarray
    step_time_s: np.ndarray
    tokens_per_s: np.ndarray
    kv_replication: float
    link_bandwidth: float
    collective_latency: float
    notes: tuple[str, ...] = field(default=())
    chain_time_s: np.ndarray | float = 0.0
    latency_profile: str | None = None
    device: Accelerator | None = field(default=None, repr=False, compare=False)
    mla_layout: str | None = None  # an MLA model's layout under tensor parallelism (MLA_LAYOUTS)

    @property
    def _energy_bytes(self) -> np.ndarray:
        return np.asarray(self.bytes_read_per_device) * self.num_devices

    @property
    def _energy_devices(self) -> int:
        return self.num_devices

    @property
    def resident_bytes_per_device(self) -> np.ndarray:
        """Weights plus KV cache one device holds [B]."""
        return self.weight_bytes_per_device + self.kv_bytes_per_device


def tensor_parallel_floor(model: Model | str, accelerator: Accelerator | str, batch: Broadcastable = 1,
                          context: Broadcastable = DEFAULT_CONTEXT, num_devices: int = 1, *,
                          collective_latency: float = 0.0, link_bandwidth: float | None = None,
                          overlap_communication: bool = True, routing: Routing | str | float = "uniform",
                          latency: LatencyProfile | str | None = None, mla_layout: str = "sharded") -> ParallelFloor:
    """Decode step floor of ``model`` split over ``num_devices`` devices by tensor parallelism.

    The defaults give the **strict floor**: collectives cost their link time only (no fixed
    latency) and overlap with memory and compute, step = max(memory, compute, communication).
    The **realistic variant** is explicit: ``collective_latency=DEFAULT_COLLECTIVE_LATENCY``
    (5 µs per collective) and ``overlap_communication=False`` (collectives between layers, on
    the critical path: step = max(memory, compute) + communication); its result carries a note
    that it is an estimate for such a runtime, not a floor.

    Communication per step: two all-reduces of B·d activations per layer, the all-reduce of the
    vocab-parallel embedding's output (B·d) and the all-gather of the vocab-parallel logits
    (B·V), all in the activation format.  An MLA model's latent down-projections (q_a, kv_a)
    and latent cache are split n ways in the strict floor, or held whole by every device
    (``mla_layout="replicated"``, :func:`latent_projection_parameters`; see the module
    docstring).

    Parameters
    ----------
    model, accelerator : Model/str, Accelerator/str
    batch, context : array_like
        B and T as in :func:`roofline_decode.decode_floor` (broadcast).
    num_devices : int
        Tensor-parallel degree n (1: the single-device floor plus nothing).
    collective_latency : float
        Fixed cost of one collective [s] (default 0: the strict floor; the realistic variant
        takes :data:`DEFAULT_COLLECTIVE_LATENCY`, 5 µs; see the module docstring).
    link_bandwidth : float, optional
        Per-direction link bandwidth [B/s]; default the accelerator's interconnect.
    overlap_communication : bool
        Take max(memory, compute, communication) (default, the strict floor) instead of
        max(memory, compute) + communication.
    routing : {"uniform", "identical"} or float
        MoE routing assumption, as in :func:`roofline_decode.decode_floor` (its note is added).
    latency : LatencyProfile or str, optional
        A latency profile (or preset id) that adds the serial chain of the step
        (:func:`~roofline_decode.formulas.serial_chain_time`): per layer, its dependent
        operations and, on n > 1 devices, two all-reduces each costing the profile's
        collective latency plus their link time, one after another; plus the embedding
        all-reduce, the logits all-gather and the profile's per-step cost.  The step becomes
        max(step, chain) and ``chain_time_s`` holds it (an estimate for that runtime; a note
        says so).  None (default): no chain.
    mla_layout : {"sharded", "replicated"}
        MLA models only: ``"sharded"`` (default, the strict floor) splits q_a, kv_a and the
        latent cache n ways; ``"replicated"`` holds them whole on every device, as serving
        engines do.  Recorded in the result's ``mla_layout`` and notes.

    Examples
    --------
    kipply's 13B model on 2 A100s: about 8.4 ms per token at batch 1 as a strict floor, 8.8 ms
    with 5 µs per collective on the critical path (FasterTransformer measured 13.5).

    >>> from roofline_decode import Model
    >>> m = Model(name="13B", num_layers=40, hidden_size=5120, num_heads=40, num_kv_heads=40,
    ...           head_dim=128, intermediate_size=20480, vocab_size=50272, mlp_gated=False)
    >>> r = tensor_parallel_floor(m, "a100-40gb-sxm", batch=1, context=512, num_devices=2)
    >>> realistic = tensor_parallel_floor(m, "a100-40gb-sxm", batch=1, context=512, num_devices=2,
    ...                                   collective_latency=DEFAULT_COLLECTIVE_LATENCY, overlap_communication=False)
    >>> round(float(r.step_time_s) * 1e3, 2), round(float(realistic.step_time_s) * 1e3, 2)
    (8.39, 8.81)
    """
    from ..catalog import load_accelerator, load_model

    model, accelerator = load_model(model), load_accelerator(accelerator)
    overlap_communication = flag("overlap_communication", overlap_communication)
    n = whole_number("num_devices", num_devices)
    collective_latency = _latency(collective_latency)
    batch, context = _grid(batch, context)
    link, notes = link_bandwidth_of(accelerator, link_bandwidth, n)
    from .peaks import group_peaks
    from .routing import resolve_routing
    from .traffic import StepTraffic

    routing = resolve_routing(routing, model, batch)
    routing_note = routing.note(model)
    if routing_note:
        notes.append(routing_note)
    layout = _mla_layout(mla_layout) if model.is_mla else None
    traffic = device_traffic(model, batch, context, n, routing, mla_layout)
    read = traffic.weight_read_bytes + traffic.kv_read_bytes + traffic.kv_write_bytes
    memory = f.memory_time(read, accelerator.memory_bandwidth)
    # each FLOP group at its own precision (as decode_floor), split n ways but the latent projections
    peaks = group_peaks(model, accelerator, False)
    compute = peaks.compute_time(StepTraffic(read, traffic.kv_read_bytes, traffic.kv_write_bytes, traffic.flops,
                                             traffic.group_flops))
    b_act = model.activation_format.bytes_per_element
    comm = (f.tensor_parallel_communication_time(batch, model.hidden_size, b_act, model.num_layers, n, link,
                                                 collective_latency)
            + f.ring_all_reduce_time(batch * model.hidden_size * b_act, n, link, collective_latency)  # embedding
            + f.ring_all_gather_time(batch * model.vocab_size * b_act, n, link, collective_latency)  # logits
            ) if n > 1 else np.zeros_like(memory)
    step = np.maximum(np.maximum(memory, compute), comm) if overlap_communication else np.maximum(memory, compute) + comm
    profile = None if latency is None else load_latency_profile(latency)
    chain = np.zeros_like(step)
    if profile is not None:
        chain = chain + _tensor_parallel_chain(model, batch, n, link, profile)
        step = np.maximum(step, chain)
        notes.append(f"serial chain from latency profile {profile.label!r}: {profile.operations_per_layer:g} operations "
                     f"per layer at {profile.operation_latency * 1e6:.3g} us"
                     + (f" and 2 all-reduces per layer at {profile.collective_latency * 1e6:.3g} us + link time"
                        if n > 1 else "")
                     + ", one after another: an estimate for that runtime, not a physical floor")
    if n > 1 and (collective_latency > 0 or not overlap_communication):
        notes.append(f"collectives at {collective_latency * 1e6:.3g} us each"
                     + ("" if overlap_communication else ", on the critical path after memory and compute")
                     + ": an estimate for such a runtime, not a floor (the strict floor: collective_latency=0, "
                     "overlap_communication=True)")
    if layout == "replicated" and n > 1:
        notes.append(f"mla_layout='replicated' (the serving engines' convention, not the strict floor): MLA latent "
                     f"projections q_a and kv_a ({traffic.replicated_parameters:,} parameters) and the latent cache are "
                     "held whole by every device; the strict floor is mla_layout='sharded'")
    elif layout == "sharded" and n > 1:
        notes.append(f"mla_layout='sharded' (the strict floor): MLA latent projections q_a and kv_a split {n} ways (two "
                     "all-gathers of the latents per layer, left out) and the latent cache by context; serving "
                     "engines replicate them: mla_layout='replicated'")
    kv_heads = (1 if layout == "replicated" else n) if model.is_mla else model.num_kv_heads
    replication = max(n / kv_heads, 1.0)
    if replication > 1:
        notes.append(f"{n} devices > {kv_heads} KV heads: each KV head is replicated on {replication:g} devices")
    onchip = onchip_cache_note(traffic.weight_bytes + traffic.kv_bytes, accelerator, per_device=n > 1)
    if onchip:
        notes.append(onchip)
    if model.num_recurrent_layers and traffic.state_share > 1 / n:
        notes.append(f"{n} devices > {model.recurrent_heads} recurrent heads: each head's state is replicated on "
                     f"{n / model.recurrent_heads:g} devices")
    return ParallelFloor(
        model=model.name, accelerator=accelerator.id or accelerator.name, strategy="tensor", num_devices=n,
        batch=batch, context=context, weight_bytes_per_device=traffic.weight_bytes,
        kv_bytes_per_device=traffic.kv_bytes, bytes_read_per_device=read, memory_time_s=memory,
        compute_time_s=compute, communication_time_s=comm, step_time_s=step,
        tokens_per_s=f.tokens_per_second(batch, step), kv_replication=replication,
        link_bandwidth=link, collective_latency=collective_latency, notes=tuple(notes),
        chain_time_s=chain, latency_profile=None if profile is None else profile.label, device=accelerator,
        mla_layout=layout,
    )


def _tensor_parallel_chain(model: Model, batch: np.ndarray, n: int, link: float,
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


def pipeline_parallel_floor(model: Model | str, accelerator: Accelerator | str, batch: Broadcastable = 1,
                            context: Broadcastable = DEFAULT_CONTEXT, num_stages: int = 1,
                            microbatches: int = 1, *, collective_latency: float = DEFAULT_COLLECTIVE_LATENCY,
                            link_bandwidth: float | None = None) -> ParallelFloor:
    """Decode floor with the layers split into ``num_stages`` pipeline stages.

    Each device holds 1/p of the weights and of the KV cache; a stage pass for one micro-batch
    of B/m sequences takes the single-device floor of that micro-batch divided by p (weights
    re-read per micro-batch).  The split is even over *all* bytes and FLOPs, embedding and
    lm_head included: a lower bound for any real split, whose busiest stage moves at least the
    average.  Real engines split layers and put the embedding on the first stage and the
    lm_head on the last, which can be far from even (Gemma-3-1B's lm_head is 30 % of its
    parameters), so the real busiest stage may be well above this floor; a hand-off sends (B/m)·d activations at
    ``collective_latency`` + size / link bandwidth.  Step time per token:
    :func:`roofline_decode.formulas.pipeline_step_time`.

    Examples
    --------
    Pipelining Llama-3.1-70B over 2 H100s with one micro-batch does not beat one device's speed
    (it is the same bytes, read one stage after the other) — it only halves the memory needed:

    >>> r = pipeline_parallel_floor("llama-3.1-70b", "h100-sxm", batch=8, context=4096, num_stages=2)
    >>> round(float(r.step_time_s) * 1e3, 1), round(r.weight_bytes_per_device / 1e9, 1)
    (44.7, 70.6)
    """
    from ..catalog import load_accelerator, load_model
    from .peaks import group_peaks
    from .traffic import step_traffic

    model, accelerator = load_model(model), load_accelerator(accelerator)
    p = whole_number("num_stages", num_stages)
    m = whole_number("microbatches", microbatches)
    collective_latency = _latency(collective_latency)
    batch, context = _grid(batch, context)
    if np.any(batch < m):
        raise InvalidValueError("microbatches", m, f"at most the batch ({batch.min():g})")
    link, notes = link_bandwidth_of(accelerator, link_bandwidth, p)
    micro = batch / m
    traffic = step_traffic(model, micro, context)
    read = (traffic.weight_bytes + traffic.kv_read_bytes + traffic.kv_write_bytes) / p
    memory = f.memory_time(read, accelerator.memory_bandwidth)
    compute = group_peaks(model, accelerator, False).compute_time(traffic, p)
    stage = np.maximum(memory, compute)
    hop = (collective_latency + micro * model.hidden_size * model.activation_format.bytes_per_element / link) if p > 1 else 0.0
    step = np.asarray(f.pipeline_step_time(stage, p, m, hop), dtype=np.float64)
    kv_resident = batch * kv_bytes_per_sequence(model, context) / p
    onchip = onchip_cache_note(model.weight_bytes / p + kv_resident, accelerator, per_device=p > 1)
    return ParallelFloor(
        model=model.name, accelerator=accelerator.id or accelerator.name, strategy="pipeline", num_devices=p,
        batch=batch, context=context, weight_bytes_per_device=model.weight_bytes / p, kv_bytes_per_device=kv_resident,
        bytes_read_per_device=read * m, memory_time_s=memory * m, compute_time_s=compute * m,
        communication_time_s=np.zeros_like(step) + p * hop, step_time_s=step,
        tokens_per_s=f.tokens_per_second(batch, step), kv_replication=1.0, link_bandwidth=link,
        collective_latency=collective_latency, notes=tuple(notes) + ((onchip,) if onchip else ()),
        device=accelerator,
    )
