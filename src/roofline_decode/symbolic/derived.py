"""Closed forms derived with sympy from the twins: the answers users ask the roofline for.

Each form is a :class:`ClosedForm`: a sympy expression in glossary symbols (with LaTeX) and a
numeric evaluator that fills the symbols from a :class:`~roofline_decode.Model` and an
:class:`~roofline_decode.Accelerator`.  The expressions are *derived* (``sympy.solve``,
``sympy.limit``) from the decode step composed out of the public formulas exactly as
:func:`roofline_decode.decode_floor` composes them, and the tests check every form against
that numeric estimator on catalog models.

Conventions: the composed step reads min(B, V) embedding rows; the forms that need bytes to
be linear in the batch (critical batch, intensity limit) take B <= V, where each sequence
gathers its own row, as ``decode_floor`` does for its critical batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import formulas as f
from .._typing import FloatArray, SympyExpr
from ..errors import InvalidValueError, UnknownIdError
from ..formulas.ops import maximum
from ._sympy import require_sympy
from .expressions import SymbolicResult, symbol, symbols_for

if TYPE_CHECKING:  # imported when called (the catalog and estimators are not needed for symbols)
    from ..floors.peaks import Peaks
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model

__all__ = [
    "ClosedForm", "step_expressions", "model_values", "closed_forms", "closed_form",
    "critical_batch_form", "crossover_context_form", "intensity_limit_form", "compute_bound_context_form",
    "required_bandwidth_form", "max_batch_form", "compute_bound_reachable", "per_sequence_terms",
]

#: decode_floor field of each composed step quantity
ESTIMATOR_FIELDS = {
    "weight_bytes_read": "weight_bytes", "kv_read_bytes": "kv_read_bytes", "kv_write_bytes": "kv_write_bytes",
    "bytes_moved": "bytes_total", "flops": "flops", "memory_time": "memory_time_s",
    "compute_time": "compute_time_s", "step_time": "step_time_s", "arithmetic_intensity": "arithmetic_intensity",
    "tokens_per_second": "tokens_per_s",
}


@lru_cache(maxsize=4)
def step_expressions(moe: bool = True, mixers: bool = False) -> dict[str, SymbolicResult]:
    """The decode step composed from the public formulas on glossary symbols.

    ``moe=False`` gives the dense form (no routed-expert term); ``mixers=True`` adds the
    chunked, sparse and recurrent layers of DESIGN.md §4b (Llama 4, DeepSeek-V3.2, Mamba-2 and
    Gated DeltaNet hybrids).  Keys are the glossary names
    of :data:`ESTIMATOR_FIELDS`; each composes the formulas as ``decode_floor`` does.

    Examples
    --------
    >>> from roofline_decode.symbolic import step_expressions
    >>> print(step_expressions(moe=False)["kv_write_bytes"])
    Q_kvw = B*L*m_kv
    """
    s = symbols_for([
        "batch", "context", "streamed_parameters", "embedding_row_parameters", "vocab_size", "bytes_per_weight",
        "num_moe_layers", "num_experts", "num_experts_per_token", "expert_parameters", "bytes_per_expert_weight",
        "kv_bytes_per_token_per_layer", "num_global_layers", "num_sliding_layers", "sliding_window", "num_layers",
        "matmul_parameters_per_token", "num_heads", "score_value_width", "memory_bandwidth", "peak_flops",
        "expert_matrix_parameters", "expert_peak_flops", "attention_peak_flops",
    ])
    batch, context = s["batch"], s["context"]
    experts: tuple[SympyExpr, ...] = (
        (s["num_moe_layers"], s["num_experts"], s["num_experts_per_token"], s["expert_parameters"], s["bytes_per_expert_weight"])
        if moe else (0,)
    )
    layers = (s["num_global_layers"], s["num_sliding_layers"], s["sliding_window"])
    m_kv = s["kv_bytes_per_token_per_layer"]
    # FLOP groups (estimate.COMPUTE_GROUPS), each timed at its own peak
    routed = s["num_moe_layers"] * s["num_experts_per_token"] * s["expert_matrix_parameters"] if moe else 0
    scores = f.attention_flops(batch, context, s["num_heads"], s["score_value_width"], *layers)
    compute_time = (f.compute_time(f.matmul_flops(batch, s["matmul_parameters_per_token"] - routed), s["peak_flops"])
                    + f.compute_time(scores, s["attention_peak_flops"]))
    if moe:
        compute_time = compute_time + f.compute_time(f.matmul_flops(batch, routed), s["expert_peak_flops"])
    terms = {
        "weight_bytes_read": f.weight_bytes_read(
            batch, s["streamed_parameters"], s["embedding_row_parameters"], s["vocab_size"], s["bytes_per_weight"], *experts
        ),
        "kv_read_bytes": f.kv_read_bytes(batch, context, m_kv, *layers),
        "kv_write_bytes": f.kv_write_bytes(batch, m_kv, s["num_layers"]),
        "flops": f.matmul_flops(batch, s["matmul_parameters_per_token"]) + scores,
    }
    if mixers:
        x = symbols_for([
            "num_chunked_layers", "attention_chunk_size", "num_sparse_layers", "sparse_top_k",
            "indexer_bytes_per_token", "indexer_heads", "indexer_head_dim", "num_recurrent_layers",
            "recurrent_state_elements", "bytes_per_state", "recurrent_flops_per_token",
        ])
        chunk = f.chunked_attended_positions(context, 1, x["attention_chunk_size"])
        state = f.recurrent_state_bytes(batch, x["num_recurrent_layers"], x["recurrent_state_elements"],
                                        x["bytes_per_state"])
        width, heads = s["score_value_width"], s["num_heads"]
        terms["kv_read_bytes"] += (
            f.kv_read_bytes(batch, chunk, m_kv, x["num_chunked_layers"])
            + f.kv_read_bytes(batch, context, m_kv, 0, x["num_sparse_layers"], x["sparse_top_k"])
            + f.indexer_read_bytes(batch, context, x["num_sparse_layers"], x["indexer_bytes_per_token"]) + state
        )
        terms["kv_write_bytes"] = (
            f.kv_write_bytes(batch, m_kv, s["num_layers"] - x["num_recurrent_layers"])
            + f.kv_write_bytes(batch, x["indexer_bytes_per_token"], x["num_sparse_layers"]) + state
        )
        mixer_flops = (
            f.attention_flops(batch, chunk, heads, width, x["num_chunked_layers"])
            + f.attention_flops(batch, context, heads, width, 0, x["num_sparse_layers"], x["sparse_top_k"])
            + f.indexer_flops(batch, context, x["num_sparse_layers"], x["indexer_heads"], x["indexer_head_dim"])
            + f.recurrent_update_flops(batch, x["num_recurrent_layers"], x["recurrent_flops_per_token"])
        )
        terms["flops"] += mixer_flops
        # timed with the attention scores (estimate: the "attention_scores" FLOP group)
        compute_time = compute_time + f.compute_time(mixer_flops, s["attention_peak_flops"])
    terms["bytes_moved"] = terms["weight_bytes_read"] + terms["kv_read_bytes"] + terms["kv_write_bytes"]
    terms["memory_time"] = f.memory_time(terms["bytes_moved"], s["memory_bandwidth"])
    terms["compute_time"] = compute_time
    terms["step_time"] = f.step_time(terms["memory_time"], terms["compute_time"])
    terms["arithmetic_intensity"] = f.arithmetic_intensity(terms["flops"], terms["bytes_moved"])
    terms["tokens_per_second"] = f.tokens_per_second(batch, terms["step_time"])
    return {name: SymbolicResult(name, symbol(name), expr) for name, expr in terms.items()}


def model_values(model: Model | str, accelerator: Accelerator | str | None = None,
                 sparse: bool = False) -> dict[str, float]:
    """Numbers for the glossary names of the composed step, from a Model (and an Accelerator).

    The peaks are the ones ``decode_floor`` uses for each FLOP group: ``peak_flops`` for the
    weight matrices (with per-group formats, their effective peak: the matrix parameters a token
    uses over Σ_g P_g / F_g), ``expert_peak_flops`` for the routed experts,
    ``attention_peak_flops`` for the attention scores (the dense peak where ``sparse`` finds no
    sparse one; NaN for all where the device publishes none, +inf for a group without a peak
    where others have one: it adds no time).
    """
    from ..catalog import load_accelerator, load_model
    from ..floors.peaks import group_peaks
    from ..floors.traffic import streamed_terms

    model = load_model(model)
    streamed, row, bytes_per_weight = streamed_terms(model)  # per-group formats: bytes with b_w = 1
    values: dict[str, float] = {
        "streamed_parameters": streamed,
        "embedding_row_parameters": row,
        "vocab_size": model.vocab_size,
        "bytes_per_weight": bytes_per_weight,
        "num_moe_layers": model.num_moe_layers,
        "num_experts": max(model.num_experts, 1),
        "num_experts_per_token": max(model.num_experts_per_token, 1),
        "expert_parameters": model.expert_parameters,
        "expert_matrix_parameters": model.parameter_groups["expert_matrix"] if model.is_moe else 0,
        "bytes_per_expert_weight": model.routed_expert_format.bytes_per_element,
        "kv_bytes_per_token_per_layer": model.kv_bytes_per_token_per_layer,
        "num_global_layers": model.num_global_layers,
        "num_sliding_layers": model.num_sliding_layers,
        "sliding_window": model.window,
        "num_layers": model.num_layers,
        "matmul_parameters_per_token": model.matmul_parameters_per_token,
        "num_heads": model.num_heads,
        "score_value_width": model.score_value_width,
        "resident_weight_bytes": model.weight_bytes,
        "num_chunked_layers": model.num_chunked_layers,
        "attention_chunk_size": float(model.attention_chunk_size or float("inf")),
        "num_sparse_layers": model.num_sparse_layers,
        "sparse_top_k": float(model.sparse_top_k or float("inf")),
        "indexer_bytes_per_token": model.indexer_bytes_per_token_per_layer,
        "indexer_heads": model.indexer_heads,
        "indexer_head_dim": model.indexer_head_dim,
        "num_recurrent_layers": model.num_recurrent_layers,
        "recurrent_state_elements": model.recurrent_state_elements,
        "bytes_per_state": model.state_format.bytes_per_element,
        "recurrent_flops_per_token": model.recurrent_flops_per_token,
    }
    if accelerator is not None:
        device = load_accelerator(accelerator)
        values.update(memory_bandwidth=device.memory_bandwidth, memory_capacity=device.memory_capacity,
                      **_group_peaks(model, group_peaks(model, device, sparse)))
    return values


def _group_peaks(model: Model, peaks: Peaks) -> dict[str, float]:
    """peak_flops (weight matrices but the routed experts), expert_peak_flops and
    attention_peak_flops from decode_floor's per-group peaks."""
    from ..floors.traffic import matrix_parameters_per_token

    if not peaks.bounded:
        nan = float("nan")
        return {"peak_flops": nan, "expert_peak_flops": nan, "attention_peak_flops": nan}

    def peak(group: str) -> float:
        value = peaks.peaks[group]
        return float("inf") if value != value else value  # no peak where others have one: no time

    counts = {g: c for g, c in matrix_parameters_per_token(model).items() if g != "experts"}
    seconds = sum(count / peak(group) for group, count in counts.items())
    matrices = {peak(g) for g in counts}
    matrix_peak = matrices.pop() if len(matrices) == 1 else sum(counts.values()) / seconds
    return {"peak_flops": matrix_peak,
            "expert_peak_flops": peak("experts") if "experts" in peaks.peaks else matrix_peak,
            "attention_peak_flops": peak("attention_scores")}


