"""The fits the decode-bandwidth studies report.

* per batch, step time against context as ``a + b·T`` with R²; with the model's KV bytes per
  token the slope gives the bandwidth the KV reads sustain, ``B · kv_bytes_per_token / b``;
* the saturation onset: the smallest batch beyond which aggregate tokens/s gains less than a
  chosen fraction per doubling of the batch;
* the sustained bandwidth: the slope of step time against bytes moved (``T = t0 + bytes / BW_s``),
  which is :func:`~roofline_decode.measure.calibrate`'s η·BW.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .. import formulas as f
from ..errors import InvalidValueError
from ..specs.model import Model
from .rows import MeasurementRow

__all__ = ["ContextFit", "SaturationFit", "fit_context", "saturation_onset", "sustained_bandwidth"]


@dataclass(frozen=True)
class ContextFit:
    """Step time = intercept + slope · context at one batch, fitted at ``contexts``.

    ``r_squared`` is the fit's coefficient of determination, ``n`` the number of rows fitted."""

    batch: float
    intercept_s: float
    slope_s_per_token: float
    r_squared: float
    n: int
    contexts: tuple[float, ...] = ()

    def kv_bytes_per_context_token(self, model: Model) -> float:
        r"""KV bytes one sequence's step reads more per token of context [B], over the fitted contexts.

        .. math:: \frac{dQ_{kv}}{dT} = m_{kv}\,\frac{dN_{pos}}{dT}, \quad
                  N_{pos} = L_{global}\,T + L_{sliding}\,\min(T, W)

        Past the window only the global layers attend to more positions, so the derivative is
        the least-squares slope of the KV bytes read at the fitted contexts against context (the
        same line the step times were fitted with): ``kv_bytes_per_token`` for a model without
        sliding layers or below the window, ``m_kv · L_global`` past it (Gemma-2-9B: half,
        Gemma-3-1B: 4 of 26 layers), 0 when every layer slides (Mistral-7B past 4096).
        """
        if len(set(self.contexts)) < 2:
            raise InvalidValueError("contexts", self.contexts, "the two or more distinct contexts the fit spans "
                                    "(fit_context records them)")
        t = np.asarray(self.contexts, dtype=float)
        positions = f.attended_positions(t, model.num_global_layers, model.num_sliding_layers, model.window)
        kv = positions * model.kv_bytes_per_token_per_layer
        centred = t - t.mean()
        slope = float(np.sum(centred * (kv - kv.mean())) / np.sum(centred * centred))  # least squares
        return max(slope, 0.0)

    def kv_bandwidth(self, model: Model) -> float:
        """Bandwidth the KV reads sustain [B/s]: B · (KV bytes per context token) / slope.

        The KV bytes per context token are :meth:`kv_bytes_per_context_token` (only the layers
        whose attended positions grow count); inf if the fitted slope is <= 0; 0 when no layer's
        reads grow over the fitted contexts (the slope then is not KV traffic).

        Examples
        --------
        Gemma-2-9B past its 4096-token window: only its 21 global layers read more per token
        (21 · 8192 B), half of the 42 · 8192 B of KV a token adds.

        >>> from roofline_decode import load_model
        >>> rows = [MeasurementRow(batch=1, context=t, step_time_s=0.01 + t * 172032 / 1e12)
        ...         for t in (8192, 16384, 32768)]
        >>> round(fit_context(rows)[0].kv_bandwidth(load_model("gemma-2-9b")) / 1e12, 6)
        1.0
        """
        if self.slope_s_per_token <= 0:
            return math.inf
        return self.batch * self.kv_bytes_per_context_token(model) / self.slope_s_per_token


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    slope, intercept = np.polyfit(x, y, 1)
    total = float(np.sum((y - y.mean()) ** 2))
    residual = float(np.sum((y - (intercept + slope * x)) ** 2))
    r2 = 1.0 - residual / total if total > 0 else 1.0
    return float(intercept), float(slope), r2


def fit_context(rows: list[MeasurementRow]) -> list[ContextFit]:
    """For each batch with at least two distinct contexts, fit step time = a + b·T.

    Examples
    --------
    Qwen2.5-7B on a B200 at batch 1 (knlp context scaling): about 8 ms + 0.04 us per token.

    >>> times = {1024: 8.142, 2048: 8.096, 4096: 8.439, 8192: 9.012, 16384: 9.348, 32768: 9.759, 65536: 10.85}
    >>> rows = [MeasurementRow(batch=1, context=t, step_time_s=ms * 1e-3) for t, ms in times.items()]
    >>> fit = fit_context(rows)[0]
    >>> round(fit.intercept_s * 1e3, 2), round(fit.slope_s_per_token * 1e9, 1), round(fit.r_squared, 3)
    (8.34, 40.7, 0.927)
    """
    by_batch: dict[float, list[MeasurementRow]] = {}
    for row in rows:
        by_batch.setdefault(row.batch, []).append(row)
    fits = []
    for batch in sorted(by_batch):
        group = by_batch[batch]
        x = np.array([r.context for r in group])
        if len(np.unique(x)) < 2:
            continue
        y = np.array([r.step_time for r in group])
        intercept, slope, r2 = _line(x, y)
        fits.append(ContextFit(batch=batch, intercept_s=intercept, slope_s_per_token=slope, r_squared=r2, n=len(group),
                               contexts=tuple(float(c) for c in x)))
    if not fits:
        raise InvalidValueError("rows", f"{len(rows)} rows", "at least one batch with two or more distinct contexts")
    return fits


