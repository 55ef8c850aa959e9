"""Engine profiles: a physical step model of one inference engine, fitted across devices.

An engine profile holds the coefficients of

.. math:: T = t_{layer} L + t_{step} + q B + c_{ar} N_{ar} + t_{hop} (PP - 1) + k_{pf} T_{pf}
          + k_{comm} T_{comm} + t_{exp} N_{exp} + c_{peer} N_{ar} (TP - 1)
          + \\max\\left(\\frac{W}{\\eta_w BW} + \\frac{E}{\\eta_{moe} BW} + \\frac{K}{\\eta_{kv} BW},\\;
          \\frac{F}{\\eta_c P}\\right)

with W the weight bytes of the step outside the MoE MLPs, E those of the MoE MLPs (the experts
read, shared experts included; 0 for a dense model), K the KV bytes (read and written) and F
the FLOPs (DESIGN.md §4), BW the bandwidth the step streams at (TP devices: their aggregate; a
layer split: one device's, the layers run one after another), P the dense peak of the compute
precision, L the depth, B the batch, N_ar = 2 L the all-reduces of a tensor-parallel step
(attention and MLP outputs; 0 on one device), PP - 1 the hand-offs of a layer split and T_pf
the prefill floor interleaved into one step by continuous batching (B / O new requests of P
prompt tokens per step, O output tokens per request; 0 for a decode-only benchmark): k_pf is
how many times its floor a prefill takes when it shares the step; T_comm the collective floor
of the serving layout (serving_floor's communication time: all-reduce and all-to-all bytes over
the links, 0 where the rows do not give it) and k_comm how many times that floor the collectives
take; N_exp the experts one device runs per step, L_moe D(B) / EP (D(B) the distinct routed
experts a batch of B touches in one MoE layer under the routing,
:func:`~roofline_decode.formulas.weights.distinct_experts_read`; EP the expert-parallel degree; 0
for a dense model) and t_exp the minimum cost of one expert's
grouped GEMM beyond its bytes (a tile of few tokens per expert: launch, tile latency, the
permutation of its tokens); c_peer the latency an all-reduce adds per device it spans beyond
the first (the α-β model of a collective: a ring passes 2 (n - 1) messages, a one-shot
all-reduce reads n - 1 peers' buffers; R. Thakur, R. Rabenseifner and W. Gropp, "Optimization
of collective communication operations in MPICH", IJHPCA 19 (2005) 49-66).

Each efficiency is written ``1 / (1 + u)``, ``u >= 0``, so the model is linear and non-negative
in (t_layer, t_step, q, u_w, u_kv, u_c, c_ar, t_hop, k_pf, u_moe, k_comm, t_exp, c_peer) once the
compute-bound rows are known: a bounded (non-negative) least-squares fit (:mod:`._nnls`) with
relative residuals, or for the production engines the Huber loss of log(measured / predicted)
(:mod:`.engine_fit`), the side assignment iterated until it no longer changes; the production
engines' fits are MAP fits, pulled toward the physical values of :data:`~.engine_fit.STEP_PRIOR`
(:mod:`.engine_fit` states each value's reason).  A column that is zero on every fitted row (no TP
row: c_ar, c_peer; no compute-bound row: u_c; no MoE row: u_moe, t_exp; no serving layout: k_comm) is
listed as not fitted and stays at 0, or in a MAP fit at its prior value (all the rows say of it);
t_exp and c_peer are fitted only in a MAP fit (:data:`MAP_ONLY`).

The profile's band is the spread of *leave-one-device-out* errors: each device's rows predicted
from a fit on the other devices, so the band says how far an unseen device may fall; with one
device only, errors of rows held out in ten interleaved folds stand in (and the label says
so); with the rows' models given (the production engines), each model's rows predicted from a
fit on the other models join them, so the band also covers a model the profile has not seen
(its statistics give both splits).  A query on a device or model the profile has not seen
widens that band (``transfer``, :mod:`.engine_band`), and the statistics' coverage is that of
the band each held-out row would get.  The prior of a user's calibration (:mod:`~roofline_decode.measure.expected`) is the
spread of per-device scale factors.  Profiles are JSON files in
``roofline_decode/engine_profiles/``, refitted by ``tools/fit_engine_profiles.py`` from
``shared/reference/measured/`` only.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidValueError
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from . import calibration_models as cm
from ._nnls import weighted_nnls
from .engine_band import (DEVICE_PRIOR_ENGINE, NO_OFFSET, batch_term, held_out_seen, hold_out_coverage, step_regime,
                          transfer_from_dict, transfer_of, transfer_to_dict, with_model_hold_outs)
from .engine_fit import BAND_LEVELS, Prior, band_of, error_statistics, held_out, irls, prior_rows, prior_strength
from .engine_ttft import TTFT_PARAMETERS, fit_ttft, predict_ttft, ttft_from_dict

__all__ = ["PROFILE_FORMAT", "PARAMETERS", "TTFT_PARAMETERS", "BAND_LEVELS", "StepTerms", "EngineProfile", "step_terms",
           "fit_step_model", "predict_step", "MAP_ONLY", "fit_profile", "fit_ttft", "predict_ttft",
           "list_engine_profiles", "load_engine_profile", "profile_dir", "device_prior"]

PROFILE_FORMAT = "roofline-decode engine profile 1"
#: Parameters of the step model, in the order of the fit.
PARAMETERS = ("t_layer", "t_step", "q", "u_w", "u_kv", "u_c", "c_ar", "t_hop", "k_pf", "u_moe", "k_comm", "t_exp",
              "c_peer")
#: Parameters a profile written before them lacks (read as 0: the term was not in its model).
_ADDED = ("k_comm", "t_exp", "c_peer")
#: Terms fitted only in a MAP fit (a ``prior``): without one they stay 0, as few rows trade them
#: against the efficiencies (gpt-fast's 37 rows: η_kv 0.08 with c_peer and t_exp free).
MAP_ONLY = ("t_exp", "c_peer")


@dataclass(frozen=True)
class StepTerms:
    """Per-row floor terms [s] and counts of a decode step (arrays of one length)."""

    layers: np.ndarray
    batch: np.ndarray
    weights_s: np.ndarray
    kv_s: np.ndarray
    compute_s: np.ndarray
    allreduces: np.ndarray
    hops: np.ndarray
    floor_s: np.ndarray
    prefill_s: np.ndarray
    experts_s: np.ndarray
    comm_s: np.ndarray
    experts_run: np.ndarray
    allreduce_peers: np.ndarray

    FIELDS = ("layers", "batch", "weights_s", "kv_s", "compute_s", "allreduces", "hops", "floor_s", "prefill_s",
              "experts_s", "comm_s", "experts_run", "allreduce_peers")

    def take(self, index: np.ndarray) -> StepTerms:
        return StepTerms(*(np.asarray(getattr(self, f))[index] for f in self.FIELDS))

    @staticmethod
    def stack(parts: list[StepTerms]) -> StepTerms:
        return StepTerms(*(np.concatenate([np.ravel(getattr(p, f)) for p in parts]) for f in StepTerms.FIELDS))

    def __len__(self) -> int:
        return int(np.size(self.weights_s))


def step_terms(model: Model, device: Accelerator, batch: Any, context: Any, tensor_parallel: int = 1,
               pipeline_parallel: int = 1, routing: str | float = "uniform", prefill_s: Any = 0.0,
               comm_s: Any = 0.0, expert_parallel: int = 1) -> StepTerms:
    """The terms of the step model for ``model`` on ``device`` (broadcast over batch and context).

    TP devices split every layer (aggregate bandwidth and peak, 2 L all-reduces); a pipeline of
    PP stages on one request runs its layers one after another (one device's bandwidth, PP - 1
    hand-offs).  ``floor_s`` is the strict floor of that layout (MoE ``routing="identical"``);
    ``prefill_s`` [s] the prefill floor time interleaved into one step (continuous batching: B / O
    new requests of P prompt tokens per step; 0 for a decode-only run); ``comm_s`` [s] the
    collective floor of the step's layout (serving_floor's ``communication_time_s``: all-reduce
    and all-to-all bytes over the links; 0 where not known); ``expert_parallel`` the EP degree the
    experts are spread over (``experts_run``: MoE layers x distinct experts read / EP, per device)."""
    t = cm.floor_terms(model, device, batch, context, devices=tensor_parallel, routing=routing)
    shape = np.shape(t.weights_s)
    ar = 2.0 * model.num_layers if tensor_parallel > 1 else 0.0
    experts = np.zeros(shape)
    run = np.zeros(shape)
    if model.is_moe:  # the MLP (expert) weights as their own stream: grouped GEMMs of few tokens per expert
        from ..floors.decode import decode_floor
        from ..floors.routing import resolve_routing

        floor = decode_floor(model, device, batch=batch, context=context, routing=routing)
        experts = np.broadcast_to(np.asarray(floor.breakdown()["bytes"]["mlp_weights"], dtype=float)
                                  / (tensor_parallel * floor.memory_bandwidth), shape)
        distinct = resolve_routing(routing, model, batch).experts_read(model, np.asarray(batch, dtype=float))
        run = np.broadcast_to(model.num_moe_layers * np.asarray(distinct, dtype=float) / max(expert_parallel, 1), shape)
    return StepTerms(np.broadcast_to(t.layers, shape), np.asarray(t.batch, dtype=float), t.weights_s - experts, t.kv_s,
                     t.compute_s, np.full(shape, ar), np.full(shape, float(pipeline_parallel - 1)), t.strict_floor_s,
                     np.broadcast_to(np.asarray(prefill_s, dtype=float), shape), experts,
                     np.broadcast_to(np.asarray(comm_s, dtype=float), shape), run,
                     np.full(shape, ar * (tensor_parallel - 1)))


def _parts(terms: StepTerms, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(memory-or-compute part [s], fixed part [s], compute-side rows) under parameters ``p``."""
    t_layer, t_step, q, u_w, u_kv, u_c, c_ar, t_hop, k_pf, u_moe, k_comm, t_exp, c_peer = p
    memory = (1 + u_w) * terms.weights_s + (1 + u_kv) * terms.kv_s + (1 + u_moe) * terms.experts_s
    compute = (1 + u_c) * terms.compute_s
    fixed = (t_layer * terms.layers + t_step + q * terms.batch + c_ar * terms.allreduces + t_hop * terms.hops
             + k_pf * terms.prefill_s + k_comm * terms.comm_s + t_exp * terms.experts_run
             + c_peer * terms.allreduce_peers)
    return np.maximum(memory, compute), fixed, compute > memory


