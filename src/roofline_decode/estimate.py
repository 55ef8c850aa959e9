"""Layer 3: ``decode_floor`` and ``sweep``, orchestrating the formulas for a Model on an Accelerator.

Every field of the result broadcasts like numpy over ``batch`` and ``context``; the result
keeps every intermediate term so a user can see *why* a step takes what it takes.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np

from . import catalog as _catalog
from . import formulas as f
from ._typing import Broadcastable
from .errors import InvalidValueError
from .energy import EnergyAndCost
from .limits import grid_limits, point_notes
from .peaks import NO_COMPUTE_PEAK, compute_peak
from .roofline_terms import RooflineTerms
from .routing import UNIFORM, Routing, resolve_routing
from .specs.accelerator import Accelerator
from .specs.model import Model
from .views_frame import ToDataFrame

if TYPE_CHECKING:
    import xarray as xr

    # latency profiles are loaded on first use (four pydantic models a plain floor never needs)
    from .specs.latency import LatencyProfile

__all__ = ["DecodeFloor", "SweepResult", "decode_floor", "sweep", "RECORD_KEYS", "EXTRA_RECORD_KEYS",
           "NO_COMPUTE_PEAK", "compute_peak", "COMPUTE_GROUPS", "compute_formats"]

#: A model or accelerator as the entry points take it: the spec, a catalog id, or a file path.
ModelRef = Model | str | PathLike[str]
AcceleratorRef = Accelerator | str | PathLike[str]

#: Keys of :meth:`DecodeFloor.to_records` (and of the CLI's JSON output), all in SI units.
RECORD_KEYS = (
    "model", "accelerator", "batch", "context", "weight_format", "kv_format", "weight_bytes",
    "kv_read_bytes", "kv_write_bytes", "bytes_total", "flops", "memory_time_s", "compute_time_s",
    "step_time_s", "tokens_per_s", "arithmetic_intensity", "ridge_point", "bound", "critical_batch",
)
#: Keys that follow :data:`RECORD_KEYS` in every record: whether the point fits in memory, the
#: notes that hold at the grid point (its own limits, then fallbacks and routing), and
#: ``chain_time_s``: the serial chain under the latency profile (0 without one).
EXTRA_RECORD_KEYS = ("fits", "notes", "chain_time_s")



# ``name as name``: re-exported for the modules that import them from here (mypy --strict)
from .grid import MAX_GRID_VALUE, _shown, broadcast_grid  # noqa: F401  (the input rule)
from .grid import checked_array as checked_array
from .traffic import (  # noqa: F401  (bytes and FLOPs of a step; imported from here by the other floors)
    COMPUTE_GROUPS, _breakdown, _GroupFlops, _mixer_terms, _MixerTerms, _traffic, _Traffic, compute_formats,
)
from .traffic import _layer_terms as _layer_terms
from .traffic import _matrix_parameters_per_token as _matrix_parameters_per_token
from .traffic import _streamed_terms as _streamed_terms


@dataclass(frozen=True)
class _Peaks:
    """Per FLOP group: the precision used and its peak [FLOP/s] on one device (NaN: none
    published; such a group adds no compute time), and the notes of the lookups."""

    precisions: dict[str, str]
    peaks: dict[str, float]
    notes: tuple[str, ...] = ()

    @property
    def bounded(self) -> bool:
        """Whether some group has a published peak."""
        return any(not np.isnan(p) for p in self.peaks.values())

    @property
    def uniform(self) -> bool:
        """Every group at the same peak (or none with a peak)."""
        values = list(self.peaks.values())
        if all(np.isnan(p) for p in values):
            return True
        return not any(np.isnan(p) for p in values) and len(set(values)) == 1

    def compute_time(self, traffic: _Traffic, share: float = 1) -> np.ndarray:
        """T_comp = Σ_g (FLOPs_g / share) / F_g [s] (``share``: devices splitting the FLOPs);
        FLOPs / F when every group has the same peak F (bit for bit what a single-precision
        model had before groups were timed apart).  Groups without a peak add nothing."""
        if self.uniform and self.bounded:
            flops = traffic.flops if share == 1 else traffic.flops / share
            time: np.ndarray = f.compute_time(flops, next(iter(self.peaks.values())))
            return time
        zero = np.zeros(np.shape(traffic.flops))
        groups = traffic.group_flops
        # each group's FLOPs as computed (a matrix group on the batch axis alone): the same sums
        # element by element, broadcast once by the addition of the full-grid terms and ``zero``
        flops_of = groups.compact if isinstance(groups, _GroupFlops) else groups.__getitem__
        total: np.ndarray = zero + sum(f.compute_time(flops_of(g) if share == 1 else flops_of(g) / share, peak)
                                       for g, peak in self.peaks.items() if not np.isnan(peak))
        return total

    def summary(self) -> str:
        """One precision name if all groups share it, else each precision with its groups:
        "fp8 (attention projections, mlp, routed experts), bf16 (router, lm_head, attention scores)"."""
        names = list(dict.fromkeys(self.precisions.values()))
        if len(names) == 1:
            return names[0]
        return ", ".join(f"{name} ({', '.join(_LABELS.get(g, g) for g, p in self.precisions.items() if p == name)})"
                         for name in names)


_LABELS = {"attention": "attention projections", "shared_experts": "shared experts", "experts": "routed experts",
           "attention_scores": "attention scores"}


_ROLES = {"attention_scores": "KV cache", "experts": "routed-expert weights"}


def _peaks(model: Model, accelerator: Accelerator, sparse: bool) -> _Peaks:
    """The peak each FLOP group runs at (:func:`compute_peak` of its format)."""
    precisions, peaks, notes = {}, {}, {}
    for group, fmt in compute_formats(model).items():
        role = _ROLES.get(group, "weights" if model.has_uniform_weights else f"{group} weights")
        precisions[group], peaks[group], found = compute_peak(fmt, accelerator, sparse, role=role)
        notes.update(dict.fromkeys(found))
    missing = [g for g, p in peaks.items() if np.isnan(p)]
    if missing:  # one note: the first group's (none has a peak), or the groups without one
        first = next(n for n in notes if n.startswith(NO_COMPUTE_PEAK))
        notes = {n: None for n in notes if not n.startswith(NO_COMPUTE_PEAK)}
        if len(missing) == len(peaks):
            notes[first] = None
        else:
            notes[f"{NO_COMPUTE_PEAK} for {', '.join(missing)}: those FLOPs add no compute time"] = None
    return _Peaks(precisions, peaks, tuple(notes))


def _critical_batch(model: Model, context: np.ndarray, peaks: _Peaks, bandwidth: float,
                    experts_read: np.ndarray | None = None) -> np.ndarray:
    """Smallest (real) batch with T_comp >= T_mem at each context.

    Bytes are W + D(B)·(expert bytes) + min(B, V)·(row bytes) + B·(KV bytes per sequence):
    linear in B for a dense model up to B = V, where the embedding gather saturates, and linear
    again past it.  The dense answer takes the closed form of the regime it lands in; so does an
    MoE model whose distinct experts ``experts_read`` are held fixed (identical routing: k; a
    measured count: that count, broadcasting with ``context``).  Uniform routing bisects.
    Every FLOP group is B times its per-sequence FLOPs, so the summed compute time is
    B·t_seq(T) exactly, the same as FLOPs / F_eff(T) with the effective peak
    F_eff = f_seq / t_seq, which does not depend on B: the closed form stays exact with F_eff.
    """
    one = _traffic(model, np.ones_like(context), context)
    peak = _effective_peak(one.flops, peaks.compute_time(one), peaks)
    kv_per_sequence = one.kv_read_bytes + one.kv_write_bytes
    row = model.embedding_row_bytes
    vocab = model.vocab_size
    fixed: float | np.ndarray = model.streamed_weight_bytes
    if model.is_moe and experts_read is not None:
        fixed = fixed + (model.routed_expert_format.bytes_per_element * model.num_moe_layers
                         * np.asarray(experts_read, dtype=float) * model.expert_parameters)
    if not model.is_moe or experts_read is not None:
        below = np.asarray(f.critical_batch(fixed, kv_per_sequence + row, one.flops, peak, bandwidth),
                           dtype=np.float64)
        above = np.asarray(f.critical_batch(fixed + vocab * row, kv_per_sequence, one.flops, peak, bandwidth),
                           dtype=np.float64)
        return np.where(below <= vocab, below, above)
    return _moe_critical_batch(model, context, peaks, bandwidth, one, peak)


def _moe_critical_batch(model: Model, context: np.ndarray, peaks: _Peaks, bandwidth: float,
                        one: _Traffic | None = None, peak: float | np.ndarray | None = None) -> np.ndarray:
    """Critical batch of an MoE model under uniform routing at each context (a 1-d array).

    The margin g(B) = T_comp − T_mem = B·t_seq − (W + b_e·L_moe·P_e·U(B) + min(B, V)·row +
    B·kv) / BW is convex in B (U is concave, min(B, V) is concave) and negative at B = 0, so it
    crosses zero once at most.  Newton's method started at an upper bound of the crossing (that
    of two linear upper bounds of the bytes: every expert read; gathered rows as B·row, or as
    V·row) stays above the root of a convex function and decreases monotonically to it; the
    iteration stops when a step no longer lowers B.  Same answer as 64 bisection steps to
    1e-12 relative (tests), in a handful of vectorised steps.
    """
    if one is None:
        one = _traffic(model, np.ones_like(context), context)
        peak = _effective_peak(one.flops, peaks.compute_time(one), peaks)
    assert peak is not None  # passed with ``one``, or computed with it above
    kv_per_sequence = one.kv_read_bytes + one.kv_write_bytes
    row, vocab = model.embedding_row_bytes, model.vocab_size
    fixed = model.streamed_weight_bytes
    expert_bytes = model.routed_expert_format.bytes_per_element * model.num_moe_layers * model.expert_parameters
    experts, k = model.num_experts, model.num_experts_per_token
    fixed_all = fixed + expert_bytes * experts
    upper = np.minimum(
        np.asarray(f.critical_batch(fixed_all, kv_per_sequence + row, one.flops, peak, bandwidth),
                   dtype=np.float64),
        np.asarray(f.critical_batch(fixed_all + vocab * row, kv_per_sequence, one.flops, peak, bandwidth),
                   dtype=np.float64),
    )
    finite = np.isfinite(upper)
    t_sequence = np.broadcast_to(peaks.compute_time(one), upper.shape)  # T_comp = B·t_seq
    q = 1 - k / experts
    log_q = math.log(q) if q > 0 else 0.0  # k = E: every expert read, U'(B) = 0
    x = np.where(finite, upper, 1.0)
    active = finite.copy()
    for _ in range(100):
        if not active.any():
            break
        power = np.power(q, x)
        touched = experts * (1 - power)
        gathered = np.minimum(x, vocab)
        margin = x * t_sequence - (fixed + expert_bytes * touched + gathered * row + x * kv_per_sequence) / bandwidth
        slope = t_sequence - (expert_bytes * (-experts * power * log_q) + np.where(x < vocab, row, 0.0)
                              + kv_per_sequence) / bandwidth
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(active & (margin > 0) & (slope > 0), margin / np.where(slope > 0, slope, 1.0), 0.0)
        following = x - step
        moved = following < x
        x = np.where(moved, following, x)
        active = active & moved
    return np.where(finite, x, np.inf)


def _effective_peak(flops: np.ndarray, compute_time: np.ndarray, peaks: _Peaks) -> float | np.ndarray:
    """F_eff = FLOPs / T_comp [FLOP/s]: the single peak when all groups share it (a float),
    NaN when no group has one, else an array."""
    if not peaks.bounded:
        return float("nan")
    if peaks.uniform:
        return next(iter(peaks.peaks.values()))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(compute_time > 0, flops / np.where(compute_time > 0, compute_time, 1.0), np.nan)


@dataclass(frozen=True)
class DecodeFloor(RooflineTerms, ToDataFrame, EnergyAndCost):
    """The decode step floor of a model on an accelerator, broadcast over batch and context.

    All quantities in SI units: bytes [B], FLOPs, seconds [s], tokens per second [1/s],
    intensities [FLOP/B].  ``tokens_per_s`` is generated tokens aggregated over the batch;
    ``per_sequence_tokens_per_s`` is what one sequence sees (1 / step time).
    ``chain_time_s`` is the serial chain of the step under ``latency_profile`` (zero, and
    ``latency_profile`` None, when no profile was given: the strict floor).

    Each FLOP group (:data:`COMPUTE_GROUPS`) is timed at its own precision and the times add:
    ``compute_precisions`` and ``group_peak_flops`` say which precision and peak each group
    used, ``group_flops`` how many FLOPs it had.  ``peak_flops`` is the **effective** peak
    FLOPs / compute time (the FLOP-weighted harmonic mean of the group peaks), ``ridge_point``
    = peak_flops / bandwidth, so a step is compute-bound exactly when its intensity reaches
    ``ridge_point``.  When every group runs at one precision both are that precision's plain
    peak and ridge (floats); otherwise they are arrays over the grid that depend on the
    context only (every group's FLOPs grow linearly with the batch).  ``compute_precision``
    names the one precision, or each precision with its groups ("fp8 (matmuls and routed
    experts), bf16 (attention scores)").

    ``critical_batch`` is +inf where the step is memory-bound at any batch (the intensity
    saturates below the ridge).  On a device with no compute peak for any group's precision
    (:data:`NO_COMPUTE_PEAK`) ``peak_flops``, ``ridge_point`` and ``critical_batch`` are NaN
    and ``compute_time_s`` is 0; a group without a peak where others have one adds no time.
    ``notes`` says which assumptions and fallbacks the numbers rest on.  ``routing`` is the MoE
    routing assumption (``"uniform"``, ``"identical"`` or ``"measured"``,
    :mod:`roofline_decode.routing`) and ``experts_read`` the distinct routed experts per MoE
    layer it gives at each grid point (0 for a dense model).

    Fit and limits (:mod:`roofline_decode.limits`, one device, the planning module's usable
    memory): ``fits`` (bool array: the weights plus the KV cache of B sequences at that context
    fit in ``usable_memory``), ``resident_bytes`` (those bytes; ``kv_bytes_per_sequence`` on the
    context axis), ``max_batch`` (the largest whole batch that fits at each context; +inf at
    context 0 when the weights fit), and ``beyond_positions`` (context >= the model's
    ``max_position_embeddings``).  ``notes`` says where a point does not fit or is beyond the
    positions, after ``assumptions`` (sparse or precision fallback, MoE routing).
    """

    weight_format: str
    kv_format: str
    batch: np.ndarray
    context: np.ndarray
    step_time_s: np.ndarray
    tokens_per_s: np.ndarray
    per_sequence_tokens_per_s: np.ndarray
    arithmetic_intensity: np.ndarray
    ridge_point: float | np.ndarray
    critical_batch: np.ndarray
    memory_bandwidth: float
    peak_flops: float | np.ndarray
    spec: Model = field(repr=False)
    compute_precisions: dict[str, str] = field(default_factory=dict)
    group_peak_flops: dict[str, float] = field(default_factory=dict)
    group_flops: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def compute_bounded(self) -> bool:
        """Whether some FLOP group has a published peak (else the floor is the memory time)."""
        return bool(np.any(~np.isnan(np.asarray(self.peak_flops))))
    notes: tuple[str, ...] = ()
    routing: str = "uniform"
    experts_read: np.ndarray | float = 0.0
    _routing: Routing = field(default=UNIFORM, repr=False)
    fits: np.ndarray | bool = True
    max_batch: np.ndarray | float = np.inf
    kv_bytes_per_sequence: np.ndarray | float = field(default=0.0, repr=False)
    usable_memory: float = field(default=np.inf, repr=False)
    beyond_positions: np.ndarray | bool = field(default=False, repr=False)
    assumptions: tuple[str, ...] = field(default=(), repr=False)
    chain_time_s: np.ndarray | float = 0.0
    latency_profile: str | None = None
    device: Accelerator | None = field(default=None, repr=False, compare=False)

    @property
    def bound(self) -> np.ndarray:
        """The constraint that sets the step (array of str): ``"latency"`` where the serial
        chain exceeds both other times, else ``"compute"`` where T_comp >= T_mem, else
        ``"memory"``."""
        roof = super().bound
        chain_binds = self.chain_time_s > np.maximum(self.memory_time_s, self.compute_time_s)
        return np.where(chain_binds, "latency", roof)

    @property
    def resident_bytes(self) -> np.ndarray:
        """Weights plus the KV cache of ``batch`` sequences at ``context`` [B] (one device)."""
        return np.broadcast_to(self.spec.weight_bytes + self.batch * self.kv_bytes_per_sequence, self.shape)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.step_time_s.shape

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per grid point with the keys of :data:`RECORD_KEYS` (SI units, plain floats),
        then :data:`EXTRA_RECORD_KEYS` (``fits``: a bool; ``notes``: a list of str; ``chain_time_s``)."""
        shape = self.shape
        columns = {
            key: np.broadcast_to(getattr(self, key), shape).ravel()
            for key in RECORD_KEYS + ("chain_time_s",)
            if key not in ("model", "accelerator", "weight_format", "kv_format")
        }
        records = []
        notes = point_notes(self)
        for i in range(int(np.prod(shape))):
            record: dict[str, Any] = {
                "model": self.model, "accelerator": self.accelerator,
                "weight_format": self.weight_format, "kv_format": self.kv_format,
            }
            for key, column in columns.items():
                value = column[i]
                record[key] = str(value) if key == "bound" else float(value)
            for key in ("batch", "context"):
                if float(record[key]).is_integer():
                    record[key] = int(record[key])
            record["fits"] = bool(np.ravel(self.fits)[i])
            record["notes"] = notes[i]
            records.append({key: record[key] for key in RECORD_KEYS + EXTRA_RECORD_KEYS})
        return records

    def breakdown(self) -> dict[str, dict[str, np.ndarray]]:
        """Bytes [B] and FLOPs per component, to see what dominates the step.

        ``bytes``: attention_weights, mlp_weights (dense MLPs, shared and routed experts,
        routers), norms_and_biases, embedding (gathered rows), lm_head, kv_read, kv_write;
        ``flops``: attention_projections, attention_scores, mlp, lm_head.  Each part has the
        shape of the grid and the parts add up to ``bytes_total`` and ``flops``.

        Examples
        --------
        >>> r = decode_floor("llama-3.1-8b", "h100-sxm", batch=1, context=4096)
        >>> parts = r.breakdown()["bytes"]
        >>> max(parts, key=lambda k: parts[k])
        'mlp_weights'
        """
        return _breakdown(self.spec, self.batch, self.context, self._routing)

    def _table_rows(self) -> list[list[str]]:
        from .views_table import floor_rows

        return floor_rows(self)

    def __str__(self) -> str:
        from .views_table import render_text

        return render_text(self)

    def _repr_html_(self) -> str:
        from .views_table import render_html

        return render_html(self)


def decode_floor(
    model: Model | str,
    accelerator: Accelerator | str,
    batch: Broadcastable = 1,
    context: Broadcastable = 0,
    *,
    sparse: bool = False,
    routing: Broadcastable | Routing = "uniform",
    latency: LatencyProfile | str | None = None,
) -> DecodeFloor:
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
        Tokens already cached per sequence T [1], >= 0; broadcasts against ``batch``.
        Both follow the one rule of :func:`checked_array` (real numbers up to 2**53; no
        booleans, complex numbers or strings).
    sparse : bool
        Use 2:4 structured-sparsity peaks (off: dense peaks, DESIGN.md §4); where the device
        publishes no sparse peak for the precision, the dense one is used and ``notes`` says so.
    routing : {"uniform", "identical"} or array_like
        MoE routing assumption (:mod:`roofline_decode.routing`): ``"uniform"`` (the expected
        distinct experts of independent, uniform routing), ``"identical"`` (every sequence
        picks the same k experts: the strict floor for any routing), or a measured mean number
        of distinct experts per MoE layer in [k, min(E, k·B)], broadcasting with ``batch``.
        Ignored by dense models (a count is refused).
    latency : LatencyProfile or str, optional
        A latency profile (or a preset id, e.g. ``"cuda-graph-h100"``) that adds the step's
        serial chain :func:`~roofline_decode.formulas.serial_chain_time` as a third
        constraint: the step becomes max(T_mem, T_comp, T_chain) and ``bound`` may read
        ``"latency"``.  None (default): the strict floor, no positive latency assumed.

    Returns
    -------
    DecodeFloor
        Every term of the floor, broadcast over batch and context.

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
    """
    if type(model) is not Model:  # a loaded spec passes as it is (load_model returns it unchanged)
        model = _catalog.load_model(model)
    if type(accelerator) is not Accelerator:
        accelerator = _catalog.load_accelerator(accelerator)
    if routing.__class__ is str and routing in ("uniform", "identical"):  # one point: the fast path
        profile = None if latency is None else _profile(latency)
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
    traffic = _traffic(model, batch_array, context_array, chosen)
    profile = None if latency is None else _profile(latency)
    return _timed(model, accelerator, batch_array, context_array, traffic, sparse, context_input, chosen, profile)


def _scalar_floor() -> list[Any]:
    """[:func:`roofline_decode._fast.scalar_floor`] (imported once, on first use: it imports
    this module)."""
    if not _FAST:
        from ._fast import scalar_floor

        _FAST.append(scalar_floor)
    return _FAST


_FAST: list[Any] = []


def _profile(latency: LatencyProfile | str) -> LatencyProfile:
    """:func:`~roofline_decode.specs.latency.load_latency_profile` (imported on first use); a
    preset id loaded before costs one ``stat`` of its file (a changed file loads again)."""
    if isinstance(latency, str):
        hit = _PROFILES.get(latency)
        if hit is not None:
            try:
                if os.stat(hit[0]).st_mtime_ns == hit[1]:
                    return hit[2]
            except OSError:
                pass
    from .specs.latency import load_latency_profile

    if not isinstance(latency, str) or latency.endswith(".toml"):
        return load_latency_profile(latency)
    from .specs.data_files import bundled_file

    path = bundled_file("latency_profiles", latency, "latency profile")  # UnknownIdError for a wrong id
    stamp = os.stat(path).st_mtime_ns  # before the file is read: a change while it is read is seen
    profile = load_latency_profile(latency)
    _PROFILES[latency] = (str(path), stamp, profile)
    return profile


#: preset id -> (its file, the file's mtime [ns], the profile) of the last load by that id
_PROFILES: dict[str, tuple[str, int, LatencyProfile]] = {}


def chain_time(model: Model, profile: LatencyProfile | None) -> float:
    """Serial chain of one step of ``model`` on one device under ``profile`` [s] (0 without one)."""
    if profile is None:
        return 0.0
    return float(f.serial_chain_time(model.num_layers, profile.operations_per_layer, profile.operation_latency,
                                     step_latency=profile.step_latency))


def _timed(model: Model, accelerator: Accelerator, batch: np.ndarray, context: np.ndarray, traffic: _Traffic,
           sparse: bool, context_input: np.ndarray, routing: Routing = UNIFORM,
           profile: LatencyProfile | None = None) -> DecodeFloor:
    """Times of a step on one device; ``context_input`` is the context before broadcasting
    against the batch, on which the critical batch (a function of context only, and of the
    measured expert count) is solved."""
    # Each FLOP group at its own peak; a group without a published peak on this device adds
    # no compute time (memory bound kept).
    peaks = _peaks(model, accelerator, sparse)
    notes = peaks.notes
    has_peak = peaks.bounded
    bandwidth = accelerator.memory_bandwidth
    bytes_total = traffic.weight_bytes + traffic.kv_read_bytes + traffic.kv_write_bytes
    memory = f.memory_time(bytes_total, bandwidth)
    compute = peaks.compute_time(traffic) if has_peak else np.zeros_like(memory)
    peak = _effective_peak(traffic.flops, compute, peaks)
    chain = np.broadcast_to(chain_time(model, profile), memory.shape)
    step = np.maximum(f.step_time(memory, compute), chain)
    experts = routing.experts_read(model, batch)
    if profile is not None:
        notes = (*notes, f"serial chain from latency profile {profile.label!r} "
                         f"({profile.operations_per_layer:g} operations per layer at {profile.operation_latency * 1e6:.3g} us): "
                         "an estimate for that runtime, not a physical floor")
    if not has_peak:
        critical = np.full(np.shape(context_input), np.nan)
    elif model.is_moe and routing.kind != "uniform":  # experts held fixed: closed form
        fixed = routing.experts_read(model, np.ones(()))  # k, or the measured count
        critical = _critical_batch(model, context_input, peaks, bandwidth, np.broadcast_to(fixed, np.shape(fixed)))
    elif model.is_moe:  # Newton's method: solve once per distinct context
        contexts, inverse = np.unique(context_input, return_inverse=True)
        critical = _critical_batch(model, contexts, peaks, bandwidth)[inverse].reshape(context_input.shape)
    else:
        critical = _critical_batch(model, context_input, peaks, bandwidth)
    critical = np.broadcast_to(critical, context.shape)
    limits = grid_limits(model, accelerator, batch, context, context_input)
    assumptions = notes + tuple(n for n in (routing.note(model),) if n)
    return DecodeFloor(
        model=model.name, accelerator=accelerator.id or accelerator.name,
        weight_format=model.weight_format.name, kv_format=model.kv_format.name, compute_precision=peaks.summary(),
        batch=batch, context=context, weight_bytes=traffic.weight_bytes, kv_read_bytes=traffic.kv_read_bytes,
        kv_write_bytes=traffic.kv_write_bytes, bytes_total=bytes_total, flops=traffic.flops,
        memory_time_s=memory, compute_time_s=compute, step_time_s=step,
        tokens_per_s=f.tokens_per_second(batch, step), per_sequence_tokens_per_s=1.0 / step,
        arithmetic_intensity=f.arithmetic_intensity(traffic.flops, bytes_total),
        ridge_point=_scalar_or_array(f.ridge_point(peak, bandwidth)), critical_batch=critical,
        memory_bandwidth=bandwidth, peak_flops=_scalar_or_array(peak), spec=model,
        compute_precisions=peaks.precisions, group_peak_flops=peaks.peaks, group_flops=traffic.group_flops,
        notes=assumptions + limits.notes, routing=routing.kind,
        experts_read=np.broadcast_to(experts, context.shape), _routing=routing, fits=limits.fits,
        max_batch=limits.max_batch, kv_bytes_per_sequence=limits.kv_bytes_per_sequence,
        usable_memory=limits.usable_memory, beyond_positions=limits.beyond_positions, assumptions=assumptions,
        chain_time_s=chain, latency_profile=None if profile is None else profile.label, device=accelerator,
    )


def _scalar_or_array(value: float | np.ndarray) -> float | np.ndarray:
    """A float for a single peak (as before groups were timed apart), else the array."""
    return float(value) if np.ndim(value) == 0 else value


def _id_list(name: str, value: Any, kinds: tuple[type, ...]) -> list[Any]:
    """One id/spec or a non-empty list, tuple or array of them (each checked when loaded, so
    the items are whatever the caller passed)."""
    from os import PathLike

    if isinstance(value, (*kinds, PathLike)):
        return [value]
    if isinstance(value, (list, tuple, np.ndarray)) and len(value):
        return list(value)
    raise InvalidValueError(name, value, "an id, a spec, or a non-empty list of them")


class SweepResult(ToDataFrame, list[DecodeFloor]):
    """The floors of a sweep: a list of :class:`DecodeFloor`, one per (model, accelerator),
    each over the batch × context grid (axis 0: batch, axis 1: context).  ``to_dataframe()``
    (pandas) and ``to_xarray()`` (dimensions model, accelerator, batch, context) need the
    ``[frames]`` extra."""

    def to_xarray(self) -> xr.Dataset:
        """Every numeric field as an :class:`xarray.Dataset` over (model, accelerator, batch, context)."""
        from .views_frame import sweep_to_xarray

        return sweep_to_xarray(self)

    def to_records(self) -> list[dict[str, Any]]:
        return [record for floor in self for record in floor.to_records()]

    def __str__(self) -> str:
        return "\n\n".join(str(floor) for floor in self)


def sweep(models: ModelRef | Sequence[ModelRef], accelerators: AcceleratorRef | Sequence[AcceleratorRef],
          batch: Broadcastable = 1, context: Broadcastable = 0, *, sparse: bool = False,
          routing: Broadcastable = "uniform", latency: LatencyProfile | str | None = None) -> SweepResult:
    """Floors for every model × accelerator over the outer product of ``batch`` and ``context``.

    Bytes and FLOPs are computed once per model on the whole grid; only the timing is
    repeated per accelerator.  ``sparse`` and ``routing`` as in :func:`decode_floor`; a measured
    expert count is one number or one per batch (along the batch axis), for MoE models only.

    Examples
    --------
    >>> result = sweep(["llama-3.1-8b"], ["a100-80gb-sxm", "h100-sxm"], batch=[1, 8, 64], context=[1024, 8192])
    >>> [r.step_time_s.shape for r in result]
    [(3, 2), (3, 2)]
    """
    from .catalog import load_accelerator, load_model

    models = _id_list("models", models, (str, Model))
    accelerators = _id_list("accelerators", accelerators, (str, Accelerator))
    batch_axis = checked_array("batch", batch, 1.0, inclusive=True).ravel()[:, None]
    context_axis = checked_array("context", context, 0.0, inclusive=True).ravel()[None, :]
    batch_grid, context_grid = np.broadcast_arrays(batch_axis, context_axis)
    devices = [load_accelerator(a) for a in accelerators]
    profile = None if latency is None else _profile(latency)
    result = SweepResult()
    for model in models:
        model = load_model(model)
        chosen = _sweep_routing(routing, model, batch_axis)
        traffic = _traffic(model, batch_grid, context_grid, chosen)
        result.extend(_timed(model, device, batch_grid, context_grid, traffic, sparse, context_axis, chosen, profile)
                      for device in devices)
    return result


def _sweep_routing(routing: Broadcastable, model: Model, batch_axis: np.ndarray) -> Routing:
    """The routing of one model of a sweep: a count lies along the batch axis (and is refused
    for a dense model, which has no routed experts to count)."""
    if isinstance(routing, str) or not model.is_moe:
        return resolve_routing(routing, model)
    counts = np.asarray(routing, dtype=float) if not isinstance(routing, (bool, np.bool_)) else routing
    if isinstance(counts, np.ndarray) and counts.ndim == 1 and counts.size == batch_axis.size:
        routing = counts[:, None]
    elif isinstance(counts, np.ndarray) and counts.size > 1:
        raise InvalidValueError("routing", routing, f"one count, or one per batch ({batch_axis.size} values)")
    return resolve_routing(routing, model, batch_axis)

