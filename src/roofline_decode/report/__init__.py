"""A self-contained HTML report of a model's decode floors on one or more accelerators.

:func:`report` (also ``rd.report``, and ``roofline-decode report`` on the command line) writes
one HTML file that needs no network: the floors at the chosen batch and context, the fit and
limit notes, the byte and FLOP breakdown, the per-layer table
(:meth:`~roofline_decode.DecodeFloor.layers`) with its time by layer kind, the ridge plot, the throughput-interactivity
frontier (:func:`~roofline_decode.planning.frontier`) as inline SVG, every device figure with
its value, unit, kind and source, and a batch/context control that moves the numbers over a
precomputed grid; on request the layout floor, the serving floors, an engine's expected
performance (not a floor) and the deployment search on N GPUs
(:func:`~roofline_decode.planning.deployments`) with its answer and frontier.  The numbers in the page are the library's, unchanged (``data-value``
attributes in SI units; the JSON grid the control reads).

The page is a list of sections (:data:`~roofline_decode.report.page.SECTIONS`), each a function
of the report's data (:mod:`~roofline_decode.report.data`): a serving section for a parallel
layout is one more function there.

Needs matplotlib for the plots (the ``plot`` extra).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model

__all__ = ["report"]


def report(model: Model | str | Path, accelerators: Accelerator | str | Sequence[Accelerator | str],
           batch: float = 1, context: float = 4096, *, weights: Any = None, kv: Any = None,
           routing: str = "uniform", sparse: bool = False, batches: Sequence[float] | None = None,
           contexts: Sequence[float] | None = None, parallel: Any = None, link_bandwidth: float | None = None,
           node_size: int | None = None, scale_out_bandwidth: float | None = None,
           input_length: float | None = None, output_length: float | None = None, gpus: int | None = None,
           ttft: float | None = None, tpot: float | None = None, price_per_hour: float | dict[str, float] | None = None,
           engine: str | None = None, output: str | Path | None = None) -> str:
    """The HTML report of ``model`` on ``accelerators`` at (``batch``, ``context``).

    Parameters
    ----------
    model : Model, str or Path
        A :class:`~roofline_decode.Model`, a catalog id or a config path.
    accelerators : Accelerator, str or a sequence of them
        One or several devices (catalog ids or specs).
    batch : float
        The chosen batch B [sequences], >= 1.
    context : float
        The chosen context T [tokens], >= 0.
    weights, kv : str, NumberFormat or dict, optional
        Weight and KV-cache formats, as :func:`~roofline_decode.load_model` takes them.
    routing : {"uniform", "identical"}
        MoE routing assumption (:func:`~roofline_decode.decode_floor`).
    sparse : bool
        Use 2:4 sparse peaks.
    batches, contexts : sequence of float, optional
        The grid of the page's control (default batch 1 to 1024 in powers of two; contexts 0
        to 128K up to the model's positions); the chosen point is always on it.
    parallel : Parallel or str, optional
        A parallel layout (``"tp8"``, ``"dp8 ep8"``, :class:`~roofline_decode.Parallel`): a
        deployment section gives each accelerator's layout floor at the chosen point
        (``decode_floor(..., parallel=)``, the busiest device's numbers), which the control
        moves over the grid too, and the ridge and breakdown plots are drawn per device.  The
        floor table and the per-layer tables stay one device holding the whole model.
    link_bandwidth, node_size, scale_out_bandwidth : optional
        Link overrides of the layout floor, as ``decode_floor`` takes them (the plots use each
        device's own interconnect figure).
    input_length, output_length : float, optional
        Prompt and output tokens per request: a serving section gives each accelerator's
        :func:`~roofline_decode.serving_floor` with ``batch`` clients (and the layout), TTFT,
        TPOT, ITL, end-to-end latency and the throughputs.  Both or neither.
    gpus : int, optional
        GPUs available: a deployment-search section gives each accelerator's
        :func:`~roofline_decode.planning.deployments` on at most this many (needs
        ``input_length`` and ``output_length``): its one-line answer, the floor-optimal frontier
        (mode, deployment, GPUs, clients, TTFT, TPOT, tokens/s per GPU and per user, cost) and
        its plot.
    ttft, tpot : float, optional
        SLOs of the deployment search [s] (with ``gpus``).
    price_per_hour : float or dict, optional
        Price of one device-hour [$/h] (a dict keyed by device id), for the search's cost per
        million output tokens (with ``gpus``).
    engine : str, optional
        An engine profile (``"vllm"``, ``"sglang"``, ``"llama.cpp-cuda"`` ...): an expected
        section gives each accelerator's :func:`~roofline_decode.measure.expected.expected`
        step time and tokens/s with the 90 % band and what it rests on, beside the floor, and
        with the lengths the expected TTFT and TPOT of the serving run.  Expected numbers are
        not floors.  Under a tensor x pipeline layout the decode expectation rests on that
        layout's floor (with EP or attention DP on its devices as one tensor-parallel group); the
        serving expectation takes any layout, never below its floors.
    output : str or Path, optional
        Write the page there (UTF-8) as well as returning it.

    Returns
    -------
    str
        The HTML document.

    Examples
    --------
    >>> page = report("llama-3.1-8b", ["h100-sxm", "mi300x"], batch=8, context=4096)
    >>> page.startswith("<!DOCTYPE html>"), page.count("<svg"), "<script src" in page
    (True, 5, False)

    The deployment question on 4 GPUs under a TPOT SLO, and vLLM's expected numbers (not floors):

    >>> page = report("llama-3.1-8b", "h100-sxm", batch=8, input_length=1024, output_length=128, gpus=4,
    ...               tpot=0.03, engine="vllm")
    >>> "Deployment search: 4 GPUs" in page, "Expected numbers are not floors" in page, page.count("<svg")
    (True, True, 5)
    """
    from ..catalog import load_accelerator, load_model
    from ..checks import flag
    from ..errors import InvalidValueError
    from ..floors.grid import checked_array
    from .data import report_data
    from .page import render_page

    spec = load_model(model, weights=weights, kv=kv)
    if isinstance(accelerators, (str, Path)) or not isinstance(accelerators, Sequence):
        accelerators = [accelerators]
    devices = [load_accelerator(a) for a in accelerators]
    b = checked_array("batch", batch, 1.0, inclusive=True)
    t = checked_array("context", context, 0.0, inclusive=True)
    if b.ndim or t.ndim:
        raise InvalidValueError("batch/context", f"{batch!r}/{context!r}", "one number each (the chosen point)")
    if routing not in ("uniform", "identical"):
        raise InvalidValueError("routing", routing, "'uniform' or 'identical'")
    if sparse.__class__ is not bool:
        sparse = flag("sparse", sparse)
    if batches is not None:
        batches = checked_array("batches", batches, 1.0, inclusive=True).ravel().tolist()
    if contexts is not None:
        contexts = checked_array("contexts", contexts, 0.0, inclusive=True).ravel().tolist()
    links = {k: v for k, v in (("link_bandwidth", link_bandwidth), ("node_size", node_size),
                               ("scale_out_bandwidth", scale_out_bandwidth)) if v is not None}
    data = report_data(spec, devices, float(b), float(t), routing=routing, sparse=sparse, batches=batches,
                       contexts=contexts, parallel=parallel, links=links, input_length=input_length,
                       output_length=output_length, gpus=gpus, ttft=ttft, tpot=tpot, price_per_hour=price_per_hour,
                       engine=engine)
    page = render_page(data)
    if output is not None:
        path = Path(output)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page, encoding="utf-8")
    return page


class _CallableModule(types.ModuleType):
    """``rd.report(...)`` calls :func:`report` also once this package is imported (importing a
    submodule makes the package attribute the module)."""

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        return report(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