@dataclass(frozen=True)
class SaturationFit:
    """Where aggregate tokens/s stops growing with the batch."""

    fraction: float
    onset_batch: float | None
    batches: tuple[float, ...]
    gains_per_doubling: tuple[float, ...]

    @property
    def saturated(self) -> bool:
        return self.onset_batch is not None


def saturation_onset(batch: ArrayLike, tokens_per_s: ArrayLike, fraction: float = 0.1) -> SaturationFit:
    """The first batch B_i whose step to the next measured batch gains less than ``fraction`` per doubling.

    Between consecutive batches B_i < B_j the gain per doubling is
    ``(S_j / S_i) ** (1 / log2(B_j / B_i)) - 1`` (S: aggregate tokens/s), so uneven batch grids
    (16, 24, 32, 48 ...) compare fairly.  ``onset_batch`` is None when every step gains at least
    ``fraction``.  Measured sweeps are noisy (a later step may gain again): the gains are kept in
    ``gains_per_doubling`` so the onset can be judged.

    Examples
    --------
    knlp's B200 saturation sweep (Qwen2.5-7B, T = 4096): going from batch 48 to 64 gains 2.4 %
    per doubling (64 to 96 gains 26 % again).

    >>> fit = saturation_onset([1, 2, 4, 8, 16, 24, 32, 48, 64, 96],
    ...                        [118.7, 230.9, 452.3, 809.3, 1514.7, 2136.7, 2587.5, 3368.4, 3401.6, 3886.7])
    >>> fit.onset_batch, [round(g, 3) for g in fit.gains_per_doubling[-2:]]
    (48.0, [0.024, 0.256])
    """
    b = np.asarray(batch, dtype=float).ravel()
    s = np.asarray(tokens_per_s, dtype=float).ravel()
    if b.shape != s.shape or b.size < 2:
        raise InvalidValueError("batch", b.size, "at least two (batch, tokens_per_s) pairs of equal length")
    if not (np.all(b > 0) and np.all(s > 0) and np.all(np.isfinite(b)) and np.all(np.isfinite(s))):
        raise InvalidValueError("tokens_per_s", s.tolist(), "finite batches and tokens/s > 0")
    if not 0 < fraction < 1:
        raise InvalidValueError("fraction", fraction, "a gain per doubling in (0, 1)")
    order = np.argsort(b)
    b, s = b[order], s[order]
    if np.any(np.diff(b) == 0):
        raise InvalidValueError("batch", b.tolist(), "distinct batch sizes")
    gains = (s[1:] / s[:-1]) ** (1.0 / np.log2(b[1:] / b[:-1])) - 1.0
    below = np.flatnonzero(gains < fraction)
    onset = float(b[below[0]]) if below.size else None
    return SaturationFit(fraction=fraction, onset_batch=onset, batches=tuple(float(x) for x in b),
                         gains_per_doubling=tuple(float(g) for g in gains))


def sustained_bandwidth(bytes_moved: ArrayLike, step_time_s: ArrayLike) -> tuple[float, float]:
    """(BW_s [B/s], t0 [s]) from an ordinary least-squares line step_time = t0 + bytes / BW_s.

    Examples
    --------
    >>> bw, t0 = sustained_bandwidth([1e9, 2e9, 4e9], [1.5e-3, 2.5e-3, 4.5e-3])
    >>> round(bw / 1e12, 6), round(t0 * 1e3, 6)
    (1.0, 0.5)
    """
    x = np.asarray(bytes_moved, dtype=float).ravel()
    y = np.asarray(step_time_s, dtype=float).ravel()
    if x.shape != y.shape or len(np.unique(x)) < 2:
        raise InvalidValueError("bytes_moved", x.size, "at least two rows with distinct bytes moved")
    intercept, slope, _ = _line(x, y)
    if slope <= 0:
        raise InvalidValueError("step_time_s", y.tolist(), "step times that grow with bytes moved")
    return 1.0 / slope, intercept
