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

Both are thin wrappers of the one path of every layout, :func:`roofline_decode.floors.layout.layout_floor`
(``decode_floor(..., parallel=Parallel(tp=n))`` is the same floor, with the layout checked against
the model; expert parallelism and attention data parallelism are there).

Collective latency: :data:`DEFAULT_COLLECTIVE_LATENCY` = 5 µs per collective, slightly below
measured small-message NVLink all-reduces (about 6 µs on 2 H100s with CUDA graphs, NCCL issue
#1259; 10 µs on 2 and 34 µs on 8 A100s ring without, nccl-tests issue #123): the realistic
variant's figure and the pipeline hand-off's default.  Added serially it is not a floor (a
runtime may overlap or fuse collectives), so the tensor-parallel default is 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..specs.latency import load_latency_profile

from .. import formulas as f
from .._typing import Broadcastable
from ..errors import InvalidValueError
from ..checks import collective_latency as checked_collective_latency
from ..checks import flag, whole_number
from .grid import DEFAULT_CONTEXT
from .layout import Options, chain_of, decode_layout_floor
from .layout_links import link_bandwidth_of
from .layout_result import ParallelFloor
from .layout_traffic import MLA_LAYOUTS, DeviceTraffic, device_traffic, latent_projection_parameters, mla_layout_of

if TYPE_CHECKING:
    from .routing import Routing
    from ..specs.accelerator import Accelerator
    from ..specs.latency import LatencyProfile
    from ..specs.model import Model
    from ..specs.parallel import Parallel

__all__ = [
    "DEFAULT_COLLECTIVE_LATENCY",
    "MLA_LAYOUTS",
    "DeviceTraffic",
    "ParallelFloor",
    "tensor_parallel_floor",
    "pipeline_parallel_floor",
    "device_traffic",
    "latent_projection_parameters",
    "link_bandwidth_of",
]

#: Fixed cost of one all-reduce or stage hand-off [s] (see the module docstring).
DEFAULT_COLLECTIVE_LATENCY = 5e-6


def _latency(collective_latency: float) -> float:
    return checked_collective_latency(collective_latency)


def _grid(batch: Broadcastable, context: Broadcastable) -> tuple[np.ndarray, np.ndarray]:
    from .grid import broadcast_grid, checked_array

    b = checked_array("batch", batch, 1.0, inclusive=True)
    t = checked_array("context", context, 0.0, inclusive=True)
    b, t = broadcast_grid(batch=b, context=t)  # two names in, two arrays out
    return b, t


def _layout(name: str, degree: int, **degrees: int) -> Parallel:
    """The layout of a wrapper: ``Parallel(**degrees)``, its refusal naming the wrapper's argument."""
    from ..specs.parallel import MAX_DEGREE, Parallel

    if degree > MAX_DEGREE:
        raise InvalidValueError(name, degree, f"a whole number from 1 to {MAX_DEGREE}")
    return Parallel(**degrees)


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
    from .routing import resolve_routing

    model, accelerator = load_model(model), load_accelerator(accelerator)
    overlap_communication = flag("overlap_communication", overlap_communication)
    n = whole_number("num_devices", num_devices)
    collective_latency = _latency(collective_latency)
    batch, context = _grid(batch, context)
    link, _ = link_bandwidth_of(accelerator, link_bandwidth, n)  # a device without a link figure: refused first
    routing = resolve_routing(routing, model, batch)
    mla_layout = mla_layout_of(mla_layout)
    layout = _layout("num_devices", n, tp=n)
    options = Options(collective_latency=collective_latency, overlap_communication=overlap_communication,
                      link_bandwidth=link_bandwidth, mla_layout=mla_layout, domain_notes=False)
    profile = None if latency is None else load_latency_profile(latency)
    chain, chain_notes = chain_of(model, layout, batch, link, profile)
    return decode_layout_floor(model, accelerator, batch, context, layout, routing, options, check=False,
                               strategy="tensor", chain=chain, chain_notes=chain_notes,
                               latency_profile=None if profile is None else profile.label)


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
    from .routing import UNIFORM

    model, accelerator = load_model(model), load_accelerator(accelerator)
    p = whole_number("num_stages", num_stages)
    m = whole_number("microbatches", microbatches)
    collective_latency = _latency(collective_latency)
    batch, context = _grid(batch, context)
    if np.any(batch < m):
        raise InvalidValueError("microbatches", m, f"at most the batch ({batch.min():g})")
    link_bandwidth_of(accelerator, link_bandwidth, p)  # a device without a link figure: refused first
    layout = _layout("num_stages", p, pp=p)
    options = Options(collective_latency=collective_latency, link_bandwidth=link_bandwidth, microbatches=m,
                      domain_notes=False)
    return decode_layout_floor(model, accelerator, batch, context, layout, UNIFORM, options, check=False,
                               strategy="pipeline", routing_note=False)
