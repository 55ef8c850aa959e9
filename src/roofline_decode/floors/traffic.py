"""Bytes and FLOPs of one decode step of a model over a batch x context grid (device independent).

:func:`step_traffic` evaluates the layer-1 formulas for a :class:`~roofline_decode.Model` (weights
read per tensor group, KV read and written, the state of recurrent layers, FLOPs per compute
group); :func:`traffic_breakdown` splits the same totals by component.  :mod:`roofline_decode.floors.decode`
times them on a device.

The formulas are called in one place, :func:`step_terms`, on the model's
:class:`StepCoefficients` (read once): :func:`step_traffic` calls it on the grid's arrays, the
critical batch on one sequence, and the scalar fast path on Python floats, so every term has
one source (DESIGN.md §2).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .. import formulas as f
from .._typing import ArrayOrExpr, Operand
from ..formats import NumberFormat
from .routing import UNIFORM, Routing, compact
from ..specs.model import Model

__all__ = ["COMPUTE_GROUPS", "compute_formats"]

#: FLOP groups, each timed at its own compute precision (DESIGN.md §4, issue 21 item 1): the
#: matrix products of each weight group (:data:`~roofline_decode.specs.model.WEIGHT_GROUPS`
#: with matrices: attention projections, dense MLPs, shared experts, routers, routed experts,
#: lm_head) at that group's format's precision, and ``attention_scores`` (q·k and p·v over the
#: cache) at the KV format's.
COMPUTE_GROUPS = ("attention", "mlp", "shared_experts", "router", "experts", "lm_head", "attention_scores")


def matrix_parameters_per_token(model: Model) -> dict[str, float]:
    """Matrix parameters one token multiplies through, per weight group [1] (groups with
    none left out); they add up to :attr:`Model.matmul_parameters_per_token`."""
    g = model.parameter_groups
    counts = {
        "attention": g["attention_matrix"], "mlp": g["dense_mlp_matrix"], "shared_experts": g["shared_expert_matrix"],
        "router": g["router_matrix"], "experts": model.num_moe_layers * model.num_experts_per_token * g["expert_matrix"],
        "lm_head": g["lm_head"],
    }
    return {group: count for group, count in counts.items() if count}


def compute_formats(model: Model) -> dict[str, NumberFormat]:
    """The format whose compute precision (and fallback chain) times each FLOP group.

    Weight matrices multiply in their group's format (``Model.group_format``).  Attention
    scores multiply activations by cached keys and values: a kernel quantises the queries and
    probabilities to the KV format and multiplies there (FlashAttention-3's FP8 path,
    TensorRT-LLM's FP8 KV kernels), so an fp8 cache attends at the fp8 peak and a bf16 cache at
    bf16 (DeepSeek-V3's bf16 latent cache is attended in bf16, not at the fp8 peak of its
    weights).  Groups without matrices (a dense model's routers and experts) are left out.

    Examples
    --------
    >>> from roofline_decode import load_model
    >>> {k: v.compute_precision for k, v in compute_formats(load_model("deepseek-v3")).items()}
    {'attention': 'fp8', 'mlp': 'fp8', 'shared_experts': 'fp8', 'router': 'bf16', 'experts': 'fp8', 'lm_head': 'bf16', 'attention_scores': 'bf16'}
    """
    formats = {group: model.group_format(group) for group in matrix_parameters_per_token(model)}
    formats["attention_scores"] = model.kv_format
    return formats


@dataclass(frozen=True)
class StepTraffic:
    """Bytes and FLOPs of a step: depend on the model and the grid, not on the device.

    ``flops`` is the total; ``group_flops`` splits it by :data:`COMPUTE_GROUPS` (the parts add
    up to the total up to rounding; the total is computed in one piece so that a model whose
    groups share one precision keeps its numbers bit for bit)."""

    weight_bytes: np.ndarray
    kv_read_bytes: np.ndarray
    kv_write_bytes: np.ndarray
    flops: np.ndarray
    group_flops: Mapping[str, np.ndarray]


def layer_terms(model: Model) -> tuple[tuple[int, int, float], float, tuple[int, int, int]]:
    """Formula arguments shared by the totals and the breakdown: the attention layer pattern
    (global, sliding, window), KV bytes per token per layer, and the routed-expert counts
    (a dense model passes E = k = 1 with no MoE layers)."""
    layers = (model.num_global_layers, model.num_sliding_layers, model.window)
    experts = (model.num_moe_layers, max(model.num_experts, 1), max(model.num_experts_per_token, 1))
    return layers, model.kv_bytes_per_token_per_layer, experts


def streamed_terms(model: Model) -> tuple[float, float, float]:
    """(streamed, gathered row, bytes per weight) arguments of ``weight_bytes_read``: parameters
    and b_w for one format; with per-group formats (DESIGN.md §4b) the group bytes themselves
    with b = 1 (parameters weighted by their bytes)."""
    if model.has_uniform_weights:
        return model.streamed_parameters, model.embedding_row_parameters, model.weight_format.bytes_per_element
    return model.streamed_weight_bytes, model.embedding_row_bytes, 1.0


@dataclass(frozen=True)
class StepCoefficients:
    """The arguments of a model's step formulas that depend neither on the batch nor on the
    context, read once from the :class:`~roofline_decode.Model` (whose properties are computed
    on each access): what :func:`step_terms` passes to the formulas, and the model constants of
    the critical batch."""

    streamed: float  # streamed parameters (bytes with per-group formats), see streamed_terms
    row: float  # one gathered embedding row, in the same units
    bytes_per_weight: float  # b_w (1 with per-group formats)
    vocab_size: int
    experts: tuple[int, int, int]  # (L_moe, E, k) as weight_bytes_read takes them, see layer_terms
    expert_parameters: int  # P_expert
    bytes_per_expert_weight: float  # b_e
    layers: tuple[int, int, float]  # (global, sliding, window), see layer_terms
    kv_bytes_per_token_per_layer: float
    kv_layers: int  # layers that write KV (all but the recurrent ones)
    matmul_parameters_per_token: int
    num_heads: int
    score_value_width: int
    group_parameters: dict[str, float]  # matrix_parameters_per_token
    is_moe: bool
    streamed_bytes: float  # Model.streamed_weight_bytes
    row_bytes: float  # Model.embedding_row_bytes


def step_coefficients(model: Model) -> StepCoefficients:
    """The :class:`StepCoefficients` of ``model``."""
    layers, m_kv, experts = layer_terms(model)
    streamed, row, b_w = streamed_terms(model)
    return StepCoefficients(
        streamed=streamed, row=row, bytes_per_weight=b_w, vocab_size=model.vocab_size, experts=experts,
        expert_parameters=model.expert_parameters, bytes_per_expert_weight=model.routed_expert_format.bytes_per_element,
        layers=layers, kv_bytes_per_token_per_layer=m_kv, kv_layers=model.num_attention_layers,
        matmul_parameters_per_token=model.matmul_parameters_per_token, num_heads=model.num_heads,
        score_value_width=model.score_value_width, group_parameters=matrix_parameters_per_token(model),
        is_moe=model.is_moe, streamed_bytes=model.streamed_weight_bytes, row_bytes=model.embedding_row_bytes,
    )


@dataclass(frozen=True)
class MixerTerms:
    """Terms of the chunked, sparse and recurrent layers (DESIGN.md §4b); zero for a model
    with full and sliding attention only."""

    kv_read: np.ndarray | float = 0.0  # chunked and sparse layers' KV plus the indexer keys
    kv_write: np.ndarray | float = 0.0  # the indexer keys of the new token
    scores: np.ndarray | float = 0.0  # attention scores of chunked and sparse layers plus the indexer
    state: np.ndarray | float = 0.0  # recurrent state read (and as much written)
    state_flops: np.ndarray | float = 0.0


#: the mixer terms of a model with full and sliding attention only
NO_MIXERS = MixerTerms()


def sparse_read_bytes(model: Model, batch: Operand, context: Operand) -> ArrayOrExpr:
    """Bytes the sparse-attention layers read in one step at ``context`` [B]: the KV of the top-k
    tokens each selects and the indexer keys of every cached token (a decode step and a verify
    step read them once per sequence)."""
    L_sparse, top_k = model.num_sparse_layers, model.sparse_top_k
    assert top_k is not None  # sparse layers need it (Model validates)
    return f.kv_read_bytes(batch, context, model.kv_bytes_per_token_per_layer, 0, L_sparse, top_k) + \
        f.indexer_read_bytes(batch, context, L_sparse, model.indexer_bytes_per_token_per_layer)


def mixer_terms(model: Model, batch: np.ndarray, context: np.ndarray) -> MixerTerms:
    if not (model.num_chunked_layers or model.num_sparse_layers or model.num_recurrent_layers):
        return NO_MIXERS
    m_kv, heads, width = model.kv_bytes_per_token_per_layer, model.num_heads, model.score_value_width
    read = write = scores = 0.0
    if model.num_chunked_layers:
        assert model.attention_chunk_size is not None  # chunked layers need it (Model validates)
        chunk = f.chunked_attended_positions(context, 1, model.attention_chunk_size)  # T mod C
        read = read + f.kv_read_bytes(batch, chunk, m_kv, model.num_chunked_layers)
        scores = scores + f.attention_flops(batch, chunk, heads, width, model.num_chunked_layers)
    if model.num_sparse_layers:
        L_sparse, top_k = model.num_sparse_layers, model.sparse_top_k
        assert top_k is not None  # sparse layers need it (Model validates)
        read = read + sparse_read_bytes(model, batch, context)
        write = write + f.kv_write_bytes(batch, model.indexer_bytes_per_token_per_layer, L_sparse)
        scores = scores + f.attention_flops(batch, context, heads, width, 0, L_sparse, top_k) + f.indexer_flops(
            batch, context, L_sparse, model.indexer_heads, model.indexer_head_dim)
    state = f.recurrent_state_bytes(batch, model.num_recurrent_layers, model.recurrent_state_elements,
                                    model.state_format.bytes_per_element)
    state_flops = f.recurrent_update_flops(batch, model.num_recurrent_layers, model.recurrent_flops_per_token)
    return MixerTerms(read, write, scores, state, state_flops)


def _full(value: Any, shape: tuple[int, ...]) -> Any:
    """``value`` as an array of the grid's ``shape`` (a copy, so results stay writeable arrays
    like any numpy result), or unchanged where it already has that shape."""
    return value if np.shape(value) == shape else np.array(np.broadcast_to(value, shape))


class StepTerms(NamedTuple):
    """Bytes [B] and FLOPs [FLOP] of a step at each point (arrays, or floats at one point)."""

    weight_bytes: Any
    kv_read_bytes: Any
    kv_write_bytes: Any
    flops: Any
    score_flops: Any  # the part of ``flops`` timed at the KV format's peak ("attention_scores")


def step_terms(coefficients: StepCoefficients, batch: Any, context: Any, experts_read: Any,
               mixers: MixerTerms = NO_MIXERS) -> StepTerms:
    """The terms of a step: the formulas on ``coefficients`` at ``batch`` and ``context``
    (numpy arrays that broadcast, or Python floats: the same operations in the same order, so
    the same numbers), with ``experts_read`` distinct routed experts per MoE layer (None for a
    dense model) and the ``mixers``' terms added."""
    c = coefficients
    weight = f.weight_bytes_read(batch, c.streamed, c.row, c.vocab_size, c.bytes_per_weight, *c.experts,
                                 c.expert_parameters, c.bytes_per_expert_weight, experts_read=experts_read)
    m_kv = c.kv_bytes_per_token_per_layer
    kv_read = f.kv_read_bytes(batch, context, m_kv, *c.layers) + mixers.kv_read + mixers.state
    kv_write = f.kv_write_bytes(batch, m_kv, c.kv_layers) + mixers.kv_write + mixers.state
    matmul = f.matmul_flops(batch, c.matmul_parameters_per_token)
    scores = f.attention_flops(batch, context, c.num_heads, c.score_value_width, *c.layers)
    # chunked/sparse attention scores, the indexer and recurrent state updates: timed with the scores
    scores = scores + mixers.scores + mixers.state_flops
    return StepTerms(weight, kv_read, kv_write, matmul + scores, scores)


def step_traffic(model: Model, batch: np.ndarray, context: np.ndarray, routing: Routing = UNIFORM) -> StepTraffic:
    # Evaluate each term once per distinct value: a (B, T) grid made by broadcasting an (n, 1)
    # batch against a (1, m) context computes the context-only terms on m values and the
    # batch-only ones on n, and only the few products that need both on the whole grid.  The
    # arithmetic of every element is unchanged, so are the numbers.
    shape = np.broadcast_shapes(np.shape(batch), np.shape(context))
    batch, context = compact(batch), compact(context)
    coefficients = step_coefficients(model)
    experts = routing.experts_read(model, batch) if coefficients.is_moe else None
    terms = step_terms(coefficients, batch, context, experts, mixer_terms(model, batch, context))
    groups = GroupFlops(batch, coefficients.group_parameters, _full(terms.score_flops, shape), shape)
    return StepTraffic(_full(terms.weight_bytes, shape), _full(terms.kv_read_bytes, shape),
                       _full(terms.kv_write_bytes, shape), _full(terms.flops, shape), groups)


class GroupFlops(Mapping[str, np.ndarray]):
    """FLOPs per compute group, each computed on first use: a model whose groups share one
    peak never needs them (its compute time is FLOPs / peak), and on a large grid each group
    is a full array (the 1M-point grid spent a fifth of its time on them).  At one point
    (``shape`` ``()``) ``batch`` and ``scores`` may be numpy floats (what :func:`compact` makes of
    a 0-d array), and so is each group's FLOPs."""

    def __init__(self, batch: np.ndarray, counts: dict[str, float], scores: np.ndarray, shape: tuple[int, ...]):
        self._batch, self._counts, self._shape = batch, counts, shape
        self._done = {"attention_scores": scores}

    def __getitem__(self, group: str) -> np.ndarray:
        if group not in self._done:  # KeyError: no such group
            self._done[group] = _full(f.matmul_flops(self._batch, self._counts[group]), self._shape)
        return self._done[group]

    def compact(self, group: str) -> np.ndarray:
        """The FLOPs of ``group`` before they are broadcast to the grid: a matrix group's on the
        batch axis alone (the same numbers, without the copies; ``Peaks.compute_time`` sums
        the groups' times on them and broadcasts once)."""
        if group == "attention_scores":
            return self._done[group]
        flops: np.ndarray = f.matmul_flops(self._batch, self._counts[group])
        return flops

    def __iter__(self) -> Iterator[str]:
        return iter([*self._counts, "attention_scores"])

    def __len__(self) -> int:
        return len(self._counts) + 1


def traffic_breakdown(model: Model, batch: np.ndarray, context: np.ndarray,
               routing: Routing = UNIFORM) -> dict[str, dict[str, np.ndarray]]:
    """Bytes and FLOPs per component; they add up to the totals of :func:`step_traffic`."""
    g = model.parameter_groups
    b = {group: fmt.bytes_per_element for group, fmt in model.group_formats.items()}
    streamed = model.streamed_groups
    layers, m_kv, (moe_layers, experts, per_token) = layer_terms(model)
    zero = np.zeros(np.broadcast(batch, context).shape)
    mixers = mixer_terms(model, batch, context)
    routed = moe_layers * routing.experts_read(model, batch) * model.expert_parameters
    mlp_streamed = sum(b[k] * streamed[k] for k in ("mlp", "shared_experts", "router"))
    mlp_matrix = (g["dense_mlp_matrix"] + g["shared_expert_matrix"] + g["router_matrix"]
                  + model.num_moe_layers * model.num_experts_per_token * g["expert_matrix"])
    bytes_parts = {
        "attention_weights": zero + b["attention"] * g["attention_matrix"],
        "mlp_weights": zero + mlp_streamed + b["experts"] * routed,
        "norms_and_biases": zero + b["norms"] * g["layer_vector"],
        "embedding": zero + b["embedding"] * np.minimum(batch, model.vocab_size) * model.embedding_row_parameters,
        "lm_head": zero + b["lm_head"] * g["lm_head"],
        "kv_read": zero + f.kv_read_bytes(batch, context, m_kv, *layers) + mixers.kv_read,
        "kv_write": zero + f.kv_write_bytes(batch, m_kv, model.num_attention_layers) + mixers.kv_write,
    }
    flops_parts = {
        "attention_projections": zero + f.matmul_flops(batch, g["attention_matrix"]),
        "attention_scores": zero + f.attention_flops(batch, context, model.num_heads, model.score_value_width, *layers)
        + mixers.scores,
        "mlp": zero + f.matmul_flops(batch, mlp_matrix),
        "lm_head": zero + f.matmul_flops(batch, g["lm_head"]),
    }
    if model.num_recurrent_layers:  # read and written back: 2 x state bytes
        bytes_parts["recurrent_state"] = zero + 2 * mixers.state
        flops_parts["recurrent_update"] = zero + mixers.state_flops
    return {"bytes": bytes_parts, "flops": flops_parts}
