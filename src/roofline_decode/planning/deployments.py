"""``deployments``: search every layout of a model on N GPUs for the floor-optimal deployments.

AIConfigurator-style search, on floors: every aggregated deployment (replicas of one
:class:`~roofline_decode.Parallel` layout) and every disaggregated one (prefill workers of one
layout and decode workers of another) over a grid of client counts, each point a floor of
TTFT and TPOT and a ceiling of output tokens/s per GPU and per user.  The Pareto envelope of
tokens/s per GPU against tokens/s per user is an **upper bound**: no real deployment of that
model on those GPUs, at that input and output length, gets above it.  Under SLOs (TTFT <=
``ttft``, TPOT <= ``tpot``) the best point is the most tokens/s per GPU a floor allows: a real
deployment can miss it (it needs the floor's perfect overlap and even splits), never beat it.

Examples
--------
>>> r = deployments("deepseek-v3", "h200-sxm", 16, 1024, 1024, ttft=2.0, tpot=0.05)
>>> print(r.answer())  # doctest: +ELLIPSIS
DeepSeek-V3 on 16 x H200 SXM 141GB: ...; floors
>>> r.best is not None and r.best.ttft_s <= 2.0 and r.best.tpot_s <= 0.05
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidValueError
from ..floors.records import ToDataFrame
from .deployments_search import (COLUMNS, MODES, Stack, best_index, candidate_layouts, chunks_by_size, concat,
                                 envelope_mask, evaluate_chunk, meets, take)

if TYPE_CHECKING:
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model
    from ..specs.parallel import Parallel

__all__ = ["deployments", "Deployments", "DeploymentPoint", "DEFAULT_CONCURRENCY", "SCHEDULERS"]

#: Client counts per replica (aggregated) or per decode worker (disaggregated) searched by default;
#: each layout also gets the largest batch that fits it.
DEFAULT_CONCURRENCY = tuple(float(2**k) for k in range(13))  # 1 ... 4096
#: How the chunks of the search run: one after another here, or mapped on dask.
SCHEDULERS = ("local", "dask")
#: Points a chunk of decode layouts broadcasts at most, by default (its arrays stay near 100 MB).
CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class DeploymentPoint:
    """One deployment at one client count (SI units: seconds, tokens/s, requests/s).

    Aggregated: ``replicas`` copies of ``layout`` (``prefill_layout`` = ``decode_layout``);
    disaggregated: ``prefill_workers`` x ``prefill_layout`` + ``decode_workers`` x
    ``decode_layout``.  ``devices`` counts the GPUs used; per-GPU rates divide by it.  Every
    point fits: its layouts hold the weights, and ``running`` sequences (what the KV cache holds at
    the mean decode context, at most the clients) run while the other clients queue (``queued``).
    ``usd_per_million_tokens``: output tokens, at the price per device-hour (None without one)."""

    mode: str
    prefill_layout: str
    decode_layout: str
    prefill_workers: int
    decode_workers: int
    devices: int
    concurrency: int
    running: float
    ttft_s: float
    tpot_s: float
    requests_per_s: float
    tokens_per_s_per_gpu: float
    tokens_per_s_per_user: float
    usd_per_million_tokens: float | None

    @property
    def queued(self) -> float:
        """Clients waiting for a slot: the KV cache holds ``running`` sequences [1]."""
        return max(self.concurrency - self.running, 0.0)

    @property
    def label(self) -> str:
        """``"2 x (tp8 ep8)"`` or ``"1 x (tp8) prefill + 1 x (dp8 ep8) decode"``."""
        if self.mode == "aggregated":
            return f"{self.prefill_workers} x ({self.prefill_layout})"
        return f"{self.prefill_workers} x ({self.prefill_layout}) prefill + {self.decode_workers} x ({self.decode_layout}) decode"

    def as_record(self) -> dict[str, Any]:
        record: dict[str, Any] = dict(self.__dict__)
        record["label"] = self.label
        record["queued"] = self.queued
        return {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in record.items()}


@dataclass(frozen=True)
class Deployments(ToDataFrame):
    """Result of :func:`deployments`: the points (columns of :data:`~.deployments_search.COLUMNS`),
    the floor-optimal frontier and the best point under the SLOs.

    ``points`` holds the points the frontier, the frontier under the SLOs and the best point can
    be (every point searched with ``keep_all``; the frontier and the best point are the same
    either way and on any chunking);
    ``evaluated`` counts the points searched, ``candidates`` the layouts the model takes and
    ``layouts`` those whose weights and one sequence fit."""

    model: str
    accelerator: str
    device_label: str
    gpus: int
    isl: int
    osl: int
    ttft: float | None
    tpot: float | None
    price_per_hour: float | None
    modes: tuple[str, ...]
    layouts: tuple[Parallel, ...]
    points: dict[str, np.ndarray] = field(repr=False)
    evaluated: int = 0
    candidates: int = 0
    notes: tuple[str, ...] = ()

    def point(self, i: int) -> DeploymentPoint:
        """Row ``i`` of :attr:`points` as a :class:`DeploymentPoint`."""
        p = {name: self.points[name][i] for name in COLUMNS}
        per_gpu = float(p["tokens_per_s_per_gpu"])
        cost = (self.price_per_hour / 3600.0 * 1e6 / per_gpu if self.price_per_hour is not None and per_gpu > 0
                else None)
        return DeploymentPoint(
            mode=MODES[int(p["mode"])], prefill_layout=str(self.layouts[int(p["prefill"])]),
            decode_layout=str(self.layouts[int(p["decode"])]), prefill_workers=int(p["prefill_workers"]),
            decode_workers=int(p["decode_workers"]), devices=int(p["devices"]), concurrency=int(p["concurrency"]),
            running=float(p["running"]), ttft_s=float(p["ttft_s"]), tpot_s=float(p["tpot_s"]),
            requests_per_s=float(p["requests_per_s"]), tokens_per_s_per_gpu=per_gpu,
            tokens_per_s_per_user=float(p["tokens_per_s_per_user"]), usd_per_million_tokens=cost)

    def frontier_indices(self, slo: bool = False, mode: str | None = None) -> np.ndarray:
        """Rows of the Pareto envelope (of the points meeting the SLOs with ``slo``; of one mode's
        points with ``mode``), from the most tokens/s per GPU (slowest per user) to the fastest."""
        points = self.points
        ok = meets(points, self.ttft, self.tpot) if slo else np.ones(points["ttft_s"].shape, bool)
        if mode is not None:
            ok &= points["mode"] == MODES.index(_modes(mode)[0])
        rows = np.flatnonzero(ok)
        kept = rows[envelope_mask(take(points, rows))]
        ordered: np.ndarray = kept[np.argsort(self.points["tokens_per_s_per_user"][kept], kind="stable")]
        return ordered

    def frontier(self, slo: bool = False, mode: str | None = None) -> list[DeploymentPoint]:
        """The floor-optimal frontier: the points no other point beats on both tokens/s per GPU and
        tokens/s per user (an upper bound no real deployment exceeds), slowest per user first;
        ``slo``: among the points meeting the SLOs; ``mode``: among one mode's points."""
        return [self.point(int(i)) for i in self.frontier_indices(slo, mode)]

    @property
    def best(self) -> DeploymentPoint | None:
        """The most tokens/s per GPU with TTFT <= ``ttft`` and TPOT <= ``tpot`` (None: none meets them)."""
        i = best_index(self.points, self.ttft, self.tpot)
        return None if i is None else self.point(i)

    def answer(self) -> str:
        """One line: the best deployment under the SLOs, or why there is none."""
        head = f"{self.model} on {self.gpus} x {self.device_label}"
        best = self.best
        if best is None:
            slo = " and ".join(text for text in (
                None if self.ttft is None else f"TTFT <= {self.ttft * 1e3:,.0f} ms",
                None if self.tpot is None else f"TPOT <= {self.tpot * 1e3:,.0f} ms") if text)
            return f"{head}: no deployment meets {slo or 'the search'} even on floors"
        cost = "" if best.usd_per_million_tokens is None else f", ${best.usd_per_million_tokens:,.3g}/M tokens"
        return (f"{head}: {best.mode} {best.label}, concurrency {best.concurrency:,}: "
                f"{best.tokens_per_s_per_gpu:,.0f} tok/s/GPU, {best.tokens_per_s_per_user:,.0f} tok/s/user "
                f"(TTFT {best.ttft_s * 1e3:,.0f} ms, TPOT {best.tpot_s * 1e3:,.1f} ms{cost}); floors")

    def to_records(self, which: str = "frontier") -> list[dict[str, Any]]:
        """One dict per point of ``which``: ``"frontier"`` (default), ``"slo"`` (the frontier of
        the points meeting the SLOs) or ``"all"`` (every point held), SI units, NaN as None."""
        if which not in ("frontier", "slo", "all"):
            raise InvalidValueError("which", which, "'frontier', 'slo' or 'all'")
        rows = np.arange(self.points["ttft_s"].size) if which == "all" else self.frontier_indices(which == "slo")
        base = {"model": self.model, "accelerator": self.accelerator, "gpus": self.gpus, "isl": self.isl,
                "osl": self.osl}
        return [{**base, **self.point(int(i)).as_record()} for i in rows]


