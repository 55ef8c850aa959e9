"""Expected decode performance with a 90 % band, beside the floor: :func:`expected`.

The floor (:func:`~roofline_decode.decode_floor`) is a strict lower bound.  The expected step
time is a separate number, never below it, resting on one of three bases (its ``label`` says
which and how far it reaches):

1. **floor only** (no engine given): expected = floor, no upper band (nothing says how far above
   the floor a run lands);
2. **engine profile** (:mod:`~roofline_decode.measure.engine_profile`): the engine's fitted step
   model; the band is the spread of leave-one-device-out (and leave-one-model-out) errors of its
   fit, widened where the query reaches a device or a model the profile was not fitted on
   (:mod:`~roofline_decode.measure.engine_band`: a new device's or model's offset from the
   spread of the held-out devices' or models' offsets, t-inflated for their few groups, with
   llama.cpp-cuda's spread of per-device scales as a prior), so it describes a device or model
   the profile has not seen;
3. **your calibration**: the profile as a prior, updated by one or more of your runs.  The
   profile's prediction is scaled by a factor s with log s ~ N(0, σ²) a priori (σ: how much one
   device's scale varies across the fitted devices); each run i gives log(y_i / ŷ_i) = log s + ε_i
   with ε_i ~ N(0, ν²) (ν: the scatter inside one device).  The conjugate normal update gives
   log s ~ N(m, v) with v = 1 / (1/σ² + n/ν²) and m = v Σ log(y_i / ŷ_i) / ν², and the band
   ŷ · exp(m ± z sqrt(v + ν²)), z the normal quantile of the level.  One run already narrows the
   band from the device-to-device spread towards the within-device scatter.

All times in seconds, broadcast over batch and context like the floor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from statistics import NormalDist
import numpy as np

from .._typing import Broadcastable
from ..errors import InvalidValueError, RooflineError, is_real
from ..floors.grid import DEFAULT_CONTEXT
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from ..specs.parallel import Parallel
from .engine_band import (band_basis, band_regime, batch_basis, model_seen, query_band, step_regime,
                          ttft_regime)
from .engine_profile import (BAND_LEVELS, EngineProfile, StepTerms, load_engine_profile, predict_step, predict_ttft,
                             step_terms)

__all__ = ["Expected", "expected", "UserRun"]


@dataclass(frozen=True)
class UserRun:
    """One of your measured decode steps: batch, context and step time [s] (same model, device
    and layout as the prediction unless ``model`` is given)."""

    batch: float
    context: float
    step_time_s: float
    model: Model | str | None = None


@dataclass(frozen=True)
class Expected:
    """Expected step time [s] with its band, the floor beside it, and what it rests on."""

    step_time_s: np.ndarray
    lower_s: np.ndarray
    upper_s: np.ndarray
    floor_step_time_s: np.ndarray
    batch: np.ndarray
    fits: np.ndarray
    engine: str | None
    basis: str
    label: str
    level: float
    ttft_s: np.ndarray | None = None
    ttft_lower_s: np.ndarray | None = None
    ttft_upper_s: np.ndarray | None = None
    ttft_floor_s: np.ndarray | None = None

    @property
    def tpot_s(self) -> np.ndarray:
        """Time per output token [s]: the expected step time."""
        return self.step_time_s

    @property
    def tokens_per_s(self) -> np.ndarray:
        """Aggregate generated tokens per second at the expected step time [1/s]."""
        rate: np.ndarray = self.batch / self.step_time_s
        return rate

    @property
    def tokens_per_s_band(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) aggregate tokens per second of the band [1/s]: B / upper_s, B / lower_s
        (0 where the band has no upper end)."""
        upper = np.where(np.isnan(self.upper_s), np.inf, self.upper_s)
        return self.batch / upper, self.batch / self.lower_s

    @property
    def tokens_per_s_per_sequence(self) -> np.ndarray:
        """Tokens per second of one sequence (1 / TPOT) [1/s]."""
        rate: np.ndarray = 1.0 / self.step_time_s
        return rate

    def __str__(self) -> str:
        t, lo, hi = (float(np.ravel(a)[0]) for a in (self.step_time_s, self.lower_s, self.upper_s))
        band = f"{lo * 1e3:.4g}..{hi * 1e3:.4g} ms" if math.isfinite(hi) else f">= {lo * 1e3:.4g} ms"
        return f"expected {t * 1e3:.4g} ms per step ({self.level:.0%} band {band}); {self.label}"