def predict_step(terms: StepTerms, parameters: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(step time [s], its streaming part, its fixed part) under ``parameters``; never below the floor."""
    stream, fixed, _ = _parts(terms, np.asarray(parameters, dtype=float))
    return np.maximum(stream + fixed, terms.floor_s), stream, fixed


def _design(terms: StepTerms, compute: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    memory = ~compute
    n = len(terms)
    cols = [terms.layers * np.ones(n), np.ones(n), terms.batch * np.ones(n), np.where(memory, terms.weights_s, 0.0),
            np.where(memory, terms.kv_s, 0.0), np.where(compute, terms.compute_s, 0.0), terms.allreduces * np.ones(n),
            terms.hops * np.ones(n), terms.prefill_s * np.ones(n), np.where(memory, terms.experts_s, 0.0),
            terms.comm_s * np.ones(n), terms.experts_run * np.ones(n), terms.allreduce_peers * np.ones(n)]
    base = np.where(compute, terms.compute_s, terms.weights_s + terms.kv_s + terms.experts_s)
    return np.stack(cols, axis=1), base


def fit_step_model(terms: StepTerms, y: np.ndarray, fixed: dict[str, float] | None = None,
                   loss: str = "relative", prior: Prior | None = None,
                   groups: np.ndarray | list[str] | None = None) -> tuple[np.ndarray, tuple[str, ...]]:
    """Bounded least squares of the step model: (parameters, names fitted).

    ``fixed`` holds parameters at given values (e.g. ``{"u_c": 0.0}``); ``loss`` is
    ``"relative"`` (squared (y - ŷ) / y) or ``"log"`` (Huber loss of log(y / ŷ), reweighted;
    :mod:`.engine_fit`); ``prior`` (name -> (value, scale)) makes it a MAP fit whose pseudo-rows
    weigh :func:`~.engine_fit.prior_strength` of ``groups`` (a label per row: the rows of one
    model on one device; None: every row its own); without a prior the :data:`MAP_ONLY` terms
    stay 0."""
    y = np.asarray(y, dtype=float)
    names: list[tuple[str, ...]] = [()]
    fixed = {**({} if prior else dict.fromkeys(MAP_ONLY, 0.0)), **(fixed or {})}
    strength = prior_strength(np.arange(len(y)) if groups is None else groups) if prior else 0.0

    def fit(weights: np.ndarray) -> np.ndarray:
        p, names[0] = _fit_weighted(terms, y, fixed, weights, prior or {}, strength)
        return p

    p = irls(fit, lambda q: predict_step(terms, q)[0], y, loss)
    return p, names[0]


def _fit_weighted(terms: StepTerms, y: np.ndarray, fixed: dict[str, float], weights: np.ndarray,
                  prior: Prior, strength: float) -> tuple[np.ndarray, tuple[str, ...]]:
    compute = terms.compute_s > terms.weights_s + terms.kv_s + terms.experts_s
    p = np.zeros(len(PARAMETERS))
    free: list[int] = []
    for _ in range(30):
        design, base = _design(terms, compute)
        target = y - base
        for name, value in fixed.items():
            j = PARAMETERS.index(name)
            target = target - design[:, j] * value
        free = [j for j in range(len(PARAMETERS)) if PARAMETERS[j] not in fixed and np.any(design[:, j] != 0)]
        p = np.zeros(len(PARAMETERS))
        for j, name in enumerate(PARAMETERS):  # no row determines it: a MAP fit keeps its prior value
            p[j] = fixed.get(name, prior[name][0] if name in prior and j not in free else 0.0)
        if free:
            a, t, w = prior_rows(tuple(PARAMETERS[j] for j in free), prior, strength)
            p[free] = (weighted_nnls(np.vstack([design[:, free], a]), np.concatenate([target, t]),
                                     np.concatenate([weights, w])) if len(t) else
                       weighted_nnls(design[:, free], target, weights))
        _, _, new_compute = _parts(terms, p)
        if np.array_equal(new_compute, compute):
            break
        compute = new_compute
    return p, tuple(PARAMETERS[j] for j in free)


@dataclass(frozen=True)
class EngineProfile:
    """A fitted engine profile (see the module docstring); read with :func:`load_engine_profile`.

    Attributes
    ----------
    engine : str
        Its name (``"llama.cpp-cuda"``, ``"gpt-fast"``, ...).
    parameters : dict
        t_layer [s per layer], t_step [s], q [s per sequence], c_ar [s per all-reduce],
        t_hop [s per hand-off], k_pf and k_comm [1] (times the prefill and collective floors), t_exp
        [s per expert a device runs], c_peer [s per all-reduce per device beyond the first], and
        u_w, u_kv, u_c, u_moe [1] (efficiency η = 1 / (1 + u)).
    fitted : tuple of str
        Parameters the rows determined (the others are held at 0, or in a MAP fit at their prior
        value, and not fitted).
    band : dict
        Level -> (low, high) quantiles of log(measured / predicted) on unseen devices.
    band_method : str
        ``"leave-one-device-out"``, or on one device ``"ten-fold (one device)"`` (``"leave-one-row-out
        (one device)"`` below ten rows).
    devices : dict
        Device id -> {"rows": n, "memory_bandwidth": B/s} of the fitted rows.
    statistics : dict
        median, p90, max of |predicted / measured - 1| in-sample and on held-out devices, coverage.
    prior : dict
        sigma_scale (standard deviation of the log of a device's median measured / predicted
        ratio over the fitted devices) and noise (log residual once a device's own scale is
        known): the prior of a user calibration.
    sources : list of dict
        file, url, commit (and notes) of the measured rows.
    ttft : dict or None
        The time-to-first-token model where the engine has TTFT rows (:func:`fit_ttft`):
        ``parameters`` (t_first [s], u_prefill, u_queue, w_clients, k_step [1], t_token, t_others
        [s per token], k_arrive [1]; :mod:`.engine_ttft`), ``band``, ``rows``, ``loss``, ``fitted``,
        ``statistics`` (and its ``transfer``).
    parameter_prior : dict or None
        name -> (value, scale) the step model's MAP fit pulled toward (:data:`~.engine_fit.STEP_PRIOR`);
        None for a plain bounded least-squares fit.
    transfer : dict or None
        The band at a queried point (:mod:`.engine_band`): within-group quantiles of the held-out
        errors, the spread and count of their group offsets, the fitted models and, fitted on one
        device, the device-transfer sigma; None in profiles written before it (``band`` serves).
    """

    engine: str
    description: str
    parameters: dict[str, float]
    fitted: tuple[str, ...]
    band: dict[float, tuple[float, float]]
    band_method: str
    devices: dict[str, dict[str, float]]
    rows: int
    statistics: dict[str, float]
    prior: dict[str, float]
    sources: list[dict[str, str]] = field(default_factory=list)
    notes: str = ""
    ttft: dict[str, Any] | None = None
    parameter_prior: dict[str, tuple[float, float]] | None = None
    transfer: dict[str, Any] | None = None

    @property
    def vector(self) -> np.ndarray:
        return np.array([self.parameters[name] for name in PARAMETERS])

    def efficiency(self, stream: str) -> float:
        """η of ``"w"`` (weights), ``"moe"`` (MoE MLP weights), ``"kv"`` or ``"c"`` (compute) [1]."""
        return 1.0 / (1.0 + self.parameters[f"u_{stream}"])

    def nearest_device(self, bandwidth: float) -> tuple[str, float]:
        """The fitted device nearest in memory bandwidth and the ratio bandwidth / its bandwidth."""
        ids = sorted(self.devices, key=lambda d: abs(math.log(bandwidth / self.devices[d]["memory_bandwidth"])))
        return ids[0], bandwidth / self.devices[ids[0]]["memory_bandwidth"]

    def to_dict(self) -> dict[str, Any]:
        return {"format": PROFILE_FORMAT, "engine": self.engine, "description": self.description,
                "step_model": "T = t_layer*L + t_step + q*B + c_ar*N_allreduce + t_hop*(PP-1) + k_pf*T_prefill + "
                              "k_comm*T_comm + t_exp*N_experts_run + c_peer*N_allreduce*(TP-1) + "
                              "max(W/(eta_w*BW) + E/(eta_moe*BW) + K/(eta_kv*BW), F/(eta_c*P)), eta = 1/(1+u)",
                "parameters": self.parameters, "units": {"t_layer": "s", "t_step": "s", "q": "s", "c_ar": "s",
                                                          "t_hop": "s", "u_w": "1", "u_kv": "1", "u_c": "1", "k_pf": "1",
                                                          "u_moe": "1", "k_comm": "1", "t_exp": "s",
                                                          "c_peer": "s"},
                "efficiencies": {k: 1.0 / (1.0 + self.parameters[f"u_{k}"]) for k in ("w", "kv", "c", "moe")},
                "fitted": list(self.fitted), "band": {f"{k:g}": list(v) for k, v in self.band.items()},
                "band_method": self.band_method, "rows": self.rows, "devices": self.devices,
                "statistics": self.statistics, "prior": self.prior, "sources": self.sources, "notes": self.notes,
                "ttft": None if self.ttft is None else {
                    **self.ttft, "band": {f"{k:g}": list(v) for k, v in self.ttft["band"].items()},
                    "transfer": None if self.ttft.get("transfer") is None else transfer_to_dict(self.ttft["transfer"])},
                "parameter_prior": None if self.parameter_prior is None else {
                    k: list(v) for k, v in self.parameter_prior.items()},
                "transfer": None if self.transfer is None else transfer_to_dict(self.transfer)}

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "profile") -> EngineProfile:
        if data.get("format") != PROFILE_FORMAT:
            raise InvalidValueError(f"{where}: format", data.get("format"), repr(PROFILE_FORMAT))
        try:
            params = {k: float(data["parameters"].get(k, 0.0) if k in _ADDED else data["parameters"][k])
                      for k in PARAMETERS}  # profiles written before k_comm, t_exp or c_peer existed: 0
            stated = data.get("parameter_prior")
            parameter_prior = None if stated is None else {
                str(k): (float(v[0]), float(v[1])) for k, v in stated.items()}
            band = {float(k): (float(v[0]), float(v[1])) for k, v in data["band"].items()}
            bad = [k for k, v in params.items() if not (math.isfinite(v) and v >= 0)]
            if bad:
                raise ValueError(f"parameter {bad[0]} = {params[bad[0]]!r} is not a finite number >= 0")
            if set(band) != set(BAND_LEVELS) or not all(math.isfinite(lo) and math.isfinite(hi) and lo <= hi
                                                        for lo, hi in band.values()):
                raise ValueError(f"band needs levels {BAND_LEVELS} with finite low <= high")
            if not all(math.isfinite(float(v)) and float(v) > 0 for v in data["prior"].values()):
                raise ValueError("prior values must be finite and > 0")
            return cls(engine=str(data["engine"]), description=str(data.get("description", "")), parameters=params,
                       fitted=tuple(data["fitted"]), band=band, band_method=str(data["band_method"]),
                       devices={str(k): {"rows": float(v["rows"]), "memory_bandwidth": float(v["memory_bandwidth"])}
                                for k, v in data["devices"].items()},
                       rows=int(data["rows"]), statistics={k: float(v) for k, v in data["statistics"].items()},
                       prior={k: float(v) for k, v in data["prior"].items()}, sources=list(data.get("sources", [])),
                       notes=str(data.get("notes", "")), ttft=ttft_from_dict(data.get("ttft")),
                       parameter_prior=parameter_prior, transfer=transfer_from_dict(data.get("transfer")))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise InvalidValueError(where, f"{type(exc).__name__}: {exc}", "an engine profile as written by "
                                    "tools/fit_engine_profiles.py") from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1, sort_keys=False) + "\n", encoding="utf-8")


def fit_profile(engine: str, description: str, terms: StepTerms, y: np.ndarray, device_ids: list[str],
                bandwidths: dict[str, float], sources: list[dict[str, str]], notes: str = "",
                fixed: dict[str, float] | None = None, loss: str = "relative",
                models: list[str] | None = None, prior: Prior | None = None,
                offset_prior: float | None | str = "shipped") -> EngineProfile:
    """Fit the step model to rows of several devices and measure how it transfers between them.

    ``y`` are measured step times [s]; rows faster than their strict floor must be removed first.
    With ``models`` (each row's model), rows are also held out one model at a time, and the band
    is the spread of the leave-one-device-out and leave-one-model-out errors together, so it
    covers an unseen device or an unseen model; the statistics give both splits.  With ``prior``
    every fit is a MAP fit (:func:`fit_step_model`), its rows grouped by device and model.
    ``offset_prior`` [log] is σ₀ of the band's device and model offsets (:mod:`.engine_band`):
    ``"shipped"`` reads it from the shipped llama.cpp-cuda profile (:func:`device_prior`), None fits
    without one."""
    y = np.asarray(y, dtype=float)
    ids = np.asarray(device_ids)
    if len(y) < 3:
        raise InvalidValueError("rows", len(y), f"at least 3 rows to fit the {engine} profile")
    groups = np.array([f"{d}|{m}" for d, m in zip(device_ids, models or [""] * len(y))])
    p, fitted = fit_step_model(terms, y, fixed, loss, prior, groups)
    in_sample = np.log(y / predict_step(terms, p)[0])
    unique = sorted(set(device_ids))

    def fit_predict(train: np.ndarray, out: np.ndarray) -> np.ndarray:
        q, _ = fit_step_model(terms.take(train), y[train], fixed, loss, prior, groups[train])
        return predict_step(terms.take(out), q)[0]

    if len(unique) >= 2:
        method = "leave-one-device-out"
        held = held_out(ids, fit_predict, y)
        offset_groups = np.char.add("device:", ids.astype(str))
    else:  # one device: rows held out in ten interleaved folds (each row once; every row alone below 10)
        folds = min(10, len(y))
        method = "leave-one-row-out (one device)" if folds == len(y) else "ten-fold (one device)"
        held = held_out(np.arange(len(y)) % folds, fit_predict, y)
        offset_groups = np.full(len(y), NO_OFFSET)
    pooled, by_model, offset_groups, method = with_model_hold_outs(held, offset_groups, method, models, fit_predict, y)
    band = band_of(pooled)
    if isinstance(offset_prior, str):
        if offset_prior != "shipped":
            raise InvalidValueError("offset_prior", offset_prior, "a number >= 0 [log], None, or 'shipped'")
        offset_prior = device_prior(engine)
    regime = step_regime(terms.prefill_s, terms.floor_s)
    seen = held_out_seen(ids, models, by_model is not None)
    transfer = transfer_of(pooled, offset_groups, models, offset_prior,
                           np.concatenate([regime, regime]) if by_model is not None else regime, seen[1])
    transfer["batch"] = batch_term(np.asarray(terms.batch, dtype=float), y, fit_predict, transfer)
    # prior of a user calibration: how much one device's overall scale varies (log), and how far
    # a device's rows scatter once its own scale is known
    scales, residuals = [], []
    for d in unique:
        rows = ids == d
        ratio = np.log(y[rows] / predict_step(terms.take(rows), p)[0])
        scales.append(float(np.median(ratio)))
        residuals.append(ratio - np.median(ratio))
    spread = (band[0.9][1] - band[0.9][0]) / (2 * 1.645)
    sigma = float(np.std(scales, ddof=1)) if len(scales) >= 3 else spread
    noise = float(np.sqrt(np.mean(np.concatenate(residuals) ** 2)))
    statistics = {**error_statistics(in_sample, "in_sample_"), **error_statistics(held, "held_out_", band),
                  "devices": float(len(unique))}
    if by_model is not None:
        statistics.update(error_statistics(by_model, "held_out_model_", band), models=float(len(set(models or []))))
    statistics.update(hold_out_coverage(band, transfer, held, by_model, seen, regime))
    devices = {d: {"rows": float(np.sum(ids == d)), "memory_bandwidth": bandwidths[d]} for d in unique}
    return EngineProfile(engine=engine, description=description, parameters=dict(zip(PARAMETERS, map(float, p))),
                         fitted=fitted, band=band, band_method=method, devices=devices, rows=len(y),
                         statistics=statistics, prior={"sigma_scale": max(sigma, 0.02), "noise": max(noise, 0.01)},
                         sources=sources, notes=notes, parameter_prior=None if prior is None else dict(prior),
                         transfer=transfer)


def device_prior(engine: str) -> float | None:
    """σ₀ [log], the prior of a profile's device and model offsets (:mod:`.engine_band`): the
    spread of per-device scale factors (``prior.sigma_scale``) of the shipped
    :data:`~.engine_band.DEVICE_PRIOR_ENGINE` profile, read from its file alone (so a refit of every
    profile can read it); None for that profile itself, or where it is not shipped.

    >>> 0.1 < device_prior("vllm") < 0.3, device_prior("llama.cpp-cuda")
    (True, None)
    """
    path = profile_dir() / f"{DEVICE_PRIOR_ENGINE}.json"
    if engine == DEVICE_PRIOR_ENGINE or not path.is_file():
        return None
    sigma = float(json.loads(path.read_text(encoding="utf-8"))["prior"]["sigma_scale"])
    if not (math.isfinite(sigma) and sigma > 0):
        raise InvalidValueError(f"{path}: prior.sigma_scale", sigma, "a finite number > 0")
    return sigma


def profile_dir() -> Path:
    """The folder of the shipped engine profiles."""
    return Path(__file__).resolve().parent.parent / "engine_profiles"


def list_engine_profiles() -> list[str]:
    """Names of the shipped engine profiles.

    >>> "llama.cpp-cuda" in list_engine_profiles()
    True
    """
    return sorted(p.stem for p in profile_dir().glob("*.json"))


def load_engine_profile(engine: str | EngineProfile) -> EngineProfile:
    """A shipped engine profile by name (``"llama.cpp-cuda"``, ``"vllm"``, ...), or a path to one.

    >>> load_engine_profile("gpt-fast").engine
    'gpt-fast'
    """
    if isinstance(engine, EngineProfile):
        return engine
    path = Path(engine) if str(engine).endswith(".json") else profile_dir() / f"{engine}.json"
    if not path.is_file():
        raise InvalidValueError("engine", engine, "one of " + ", ".join(list_engine_profiles()) + " or a profile .json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidValueError("engine", str(path), f"a readable JSON engine profile ({exc})") from None
    if not isinstance(data, dict):
        raise InvalidValueError("engine", str(path), "a JSON object")
    return EngineProfile.from_dict(data, str(path))