def _slo(name: str, value: Any) -> float | None:
    from ..checks import positive

    return None if value is None else positive(name, value, "a time in seconds > 0, or None (no bound)")


def _price(price_per_hour: Any, device: Accelerator) -> float | None:
    from ..floors.energy import checked_price

    if price_per_hour is None:
        return None
    if isinstance(price_per_hour, dict):
        key = device.id or device.name
        if key not in price_per_hour:
            raise InvalidValueError("price_per_hour", price_per_hour, f"a price for {key} (a dict keyed by device id)")
        return checked_price(price_per_hour[key])
    return checked_price(price_per_hour)


def _modes(modes: Any) -> tuple[str, ...]:
    listed = (modes,) if isinstance(modes, str) else tuple(modes) if isinstance(modes, (list, tuple)) else None
    if not listed or any(not isinstance(m, str) or m not in MODES for m in listed):
        raise InvalidValueError("modes", modes, "'aggregated', 'disaggregated' or both")
    return tuple(dict.fromkeys(listed))


def _transfer(model: Model, device: Accelerator, isl: int, counts: list[int], kv_link_bandwidth: float | None,
              options: Any, notes: list[str]) -> dict[tuple[int, int], float] | None:
    """Seconds to move one prompt's KV cache from a prefill to a decode worker, per class of device
    counts (:func:`~roofline_decode.serving_floor`'s link: the scale-up link when both workers
    fit one scale-up domain, else the NIC; None where the device has no link at all)."""
    from .. import formulas as f
    from ..floors.capacity import kv_bytes_per_sequence
    from ..floors.serving_worker import kv_link_bandwidth as kv_link_of

    kv = float(np.max(kv_bytes_per_sequence(model, isl)))
    table = {}
    for p in counts:
        for d in counts:
            try:
                link, link_notes = kv_link_of(device, kv_link_bandwidth, p + d, options)
            except InvalidValueError:
                if kv_link_bandwidth is not None:
                    raise
                notes.append(f"{device.id or device.name}: no interconnect or scale-out figure, so no disaggregated "
                             "deployments (pass kv_link_bandwidth=)")
                return None
            table[p, d] = float(f.kv_transfer_time(isl, kv / isl, link, min(p, d)))
            notes.extend(n for n in link_notes if "unknown" in n and n not in notes)
    return table


