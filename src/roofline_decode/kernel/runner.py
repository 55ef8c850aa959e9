"""Time the decode kernel over a batch × context grid and set it against the floor.

:func:`run_validation` builds one set of weights, then for each (batch, context) point
allocates a KV cache, fills ``context`` positions, runs ``warmup`` untimed steps and times
``repeats`` steps (each from the same position, so every repeat does the same work).  Each
:class:`Measurement` carries the kernel's own byte counts and the floor of the same step on
an accelerator (normally the host as measured by :func:`~roofline_decode.kernel.host_accelerator`).
"""

from __future__ import annotations

import csv
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TextIO

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidValueError, MissingExtraError
from ..formats import get_format
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from .decode import DecodeKernel
from .model_weights import init_weights

__all__ = ["Measurement", "CSV_COLUMNS", "validation_model", "check_arguments", "run_validation", "write_csv", "plot_measurements"]

#: Columns of the measurement CSV, in order (the first eight are the contract of ``validate``).
CSV_COLUMNS = (
    "batch", "context", "mean_s", "std_s", "tokens_per_s", "weight_bytes", "kv_read_bytes", "bw_GBs",
    "kv_write_bytes", "flops", "floor_s", "measured_over_floor", "median_s", "min_s",
)


@dataclass(frozen=True)
class Measurement:
    """One timed grid point: step time [s] over ``repeats`` steps and the kernel's own counts.

    ``bw_GBs`` is the bytes the step moved (weights + KV read + KV write) over the mean time
    [GB/s]; ``floor_s`` is the library's floor for the same step; ``measured_over_floor`` is
    ``mean_s / floor_s`` (>= 1 when the floor holds).  ``median_s`` and ``min_s`` are robust
    to other jobs on a shared machine, which only ever add time.
    """

    batch: int
    context: int
    mean_s: float
    std_s: float
    tokens_per_s: float
    weight_bytes: int
    kv_read_bytes: int
    bw_GBs: float
    kv_write_bytes: int
    flops: int
    floor_s: float
    measured_over_floor: float
    median_s: float
    min_s: float


def validation_model(quick: bool = False) -> Model:
    """A Llama-like model whose fp32 weights defeat the caches.

    Default: d = 2048, 4 layers, 16 query / 4 KV heads of 128, SwiGLU 5632, V = 32000: about
    0.98 GB of weights read per step.  ``quick``: d = 1024, 3 layers, 8 / 2 heads, 2816,
    V = 16000: about 0.2 GB.

    Examples
    --------
    >>> m = validation_model()
    >>> round(m.streamed_parameters * 4 / 1e9, 2), round(validation_model(quick=True).streamed_parameters * 4 / 1e9, 2)
    (0.98, 0.2)
    """
    fp32 = get_format("fp32")  # what Model makes of the name "fp32"
    if quick:
        return Model(name="validation-quick", num_layers=3, hidden_size=1024, num_heads=8, num_kv_heads=2,
                     head_dim=128, intermediate_size=2816, vocab_size=16000, weight_format=fp32, kv_format=fp32,
                     activation_format=fp32)
    return Model(name="validation-1gb", num_layers=4, hidden_size=2048, num_heads=16, num_kv_heads=4,
                 head_dim=128, intermediate_size=5632, vocab_size=32000, weight_format=fp32, kv_format=fp32,
                 activation_format=fp32)


def _progress(stream: TextIO | None, done: int, total: int, label: str) -> None:
    if stream is None:
        return
    width = 30
    filled = width * done // max(total, 1)
    stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} steps  {label:<28}")
    if done == total:
        stream.write("\n")
    stream.flush()


def _whole_numbers(name: str, values: ArrayLike, least: int) -> list[int]:
    out = []
    for value in np.atleast_1d(values).tolist():
        if not float(value).is_integer() or value < least:
            raise InvalidValueError(name, value, f"integers >= {least}")
        out.append(int(value))
    if not out:
        raise InvalidValueError(name, [], f"at least one integer >= {least}")
    return out


def check_arguments(batch: ArrayLike, context: ArrayLike, warmup: int = 2, repeats: int = 5, seed: int = 0) -> tuple[list[int], list[int]]:
    """The grid axes of :func:`run_validation` as lists of int, after checking every argument.

    Raises :class:`~roofline_decode.errors.InvalidValueError` naming the argument: batches must
    be integers >= 1, contexts integers >= 0, ``warmup`` and ``seed`` >= 0, ``repeats`` >= 1.
    """
    batches, contexts = _whole_numbers("batch", batch, 1), _whole_numbers("context", context, 0)
    for name, value, least in (("warmup", warmup, 0), ("repeats", repeats, 1), ("seed", seed, 0)):
        if int(value) != value or value < least:
            raise InvalidValueError(name, value, f"an integer >= {least}")
    return batches, contexts