def _check(level: float) -> None:
    if not is_real(level) or level not in BAND_LEVELS:
        raise InvalidValueError("level", level, "one of " + ", ".join(f"{v:g}" for v in BAND_LEVELS))


def _device_note(profile: EngineProfile, device: Accelerator) -> tuple[str, str]:
    """(what the profile rests on, where this device stands among its devices)."""
    device_id = device.id or device.name
    fitted = ", ".join(sorted(profile.devices))
    head = (f"engine profile {profile.engine} fitted on {profile.rows} rows of {len(profile.devices)} "
            f"device(s) ({fitted})")
    if device_id in profile.devices:
        return head, f"{device_id} is among them ({profile.devices[device_id]['rows']:.0f} rows)"
    nearest, ratio = profile.nearest_device(float(device.memory_bandwidth))
    return head, f"{device_id} is not among them: nearest by bandwidth {nearest} (x{ratio:.3g})"


def _serving_terms(model: Model, device: Accelerator, batch: np.ndarray, prompt: float, output: float,
                   layout: Parallel, routing: str | float
                   ) -> tuple[StepTerms, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Step terms of serving_floor's steady step at each client concurrency in ``batch``, with the
    TTFT's prefill (+ KV transfer) and queue floors, the step floor, serving_floor's TPOT floor
    and its TTFT floor [s] (arrays like ``batch``)."""
    from ..floors.serving import serving_floor
    from .engine_rows_production import serving_terms

    parts, prefill, queue, tpot, ttft = [], [], [], [], []
    for clients in np.ravel(batch):
        if not float(clients).is_integer():
            raise InvalidValueError("batch", float(clients), "a whole number of clients with prompt= and output=")
        sf = serving_floor(model, device, concurrency=int(clients), input_length=int(prompt), output_length=int(output),
                           parallel=layout, routing=routing if isinstance(routing, str) else "uniform")
        found = serving_terms(model, device, sf, prompt, layout.num_devices, layout.ep)
        if found is None:
            raise InvalidValueError("model", model.name, f"a model whose KV cache holds a sequence on {layout} "
                                                         f"x {device.id or device.name}")
        parts.append(found[0])
        prefill.append(found[1])
        queue.append(found[2])
        tpot.append(float(np.ravel(sf.tpot_s)[0]))
        ttft.append(max(float(np.ravel(sf.ttft_s)[0]), found[1] + found[2]))
    shape = np.shape(batch)
    terms = StepTerms(*(np.concatenate([np.ravel(getattr(t, f)) for t in parts]).reshape(shape) for f in StepTerms.FIELDS))
    terms = replace(terms, floor_s=np.maximum(terms.floor_s, np.reshape(tpot, shape)))
    return (terms, np.reshape(prefill, shape), np.reshape(queue, shape), terms.floor_s, np.reshape(tpot, shape),
            np.reshape(ttft, shape))


def _layout_floor(model: Model, device: Accelerator, batch: Broadcastable, context: Broadcastable,
                  layout: Parallel, routing: str | float, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(strict step floor [s], collective floor [s]) of a decode step under a tensor x pipeline
    ``layout`` (decode_floor with ``parallel=``: the busiest device, its links, the stages one
    after another): the floor the expectation may not undercut, and the all-reduces over the
    links that the profile's k_comm scales, as serving_floor gives them for the production rows."""
    from ..floors.decode import decode_floor

    floor = decode_floor(model, device, batch=batch, context=context, routing=routing, parallel=layout)
    comm = getattr(floor, "communication_time_s", 0.0)  # a ParallelFloor (more than one device) has it
    return (np.broadcast_to(np.asarray(floor.step_time_s, dtype=float), shape),
            np.broadcast_to(np.asarray(comm, dtype=float), shape))


def _layout(parallel: Parallel | str, tensor_parallel: int, pipeline_parallel: int, serving: bool) -> Parallel:
    """``parallel`` as a layout; refused beside ``tensor_parallel``/``pipeline_parallel`` and, for a
    decode step alone, with EP or attention DP (no profile term: the production profiles were
    fitted on serving runs, whose layouts they take as serving_floor does)."""
    layout = Parallel.parse(parallel) if isinstance(parallel, str) else parallel
    if not isinstance(layout, Parallel):
        raise InvalidValueError("parallel", parallel, "a Parallel layout or its text, e.g. 'tp4' or 'tp4 pp2'")
    if (tensor_parallel, pipeline_parallel) != (1, 1):
        raise InvalidValueError("parallel", str(layout), "either parallel= or tensor_parallel=/pipeline_parallel=")
    if not serving and (layout.ep > 1 or layout.attention_dp > 1):
        raise InvalidValueError("parallel", str(layout), "a tensor x pipeline layout (tp, pp) for a decode step: the "
                                "engine profiles have no term for expert or attention data parallelism there (a "
                                "serving run, prompt= and output=, takes any layout)")
    return layout


def expected(model: Model | str, accelerator: Accelerator | str, *, batch: Broadcastable = 1,
             context: Broadcastable = DEFAULT_CONTEXT, engine: str | EngineProfile | None = None,
             tensor_parallel: int = 1, pipeline_parallel: int = 1, routing: str | float = "uniform",
             runs: list[UserRun] | None = None, level: float = 0.9, prompt: float | None = None,
             output: float | None = None, parallel: Parallel | str | None = None) -> Expected:
    """Expected decode step time (TPOT) with a band, never below the floor.

    Parameters
    ----------
    model, accelerator : Model / Accelerator or catalog id
        As for :func:`~roofline_decode.decode_floor` (the model in the formats served).
    batch, context : array_like
        B [1] and T [1], broadcast.
    engine : str or EngineProfile, optional
        A shipped profile (:func:`~roofline_decode.measure.engine_profile.list_engine_profiles`)
        or one loaded from a file; None: the floor only.
    tensor_parallel, pipeline_parallel : int
        TP devices splitting every layer; PP stages of a layer split run one after another.
    parallel : Parallel or str, optional
        The same as a layout (``"tp4"``, ``"tp4 pp2"``), as the floors take it.  For a decode step
        the profiles model a split by tensor and pipeline parallelism only, so a layout with expert
        or attention data parallelism is refused (its floor: ``decode_floor`` with ``parallel=``);
        a serving run (``prompt=`` and ``output=``) takes any layout, as the production profiles
        were fitted: serving_floor of that layout, its step terms over all its devices as one group
        (the experts a device runs follow EP), never below that layout's TPOT and TTFT floors.
    routing : {"uniform", "identical"} or float
        MoE routing, as for the floor.
    runs : list of UserRun, optional
        Your measured steps of this model (or the run's own model) on this device and layout:
        they update the profile's scale (module docstring).  Needs ``engine``.
    level : float
        Band coverage, one of 0.5, 0.8, 0.9 (default), 0.95.
    prompt, output : int, optional
        Tokens per request in and out (ISL, OSL) of a serving run.  With both, ``batch`` is the
        client concurrency C and the step is :func:`~roofline_decode.floors.serving.serving_floor`'s
        steady step (its decode batch at its mean context, ``context`` unused, with the prompts
        riding along, which ``k_pf`` scales), on the layout's devices; the floor is then
        the serving TPOT floor of that layout.  With ``prompt``, the result carries the expected TTFT (engines
        with TTFT rows; else its floor: the prefill (+ queue) floor of serving_floor, or the
        prefill floor of one prompt without ``output``).

    Returns
    -------
    Expected
        ``step_time_s``, ``lower_s``, ``upper_s`` (NaN: no upper bound), ``floor_step_time_s``,
        ``fits`` (weights and KV fit the devices' usable memory), ``basis`` and ``label``.

    Examples
    --------
    Llama-3.1-8B at Q4_K_M with llama.cpp on an RTX 4090, batch 1 at 2K context:

    >>> from roofline_decode.catalog import load_model
    >>> e = expected(load_model("llama-3.1-8b", weights="Q4_K_M", kv="f16"), "rtx-4090", context=2048,
    ...              engine="llama.cpp-cuda")
    >>> e.basis, round(float(e.floor_step_time_s) * 1e3, 2), round(float(e.step_time_s) * 1e3, 2)
    ('engine profile', 4.85, 9.29)
    >>> round(float(e.tokens_per_s))   # published: llama-bench tg4096 (mean context 2047.5), 119.44 tok/s
    108
    """
    from ..catalog import load_accelerator, load_model
    from ..floors.capacity import resident_bytes, usable_memory

    _check(level)
    for name, value in (("tensor_parallel", tensor_parallel), ("pipeline_parallel", pipeline_parallel)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InvalidValueError(name, value, "a whole number >= 1")
    serving = prompt is not None and output is not None
    layout = None
    if parallel is not None:
        layout = _layout(parallel, tensor_parallel, pipeline_parallel, serving)
        # a serving run's step is fitted on its layout's devices as one group (engine_rows_production)
        tensor_parallel, pipeline_parallel = (layout.num_devices, 1) if serving else (layout.tp, layout.pp)
    elif serving:
        layout = Parallel(tp=tensor_parallel, pp=pipeline_parallel)
        tensor_parallel, pipeline_parallel = layout.num_devices, 1
    model = load_model(model)
    device = load_accelerator(accelerator)
    terms = step_terms(model, device, batch, context, tensor_parallel, pipeline_parallel, routing)
    floor = np.asarray(terms.floor_s, dtype=float)
    batch_arr = np.asarray(terms.batch, dtype=float)
    room = usable_memory(device) * tensor_parallel * pipeline_parallel
    fits = np.asarray(resident_bytes(model, batch_arr, np.broadcast_to(np.asarray(context, dtype=float), floor.shape))
                      <= room)
    for name, tokens in (("prompt", prompt), ("output", output)):
        if tokens is not None and not (is_real(tokens) and 1 <= tokens <= 2**40 and float(tokens).is_integer()):
            raise InvalidValueError(name, tokens, "a whole number of tokens >= 1")
    if output is not None and (prompt is None or output < 2):
        raise InvalidValueError("output", output, "a whole number >= 2, with prompt= (a serving run)")
    comm: np.ndarray | None = None
    layout_refusal = ""
    if not serving and tensor_parallel * pipeline_parallel > 1:  # the layout's own floor (its links, its stages)
        try:
            step_floor_of_layout, comm = _layout_floor(model, device, batch, context,
                                                       Parallel(tp=tensor_parallel, pp=pipeline_parallel), routing,
                                                       floor.shape)
            floor = np.maximum(floor, step_floor_of_layout)
            terms = replace(terms, floor_s=floor)
        except RooflineError as exc:  # e.g. no interconnect figure: the devices' aggregate floor stands
            layout_refusal = str(exc).splitlines()[0]
    ttft_floor = queue = None
    step_floor = serving_ttft = floor
    if serving:
        assert prompt is not None and output is not None
        assert layout is not None
        terms, ttft_floor, queue, floor, step_floor, serving_ttft = _serving_terms(
            model, device, batch_arr, prompt, output, layout, routing)
        fits = np.ones(floor.shape, dtype=bool)  # serving_floor queues the clients the KV cache cannot hold
    elif prompt is not None:
        from ..floors.prefill import prefill_floor

        pf = prefill_floor(model, device, prompt=prompt, routing=routing if isinstance(routing, str) else "uniform")
        ttft_floor = np.full_like(floor, max(float(pf.memory_time_s), float(pf.compute_time_s)) / tensor_parallel)
        queue = np.zeros_like(floor)
        serving_ttft = ttft_floor
    if engine is None:
        if runs:
            raise InvalidValueError("runs", f"{len(runs)} runs", "an engine profile to update (engine=...)")
        nan = np.full_like(floor, np.nan)
        return Expected(floor, floor, nan, floor, batch_arr, fits, None, "floor only",
                        "floor only: a strict lower bound; no engine profile, so no expectation above it", level,
                        ttft_floor, ttft_floor, None if ttft_floor is None else nan, ttft_floor)
    profile = load_engine_profile(engine)
    head, where = _device_note(profile, device)
    label = ""
    if serving:
        label += (f"; serving run: batch is the client concurrency, the step serving_floor's steady step (its "
                  f"decode batch at its mean context, with the prompts of {prompt:g} tokens riding along)")
    elif "k_pf" in profile.fitted:
        label += "; decode only: give prompt= and output= for the prefill a continuous-batching step carries"
    if comm is not None and pipeline_parallel == 1 and "k_comm" in profile.fitted:
        terms = replace(terms, comm_s=comm)
    elif comm is None and tensor_parallel > 1 and "k_comm" in profile.fitted:
        label += f"; collectives not included (no layout floor: {layout_refusal}): expect slower"
    predicted, _, _ = predict_step(terms, profile.vector)
    if serving and layout is not None and layout.num_devices > 1 and np.any(predicted <= floor):
        label += (f"; at {layout} the profile's step (its devices as one group) is faster than the layout's TPOT "
                  "floor, so the expectation sits on that floor: expect slower")
    if pipeline_parallel > 1 and "t_hop" not in profile.fitted:
        label += ("; layer-split hand-offs are not in this profile (no rows to fit them): expect slower"
                  if profile.parameters["t_hop"] == 0 else
                  f"; layer-split hand-offs at the profile's prior value ({profile.parameters['t_hop'] * 1e6:.3g} µs "
                  "each: no rows fitted them)")
    if tensor_parallel > 1 and "c_ar" not in profile.fitted:
        label += "; all-reduce cost not in this profile (no TP rows): expect slower"
    if runs:
        z = NormalDist().inv_cdf(0.5 + level / 2)
        sigma, noise = profile.prior["sigma_scale"], profile.prior["noise"]
        logs = []
        for run in runs:
            run_model = model if run.model is None else load_model(run.model)
            t = step_terms(run_model, device, run.batch, run.context, tensor_parallel, pipeline_parallel, routing)
            if not (is_real(run.step_time_s) and run.step_time_s > 0):
                raise InvalidValueError("runs.step_time_s", run.step_time_s, "a time > 0 [s]")
            logs.append(math.log(run.step_time_s / float(predict_step(t, profile.vector)[0])))
        v = 1.0 / (1.0 / sigma**2 + len(logs) / noise**2)
        m = v * sum(logs) / noise**2
        centre = predicted * math.exp(m)
        half = z * math.sqrt(v + noise**2)
        lower, upper = centre * math.exp(-half), centre * math.exp(half)
        basis = "calibration"
        label = (f"your calibration: {len(logs)} run(s) update the scale of the {head} (prior sd {sigma:.2g}, "
                 f"within-device scatter {noise:.2g} in log; scale now x{math.exp(m):.3g}); {where}" + label)
    else:
        device_seen = (device.id or device.name) in profile.devices
        seen_model = bool(model_seen(profile.transfer, [model.name])[0])
        regime = step_regime(terms.prefill_s, floor)
        lo, hi = query_band(profile.band, profile.transfer, level, device_seen, seen_model, regime, terms.batch)
        centre = predicted
        lower, upper = predicted * np.exp(lo), predicted * np.exp(hi)
        basis = "engine profile"
        rests = "" if profile.transfer is None else f", {band_basis(profile.transfer, device_seen, seen_model)}"
        if profile.transfer is not None and profile.transfer.get("regimes"):
            rests += ", " + band_regime(profile.transfer, regime)
        rests += batch_basis(profile.transfer, terms.batch)
        label = f"{head}; band from {profile.band_method} errors{rests}; {where}" + label
    centre = np.maximum(centre, floor)
    lower = np.maximum(np.minimum(lower, centre), floor)
    upper = np.maximum(upper, centre)
    if not np.all(fits):
        label += "; some points do not fit the devices' usable memory (see .fits): no such run exists"
    ttft = ttft_lo = ttft_hi = None
    if ttft_floor is not None and queue is not None and prompt is not None:
        if profile.ttft is not None:
            # never below serving_floor's TTFT (with output=; the prefill floor with prompt= alone)
            least = np.maximum(serving_ttft, ttft_floor + queue)
            # without output= no other client's prompt arrives (O infinite)
            ttft = np.maximum(predict_ttft(profile.ttft["parameters"], ttft_floor, queue, batch_arr, step_floor,
                                           np.full_like(floor, float(prompt)),
                                           np.full_like(floor, math.inf if output is None else float(output))), least)
            ttft_transfer = profile.ttft.get("transfer")
            lo_t, hi_t = query_band(profile.ttft["band"], ttft_transfer, level,
                                    (device.id or device.name) in profile.devices,
                                    bool(model_seen(ttft_transfer, [model.name])[0]), ttft_regime(batch_arr))
            if ttft_transfer is not None and ttft_transfer.get("regimes"):
                label += "; TTFT band of " + band_regime(ttft_transfer, ttft_regime(batch_arr))
            ttft_lo, ttft_hi = np.maximum(ttft * np.exp(lo_t), least), ttft * np.exp(hi_t)
        else:
            ttft, ttft_lo, ttft_hi = ttft_floor + queue, ttft_floor + queue, np.full_like(floor, np.nan)
            label += "; TTFT: floor only (no TTFT rows for this engine)"
    return Expected(centre, lower, upper, floor, batch_arr, fits, profile.engine, basis, label, level,
                    ttft, ttft_lo, ttft_hi, ttft_floor)

