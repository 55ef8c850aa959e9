"""Layer 3: ``speculative_floor``: speculative decoding with a draft model or MTP heads.

A round (DESIGN.md §4b): k draft steps on the same device (the draft model's decode steps at
contexts T … T + k − 1, or the target's multi-token-prediction layers), then one verify step of
the target with k + 1 tokens per sequence at context T: weights read once (embedding rows and
experts for B·(k + 1) tokens), KV read once, k + 1 tokens of FLOPs (token i attends T + i
positions) and KV writes, every token mixer counted (:mod:`.verify`).  Expected tokens per
round (1 − a^{k+1}) / (1 − a).

A round's floor (``pricing="overlapped"``, the strict one) is max(total bytes / BW, compute time
of all its FLOPs): an engine may overlap one micro-batch's draft steps with another's verify
step.  ``pricing="phased"`` times the draft steps and the verify step one after the other, each
at its own max(memory, compute): what an engine without that overlap reaches.

The law the tests check (under both pricings): once *plain* decoding at a batch is
compute-bound, the verify step costs at least k + 1 plain steps, so the speedup is at most
E / (k + 1) <= 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .. import formulas as f
from .._typing import Broadcastable
from ..errors import InvalidValueError
from .decode import decode_floor
from .prefill import Timing, device_timing, resolve_model_and_device, routed_experts, routing_notes
from .terms import BOUND_NOT_DEFINED
from .grid import DEFAULT_CONTEXT, MAX_GRID_VALUE, KvLike, WeightsLike, broadcast_grid, checked_array
from .verify import verify_traffic
from .layout import check_layout, layout_of
from .speculative_layout import (checked_draft_layout, layout_critical_batch, layout_draft_times, layout_plain,
                                 layout_verify_times)
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from .grid_result import GridResult

if TYPE_CHECKING:
    from ..specs.parallel import Parallel

__all__ = ["SpeculativeFloor", "speculative_floor", "verify_traffic", "mtp_draft_model", "vocabulary_notes"]

#: largest k searched for the best number of draft tokens
MAX_DRAFT_TOKENS = 16

#: How a round may be timed: ``"overlapped"`` (the strict floor: max(total bytes / BW, total
#: compute time)) or ``"phased"`` (draft steps, then the verify step, each max(memory, compute)).
PRICINGS = ("overlapped", "phased")

#: The note of a result priced ``"phased"``.
PHASED_NOTE = ("rounds priced phase by phase (pricing='phased'): the draft steps, then the verify step, each "
               "max(memory, compute), as an engine that does not overlap them across micro-batches runs them; "
               "not the strict floor, which bounds a round by its total bytes and its total FLOPs "
               "(pricing='overlapped')")

#: What engines do with a draft whose vocabulary differs from the target's (the end of its note).
VOCABULARY_RULE = ("speculative decoding needs the draft to propose the target's tokens: vLLM, SGLang and llama.cpp "
                   "refuse a draft whose vocabulary differs (llama.cpp tolerates up to 128 extra ids where the "
                   "token texts match); Hugging Face transformers' universal assisted decoding translates between tokenizers, "
                   "re-tokenizing every round at a cost this floor leaves out")

#: What speculative decoding gives on a device without a compute peak (its note, after the device).
SPECULATIVE_WITHOUT_PEAK = ("the speedups compare memory floors (plain decoding and the verify step taken to be "
                            "memory-bound, which only a peak can confirm); where plain decoding turns compute-bound, "
                            "and so the verify bound and max_useful_batch, need one (n/a, NaN)")


def mtp_draft_model(model: Model, mtp_layers: int) -> Model:
    """The model one multi-token-prediction draft step runs: ``mtp_layers`` layers of the
    target's (its last layers' kind) with the shared embedding and lm_head.

    The MTP module's input projection (2d × d) and extra norms are left out (a floor)."""
    update: dict[str, Any] = {"num_layers": int(mtp_layers), "name": f"{model.name} MTP ({mtp_layers} layer)"}
    if model.layer_types is not None:
        update["layer_types"] = list(model.layer_types[-int(mtp_layers):])
    if model.is_moe:
        update["first_dense_layers"] = 0
    if model.mlp_free_layers:  # the draft layers carry the target's feed-forward block
        update["mlp_free_layers"] = 0
    # a validated copy: model_copy would also copy the target's cached parameter counts
    # (cached_property values in __dict__), giving the draft the target's layers
    return model.replace(**update)


