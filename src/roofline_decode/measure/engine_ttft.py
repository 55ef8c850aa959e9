"""The time-to-first-token model of an engine profile (:mod:`.engine_profile`): fitted on the
production runs' TTFT with serving_floor's terms.

.. math:: TTFT = t_{first} + (1 + u_{prefill}) T_{pf} + (1 + u_{queue}) T_{queue}
          + w_{clients} (C - 1) T_{pf} + k_{step} T_{step} + t_{token} N_{in}
          + t_{others} (C - 1) N_{in} + k_{arrive} \\frac{C - 1}{O} T_{pf}

with T_pf the request's prefill floor on its worker (plus the KV transfer of a disaggregated
run), T_queue the queue floor (clients waiting for a slot), C the client concurrency, T_step
serving_floor's TPOT floor (the steady step of the running batch, with the prompts riding along
it; a disaggregated run's decode step), N_in the prompt tokens and O the output tokens.
Closed-loop clients under continuous batching: a new request waits for a slot (T_queue), for
the step in flight to end and for its prompt's chunks to ride along the running batch's steps
(k_step steps of the floor: the step runs slower than its floor, and a chunked prompt spreads
over steps), behind the prefills of other arrivals, either as the share w_clients of the C − 1
others' prefills (a burst of arrivals) or as those arriving while it waits (each of the C − 1
others sends a prompt every O steps; k_arrive / (1 + u_prefill) is the steps of arrivals whose
prefills, at the prefill's own efficiency, go before it), and through the host's per-token work
on the prompt (t_token: tokenization and input processing, which no device speeds up) and on
the prompts of the other clients that arrive with it (t_others per token of each of the C − 1
others: a burst of arrivals is tokenized one after another).  Every parameter is >= 0
(η = 1 / (1 + u) <= 1), so the model is never below T_pf + T_queue;
:func:`~roofline_decode.measure.expected.expected` also keeps it at or above serving_floor's
TTFT (which waits for at least one step).

Which of the optional terms (:data:`TTFT_OPTIONAL`) an engine fits, and with which loss, is
chosen by the held-out splits of ``benchmarks/expected_accuracy.py`` (``TTFT_TERMS`` and
``TTFT_LOSS`` of :mod:`.engine_rows_production`): a term is fitted where it predicted unseen
devices and unseen models better, and is 0 elsewhere.  Besides the losses of
:mod:`.engine_fit`, the fit has ``"log-exact"``: the Huber loss (h = 0.5) of r = log(y / ŷ)
of the ``"log"`` loss, solved with the exact IRLS weight ψ(r) / (ŷ (y − ŷ)), ψ(r) = clip(r, −h,
h), where ``"log"`` takes the Gauss-Newton weight min(1, h / |r|) / ŷ² (exact only near
ŷ = y: its (y − ŷ) / ŷ overstates the log error of an under-prediction and understates that of
an over-prediction, so on rows far off it leans high).  Symmetric in log(y / ŷ), where the
relative error charges an under-prediction at most 1 and an over-prediction any amount; the
Huber tail keeps runs far from the model (a queue the floor does not see) from steering it.

Tried on the production rows and left out, as they did not predict unseen devices and models
better (median TTFT error held out by device both ways and by model): the others' prefills
weighted by the share of its time a request spends prefilling, T_pf / (T_pf + (O − 1) T_step),
in place of all C − 1 of them; the others' prefills spread over the P prefill workers of a
disaggregated run, (C − 1) T_pf / P (worse on TensorRT-LLM and SGLang), and so the arrivals
(SGLang: 39.8 / 30.1 / 32.0 % -> 46.7 / 33.0 / 34.1 %); the arrivals term for vLLM and
TensorRT-LLM (no better, or worse on a split); a queueing wait T_pf ρ with the prefill load
ρ = C T_pf / (O T_step P); a separate efficiency of the MoE models' prefill; a queue floor with less room for the KV cache than the
floor's (engines reserve memory); a w_clients of its own for each benchmark export of the
rows; a fixed host time per other client, (C − 1) (vLLM with the exact log loss: 22.6 / 17.0 /
25.5 % -> 23.5 / 14.9 / 24.9 %, worse on the first split); the engine's expected step in place
of the floor's (it ties the TTFT fit to the TPOT fit; with the shipped TPOT profile, itself
fitted on the held-out rows, vLLM gained 2-5 points and TensorRT-LLM lost on its unseen H200);
the Gauss-Newton ``"log"`` loss of :mod:`.engine_fit` and its L1 limit (they fit w_clients near
1 and over-predict the large concurrencies of unseen devices); the exact log loss for
TensorRT-LLM.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..errors import InvalidValueError
from ._nnls import weighted_nnls
from .engine_band import (NO_OFFSET, held_out_seen, hold_out_coverage, transfer_from_dict, transfer_of,
                          ttft_regime, with_model_hold_outs)
from .engine_fit import HUBER_LOG, LOSSES, band_of, error_statistics, held_out, irls

__all__ = ["TTFT_PARAMETERS", "TTFT_OPTIONAL", "TTFT_LOSSES", "predict_ttft", "fit_ttft", "ttft_from_dict"]

#: Parameters of the TTFT model (module docstring), in the order of the fit.
TTFT_PARAMETERS = ("t_first", "u_prefill", "u_queue", "w_clients", "k_step", "t_token", "t_others", "k_arrive")
#: The parameters an engine fits only where its held-out splits say so (0 otherwise; a profile
#: file without them, written before they existed, reads them as 0); t_first, u_prefill and
#: u_queue are always fitted.
TTFT_OPTIONAL = ("w_clients", "k_step", "t_token", "t_others", "k_arrive")
#: Losses of the TTFT fit: those of :mod:`.engine_fit` and ``"log-exact"`` (module docstring).
TTFT_LOSSES = (*LOSSES, "log-exact")
_ROUNDS = 40
#: The column each optional parameter multiplies needs these arguments.
_NEEDS = {"w_clients": (), "k_step": ("step_s",), "t_token": ("prompt_tokens",), "t_others": ("prompt_tokens",),
          "k_arrive": ("output_tokens",)}


def ttft_from_dict(data: Any) -> dict[str, Any] | None:
    """The ``ttft`` entry of a profile file, checked."""
    if data is None:
        return None
    given = data["parameters"]
    params = {k: float(given[k] if k in given or k not in TTFT_OPTIONAL else 0.0) for k in TTFT_PARAMETERS}
    if not all(math.isfinite(v) and v >= 0 for v in params.values()):
        raise ValueError("TTFT parameters must be finite numbers >= 0")
    return {**data, "parameters": params,
            "band": {float(k): (float(v[0]), float(v[1])) for k, v in data["band"].items()},
            "transfer": transfer_from_dict(data.get("transfer"))}


def _columns(prefill_s: Any, queue_s: Any, clients: Any, step_s: Any, prompt_tokens: Any,
             output_tokens: Any) -> list[np.ndarray]:
    """The model's columns, one per parameter (an argument given as None: its columns are 0)."""
    t_pf = np.asarray(prefill_s, dtype=float)
    others = np.asarray(clients, dtype=float) - 1
    zero = np.zeros(())
    step = zero if step_s is None else np.asarray(step_s, dtype=float)
    n_in = zero if prompt_tokens is None else np.asarray(prompt_tokens, dtype=float)
    arrivals = zero if output_tokens is None else others / np.asarray(output_tokens, dtype=float) * t_pf
    return [np.ones(()), t_pf, np.asarray(queue_s, dtype=float), others * t_pf, step, n_in, others * n_in, arrivals]


