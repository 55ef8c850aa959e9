"""The time-to-first-token model of an engine profile (:mod:`.engine_profile`): fitted on the
production runs' TTFT with serving_floor's terms.

.. math:: TTFT = t_{first} + (1 + u_{prefill}) T_{pf} + (1 + u_{queue}) T_{queue}
          + w_{clients} (C - 1) T_{pf}

with T_pf the request's prefill floor on its worker (plus the KV transfer of a disaggregated
run), T_queue the queue floor (clients waiting for a slot) and C the client concurrency.
Closed-loop clients: a new request waits for a slot (T_queue) and behind the prefills of other
arrivals (the share w_clients of the C − 1 others' prefills; the floor lets prompts ride along
decode steps and waits for none).  Every parameter is >= 0 (η = 1 / (1 + u) <= 1).

Tried on the production rows and left out, as they did not predict unseen devices or models
better (median TTFT error held out by device and by model, both losses): a wait for the steps
in flight (k_step x the TPOT floor: a request arriving mid-step, a chunked prefill spread over
steps), and the others' prefills weighted by the share of its time a request spends prefilling,
T_pf / (T_pf + (O - 1) T_step), in place of all C - 1 of them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._nnls import weighted_nnls
from .engine_band import NO_OFFSET, held_out_seen, transfer_coverage, transfer_from_dict, transfer_of
from .engine_fit import band_of, error_statistics, held_out, irls

__all__ = ["TTFT_PARAMETERS", "predict_ttft", "fit_ttft", "ttft_from_dict"]

#: Parameters of the TTFT model (module docstring), in the order of the fit.
TTFT_PARAMETERS = ("t_first", "u_prefill", "u_queue", "w_clients")


def ttft_from_dict(data: Any) -> dict[str, Any] | None:
    """The ``ttft`` entry of a profile file, checked."""
    if data is None:
        return None
    params = {k: float(data["parameters"][k]) for k in TTFT_PARAMETERS}
    if not all(math.isfinite(v) and v >= 0 for v in params.values()):
        raise ValueError("TTFT parameters must be finite numbers >= 0")
    return {**data, "parameters": params,
            "band": {float(k): (float(v[0]), float(v[1])) for k, v in data["band"].items()},
            "transfer": transfer_from_dict(data.get("transfer"))}


def predict_ttft(parameters: dict[str, float], prefill_s: Any, queue_s: Any, clients: Any) -> np.ndarray:
    """TTFT [s] of the module's model from serving_floor's prefill (+ KV transfer) floor T_pf,
    its queue floor T_queue and the client concurrency C (broadcast); never below T_pf + T_queue
    (every parameter >= 0).

    Llama-3.1-70B fp8 on 4 H200 (prefill floor of a 1024-token prompt 17.9 ms), 8 clients, none
    queued, with the shipped vLLM TTFT parameters:

    >>> from roofline_decode.measure.engine_profile import load_engine_profile
    >>> p = load_engine_profile("vllm").ttft["parameters"]
    >>> t = float(predict_ttft(p, 0.0179, 0.0, 8))
    >>> t == p["t_first"] + (1 + p["u_prefill"]) * 0.0179 + p["w_clients"] * 7 * 0.0179, round(t * 1e3)
    (True, 124)
    """
    t_pf = np.asarray(prefill_s, dtype=float)
    out: np.ndarray = (parameters["t_first"] + (1 + parameters["u_prefill"]) * t_pf
                       + (1 + parameters["u_queue"]) * np.asarray(queue_s, dtype=float)
                       + parameters["w_clients"] * (np.asarray(clients, dtype=float) - 1) * t_pf)
    return out


def fit_ttft(measured_s: np.ndarray, prefill_s: np.ndarray, queue_s: np.ndarray, clients: np.ndarray,
             device_ids: list[str], models: list[str] | None = None, loss: str = "relative",
             device_sigma: float | None = None) -> dict[str, Any]:
    """Fit the TTFT model (every parameter >= 0) by bounded least squares (``loss`` as for the
    step: :mod:`.engine_fit`); band and statistics from leave-one-device-out errors, pooled with
    leave-one-model-out errors when ``models`` are given (in-sample on one device); ``transfer``
    the band at a queried point (:mod:`.engine_band`; ``device_sigma`` [log]: the device-transfer
    term of a one-device fit)."""
    y = np.asarray(measured_s, dtype=float)
    t_pf = np.asarray(prefill_s, dtype=float)
    t_q = np.asarray(queue_s, dtype=float)
    c = np.asarray(clients, dtype=float)
    design = np.stack([np.ones_like(y), t_pf, t_q, (c - 1) * t_pf], axis=1)

    def fit(rows: np.ndarray) -> dict[str, float]:
        def solve(weights: np.ndarray) -> np.ndarray:
            return weighted_nnls(design[rows], y[rows] - t_pf[rows] - t_q[rows], weights)

        beta = irls(solve, lambda b: t_pf[rows] + t_q[rows] + design[rows] @ b, y[rows], loss)
        return dict(zip(TTFT_PARAMETERS, map(float, beta)))

    def fit_predict(train: np.ndarray, out: np.ndarray) -> np.ndarray:
        return predict_ttft(fit(train), t_pf[out], t_q[out], c[out])

    everything = np.ones(len(y), dtype=bool)
    params = fit(everything)
    in_sample = np.log(y / predict_ttft(params, t_pf, t_q, c))
    several = len(set(device_ids)) > 1
    ids = np.asarray(device_ids).astype(str)
    held = held_out(ids, fit_predict, y) if several else in_sample
    method = "leave-one-device-out" if several else "in-sample (one device)"
    groups = np.char.add("device:", ids) if several else np.full(len(y), NO_OFFSET)
    pooled, by_model = held, None
    if models is not None and len(set(models)) >= 2:
        by_model = held_out(np.asarray(models), fit_predict, y)
        pooled = np.concatenate([held, by_model])
        groups = np.concatenate([groups, np.char.add("model:", np.asarray(models).astype(str))])
        method += " and leave-one-model-out, pooled"
    band = band_of(pooled)
    transfer = transfer_of(pooled, groups, models, device_sigma)
    seen_d, seen_m = held_out_seen(ids, models, by_model is not None)
    n = len(y)
    statistics = {**error_statistics(in_sample, "in_sample_"), **error_statistics(held, "held_out_", band)}
    statistics["held_out_coverage_90"] = transfer_coverage(band, transfer, held, seen_d[:n], seen_m[:n])
    if by_model is not None:
        statistics.update(error_statistics(by_model, "held_out_model_", band))
        statistics["held_out_model_coverage_90"] = transfer_coverage(band, transfer, by_model, seen_d[n:], seen_m[n:])
    return {"parameters": params, "band": band, "rows": int(len(y)), "band_method": method, "loss": loss,
            "statistics": statistics, "transfer": transfer}