def publisher(model: Model) -> str | None:
    """The Hugging Face organisation in ``model.source`` (``"meta-llama"``), or None where the
    source names none: the model family as far as the library knows it."""
    match = re.search(r"huggingface\.co/([^/\s]+)/", model.source or "")
    return match.group(1) if match else None


def vocabulary_notes(target: Model, draft: Model) -> tuple[str, ...]:
    """A note where the draft may not share the target's tokenizer: another vocabulary size,
    or the same size from another publisher (:func:`publisher`, where both sources name one).

    Parameters
    ----------
    target, draft : Model
        The target and the draft model.

    Returns
    -------
    tuple of str
        One note (the two sizes [token ids], the publishers, what engines do), or none.

    Notes
    -----
    The pair is not refused: the library cannot see tokenizers (one tokenizer may be padded to
    two sizes, as Qwen2.5's small and large models are: 151,936 and 152,064 rows), and not
    every engine refuses it.

    References
    ----------
    .. [1] llama.cpp ``common/speculative.cpp``, ``common_speculative_are_compatible`` (vocab
       type, BOS/EOS, sizes within 128, token texts from id 5); vLLM issue 7252 (the vocab-size
       check and Qwen2's padded sizes); SGLang PR 23838 (vocabulary validation of a standalone
       draft); Hugging Face transformers PR 33383 (universal assisted generation).

    Examples
    --------
    >>> from roofline_decode import load_model
    >>> vocabulary_notes(load_model("llama-3.1-70b"), load_model("llama-3.2-1b"))
    ()
    """
    ours, theirs = publisher(draft), publisher(target)
    other = ours is not None and theirs is not None and ours.lower() != theirs.lower()
    if draft.vocab_size != target.vocab_size:
        what = (f"the draft {draft.name} has {draft.vocab_size:,} token ids, the target {target.name} "
                f"{target.vocab_size:,}")
        if other:
            what += f" (publishers {ours} and {theirs})"
        elif ours is not None and theirs is not None:
            what += f" (one publisher, {theirs}: perhaps one tokenizer padded to two sizes)"
    elif other:
        what = (f"the draft {draft.name} and the target {target.name} have {target.vocab_size:,} token ids each "
                f"but come from different publishers ({ours}, {theirs}): their tokenizers may differ")
    else:
        return ()
    return (f"vocabulary: {what}; {VOCABULARY_RULE}",)