@dataclass(frozen=True)
class ClosedForm:
    """A derived closed form: ``expression`` in glossary symbols and a numeric evaluator.

    ``short`` is the same result in intermediate symbols (Q_w, Q_0, q_seq, f_seq) where that
    reads better; ``expression`` is fully expanded into model and device symbols.
    """

    key: str
    expression: SymbolicResult
    short: SymbolicResult | None
    description: str
    dense_only: bool = False

    def latex(self) -> str:
        """``lhs = rhs`` in LaTeX (the short form where there is one)."""
        return (self.short or self.expression).latex()

    def _repr_latex_(self) -> str:
        return (self.short or self.expression)._repr_latex_()

    def evaluate(self, model: Model | str, accelerator: Accelerator | str | None = None, *, sparse: bool = False,
                 **grid: ArrayLike) -> FloatArray:
        """Evaluate for a Model (and an Accelerator) with numpy; ``grid`` gives the rest
        (``batch``, ``context``, ``target_tokens_per_second``, ``memory_capacity``...)."""
        from ..catalog import load_model

        model = load_model(model)
        if self.dense_only and model.is_moe:
            raise InvalidValueError(
                "model", model.name, f"a dense model for the {self.key} closed form (MoE weight reads are not "
                "linear in the batch; use decode_floor(...).critical_batch)",
            )
        from ..floors.grid import checked_array

        # the grid follows the rule of decode_floor: batch >= 1, context >= 0, other values > 0
        lows = {"batch": (1.0, True), "context": (0.0, True)}
        checked = {name: checked_array(name, value, *lows.get(name, (0.0, False))) for name, value in grid.items()}
        values: dict[str, float | np.ndarray] = {**model_values(model, accelerator, sparse), **checked}
        return self.expression.evaluate(values)


