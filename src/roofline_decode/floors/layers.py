"""A decode step split by layer kind: the bytes, FLOPs, times and bound of each kind of layer.

:func:`layer_table` takes a :class:`~roofline_decode.floors.results.DecodeFloor` and splits its
step into rows, one per kind of layer the model has: attention (full, sliding, chunked, sparse;
"MLA" where the model uses multi-head latent attention), the recurrent mixer, the norm vectors
and attention biases, the dense MLP, the MoE router, shared experts and routed experts, the
embedding gather and the lm_head.  Every row is the same formula functions
(:mod:`roofline_decode.formulas`) the step's totals come from, on that kind's layers alone, so
the rows add up to the step's ``weight_bytes``, ``kv_read_bytes``, ``kv_write_bytes`` and
``flops`` (up to the rounding of a float sum; exactly where every term is a whole number below
2**53).

Times: a row's memory time is its bytes over the bandwidth and its compute time its FLOPs of
each compute group at that group's peak (``DecodeFloor.group_peak_flops``), so the rows' memory
and compute times add up to the step's.  A row's own ``time_s`` is the larger of the two, and
``bound`` says which; the step time is max(Σ memory, Σ compute), not the sum of the rows' times
(the memory-bound rows and the compute-bound rows overlap).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import formulas as f
from ..specs.model import Model
from .records import ToDataFrame
from .routing import Routing
from .traffic import sparse_read_bytes

if TYPE_CHECKING:
    from .results import DecodeFloor

__all__ = ["LayerRow", "LayerTable", "StepTotals", "LAYER_KINDS", "LAYER_RECORD_KEYS", "layer_table"]

#: Row names, in table order (a model shows the kinds it has).
LAYER_KINDS = (
    "attention (full)", "attention (MLA)", "attention (sliding)", "attention (chunked)", "attention (sparse)",
    "attention (sparse MLA)", "recurrent mixer", "norms and biases", "MLP (dense)", "MoE router",
    "MoE shared experts", "MoE routed experts", "embedding", "lm_head",
)

#: Keys of :meth:`LayerTable.to_records` (SI units).
LAYER_RECORD_KEYS = (
    "model", "accelerator", "batch", "context", "layer", "layers", "weight_bytes", "kv_read_bytes", "kv_write_bytes",
    "bytes_total", "flops", "arithmetic_intensity", "memory_time_s", "compute_time_s", "time_s", "bound",
)


@dataclass(frozen=True)
class LayerRow:
    """One kind of layer in a step: ``layers`` of them (0 for the embedding gather and the
    lm_head, which are not in a layer; every layer for the norm vectors, with the final norm), their weight, KV (and recurrent-state) bytes read
    and written [B], FLOPs per compute group, and the times on the floor's device [s].  Arrays
    over the floor's grid."""

    kind: str
    layers: int
    weight_bytes: np.ndarray
    kv_read_bytes: np.ndarray
    kv_write_bytes: np.ndarray
    group_flops: Mapping[str, np.ndarray]
    memory_time_s: np.ndarray
    compute_time_s: np.ndarray
    communication_time_s: np.ndarray | float = 0.0  # the communication row of a layout's table only

    @property
    def bytes_total(self) -> np.ndarray:
        """Weights + KV read + KV written [B]."""
        total: np.ndarray = self.weight_bytes + self.kv_read_bytes + self.kv_write_bytes
        return total

    @property
    def flops(self) -> np.ndarray:
        """FLOPs of the row, all compute groups [FLOP]."""
        total: np.ndarray = sum(self.group_flops.values(), np.zeros_like(self.weight_bytes))
        return total

    @property
    def arithmetic_intensity(self) -> np.ndarray:
        """FLOPs / bytes [FLOP/B] (0 for a row without FLOPs: the embedding gather, the norms)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            intensity: np.ndarray = np.where(self.bytes_total > 0, self.flops / np.where(
                self.bytes_total > 0, self.bytes_total, 1.0), np.inf)
        return intensity

    @property
    def time_s(self) -> np.ndarray:
        """max(memory time, compute time) of the row alone [s] (and its communication time, for
        the communication row of a layout)."""
        time: np.ndarray = np.maximum(self.memory_time_s, self.compute_time_s)
        return time if self.kind != "communication" else np.maximum(time, self.communication_time_s)

    @property
    def bound(self) -> np.ndarray:
        """``"compute"`` where the row's compute time reaches its memory time, else ``"memory"``
        (``"communication"`` for the communication row of a layout)."""
        bound: np.ndarray = np.where(self.compute_time_s >= self.memory_time_s, "compute", "memory")
        return bound if self.kind != "communication" else np.full(np.shape(bound), "communication")


@dataclass(frozen=True)
class StepTotals:
    """The totals a :class:`LayerTable` of a layout's busiest device adds up to (the fields of
    a :class:`~roofline_decode.floors.results.DecodeFloor` its views read; SI units)."""

    model: str
    accelerator: str
    spec: Model
    weight_format: str
    kv_format: str
    batch: np.ndarray
    context: np.ndarray
    weight_bytes: np.ndarray
    kv_read_bytes: np.ndarray
    kv_write_bytes: np.ndarray
    flops: np.ndarray
    memory_time_s: np.ndarray
    compute_time_s: np.ndarray
    bound: np.ndarray
    layout: str = ""  # the layout's text
    num_devices: int = 1  # its devices (the rows are the busiest one's)

    @property
    def shape(self) -> tuple[int, ...]:
        return np.shape(self.memory_time_s)

    @property
    def bytes_total(self) -> np.ndarray:
        total: np.ndarray = self.weight_bytes + self.kv_read_bytes + self.kv_write_bytes
        return total


@dataclass(frozen=True)
class LayerTable(ToDataFrame):
    """The rows of :func:`layer_table` and the floor they split (``floor``: its totals)."""

    rows: tuple[LayerRow, ...]
    floor: DecodeFloor | StepTotals = field(repr=False)

    def __iter__(self) -> Any:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, kind: str) -> LayerRow:
        for row in self.rows:
            if row.kind == kind:
                return row
        from ..errors import InvalidValueError

        raise InvalidValueError("layer", kind, "one of " + ", ".join(r.kind for r in self.rows))

    def total(self, name: str) -> np.ndarray:
        """The sum of the rows' ``name`` (``weight_bytes``, ``flops``, ``memory_time_s``, ...)
        over the grid, in row order."""
        total: np.ndarray = sum((getattr(r, name) for r in self.rows), np.zeros(self.floor.shape))
        return total

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per grid point and row, keys :data:`LAYER_RECORD_KEYS` (SI units)."""
        shape = self.floor.shape
        batch = np.broadcast_to(self.floor.batch, shape).ravel()
        context = np.broadcast_to(self.floor.context, shape).ravel()
        records = []
        for i in range(int(np.prod(shape))):
            for row in self.rows:
                record: dict[str, Any] = {"model": self.floor.model, "accelerator": self.floor.accelerator,
                                          "batch": _plain(batch[i]), "context": _plain(context[i]),
                                          "layer": row.kind, "layers": row.layers}
                for key in LAYER_RECORD_KEYS[6:-1]:
                    record[key] = float(np.broadcast_to(getattr(row, key), shape).ravel()[i])
                record["bound"] = str(np.broadcast_to(row.bound, shape).ravel()[i])
                records.append(record)
        return records

    def __str__(self) -> str:
        from ..views.layers import render_layers_text

        return render_layers_text(self)

    def _repr_html_(self) -> str:
        from ..views.layers import render_layers_html

        return render_layers_html(self)