@dataclass(frozen=True)
class SpeculativeFloor(GridResult):
    """Speculative decoding floor broadcast over batch, context, k and acceptance (SI units).

    ``plain_step_s``: the target's decode step; ``draft_time_s``: the k draft steps of a round,
    each at its floor; ``verify_step_s``: the verify step's floor; ``round_time_s``: the floor of
    the round under ``pricing`` ("overlapped", the strict floor: max(total bytes / BW, compute
    time of all FLOPs), at most draft + verify; "phased": draft + verify);
    ``tokens_per_round``: E(a, k); ``time_per_token_s``: round / E per sequence;
    ``speedup`` = plain / time per token.
    ``break_even_acceptance``: the acceptance at which speculation with this k starts to pay
    (nan: not even a = 1); ``best_k`` / ``best_speedup``: the k in 1 … 16 with the largest
    speedup at this acceptance (0 where none pays); ``max_useful_batch``: the largest batch at
    which this k and acceptance still pay (0: none), at most the plain critical batch;
    ``plain_critical_batch``: the batch at which plain decoding turns compute-bound.
    ``weight_format`` and ``kv_format`` name the target's formats (the draft keeps its own).

    On a device without a compute peak every step keeps its memory floor, as in
    :func:`~roofline_decode.floors.decode.decode_floor`, and the speedups compare those floors;
    what needs the peak, where plain decoding turns compute-bound, is NaN
    (``plain_critical_batch``, ``max_useful_batch``, which it bounds) or ``"n/a"``
    (``verify_bound``).  ``notes`` says so, with the peak look-ups' fallbacks and the MoE
    ``routing``; also where the round is priced ``"phased"`` (``pricing``) and where the draft's
    vocabulary may not be the target's (:func:`vocabulary_notes`).
    """

    model: str
    draft: str
    accelerator: str
    weight_format: str
    kv_format: str
    batch: np.ndarray
    context: np.ndarray
    draft_tokens: np.ndarray
    acceptance: np.ndarray
    plain_step_s: np.ndarray
    draft_time_s: np.ndarray
    verify_step_s: np.ndarray
    verify_bound: np.ndarray
    round_time_s: np.ndarray
    tokens_per_round: np.ndarray
    time_per_token_s: np.ndarray
    tokens_per_s: np.ndarray
    speedup: np.ndarray
    break_even_acceptance: np.ndarray
    best_k: np.ndarray
    best_speedup: np.ndarray
    max_useful_batch: np.ndarray
    plain_critical_batch: np.ndarray
    notes: tuple[str, ...] = ()
    routing: str = "uniform"
    pricing: str = "overlapped"

    RECORD_KEYS = (
        "model", "draft", "accelerator", "weight_format", "kv_format", "pricing", "batch", "context", "draft_tokens",
        "acceptance", "plain_step_s", "draft_time_s", "verify_step_s", "verify_bound", "round_time_s", "tokens_per_round", "time_per_token_s", "tokens_per_s",
        "speedup", "break_even_acceptance", "best_k", "best_speedup", "max_useful_batch", "plain_critical_batch",
    )
    COLUMNS = (
        ("batch", "batch", 1.0), ("context", "context", 1.0), ("k", "draft_tokens", 1.0), ("a", "acceptance", 1.0),
        ("plain ms", "plain_step_s", 1e-3), ("draft ms", "draft_time_s", 1e-3), ("verify ms", "verify_step_s", 1e-3),
        ("round ms", "round_time_s", 1e-3), ("tok/round", "tokens_per_round", 1.0), ("ms/token", "time_per_token_s", 1e-3), ("speedup", "speedup", 1.0),
        ("break-even a", "break_even_acceptance", 1.0), ("best k", "best_k", 1.0),
        ("max batch", "max_useful_batch", 1.0),
    )

    def title(self) -> str:
        return (f"speculative decoding of {self.model} ({self.weight_format} weights, {self.kv_format} KV) with "
                f"{self.draft} on {self.accelerator}")


class RoundPhases(NamedTuple):
    """Times of a round's two phases on the grid [s]: the k draft steps (memory and compute
    times summed over the steps, and the sum of the steps' floors) and the verify step."""

    draft_memory: np.ndarray
    draft_compute: np.ndarray
    draft_time: np.ndarray  # Σ max(memory, compute) over the draft steps
    verify_memory: np.ndarray
    verify_compute: np.ndarray
    verify_time: np.ndarray  # max(memory, compute) of the verify step
    draft_communication: Any = 0.0  # on a layout of several devices: the steps' link times
    verify_communication: Any = 0.0

    def round_time(self, pricing: str) -> np.ndarray:
        """The floor of a round [s] under ``pricing`` (see :data:`PRICINGS`).

        .. math::
            T_{round}^{overlapped} = \\max\\left(\\frac{Q_{draft} + Q_{verify}}{BW},\\;
            \\sum_g \\frac{F_{draft,g}}{F_g} + \\sum_g \\frac{F_{verify,g}}{F_g}\\right), \\qquad
            T_{round}^{phased} = \\sum_{i<k} \\max(T_{mem,i}, T_{comp,i}) + \\max(T_{mem,v}, T_{comp,v})
        """
        if pricing == "phased":
            phased: np.ndarray = self.draft_time + self.verify_time
            return phased
        overlapped: np.ndarray = f.step_time(self.draft_memory + self.verify_memory,
                                             self.draft_compute + self.verify_compute)
        linked: np.ndarray = np.maximum(overlapped, self.draft_communication + self.verify_communication)
        return linked