def predict_ttft(parameters: dict[str, float], prefill_s: Any, queue_s: Any, clients: Any,
                 step_s: Any = None, prompt_tokens: Any = None, output_tokens: Any = None) -> np.ndarray:
    """TTFT [s] of the module's model from serving_floor's prefill (+ KV transfer) floor T_pf,
    its queue floor T_queue, the client concurrency C, its TPOT floor T_step [s], the prompt
    tokens N_in and the output tokens O (broadcast; ``step_s``, ``prompt_tokens`` and
    ``output_tokens`` are needed where a parameter that multiplies them is not 0); never below
    T_pf + T_queue (every parameter >= 0).

    Llama-3.1-70B fp8 on 4 H200, 1024 tokens in and out (serving_floor: prefill floor 17.9 ms,
    TPOT floor 3.7 ms), 8 clients, none queued, with the shipped vLLM TTFT parameters (the
    production CSV's vLLM run of this layout at 8 clients measured 101 ms):

    >>> from roofline_decode.measure.engine_profile import load_engine_profile
    >>> p = load_engine_profile("vllm").ttft["parameters"]
    >>> t = float(predict_ttft(p, 0.0179, 0.0, 8, 0.0037, 1024, 1024))
    >>> terms = (p["t_first"] + (1 + p["u_prefill"]) * 0.0179 + p["w_clients"] * 7 * 0.0179 + p["k_step"] * 0.0037
    ...          + (p["t_token"] + p["t_others"] * 7) * 1024 + p["k_arrive"] * 7 / 1024 * 0.0179)
    >>> abs(t - terms) < 1e-12, round(t * 1e3)
    (True, 113)
    """
    given = {"step_s": step_s, "prompt_tokens": prompt_tokens, "output_tokens": output_tokens}
    for parameter, needs in _NEEDS.items():
        for name in needs:
            if given[name] is None and parameters.get(parameter, 0.0) != 0.0:
                raise InvalidValueError(name, None, f"a value (the profile's {parameter} is "
                                                    f"{parameters[parameter]:.3g}, not 0)")
    t_first, t_pf, t_q, *rest = _columns(prefill_s, queue_s, clients, step_s, prompt_tokens, output_tokens)
    out: np.ndarray = (parameters["t_first"] + (1 + parameters["u_prefill"]) * t_pf
                       + (1 + parameters["u_queue"]) * t_q)
    for name, column in zip(TTFT_PARAMETERS[3:], rest):
        if parameters.get(name, 0.0) != 0.0:
            out = out + parameters[name] * column
    return out