def deployments(model: Model | str | Path, device: Accelerator | str, gpus: int, isl: int, osl: int,
                ttft: float | None = None, tpot: float | None = None, *, price_per_hour: float | dict[str, float] | None = None,
                modes: Sequence[str] | str = MODES, concurrency: Any = None, layouts: Sequence[Any] | None = None,
                routing: str = "uniform", weights: Any = None, kv: Any = None, mla_layout: str = "sharded",
                sparse: bool = False,
                kv_link_bandwidth: float | None = None, scheduler: str = "local",
                chunk_size: int | None = None, keep_all: bool = False) -> Deployments:
    """Every aggregated and disaggregated deployment of ``model`` on ``gpus`` devices: floors.

    Parameters
    ----------
    model, device : str or spec
        The model and the device (catalog ids or specs).
    gpus : int
        GPUs available [1], >= 1: a deployment uses at most this many.
    isl, osl : int
        Input (prompt) and output tokens per request [tokens]; osl >= 2.
    ttft, tpot : float, optional
        SLOs [s]: time to first token and time per output token (None: no bound).
    price_per_hour : float or dict, optional
        Price of one device-hour [$/h] (a dict keyed by the device id), for the cost per million
        output tokens.
    modes : {"aggregated", "disaggregated"} or both
    concurrency : array_like, optional
        Client counts per replica or decode worker (default :data:`DEFAULT_CONCURRENCY`); the
        default grid also takes each layout's largest batch that fits.
    layouts : sequence of Parallel or str, optional
        The layouts to search (default: every layout the model takes, of 1, 2, 4, ... devices up
        to ``gpus`` and of ``gpus`` devices).
    routing, weights, kv, mla_layout, sparse
        As in :func:`~roofline_decode.serving_floor` (routing ``"uniform"`` or ``"identical"``).
    kv_link_bandwidth : float, optional
        Per-direction bandwidth [B/s] a prompt's KV cache crosses to a decode worker (default: the
        scale-up link when both workers fit one scale-up domain, else the NIC).
    scheduler : {"local", "dask"}
        Run the chunks here or map them on dask (``pip install 'roofline_decode[dask]'``; a
        running ``distributed.Client`` is used).  Each chunk keeps only the points the frontier
        and the best point can be, so a search larger than memory runs.
    chunk_size : int, optional
        Decode layouts per chunk (default: as many as keep a chunk's broadcast under
        :data:`CHUNK_ELEMENTS` points).
    keep_all : bool
        Keep every point searched in :attr:`Deployments.points` (one local chunk; memory grows
        with the search), not only those the frontier and the best point can be.

    Returns
    -------
    Deployments
        The points, the floor-optimal frontier (:meth:`Deployments.frontier`: an upper bound no
        real deployment exceeds), the best point under the SLOs (:attr:`Deployments.best`) and
        a one-line answer (:meth:`Deployments.answer`).

    Notes
    -----
    Each point is a floor: TTFT >= the prompt's own prefill (plus its KV transfer when
    disaggregated) plus the wait of the clients the KV cache cannot hold; TPOT >= the steady
    decode step of the running batch; the request rate <= the least of the running batch over
    a request's time in its slot, the prompt-work ceiling of the prefill side and, when
    disaggregated, the decode workers' ceiling (the pairing's rate is the least of its prefill
    and decode sides').  Layouts follow :func:`~roofline_decode.floors.layout.check_layout` and
    the strict layout floor (even splits, overlapped collectives, no fixed latencies).
    """
    from ..checks import flag, whole_number
    from ..floors.capacity import DEFAULT_RESERVE
    from ..floors.layout import Options, check_layout, layout_of
    from ..floors.prefill import device_timing, resolve_model_and_device
    from ..floors.request import whole_array
    from ..floors.serving_worker import ROUTINGS
    from .deployments_curves import layout_curves

    spec, accelerator = resolve_model_and_device(model, device, weights, kv)  # type: ignore[arg-type]
    gpus = whole_number("gpus", gpus, 1)
    isl, osl = whole_number("isl", isl, 1), whole_number("osl", osl, 2)
    ttft, tpot = _slo("ttft", ttft), _slo("tpot", tpot)
    price = _price(price_per_hour, accelerator)
    chosen = _modes(modes)
    if not isinstance(scheduler, str) or scheduler not in SCHEDULERS:
        raise InvalidValueError("scheduler", scheduler, "'local' or 'dask'")
    grid = np.asarray(DEFAULT_CONCURRENCY) if concurrency is None else whole_array("concurrency", concurrency, 1).ravel()
    if layouts is None:
        candidates = candidate_layouts(spec, gpus)
        if accelerator.interconnect is None:
            candidates = [c for c in candidates if c.num_devices == 1]
    else:
        candidates = [layout_of(entry) for entry in layouts]  # type: ignore[misc]
        for layout in candidates:
            check_layout(spec, layout)
            if layout.num_devices > gpus:
                raise InvalidValueError("layouts", str(layout), f"layouts of at most gpus={gpus} devices")
    if not isinstance(routing, str) or routing not in ROUTINGS:
        raise InvalidValueError("routing", routing, "'uniform' or 'identical'")
    timing = device_timing(spec, accelerator, flag("sparse", sparse))
    options = Options(mla_layout=mla_layout, sparse=flag("sparse", sparse), domain_notes=False)
    curves = [c for c in (layout_curves(spec, accelerator, layout, isl, osl, grid, timing=timing, options=options,
                                        reserve=DEFAULT_RESERVE, routing=routing,
                                        decode_workers=max((gpus - 1) // layout.num_devices, 1),
                                        fit_point=concurrency is None)
                          for layout in candidates) if c is not None]
    notes: list[str] = []
    if not curves:
        notes.append(f"no layout of at most {gpus} devices holds the weights and one sequence")
        stack, transfer = None, None
    else:
        stack = Stack.of(curves)
        counts = sorted({int(n) for n in stack.devices})
        transfer = (_transfer(spec, accelerator, isl, counts, kv_link_bandwidth, options, notes)
                    if "disaggregated" in chosen else None)
    points, evaluated = _run(stack, gpus, float(osl), chosen, transfer, ttft, tpot, scheduler, chunk_size, keep_all)
    label = accelerator.name.removeprefix("NVIDIA ").removeprefix("AMD ").split(" (")[0]
    return Deployments(model=spec.name, accelerator=accelerator.id or accelerator.name, device_label=label, gpus=gpus,
                       isl=isl, osl=osl, ttft=ttft, tpot=tpot, price_per_hour=price, modes=chosen,
                       layouts=() if stack is None else stack.layouts, points=points, evaluated=evaluated,
                       candidates=len(candidates), notes=tuple(notes))


def _run(stack: Stack | None, gpus: int, osl: float, modes: tuple[str, ...], transfer: dict[tuple[int, int], float] | None,
         ttft: float | None, tpot: float | None, scheduler: str, chunk_size: int | None,
         keep_all: bool) -> tuple[dict[str, np.ndarray], int]:
    """The points (all of them with ``keep_all``, else those the frontier and the best point
    can be), and how many were searched; chunks of decode layouts run here or on dask."""
    from ..checks import whole_number

    if stack is None:
        return concat([]), 0
    rows = np.arange(len(stack.layouts))
    slo = None if keep_all else (ttft, tpot)
    if keep_all and scheduler == "local" and chunk_size is None:
        return evaluate_chunk(stack, rows, gpus, osl, modes, transfer, slo)
    if chunk_size is None:
        chunks = chunks_by_size(stack, gpus, CHUNK_ELEMENTS)
    else:
        size = whole_number("chunk_size", chunk_size, 1)
        chunks = [rows[i:i + size] for i in range(0, rows.size, size)]
    if scheduler == "dask":
        try:
            import dask
        except ImportError:
            from ..errors import MissingExtraError

            raise MissingExtraError("dask", "dask", "deployments(scheduler='dask')") from None
        delayed, compute = getattr(dask, "delayed"), getattr(dask, "compute")  # untyped
        tasks = [delayed(evaluate_chunk)(stack, chunk, gpus, osl, modes, transfer, slo) for chunk in chunks]
        parts = list(compute(*tasks))
    else:
        parts = [evaluate_chunk(stack, chunk, gpus, osl, modes, transfer, slo) for chunk in chunks]
    return concat([p for p, _ in parts]), sum(n for _, n in parts)