def run_validation(model: Model, accelerator: Accelerator, batch: ArrayLike = (1,), context: ArrayLike = (0,), *, warmup: int = 2,
                   repeats: int = 5, seed: int = 0, progress: TextIO | bool | None = True,
                   matmul: str = "auto") -> list[Measurement]:
    """Time the kernel at every (batch, context) point and compare with the floor.

    Parameters
    ----------
    model : Model
        Architecture (run in fp32; the floor is computed with fp32 weights and cache).
    accelerator : Accelerator
        Device whose floor the measurements are set against (normally the probed host).
    batch, context : sequence of int
        Grid axes; every combination is measured.
    warmup, repeats : int
        Untimed and timed steps per point.
    seed : int
        Seed (>= 0) of the weights and the cache contents.
    progress : file-like, bool or None
        Where the progress bar goes: ``True`` (default) for ``sys.stderr`` when it is a terminal
        (nothing in a log file or a pipe), a stream, or
        ``False``/``None`` for none.
    matmul : {"auto", "gemm", "tiled-gemv"}
        How a batch multiplies the weights (see :class:`~roofline_decode.kernel.DecodeKernel`).

    Returns
    -------
    list of Measurement
        In grid order (batch outer, context inner).
    """
    from ..floors.decode import decode_floor

    if progress is True:  # a bar of carriage returns is for a terminal, not a log file or a pipe
        progress = sys.stderr if getattr(sys.stderr, "isatty", lambda: False)() else None
    elif progress is False:
        progress = None
    batches, contexts = check_arguments(batch, context, warmup, repeats, seed)
    model = model.with_precision(weights="fp32", kv="fp32", activations="fp32", experts="fp32")
    weights = init_weights(model, seed)
    rng = np.random.default_rng(seed)
    total, done = len(batches) * len(contexts) * (warmup + repeats), 0
    results = []
    for b in batches:
        for t in contexts:
            label = f"batch={b} context={t}"
            _progress(progress, done, total, label)
            kernel = DecodeKernel(model, b, t, weights=weights, matmul=matmul)
            kernel.fill_cache(t, seed=seed + 1)
            # distinct tokens where the vocabulary allows, as the formula assumes
            tokens = rng.permutation(model.vocab_size)[:b] if b <= model.vocab_size else rng.integers(0, model.vocab_size, b)
            times = []
            for i in range(warmup + repeats):
                start = time.perf_counter()
                _, counts = kernel.step(tokens, position=t)
                elapsed = time.perf_counter() - start
                if i >= warmup:
                    times.append(elapsed)
                done += 1
                _progress(progress, done, total, label)
            del kernel
            floor = float(decode_floor(model, accelerator, batch=b, context=t).step_time_s)
            mean = float(np.mean(times))
            results.append(Measurement(
                batch=b, context=t, mean_s=mean, std_s=float(np.std(times)), tokens_per_s=b / mean,
                weight_bytes=counts.weight_bytes, kv_read_bytes=counts.kv_read_bytes,
                bw_GBs=counts.bytes_total / mean / 1e9, kv_write_bytes=counts.kv_write_bytes, flops=counts.flops,
                floor_s=floor, measured_over_floor=mean / floor, median_s=float(np.median(times)),
                min_s=float(np.min(times)),
            ))
    return results


def write_csv(measurements: list[Measurement], path: str | Path) -> Path:
    """Write measurement rows with :data:`CSV_COLUMNS` as header; return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
        writer.writeheader()
        for m in measurements:
            writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in asdict(m).items()})
    return path


def plot_measurements(measurements: list[Measurement], path: str | Path, title: str = "") -> Path:
    """Plot measured step time and tokens/s against the floor; needs matplotlib.

    Left: step time [ms] against context, one colour per batch (markers: measured, lines:
    floor).  Right: aggregate tokens/s against batch, one colour per context.
    """
    try:  # a Figure without pyplot: no GUI backend, and the caller's backend is left alone
        import matplotlib  # noqa: F401  (first: the extra is missing when this fails)
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingExtraError("matplotlib", "plot", "the validation plot") from None
    batches = sorted({m.batch for m in measurements})
    contexts = sorted({m.context for m in measurements})
    fig = Figure(figsize=(11, 4.2))
    left, right = fig.subplots(1, 2)
    for i, b in enumerate(batches):
        rows = sorted((m for m in measurements if m.batch == b), key=lambda m: m.context)
        x = [m.context for m in rows]
        left.plot(x, [m.floor_s * 1e3 for m in rows], "-", color=f"C{i % 10}", label=f"floor, B={b}")
        left.errorbar(x, [m.mean_s * 1e3 for m in rows], yerr=[m.std_s * 1e3 for m in rows], fmt="o",
                      color=f"C{i % 10}", label=f"measured, B={b}")
    left.set(xlabel="context T [tokens]", ylabel="step time [ms]", title="step time: measured vs floor")
    left.set_ylim(bottom=0)
    for i, t in enumerate(contexts):
        rows = sorted((m for m in measurements if m.context == t), key=lambda m: m.batch)
        x = [m.batch for m in rows]
        right.plot(x, [m.batch / m.floor_s for m in rows], "-", color=f"C{i % 10}", label=f"floor, T={t}")
        right.plot(x, [m.tokens_per_s for m in rows], "o", color=f"C{i % 10}", label=f"measured, T={t}")
    right.set(xlabel="batch B", ylabel="tokens/s (aggregate)", title="throughput: measured vs floor")
    if len(batches) > 1:  # ticks at the measured batches, written 1, 2, 4, 8 (not 2^0, 2^1, ...)
        from matplotlib.ticker import FixedLocator, NullLocator

        right.set_xscale("log", base=2)
        right.xaxis.set_major_locator(FixedLocator(batches))
        right.xaxis.set_major_formatter(lambda value, _: f"{value:g}")
        right.xaxis.set_minor_locator(NullLocator())
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    return path