def _draft_times(draft: Model, accelerator: Accelerator, batch: np.ndarray, context: np.ndarray, k_max: int,
                 sparse: bool, routing: str, layouts: Any = None) -> tuple[np.ndarray, ...]:
    """Cumulative memory time, compute time, floor and link time of 1 … k_max draft steps (last
    axis), steps at contexts T + i (``layouts``: the target's and the draft's, or None)."""
    if layouts is not None:
        memory, compute, comm, time = layout_draft_times(draft, accelerator, layouts[1], batch, context, k_max, sparse,
                                                         routing)
        return memory, compute, time, comm
    offsets = np.arange(k_max, dtype=float)
    steps = decode_floor(draft, accelerator, batch[..., None], context[..., None] + offsets, sparse=sparse,
                         routing=routing)
    return (np.cumsum(steps.memory_time_s, axis=-1), np.cumsum(steps.compute_time_s, axis=-1),
            np.cumsum(steps.step_time_s, axis=-1), np.zeros(1))  # no link time on one device


def _verify_times(model: Model, batch: np.ndarray, context: np.ndarray, k: np.ndarray, timing: Timing,
                  routing: str, layouts: Any = None, accelerator: Any = None,
                  sparse: bool = False) -> tuple[np.ndarray, ...]:
    """(memory time, compute time, floor, link time, bound) of the verify step."""
    if layouts is not None:
        memory, compute, comm, time, bound = layout_verify_times(model, accelerator, layouts[0], batch, context, k,
                                                                 sparse, routing)
        return memory, compute, time, comm, bound
    t = verify_traffic(model, batch, context, k, routing)
    memory, compute = timing.memory_time(t), timing.compute_time(t)
    bound = np.where(compute >= memory, "compute", "memory") if timing.bounded else np.full(np.shape(memory),
                                                                                             BOUND_NOT_DEFINED)
    return memory, compute, f.step_time(memory, compute), np.zeros(np.shape(memory)), bound


def _round_times(model: Model, draft: Model, accelerator: Accelerator, batch: np.ndarray, context: np.ndarray,
                 k: np.ndarray, timing: Timing, sparse: bool,
                 routing: str, layouts: Any = None) -> tuple[np.ndarray, RoundPhases, np.ndarray]:
    """(plain step, the round's phases, verify bound) on the grid."""
    plain = (decode_floor(model, accelerator, batch, context, sparse=sparse, routing=routing).step_time_s
             if layouts is None else layout_plain(model, accelerator, layouts[0], batch, context, sparse, routing))
    k_max = int(np.max(k)) if np.size(k) else 0
    if k_max > 0:
        index = np.maximum(k.astype(int) - 1, 0)[..., None]
        cumulatives = _draft_times(draft, accelerator, batch, context, k_max, sparse, routing, layouts)
        d_memory, d_compute, d_time, d_comm = (
            np.where(k > 0, np.take_along_axis(cumulative, index, axis=-1)[..., 0], 0.0) if i < 3 or layouts
            else np.zeros(np.shape(batch)) for i, cumulative in enumerate(cumulatives))
    else:
        d_memory = d_compute = d_time = d_comm = np.zeros(np.shape(batch))
    memory, compute, verify, comm, bound = _verify_times(model, batch, context, k, timing, routing, layouts,
                                                         accelerator, sparse)
    return plain, RoundPhases(d_memory, d_compute, d_time, memory, compute, verify, d_comm, comm), bound


