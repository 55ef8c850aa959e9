"""What the busiest device of a parallel layout holds, reads and computes in one step.

Three splits, applied one after the other to a step's bytes and FLOPs (decode, prefill or a
mixed step alike):

1. **attention data parallelism** (:func:`even_share`): the step's tokens (sequences, prefill
   chunks) are spread over ``attention_dp`` groups.  Each group holds its own sequences' KV cache
   and replicates the weights, so it reads every non-expert weight but only its share of the
   KV cache, of the gathered embedding rows and of the FLOPs.  The busiest group is at least
   the average: the even split is the floor.
2. **tensor parallelism** (:func:`split_tensor`, Megatron): inside a group every matrix splits
   ``tp`` ways, except the k/v projections, which split only up to H_kv ways (beyond, each KV
   head and its cache are replicated on tp / H_kv devices); norm vectors are replicated; an MLA
   latent cache splits by context in the strict floor (``mla_layout="sharded"``) or stays whole
   (``"replicated"``, the engines' layout, with q_a and kv_a held whole); the state of
   recurrent layers splits over its recurrent heads.
3. **expert parallelism** (:func:`split_experts`): the routed experts the *whole* step touches
   (all groups' tokens together: D(N) distinct experts per MoE layer under the routing
   assumption) are spread over ``ep`` ranks and each expert ``moe_tp`` ways; the busiest rank
   holds at least the even share, D / ep of the experts' bytes and k·N / (ep·moe_tp) of their
   FLOPs (DESIGN.md §4c).

With one group, ``tp`` = n and ``ep`` = 1 (so ``moe_tp`` = n) the result is the tensor-parallel
split of :func:`device_traffic` exactly; with one device it is the step itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import formulas as f
from .._typing import ArrayOrExpr
from ..errors import InvalidValueError
from .capacity import kv_bytes_per_sequence

if TYPE_CHECKING:
    from .routing import Routing
    from ..specs.model import Model
    from ..specs.parallel import Parallel

__all__ = ["MLA_LAYOUTS", "DeviceTraffic", "StepShare", "device_traffic", "decode_share", "step_share", "even_share",
           "split_tensor", "split_experts", "rank_traffic", "latent_projection_parameters", "mla_layout_of"]

#: Layouts of an MLA model's latent projections and cache under tensor parallelism: ``"sharded"``
#: (the strict floor, default) and ``"replicated"`` (serving engines; see the module docstring).
MLA_LAYOUTS = ("sharded", "replicated")


@dataclass(frozen=True)
class DeviceTraffic:
    """What one device of a layout holds and moves per step (arrays, SI units)."""

    weight_bytes: float  # resident
    kv_bytes: np.ndarray  # resident at the context
    weight_read_bytes: np.ndarray
    kv_read_bytes: np.ndarray
    kv_write_bytes: np.ndarray
    flops: np.ndarray
    kv_share: float
    group_flops: dict[str, np.ndarray] = field(default_factory=dict)  # per FLOP group (traffic.COMPUTE_GROUPS), one device
    replicated_parameters: int = 0  # MLA latent projections held whole by every device (mla_layout="replicated")
    state_share: float = 1.0  # of the recurrent state and its FLOPs (formulas.recurrent_state_share)
    expert_read_bytes: np.ndarray | float = 0.0  # routed-expert bytes inside weight_read_bytes


@dataclass(frozen=True)
class StepShare:
    """One attention-DP group's share of a step, before the tensor and expert splits.

    ``weight_bytes`` .. ``group_flops`` as :class:`~roofline_decode.floors.traffic.StepTraffic`;
    ``tokens``: tokens that multiply through the matrices; ``state_bytes``: the recurrent state
    inside ``kv_read_bytes`` (and as much inside ``kv_write_bytes``), ``state_resident`` inside
    ``kv_resident`` and ``state_flops`` inside the ``attention_scores`` FLOPs;
    ``expert_bytes`` and ``expert_flops``: the routed experts inside the weights and FLOPs;
    ``global_expert_bytes`` and ``global_expert_flops``: those of the whole step (all groups)."""

    weight_bytes: Any
    kv_read_bytes: Any
    kv_write_bytes: Any
    flops: Any
    group_flops: Mapping[str, Any]
    tokens: Any
    kv_resident: Any
    state_bytes: Any = 0.0
    state_resident: Any = 0.0
    state_flops: Any = 0.0
    expert_bytes: Any = 0.0
    expert_flops: Any = 0.0
    global_expert_bytes: Any = 0.0
    global_expert_flops: Any = 0.0
    gathered_bytes: Any = 0.0  # embedding rows inside weight_bytes (one per token, split with the tokens)


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


def mla_layout_of(value: object) -> str:
    """``value`` if it is one of :data:`MLA_LAYOUTS`, else an InvalidValueError naming ``mla_layout``."""
    if not isinstance(value, str) or value not in MLA_LAYOUTS:
        raise InvalidValueError("mla_layout", value, "'sharded' (the strict floor) or 'replicated' (serving engines)")
    return str(value)


def expert_resident_bytes(model: Model) -> float:
    """Bytes of all routed experts of all MoE layers [B] (0 for a dense model)."""
    return float(model.num_moe_layers * model.num_experts * model.expert_parameters
                 * model.routed_expert_format.bytes_per_element)


def _expert_bytes(model: Model, distinct: Any) -> Any:
    """Routed-expert bytes of a step reading ``distinct`` experts per MoE layer [B]."""
    return model.routed_expert_format.bytes_per_element * (model.num_moe_layers * distinct) * model.expert_parameters


def decode_share(model: Model, batch: np.ndarray, context: np.ndarray, routing: Routing, dp: int = 1,
                 resident_batch: np.ndarray | None = None) -> StepShare:
    """One attention-DP group's share of a decode step of ``batch`` sequences at ``context``:
    the step of batch / dp sequences, with the experts the whole batch touches beside it.
    ``resident_batch``: the sequences whose cache is held (default ``batch``; a pipeline holds
    all its micro-batches')."""
    from .traffic import step_traffic

    rank_batch = batch if dp == 1 else batch / dp
    held = rank_batch if resident_batch is None else (resident_batch if dp == 1 else resident_batch / dp)
    total = step_traffic(model, rank_batch, context, routing)
    experts = total.group_flops["experts"] if model.is_moe else 0.0  # that group alone (the others stay lazy)
    global_bytes = local_bytes = 0.0
    global_flops = experts
    if model.is_moe:
        local_bytes = _expert_bytes(model, routing.experts_read(model, rank_batch))
        global_bytes = local_bytes if dp == 1 else _expert_bytes(model, routing.experts_read(model, batch))
        global_flops = experts if dp == 1 else experts * dp
    return StepShare(
        weight_bytes=total.weight_bytes, kv_read_bytes=total.kv_read_bytes, kv_write_bytes=total.kv_write_bytes,
        flops=total.flops, group_flops=total.group_flops, tokens=rank_batch,
        kv_resident=held * kv_bytes_per_sequence(model, context),
        state_bytes=rank_batch * model.recurrent_state_bytes_per_sequence,
        state_resident=held * model.recurrent_state_bytes_per_sequence,
        state_flops=f.recurrent_update_flops(rank_batch, model.num_recurrent_layers, model.recurrent_flops_per_token),
        expert_bytes=local_bytes, expert_flops=experts, global_expert_bytes=global_bytes,
        global_expert_flops=global_flops,
    )


def step_share(traffic: Any, *, tokens: Any, kv_resident: Any, expert_bytes: Any, gathered_bytes: Any,
               dp: int) -> StepShare:
    """One attention-DP group's :func:`even_share` of a step whose bytes and FLOPs at all its
    tokens are ``traffic`` (a prefill's or a mixed step's), with ``expert_bytes`` of routed
    experts and ``gathered_bytes`` of embedding rows inside its weights; no recurrent state."""
    experts = traffic.group_flops.get("experts", 0.0)
    whole = StepShare(
        weight_bytes=traffic.weight_bytes, kv_read_bytes=traffic.kv_read_bytes, kv_write_bytes=traffic.kv_write_bytes,
        flops=traffic.flops, group_flops=traffic.group_flops, tokens=tokens, kv_resident=kv_resident,
        expert_bytes=expert_bytes, expert_flops=experts, global_expert_bytes=expert_bytes, global_expert_flops=experts,
        gathered_bytes=gathered_bytes,
    )
    return even_share(whole, dp)


def even_share(whole: StepShare, dp: int) -> StepShare:
    """One attention-DP group's share of a step given whole (``whole``: its bytes and FLOPs at
    all tokens): weights read in full (replicated) but the gathered embedding rows, KV, state
    and FLOPs split ``dp`` ways; the routed experts stay those of the whole step (their split is
    :func:`split_experts`'s)."""
    if dp == 1:
        return whole
    rows = whole.gathered_bytes
    return replace(
        whole, weight_bytes=whole.weight_bytes - whole.expert_bytes - rows + rows / dp + whole.expert_bytes / dp,
        kv_read_bytes=whole.kv_read_bytes / dp, kv_write_bytes=whole.kv_write_bytes / dp, flops=whole.flops / dp,
        group_flops={g: v / dp for g, v in whole.group_flops.items()}, tokens=whole.tokens / dp,
        kv_resident=whole.kv_resident / dp, state_bytes=whole.state_bytes / dp,
        state_resident=whole.state_resident / dp, state_flops=whole.state_flops / dp,
        expert_bytes=whole.expert_bytes / dp, expert_flops=whole.expert_flops / dp, gathered_bytes=rows / dp,
    )


def split_tensor(model: Model, share: StepShare, n: int, mla_layout: str = "sharded") -> DeviceTraffic:
    """Per-device resident bytes, bytes moved and FLOPs of ``share`` under n-way tensor
    parallelism (see the module docstring, split 2)."""
    whole_latent = model.is_mla and mla_layout_of(mla_layout) == "replicated"
    latent = latent_projection_parameters(model) if whole_latent else 0
    replicated = (model.group_format("norms").bytes_per_element * model.parameter_groups["layer_vector"]
                  + model.group_format("attention").bytes_per_element * latent)
    # a sharded latent cache splits by context: n ways, as if it had n heads
    kv_heads = (1 if whole_latent else n) if model.is_mla else model.num_kv_heads
    share_kv = float(f.kv_head_share(kv_heads, n))
    b_attention = model.group_format("attention").bytes_per_element
    kv_proj = 0.0 if model.is_mla else b_attention * model.num_layers * 2 * model.hidden_size * model.num_kv_heads * model.head_dim
    # the recurrent state (read, written and resident) and its FLOPs, by recurrent heads
    state_share = float(f.recurrent_state_share(model.recurrent_heads or n, n))

    def split(total_bytes: float | np.ndarray) -> ArrayOrExpr:
        return f.sharded_bytes(total_bytes - replicated - kv_proj, replicated + kv_proj * share_kv, n)

    def cache(total_bytes: np.ndarray, state: Any) -> np.ndarray:  # KV by KV heads, the state by recurrent heads
        held: np.ndarray = (total_bytes - state) * share_kv + state * state_share
        return held

    latent_flops = f.matmul_flops(share.tokens, latent) * (1 - 1 / n) if latent else 0.0
    extra = {"attention": latent_flops, "attention_scores": share.state_flops * (state_share - 1 / n)}
    return DeviceTraffic(
        weight_bytes=float(split(model.weight_bytes)),
        kv_bytes=cache(share.kv_resident, share.state_resident),
        weight_read_bytes=split(share.weight_bytes),
        kv_read_bytes=cache(share.kv_read_bytes, share.state_bytes),
        kv_write_bytes=cache(share.kv_write_bytes, share.state_bytes),
        flops=share.flops / n + latent_flops + extra["attention_scores"],
        kv_share=share_kv,
        group_flops={g: v / n + extra.get(g, 0.0) for g, v in share.group_flops.items()},
        replicated_parameters=latent,
        state_share=state_share,
        expert_read_bytes=share.expert_bytes / n,
    )


def whole_device(model: Model, share: StepShare) -> DeviceTraffic:
    """The traffic of ``share`` on one device holding everything (no tensor split)."""
    return DeviceTraffic(
        weight_bytes=model.weight_bytes, kv_bytes=share.kv_resident, weight_read_bytes=share.weight_bytes,
        kv_read_bytes=share.kv_read_bytes, kv_write_bytes=share.kv_write_bytes, flops=share.flops, kv_share=1.0,
        group_flops=share.group_flops,  # type: ignore[arg-type]  # a Mapping: read, never written
        expert_read_bytes=share.expert_bytes,
    )


def split_experts(model: Model, traffic: DeviceTraffic, share: StepShare, tp: int, ep: int,
                  moe_tp: int) -> DeviceTraffic:
    """``traffic`` (a tensor split ``tp`` ways, whose routed experts are the group's own split
    ``tp`` ways) with the experts of the whole step split ``ep`` x ``moe_tp`` ways instead: the
    busiest rank's even share (see the module docstring, split 3).  Unchanged (bit for bit) when
    the two splits agree (one group, ``ep`` = 1, ``moe_tp`` = ``tp``) or for a dense model."""
    if not model.is_moe:
        return traffic
    ranks = ep * moe_tp
    if ranks == tp and share.global_expert_bytes is share.expert_bytes and share.global_expert_flops is share.expert_flops:
        return traffic  # one group whose experts split like the rest: nothing to move
    read = share.global_expert_bytes / ranks - share.expert_bytes / tp
    flops = share.global_expert_flops / ranks - share.expert_flops / tp
    resident = expert_resident_bytes(model)
    groups = dict(traffic.group_flops)
    if "experts" in groups:
        groups["experts"] = groups["experts"] + flops
    return replace(
        traffic, weight_bytes=traffic.weight_bytes + (resident / ranks - resident / tp),
        weight_read_bytes=traffic.weight_read_bytes + read, flops=traffic.flops + flops, group_flops=groups,
        expert_read_bytes=share.global_expert_bytes / ranks,
    )


def rank_traffic(model: Model, share: StepShare, layout: Parallel, mla_layout: str = "sharded") -> DeviceTraffic:
    """The busiest device's traffic of a step under ``layout`` (pipeline stages aside: the
    caller divides by ``pp``); ``share`` is one attention-DP group's (:func:`even_share`)."""
    split = split_tensor(model, share, layout.tp, mla_layout) if layout.tp > 1 else whole_device(model, share)
    return split_experts(model, split, share, layout.tp, layout.ep, layout.moe_tp)


def device_traffic(model: Model, batch: np.ndarray, context: np.ndarray, num_devices: int = 1,
                   routing: Routing | str | float = "uniform", mla_layout: str = "sharded") -> DeviceTraffic:
    """Per-device resident bytes, bytes moved and FLOPs of a decode step under n-way tensor
    parallelism (routed experts read under ``routing``, :mod:`roofline_decode.floors.routing`).

    The KV cache splits over the KV heads (:func:`~roofline_decode.formulas.kv_head_share`; an
    MLA latent cache by context, or not at all under ``mla_layout="replicated"``), the state of
    recurrent layers and its update FLOPs over the recurrent heads
    (:func:`~roofline_decode.formulas.recurrent_state_share`), everything else n ways but the
    replicated parts (norm vectors; MLA latent projections under ``"replicated"``)."""
    from .routing import resolve_routing

    share = decode_share(model, batch, context, resolve_routing(routing, model, batch))
    return split_tensor(model, share, num_devices, mla_layout)