def _log_exact_irls(fit: Callable[[np.ndarray], np.ndarray], predict: Callable[[np.ndarray], np.ndarray],
                    y: np.ndarray) -> np.ndarray:
    """Parameters of ``fit(weights)`` for the ``"log-exact"`` loss (module docstring): from the
    relative weights 1 / y², reweighted by ψ(r) / (ŷ (y − ŷ)) (1 / ŷ² where ŷ = y) until they
    settle (at most :data:`_ROUNDS` rounds)."""
    p = fit(1.0 / y**2)
    for _ in range(_ROUNDS):
        predicted = predict(p)
        gap = y - predicted
        off = np.abs(gap) > 1e-12 * y
        psi = np.clip(np.log(y / predicted), -HUBER_LOG, HUBER_LOG)
        new = fit(np.where(off, psi / (predicted * np.where(off, gap, 1.0)), 1.0 / predicted**2))
        done = np.allclose(new, p, rtol=1e-9, atol=1e-15)
        p = new
        if done:
            break
    return p


def fit_ttft(measured_s: np.ndarray, prefill_s: np.ndarray, queue_s: np.ndarray, clients: np.ndarray,
             device_ids: list[str], models: list[str] | None = None, loss: str = "relative", *,
             step_s: np.ndarray | None = None, prompt_tokens: np.ndarray | None = None,
             output_tokens: np.ndarray | None = None, terms: tuple[str, ...] = ("w_clients",),
             device_sigma: float | None = None) -> dict[str, Any]:
    """Fit the TTFT model (every parameter >= 0) by bounded least squares (``loss``: one of
    :data:`TTFT_LOSSES`, those of :mod:`.engine_fit` or ``"log-exact"``); band and statistics
    from leave-one-device-out errors, pooled with leave-one-model-out errors when ``models``
    are given (in-sample on one device); ``transfer`` the band at a queried point
    (:mod:`.engine_band`; ``device_sigma`` [log]: the device-transfer term of a one-device fit).
    ``terms``: the optional parameters
    (:data:`TTFT_OPTIONAL`) to fit beside t_first, u_prefill and u_queue, with the columns they
    need, ``step_s`` (T_step [s]), ``prompt_tokens`` (N_in) and ``output_tokens`` (O); the
    others stay 0."""
    if loss not in TTFT_LOSSES:
        raise InvalidValueError("loss", loss, " or ".join(TTFT_LOSSES))
    given = {"step_s": step_s, "prompt_tokens": prompt_tokens, "output_tokens": output_tokens}
    for term in terms:
        if term not in TTFT_OPTIONAL:
            raise InvalidValueError("terms", term, "one of " + ", ".join(TTFT_OPTIONAL))
        for name in _NEEDS[term]:
            if given[name] is None:
                raise InvalidValueError(name, None, f"an array like measured_s (term {term} is fitted)")
    y = np.asarray(measured_s, dtype=float)
    t_pf = np.asarray(prefill_s, dtype=float)
    t_q = np.asarray(queue_s, dtype=float)
    design = np.stack([np.broadcast_to(col, y.shape)
                       for col in _columns(t_pf, t_q, clients, step_s, prompt_tokens, output_tokens)], axis=1)
    active = np.array([True] * 3 + [t in terms for t in TTFT_PARAMETERS[3:]])

    def fit(rows: np.ndarray) -> dict[str, float]:
        def solve(weights: np.ndarray) -> np.ndarray:
            beta = np.zeros(len(TTFT_PARAMETERS))
            columns = np.ascontiguousarray(design[rows][:, active])  # contiguous: the same rounding as a 4-column fit
            beta[active] = weighted_nnls(columns, y[rows] - t_pf[rows] - t_q[rows], weights)
            return beta

        def predict_rows(b: np.ndarray) -> np.ndarray:
            return linear(b, rows)

        beta = (_log_exact_irls(solve, predict_rows, y[rows]) if loss == "log-exact"
                else irls(solve, predict_rows, y[rows], loss))
        return dict(zip(TTFT_PARAMETERS, map(float, beta)))

    def linear(beta: np.ndarray, rows: np.ndarray) -> np.ndarray:
        out: np.ndarray = t_pf[rows] + t_q[rows] + design[rows] @ beta
        return out

    def predict(params: dict[str, float], rows: np.ndarray) -> np.ndarray:
        return linear(np.array([params[k] for k in TTFT_PARAMETERS]), rows)

    everything = np.ones(len(y), dtype=bool)
    params = fit(everything)
    in_sample = np.log(y / predict(params, everything))
    several = len(set(device_ids)) > 1
    ids = np.asarray(device_ids).astype(str)
    held = held_out(ids, lambda train, out: predict(fit(train), out), y) if several else in_sample
    method = "leave-one-device-out" if several else "in-sample (one device)"
    groups = np.char.add("device:", ids) if several else np.full(len(y), NO_OFFSET)
    pooled, by_model, groups, method = with_model_hold_outs(held, groups, method, models,
                                                            lambda train, out: predict(fit(train), out), y)
    band = band_of(pooled)
    regime = ttft_regime(clients if np.ndim(clients) else np.full(len(y), clients))
    seen = held_out_seen(ids, models, by_model is not None)
    transfer = transfer_of(pooled, groups, models, device_sigma,
                           np.concatenate([regime, regime]) if by_model is not None else regime, seen[1])
    statistics = {**error_statistics(in_sample, "in_sample_"), **error_statistics(held, "held_out_", band)}
    if by_model is not None:
        statistics.update(error_statistics(by_model, "held_out_model_", band))
    statistics.update(hold_out_coverage(band, transfer, held, by_model, seen, regime))
    return {"parameters": params, "band": band, "rows": int(len(y)), "band_method": method, "loss": loss,
            "fitted": [p for p, a in zip(TTFT_PARAMETERS, active) if a], "statistics": statistics,
            "transfer": transfer}