def per_sequence_terms() -> dict[str, SympyExpr]:
    """Q_0, q_seq, f_seq and t_seq of the dense step for B <= V: bytes = Q_0 + B q_seq,
    FLOPs = B f_seq, compute time = B t_seq (each FLOP group at its own peak; t_seq keeps the
    routed-expert group, zero for a dense model with L_moe = 0)."""
    sympy = require_sympy()
    step = step_expressions(moe=False)
    batch = symbol("batch")
    gathered = sympy.Min(batch, symbol("vocab_size"))
    bytes_moved = step["bytes_moved"].rhs.subs(gathered, batch)
    flops = step["flops"].rhs.subs(gathered, batch)
    # the routed experts' FLOPs (k per token whatever B) keep their own peak, also in the forms
    # MoE models share with dense ones (I∞, T_c): take the compute time of the MoE step
    compute_time = step_expressions(moe=True)["compute_time"].rhs
    for name, expr in (("bytes_moved", bytes_moved), ("flops", flops), ("compute_time", compute_time)):
        if sympy.diff(expr, batch, 2) != 0:  # pragma: no cover - guards a change of the formulas
            raise ValueError(f"{name} is not linear in the batch: {expr}")
    return {
        "fixed_bytes": bytes_moved.subs(batch, 0),
        "bytes_per_sequence": sympy.diff(bytes_moved, batch),
        "flops_per_sequence": sympy.diff(flops, batch),
        "fixed_flops": flops.subs(batch, 0),
        "compute_time_per_sequence": sympy.diff(compute_time, batch),
    }