def _plain(value: Any) -> int | float:
    number = float(value)
    return int(number) if number.is_integer() else number


def _attention_weights(model: Model) -> tuple[float, float]:
    """(matrix parameters of one attention layer without the indexer, indexer matrix parameters
    of all sparse layers) [1], from the model's own parameter groups: the sparse layers' indexer
    is what a copy of the model without indexer heads lacks."""
    g = model.parameter_groups
    plain = g["attention_matrix"] - model.num_recurrent_layers * model.recurrent_matrix_parameters
    indexer = 0.0
    if model.num_sparse_layers and model.indexer_heads:
        without = type(model).model_validate({**model.model_dump(), "indexer_heads": 0})
        indexer = plain - (without.parameter_groups["attention_matrix"]
                           - model.num_recurrent_layers * model.recurrent_matrix_parameters)
        plain -= indexer
    return plain / model.num_attention_layers if model.num_attention_layers else 0.0, indexer


def layer_table(floor: DecodeFloor, routing: Routing) -> LayerTable:
    """The step of ``floor`` split by layer kind (``routing``: the floor's MoE routing).

    Examples
    --------
    >>> from roofline_decode import decode_floor
    >>> r = decode_floor("gemma-3-27b", "h100-sxm", batch=8, context=32768)
    >>> table = r.layers()
    >>> [row.kind for row in table][:3]
    ['attention (full)', 'attention (sliding)', 'norms and biases']
    >>> float(table.total("bytes_total")) == float(r.bytes_total)
    True
    """
    model, batch, context = floor.spec, floor.batch, floor.context
    b = {group: fmt.bytes_per_element for group, fmt in model.group_formats.items()}
    streamed = model.streamed_groups
    zero = np.zeros(floor.shape)
    m_kv, heads, width = model.kv_bytes_per_token_per_layer, model.num_heads, model.score_value_width
    per_layer, indexer = _attention_weights(model)
    window = model.window
    rows: list[tuple[str, int, Any, Any, Any, dict[str, Any]]] = []  # kind, layers, weights, read, write, flops

    def attention(kind: str, layers: int, read: Any, scores: Any, extra_params: float = 0.0,
                  extra_write: Any = 0.0) -> None:
        params = layers * per_layer + extra_params
        rows.append((kind, layers, b["attention"] * params, read, f.kv_write_bytes(batch, m_kv, layers) + extra_write,
                     {"attention": f.matmul_flops(batch, params), "attention_scores": scores}))

    mla = " MLA" if model.is_mla else ""
    if model.num_global_layers:
        L = model.num_global_layers
        attention("attention (MLA)" if model.is_mla else "attention (full)", L, f.kv_read_bytes(batch, context, m_kv, L),
                  f.attention_flops(batch, context, heads, width, L))
    if model.num_sliding_layers:
        L = model.num_sliding_layers
        attention("attention (sliding)", L, f.kv_read_bytes(batch, context, m_kv, 0, L, window),
                  f.attention_flops(batch, context, heads, width, 0, L, window))
    if model.num_chunked_layers:
        L = model.num_chunked_layers
        assert model.attention_chunk_size is not None  # chunked layers need it (Model validates)
        chunk = f.chunked_attended_positions(context, 1, model.attention_chunk_size)
        attention("attention (chunked)", L, f.kv_read_bytes(batch, chunk, m_kv, L),
                  f.attention_flops(batch, chunk, heads, width, L))
    if model.num_sparse_layers:
        L, top_k = model.num_sparse_layers, model.sparse_top_k
        assert top_k is not None  # sparse layers need it (Model validates)
        scores = f.attention_flops(batch, context, heads, width, 0, L, top_k) + f.indexer_flops(
            batch, context, L, model.indexer_heads, model.indexer_head_dim)
        attention(f"attention (sparse{mla})", L, sparse_read_bytes(model, batch, context), scores, indexer,
                  f.kv_write_bytes(batch, model.indexer_bytes_per_token_per_layer, L))
    if model.num_recurrent_layers:
        L = model.num_recurrent_layers
        state = f.recurrent_state_bytes(batch, L, model.recurrent_state_elements, model.state_format.bytes_per_element)
        rows.append(("recurrent mixer", L, b["attention"] * L * model.recurrent_matrix_parameters, state, state,
                     {"attention": f.matmul_flops(batch, L * model.recurrent_matrix_parameters),
                      "attention_scores": f.recurrent_update_flops(batch, L, model.recurrent_flops_per_token)}))
    g = model.parameter_groups
    rows.append(("norms and biases", model.num_layers, b["norms"] * streamed["norms"], 0.0, 0.0, {}))
    if model.num_dense_mlp_layers and streamed["mlp"]:
        rows.append(("MLP (dense)", model.num_dense_mlp_layers, b["mlp"] * streamed["mlp"], 0.0, 0.0,
                     {"mlp": f.matmul_flops(batch, g["dense_mlp_matrix"])}))
    if model.is_moe:
        L = model.num_moe_layers
        rows.append(("MoE router", L, b["router"] * streamed["router"], 0.0, 0.0,
                     {"router": f.matmul_flops(batch, g["router_matrix"])}))
        if streamed["shared_experts"]:
            rows.append(("MoE shared experts", L, b["shared_experts"] * streamed["shared_experts"], 0.0, 0.0,
                         {"shared_experts": f.matmul_flops(batch, g["shared_expert_matrix"])}))
        routed = L * routing.experts_read(model, batch) * model.expert_parameters
        rows.append(("MoE routed experts", L, b["experts"] * routed, 0.0, 0.0,
                     {"experts": f.matmul_flops(batch, L * model.num_experts_per_token * g["expert_matrix"])}))
    rows.append(("embedding", 0, b["embedding"] * np.minimum(batch, model.vocab_size) * model.embedding_row_parameters,
                 0.0, 0.0, {}))
    rows.append(("lm_head", 0, b["lm_head"] * g["lm_head"], 0.0, 0.0, {"lm_head": f.matmul_flops(batch, g["lm_head"])}))

    peaks = floor.group_peak_flops
    bandwidth = floor.memory_bandwidth
    built = []
    for kind, layers, weights, read, write, flops in rows:
        group_flops = {group: zero + value for group, value in flops.items()}
        weight_bytes, read_bytes, write_bytes = zero + weights, zero + read, zero + write
        memory = f.memory_time(weight_bytes + read_bytes + write_bytes, bandwidth)
        compute = zero + sum((f.compute_time(value, peaks[group]) for group, value in group_flops.items()
                              if group in peaks and not np.isnan(peaks[group])), zero)
        built.append(LayerRow(kind, layers, weight_bytes, read_bytes, write_bytes, group_flops, memory, compute))
    return LayerTable(tuple(built), floor)