def _break_even(needed: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Smallest a in [0, 1] with E(a, k) >= needed (nan if E(1) = k + 1 < needed)."""
    low, high = np.zeros_like(needed), np.ones_like(needed)
    for _ in range(60):
        mid = (low + high) / 2
        ok = f.expected_tokens_per_round(mid, k) >= needed
        high, low = np.where(ok, mid, high), np.where(ok, low, mid)
    return np.where(needed <= 1, 0.0, np.where(k + 1 >= needed, high, np.nan))


def _layouts(model: Model, draft: Model, parallel: Any, draft_parallel: Any) -> Any:
    """(target layout, draft layout) of several devices, or None on one device."""
    layout = layout_of(parallel)
    if (layout is None or layout.num_devices == 1) and draft_parallel is None:
        return None
    from ..specs.parallel import Parallel as Layout

    layout = Layout() if layout is None else layout
    check_layout(model, layout)
    return layout, checked_draft_layout(draft, layout, draft_parallel)


def speculative_floor(
    model: Model | str,
    accelerator: Accelerator | str,
    *,
    draft: Model | str | None = None,
    mtp_layers: int | None = None,
    k: Broadcastable = 4,
    acceptance: Broadcastable = 0.7,
    batch: Broadcastable = 1,
    context: Broadcastable = DEFAULT_CONTEXT,
    sparse: bool = False,
    routing: str = "uniform",
    pricing: str = "overlapped",
    weights: WeightsLike = None,
    kv: KvLike = None,
    parallel: Parallel | str | None = None,
    draft_parallel: Parallel | str | None = None,
) -> SpeculativeFloor:
    """Floor of speculative decoding and its speedup over plain decoding.

    A round drafts k tokens, then the target verifies them in one step (k + 1 tokens per sequence).

    Parameters
    ----------
    model, accelerator : Model/str, Accelerator/str
        Target model and the device both models run on.
    draft : Model or str, optional
        Draft model (or catalog id); exactly one of ``draft`` and ``mtp_layers``.
    mtp_layers : int, optional
        Multi-token-prediction heads: layers one draft step runs (DeepSeek-V3: 1), with the
        target's embedding and lm_head.
    k : array_like
        Tokens drafted per round [1], whole, 1 … 64.
    acceptance : array_like
        Per-token acceptance rate a [1], 0 <= a <= 1.
    batch, context : array_like
        Sequences B and tokens cached T when the round starts (default 1 and
        :data:`~roofline_decode.floors.grid.DEFAULT_CONTEXT`, 4096, as ``decode_floor``).
    sparse : bool
        Use 2:4 structured-sparsity peaks.
    routing : {"uniform", "identical"}
        MoE routing of the target, the draft and the verify step ("identical": every token
        picks the same k experts).
    pricing : {"overlapped", "phased"}
        How a round is timed.  ``"overlapped"`` (the strict floor): a round takes at least its
        total bytes over the bandwidth and at least the compute time of all its FLOPs (each
        group at its own peak), max(ΣQ / BW, ΣF_g / F_g), since an engine may overlap one
        micro-batch's draft steps with another's verify step.  ``"phased"``: the draft steps and
        the verify step each take their own max(memory, compute), one after the other: what an
        engine without that overlap reaches (recorded in ``pricing`` and ``notes``).
    weights, kv : str, NumberFormat or dict, optional
        The target's weight and KV-cache formats, as in :func:`~roofline_decode.decode_floor`
        (None: the model's); MTP heads are the target's layers and take them too, a ``draft``
        model keeps its own (pass a loaded :class:`~roofline_decode.Model` for others).
    parallel, draft_parallel : Parallel or str, optional
        Layouts of the target (its plain and verify steps, and MTP heads) and of a draft model
        (default the target's), each step on its busiest device
        (:mod:`~roofline_decode.floors.speculative_layout`); the overlapped round also takes at
        least its link time.

    Examples
    --------
    Llama-3.1-70B with a Llama-3.2-1B draft on an H100 SXM, k = 4, T = 2,048:

    >>> r = speculative_floor("llama-3.1-70b", "h100-sxm", draft="llama-3.2-1b", k=4, acceptance=0.8,
    ...                       batch=[1, 8, 64], context=2048)
    >>> [round(float(s), 2) for s in r.speedup]
    [3.13, 3.1, 2.92]
    """
    model, accelerator = resolve_model_and_device(model, accelerator, weights, kv)
    routed_experts(model, routing)  # checks the routing
    if (draft is None) == (mtp_layers is None):
        raise InvalidValueError("draft", draft, "exactly one of draft= (a model) and mtp_layers= (MTP heads)")
    if draft is not None:
        draft_model = resolve_model_and_device(draft, accelerator)[0]
        draft_name = draft_model.name
        vocabulary = vocabulary_notes(model, draft_model)
    else:
        if isinstance(mtp_layers, bool) or not isinstance(mtp_layers, int | np.integer) or not (
                1 <= mtp_layers <= model.num_layers):
            raise InvalidValueError("mtp_layers", mtp_layers, f"a whole number of layers, 1 … {model.num_layers}")
        draft_model = mtp_draft_model(model, int(mtp_layers))
        draft_name = f"{mtp_layers}-layer MTP heads"
        vocabulary = ()  # the target's own embedding and lm_head
    k = checked_array("k", k, 1.0, inclusive=True)
    if (k != np.floor(k)).any() or (k > 64).any():
        raise InvalidValueError("k", k[(k != np.floor(k)) | (k > 64)].flat[0].item(), "whole numbers 1 … 64")
    acceptance = checked_array("acceptance", acceptance, 0.0, inclusive=True)
    if (acceptance > 1).any():
        raise InvalidValueError("acceptance", acceptance[acceptance > 1].flat[0].item(), "rates 0 … 1")
    batch = checked_array("batch", batch, 1.0, inclusive=True)
    context = checked_array("context", context, 0.0, inclusive=True)
    # the draft steps and the best-k search reach context + MAX_DRAFT_TOKENS: refuse by the value given
    last = MAX_GRID_VALUE - MAX_DRAFT_TOKENS
    if (context > last).any():
        raise InvalidValueError("context", context[context > last].flat[0].item(),
                                f"tokens cached per sequence from 0 to 2**53 - {MAX_DRAFT_TOKENS} (the draft "
                                f"steps of a round reach context + {MAX_DRAFT_TOKENS})")
    batch, context, k, acceptance = broadcast_grid(batch=batch, context=context, k=k, acceptance=acceptance)
    if not isinstance(pricing, str) or pricing not in PRICINGS:
        raise InvalidValueError("pricing", pricing, "'overlapped' (the strict floor) or 'phased'")
    timing = device_timing(model, accelerator, sparse)

    layouts = _layouts(model, draft_model, parallel, draft_parallel)
    plain, phases, bound = _round_times(model, draft_model, accelerator, batch, context, k, timing, sparse, routing,
                                        layouts)
    round_time = phases.round_time(pricing)
    per_round = f.expected_tokens_per_round(acceptance, k)
    per_token = round_time / per_round
    speedup = plain / per_token

    # best k in 1 … 16 at this acceptance (extra last axis)
    ks = np.arange(1, MAX_DRAFT_TOKENS + 1, dtype=float)
    d_mem, d_comp, d_time, d_comm = _draft_times(draft_model, accelerator, batch, context, MAX_DRAFT_TOKENS, sparse,
                                                 routing, layouts)
    v_mem, v_comp, v_time, v_comm, _ = _verify_times(model, batch[..., None], context[..., None], ks, timing, routing,
                                                     layouts, accelerator, sparse)
    rounds_k = RoundPhases(d_mem, d_comp, d_time, v_mem, v_comp, v_time, d_comm, v_comm).round_time(pricing)
    speedups = plain[..., None] * f.expected_tokens_per_round(acceptance[..., None], ks) / rounds_k
    best = np.argmax(speedups, axis=-1)
    best_speedup = np.take_along_axis(speedups, best[..., None], axis=-1)[..., 0]
    best_k = np.where(best_speedup > 1, ks[best], 0.0)

    critical = np.asarray(decode_floor(model, accelerator, batch, context, sparse=sparse, routing=routing).critical_batch
                          if layouts is None else layout_critical_batch(model, accelerator, layouts[0], context, sparse,
                                                                        routing), dtype=float)
    if timing.bounded:
        useful = _max_useful_batch(model, draft_model, accelerator, context, k, acceptance, critical, timing, sparse,
                                   routing, pricing, layouts)
    else:  # the search stops at the plain critical batch, which needs a peak
        useful = np.full(np.shape(critical), np.nan)
    return SpeculativeFloor(
        model=model.name, draft=draft_name, accelerator=accelerator.id or accelerator.name,
        weight_format=model.weight_format.name, kv_format=model.kv_format.name, batch=batch,
        context=context, draft_tokens=k, acceptance=acceptance, plain_step_s=plain, draft_time_s=phases.draft_time,
        verify_step_s=phases.verify_time, verify_bound=bound, round_time_s=round_time, tokens_per_round=per_round,
        time_per_token_s=per_token, tokens_per_s=batch / per_token, speedup=speedup,
        break_even_acceptance=_break_even(round_time / plain, k), best_k=best_k, best_speedup=best_speedup,
        max_useful_batch=useful, plain_critical_batch=critical,
        notes=(timing.notes(SPECULATIVE_WITHOUT_PEAK) + routing_notes(model, routing)
               + ((PHASED_NOTE,) if pricing == "phased" else ()) + vocabulary),
        routing=routing, pricing=pricing,
    )


def _max_useful_batch(model: Model, draft: Model, accelerator: Accelerator, context: np.ndarray, k: np.ndarray,
                      acceptance: np.ndarray, critical: np.ndarray, timing: Timing, sparse: bool,
                      routing: str, pricing: str, layouts: Any = None) -> np.ndarray:
    """Largest whole batch with speedup > 1 (0 if none) up to the plain critical batch (beyond
    it speculation cannot pay; 2^20 where that is infinite): the largest power of two that pays,
    then bisection up to the next one that does not.  (With MoE the speedup can rise with the
    batch at first, so it is not assumed monotone over the whole range.)"""
    def pays(b: np.ndarray) -> np.ndarray:
        plain, phases, _ = _round_times(model, draft, accelerator, b, context, k, timing, sparse, routing, layouts)
        paid: np.ndarray = plain * f.expected_tokens_per_round(acceptance, k) / phases.round_time(pricing) > 1
        return paid

    cap = np.where(np.isfinite(critical), np.maximum(np.ceil(critical), 1.0), 2.0 ** 20)
    low = np.zeros_like(cap)  # largest tried batch that pays (0: none yet)
    high = np.full_like(cap, np.inf)  # the first batch above it that does not
    power = 1.0
    while True:
        b = np.minimum(power, cap)
        ok = pays(b)
        low = np.where(ok, b, low)
        high = np.where(ok, np.inf, np.where((low > 0) & ~np.isfinite(high), b, high))
        if power >= cap.max():
            break
        power *= 2
    high = np.where(np.isfinite(high), high, low + 1)  # paid at the cap: the cap is the answer
    for _ in range(24):
        open_ = high - low > 1
        if not open_.any():
            break
        mid = np.where(open_, np.floor((low + high) / 2), np.maximum(low, 1))
        ok = pays(mid)
        low, high = np.where(open_ & ok, mid, low), np.where(open_ & ~ok, mid, high)
    return np.where((low >= cap) & ~np.isfinite(critical), np.inf, low)  # pays at 2^20: no limit found