def _expanded(name: str, short_rhs: SympyExpr, substitutions: dict[str, SympyExpr]) -> SymbolicResult:
    return SymbolicResult(name, symbol(name), short_rhs.subs({symbol(k): v for k, v in substitutions.items()}))


@lru_cache(maxsize=None)
def critical_batch_form() -> ClosedForm:
    r"""B*: the batch at which compute time equals memory time (dense models, B <= V).

    With bytes = Q_0 + B q_seq, FLOPs = B f_seq and compute time B t_seq (every FLOP group is
    linear in B), solving T_comp = T_mem gives the :func:`~roofline_decode.formulas.critical_batch`
    formula at the effective peak F_eff = f_seq / t_seq, here evaluated on the step's own
    per-sequence terms; +inf when t_seq <= q_seq / BW.
    """
    terms = per_sequence_terms()
    short_args = symbols_for(["fixed_bytes", "bytes_per_sequence", "flops_per_sequence", "memory_bandwidth"])
    short_args["peak_flops"] = symbol("effective_peak_flops")
    short = SymbolicResult("critical_batch", symbol("critical_batch"), f.critical_batch(**short_args))
    substitutions = {k: terms[k] for k in ("fixed_bytes", "bytes_per_sequence", "flops_per_sequence")}
    substitutions["effective_peak_flops"] = terms["flops_per_sequence"] / terms["compute_time_per_sequence"]
    expression = _expanded("critical_batch", short.rhs, substitutions)
    return ClosedForm("critical_batch_dense", expression, short,
                      "batch at which compute time equals memory time (dense, B <= V)", dense_only=True)


def _solve_in_context(expr: SympyExpr) -> SympyExpr:
    """Root in T of an expression linear in T on each side of the window W (a Piecewise).

    Below W every layer adds positions (``Min(T, W) = T``); past W only global layers do, and
    with none (slope 0) the expression never changes again: no root, +inf.
    """
    sympy = require_sympy()
    context, window = symbol("context"), symbol("sliding_window")
    capped = sympy.Min(context, window)
    (short,) = sympy.solve(expr.subs(capped, context), context)
    long_expr = sympy.expand(expr.subs(capped, window))
    slope = sympy.factor(sympy.diff(long_expr, context))
    long = sympy.factor(-long_expr.subs(context, 0)) / slope
    return sympy.Piecewise((short, short <= window), (long, sympy.Ne(slope, 0)), (sympy.oo, True))


