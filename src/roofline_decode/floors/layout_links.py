"""The links of a parallel layout and the communication of one step over them.

Scale-up link: ``Accelerator.interconnect.per_direction_bandwidth`` (half a bidirectional
headline; an ``aggregate`` NVSwitch figure is what each device can send, a ``per_peer`` bridge
joins two cards).  The scale-up **domain** (devices one NVLink/NVSwitch fabric joins: 8 in an
HGX node, 72 in an NVL72 rack) and the **scale-out** link (the per-device NIC) come from the
interconnect's ``domain_size`` and the accelerator's ``scale_out`` where the spec has them, or
from the ``node_size=`` and ``scale_out_bandwidth=`` arguments.  Unknown, every device is taken
to share the scale-up link: optimistic, so the result is still a floor, and a note says so.

Communication per step, per device (:func:`layout_communication`):

* tensor parallelism (``tp`` > 1): ring all-reduces of the group's tokens' activations over
  ``tp`` devices, two per layer (attention and MLP) when the MoE block is split like the rest
  (one group, ``ep`` = 1), else one per layer plus one per dense-MLP layer; the all-reduce of
  the vocab-parallel embedding and the all-gather of the logits;
* expert parallelism (``ep`` > 1): dispatch and combine all-to-alls per MoE layer, each token's
  hidden state once to each of the min(k, ep) ranks holding its experts (a token whose experts
  share a rank is sent there once, as DeepEP does; k copies when ep >= k), (ep − 1)/ep of it
  leaving the device
  (:func:`~roofline_decode.formulas.expert_parallel_communication_time`), across domains at the
  scale-out bandwidth for the part that leaves the domain;
* attention DP with a tensor split of the experts (``moe_tp`` > 1 beside ``attention_dp`` > 1 or
  ``ep`` > 1): an all-gather of the tokens an EP rank's experts process over its ``moe_tp``
  devices and a reduce-scatter of their outputs, per MoE layer;
* with one attention group (every device holds every token after the attention all-reduce) the
  MoE block takes the cheaper of that and one all-reduce over ``tp`` per MoE layer, which also
  combines the experts' outputs (TensorRT-LLM's TP+EP without attention DP).

A ring whose group is larger than the domain runs at the scale-out bandwidth (its slowest hop).
The strict floor has no fixed latency per collective (``collective_latency`` = 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import formulas as f
from ..checks import positive, whole_number
from ..errors import InvalidValueError

if TYPE_CHECKING:
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model
    from ..specs.parallel import Parallel

__all__ = ["Links", "layout_links", "link_bandwidth_of", "layout_communication", "scale_up_domain",
           "scale_out_of"]


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
            f"line): {accelerator.name} has no interconnect figure, so {num_devices} devices cannot be joined",
        )
    if link.scope == "per_peer" and num_devices > 2:
        notes.append(f"{link.name} is a per-peer bridge joining two cards; {num_devices} devices assume every hop gets it")
    return float(link.per_direction_bandwidth), notes


def _field(spec: object, name: str) -> Any:
    """``spec.name``, None where the spec has no such field (a pydantic spec declares its
    fields: asking it for another raises slowly)."""
    fields = getattr(type(spec), "model_fields", None)
    if fields is not None:
        return getattr(spec, name) if name in fields else None
    return getattr(spec, name, None)


def scale_up_domain(accelerator: Accelerator) -> int | None:
    """Devices per scale-up domain from the spec (``interconnect.domain_size``), None where unknown."""
    size = _field(accelerator.interconnect, "domain_size")
    return int(size) if isinstance(size, (int, np.integer)) and size >= 1 else None


def scale_out_of(accelerator: Accelerator) -> float | None:
    """Per-device scale-out bandwidth, one direction [B/s] (``Accelerator.scale_out``), None where unknown."""
    link = _field(accelerator, "scale_out")
    bandwidth = None if link is None else getattr(link, "per_direction_bandwidth", None)
    return float(bandwidth) if isinstance(bandwidth, (int, float)) and bandwidth > 0 else None


@dataclass(frozen=True)
class Links:
    """The links a layout communicates over: scale-up bandwidth [B/s] (inf for one device),
    devices per scale-up domain (None: unknown), scale-out bandwidth [B/s] (None: unknown), notes."""

    scale_up: float
    domain: int | None
    scale_out: float | None
    notes: tuple[str, ...]

    def ring(self, devices: int) -> float:
        """Bandwidth of a ring over ``devices`` devices [B/s]: the scale-out link once it leaves
        the domain (where both are known), else the scale-up link."""
        if self.domain is not None and self.scale_out is not None and devices > self.domain:
            return self.scale_out
        return self.scale_up

    def all_to_all(self, ranks: int, devices_per_rank: int) -> tuple[float, float]:
        """(ranks per domain, scale-out bandwidth) of an all-to-all over ``ranks`` ranks of
        ``devices_per_rank`` devices each (one domain and the scale-up link where unknown)."""
        if self.domain is None or self.scale_out is None:
            return float(ranks), self.scale_up
        return float(max(self.domain // devices_per_rank, 1)), self.scale_out


def layout_links(accelerator: Accelerator, layout: Parallel, link_bandwidth: float | None = None,
                 node_size: int | None = None, scale_out_bandwidth: float | None = None,
                 domain_notes: bool = True) -> Links:
    """The :class:`Links` of ``layout`` on ``accelerator`` (``link_bandwidth``, ``node_size`` and
    ``scale_out_bandwidth`` override the spec's figures).

    Raises
    ------
    InvalidValueError
        More than one device on an accelerator without an interconnect figure (and no
        ``link_bandwidth``), or a bad override.
    """
    n = layout.num_devices
    up, notes = link_bandwidth_of(accelerator, link_bandwidth, n)
    domain = whole_number("node_size", node_size) if node_size is not None else scale_up_domain(accelerator)
    out = (positive("scale_out_bandwidth", scale_out_bandwidth, "a finite bandwidth > 0 in B/s")
           if scale_out_bandwidth is not None else scale_out_of(accelerator))
    stage = layout.devices_per_stage
    if domain_notes and stage > 1:
        if domain is None:
            notes.append(f"scale-up domain size unknown for {accelerator.id or accelerator.name}: all {stage} devices "
                         "of a stage are taken to share the scale-up link (optimistic; pass node_size= and "
                         "scale_out_bandwidth= for a layout larger than one NVLink domain)")
        elif stage > domain and out is None:
            notes.append(f"{stage} devices per stage span more than one scale-up domain of {domain}, but no scale-out "
                         "bandwidth is known: the scale-up link is used across domains too (optimistic; pass "
                         "scale_out_bandwidth=)")
        elif stage > domain and out is not None:
            notes.append(f"{stage} devices per stage span {-(-stage // domain)} scale-up domains of {domain}: traffic "
                         f"leaving a domain runs at the scale-out link ({out / 1e9:.4g} GB/s per direction)")
    return Links(up, domain, out, tuple(notes))


def layout_communication(model: Model, layout: Parallel, links: Links, tokens: Any, logits_tokens: Any,
                         collective_latency: float = 0.0) -> Any:
    """Link time of one step per device [s] (all stages; see the module docstring).

    ``tokens``: the step's tokens over all attention-DP groups; ``logits_tokens``: those that
    get logits."""
    tp, dp, ep, moe_tp = layout.tp, layout.attention_dp, layout.ep, layout.moe_tp
    d, b_act, alpha = model.hidden_size, model.activation_format.bytes_per_element, collective_latency
    if layout.devices_per_stage == 1:
        return np.zeros(np.shape(tokens))
    group = tokens if dp == 1 else tokens / dp
    comm: Any = 0.0
    if tp > 1:
        link = links.ring(tp)
        if dp == 1 and ep == 1:  # the MoE block split like the rest: two all-reduces per layer
            layers = f.tensor_parallel_communication_time(group, d, b_act, model.num_layers, tp, link, alpha)
        else:  # attention, and the dense MLPs; the MoE block communicates below
            layers = f.tensor_parallel_communication_time(group, d, b_act, 2 * model.num_layers - model.num_moe_layers,
                                                          tp, link, alpha, all_reduces_per_layer=1)
        logits = logits_tokens if dp == 1 else logits_tokens / dp
        comm = (layers
                + f.ring_all_reduce_time(group * d * b_act, tp, link, alpha)  # embedding
                + f.ring_all_gather_time(logits * model.vocab_size * b_act, tp, link, alpha))  # logits
    if model.is_moe and (dp > 1 or ep > 1):
        k = model.num_experts_per_token
        moe: Any = 0.0
        if ep > 1:
            per_domain, out = links.all_to_all(ep, moe_tp)
            moe = moe + f.expert_parallel_communication_time(
                tokens / layout.devices_per_stage, d, b_act, min(k, ep), model.num_moe_layers, ep, links.scale_up,
                alpha, per_domain, out)
        if moe_tp > 1:  # the tokens of an EP rank's experts gathered over its moe_tp slices, outputs scattered back
            rank_tokens = tokens * min(k, ep) / ep
            moe = moe + 2 * model.num_moe_layers * f.ring_all_gather_time(
                rank_tokens * d * b_act, moe_tp, links.ring(moe_tp), alpha)
        if dp == 1 and tp > 1:  # every device holds every token: one all-reduce per MoE layer also combines them
            moe = np.minimum(moe, f.tensor_parallel_communication_time(
                tokens, d, b_act, model.num_moe_layers, tp, links.ring(tp), alpha, all_reduces_per_layer=1))
        comm = comm + moe
    return comm + np.zeros(np.shape(tokens)) if np.ndim(comm) < np.ndim(tokens) else comm