@lru_cache(maxsize=None)
def crossover_context_form() -> ClosedForm:
    r"""T×: the context at which a step reads as many KV-cache bytes as weight bytes.

    Solves Q_kv^read(B, T) = Q_w(B) for T; sliding layers stop adding bytes past W, so the
    root is piecewise (+inf when every layer slides and the window never reaches the weights).
    """
    step = step_expressions(moe=True)
    weights = symbol("weight_bytes_read")
    short_rhs = _solve_in_context(step["kv_read_bytes"].rhs - weights)
    short = SymbolicResult("crossover_context", symbol("crossover_context"), short_rhs)
    expression = _expanded("crossover_context", short_rhs, {"weight_bytes_read": step["weight_bytes_read"].rhs})
    return ClosedForm("crossover_context", expression, short,
                      "context at which KV bytes read equal weight bytes read")


@lru_cache(maxsize=None)
def intensity_limit_form() -> ClosedForm:
    r"""I∞(T): the arithmetic intensity as B → ∞ at a given context (B <= V extension).

    Weight bytes are bounded in B (dense: fixed; MoE: at most every expert), so the limit is
    f_seq / q_seq: each sequence's FLOPs over its own bytes (KV read and write, its embedding
    row).  The step can become compute-bound at that context only if I∞ > F / BW.
    """
    sympy = require_sympy()
    step = step_expressions(moe=False)
    batch = symbol("batch")
    intensity = step["arithmetic_intensity"].rhs.subs(sympy.Min(batch, symbol("vocab_size")), batch)
    limit = sympy.limit(intensity, batch, sympy.oo)
    short_rhs = symbol("flops_per_sequence") / symbol("bytes_per_sequence")
    short = SymbolicResult("intensity_limit", symbol("intensity_limit"), short_rhs)
    return ClosedForm("intensity_limit", SymbolicResult("intensity_limit", symbol("intensity_limit"), limit), short,
                      "arithmetic intensity as the batch grows without bound")


def compute_bound_reachable(model: Model | str, accelerator: Accelerator | str, context: ArrayLike = 0,
                            sparse: bool = False) -> NDArray[np.bool_]:
    """Whether some batch makes the step compute-bound at ``context``: I∞(T) > F_eff(T) / BW,
    that is t_seq(T) > q_seq(T) / BW (each sequence's compute time outlasts its own bytes).

    Examples
    --------
    >>> from roofline_decode.symbolic import compute_bound_reachable
    >>> compute_bound_reachable("llama-3.1-8b", "h100-sxm", context=[0, 4096]).tolist()
    [True, False]
    """
    values: dict[str, float | np.ndarray] = {**model_values(model, accelerator, sparse),
                                             "context": np.asarray(context, float)}
    terms = per_sequence_terms()
    seconds = SymbolicResult("compute_time_per_sequence", symbol("compute_time_per_sequence"),
                             terms["compute_time_per_sequence"]).evaluate(values)
    per_sequence = SymbolicResult("bytes_per_sequence", symbol("bytes_per_sequence"),
                                  terms["bytes_per_sequence"]).evaluate(values)
    return np.asarray(seconds > per_sequence / values["memory_bandwidth"])


@lru_cache(maxsize=None)
def compute_bound_context_form() -> ClosedForm:
    r"""T_c: the longest context at which some batch still makes the step compute-bound.

    Solves I∞(T) = F_eff(T) / BW for T (MoE models too: I∞ does not depend on the weight
    bytes), i.e. g(T) = BW·t_seq − q_seq = 0, linear in the attended positions: T_c = 0 where
    g(0) <= 0 (never compute-bound), +inf where attention itself outruns the ridge of the
    precision it runs at (2 H_q w / m_kv >= F_a / BW: each cached position brings at least
    ridge-many FLOPs per byte), else the root, past which B* is infinite.
    """
    sympy = require_sympy()
    terms = per_sequence_terms()
    context, window = symbol("context"), symbol("sliding_window")
    margin = symbol("memory_bandwidth") * terms["compute_time_per_sequence"] - terms["bytes_per_sequence"]
    at_zero = margin.subs(context, 0)
    layers = symbol("num_global_layers") + symbol("num_sliding_layers")
    per_position = sympy.simplify(sympy.diff(margin.subs(sympy.Min(context, window), context), context) / layers)
    rhs = sympy.Piecewise((0, at_zero <= 0), (sympy.oo, per_position >= 0), (_solve_in_context(margin), True))
    expression = SymbolicResult("compute_bound_context", symbol("compute_bound_context"), rhs)
    return ClosedForm("compute_bound_context", expression, None,
                      "longest context at which a large enough batch is compute-bound")


@lru_cache(maxsize=None)
def required_bandwidth_form() -> ClosedForm:
    r"""BW_req: memory bandwidth for a target tokens/s at a batch and context.

    Solves B / T_mem = R_target for BW; +inf where the compute time alone (each FLOP group at its
    own peak) exceeds B / R_target (no bandwidth is enough at those peaks).
    """
    sympy = require_sympy()
    step = step_expressions(moe=True)
    s = symbols_for(["batch", "memory_bandwidth", "target_tokens_per_second", "bytes_moved"])
    rate = f.tokens_per_second(s["batch"], f.memory_time(s["bytes_moved"], s["memory_bandwidth"]))
    (bandwidth,) = sympy.solve(sympy.Eq(rate, s["target_tokens_per_second"]), s["memory_bandwidth"])
    s["compute_time"] = symbol("compute_time")
    feasible = s["compute_time"] <= s["batch"] / s["target_tokens_per_second"]
    short_rhs = sympy.Piecewise((bandwidth, feasible), (sympy.oo, True))
    short = SymbolicResult("required_bandwidth", symbol("required_bandwidth"), short_rhs)
    expression = _expanded("required_bandwidth", short_rhs,
                           {"bytes_moved": step["bytes_moved"].rhs, "compute_time": step["compute_time"].rhs})
    return ClosedForm("required_bandwidth", expression, short,
                      "memory bandwidth needed for a target tokens per second")


@lru_cache(maxsize=None)
def max_batch_form() -> ClosedForm:
    r"""B_max: the largest whole batch whose weights and KV caches (T tokens each) fit.

    :func:`~roofline_decode.formulas.batch_capacity` of the capacity with the per-sequence
    cache :func:`~roofline_decode.formulas.kv_cache_bytes` (B = 1), rounded down and at least
    0; the same rule as :func:`roofline_decode.planning.max_batch`.  ``memory_capacity`` is
    what the weights and caches may fill: the evaluator takes the accelerator's printed
    capacity unless given another (pass a usable figure to reserve runtime workspace).
    """
    sympy = require_sympy()
    s = symbols_for(["context", "kv_bytes_per_token_per_layer", "num_global_layers", "num_sliding_layers",
                     "sliding_window", "resident_weight_bytes", "memory_capacity"])
    per_sequence = f.kv_cache_bytes(1, s["context"], s["kv_bytes_per_token_per_layer"],
                                    s["num_global_layers"], s["num_sliding_layers"], s["sliding_window"])
    capacity = f.batch_capacity(s["memory_capacity"], s["resident_weight_bytes"], symbol("kv_bytes_per_sequence"))
    short_rhs = sympy.floor(maximum(capacity, 0))
    short = SymbolicResult("max_batch", symbol("max_batch"), short_rhs)
    expression = _expanded("max_batch", short_rhs, {"kv_bytes_per_sequence": per_sequence})
    return ClosedForm("max_batch", expression, short, "largest batch whose weights and KV caches fit the capacity")


#: key -> function returning the :class:`ClosedForm`
CLOSED_FORMS: dict[str, Callable[[], ClosedForm]] = {
    "critical_batch_dense": critical_batch_form,
    "crossover_context": crossover_context_form,
    "intensity_limit": intensity_limit_form,
    "compute_bound_context": compute_bound_context_form,
    "required_bandwidth": required_bandwidth_form,
    "max_batch": max_batch_form,
}


def closed_forms() -> dict[str, ClosedForm]:
    """Every derived closed form by key."""
    return {key: build() for key, build in CLOSED_FORMS.items()}


def closed_form(key: str) -> ClosedForm:
    """One closed form by key; :class:`UnknownIdError` lists the known keys."""
    if key not in CLOSED_FORMS:
        raise UnknownIdError("closed form", key, CLOSED_FORMS)
    return CLOSED_FORMS[key]()
