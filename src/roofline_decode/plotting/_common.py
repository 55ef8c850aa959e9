"""Shared pieces of the plotting view: lazy matplotlib, palette, resolving specs, titles, saving.

Nothing here computes physics; :func:`resident_bytes` only adds up terms that
:func:`roofline_decode.decode_floor` already returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from .._typing import Broadcastable
from ..errors import InvalidValueError, MissingExtraError
from ..units import TB, TFLOP, GiB

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    from ..floors.layout_result import ParallelFloor
    from ..floors.results import DecodeFloor
    from ..formats import NumberFormat
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model

#: A model as the plots take it: a Model, a catalog id or a config path.
ModelLike: TypeAlias = "Model | str | Path"
#: An accelerator as the plots take it: an Accelerator, a catalog id or a spec path.
AcceleratorLike: TypeAlias = "Accelerator | str | Path"
#: Weight formats: one for every group, or one per weight group (see ``load_model``).
WeightsLike: TypeAlias = "str | NumberFormat | Mapping[str, str | NumberFormat] | None"

#: Okabe & Ito (2008) colorblind-safe palette, ordered for lines on white (yellow last).
#: https://jfly.uni-koeln.de/color/
OKABE_ITO = {
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "bluish_green": "#009E73",
    "reddish_purple": "#CC79A7",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "black": "#000000",
    "yellow": "#F0E442",
}
PALETTE = tuple(OKABE_ITO.values())
#: Marker shapes distinguishing contexts (and batches) where colour already names the accelerator.
MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*")
#: Axis labels shared by the plots that sweep batch or context.
BATCH_AXIS_LABEL = "batch B [sequences decoded together]"
CONTEXT_AXIS_LABEL = "context T [tokens cached per sequence]"
#: Output formats :func:`save` writes, by file extension.
SAVE_FORMATS = (".png", ".svg", ".pdf")
#: Highest resolution :func:`save` accepts [dots per inch] (a 9-inch figure is then 10800 pixels wide).
MAX_DPI = 1200
#: Smallest resolution accepted [dots per inch]: below about 10 dpi a label's font has less than one
#: pixel per em and FreeType refuses to draw it (a RuntimeError from inside matplotlib); at 20 dpi
#: every plot still renders, if barely legibly.
MIN_DPI = 20


def pyplot() -> ModuleType:
    """Import ``matplotlib.pyplot`` on first use (never at ``import roofline_decode`` time).

    Raises
    ------
    MissingExtraError
        If matplotlib is not installed; the message names the ``plot`` extra.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtraError("matplotlib", "plot", "plotting") from None
    return plt


def new_axes(ax: Axes | None, figsize: tuple[float, float] = (8.0, 5.5)) -> Axes:
    """``ax`` itself, or the Axes of a new figure of ``figsize`` inches."""
    if ax is not None:
        return ax
    created: Axes
    _, created = pyplot().subplots(figsize=figsize, layout="constrained")
    return created


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def resolve_model(model: ModelLike, weights: WeightsLike = None, kv: str | NumberFormat | None = None) -> Model:
    """A :class:`~roofline_decode.Model` from an id, a config path or a Model (formats applied)."""
    from ..catalog import load_model

    return load_model(model, weights=weights, kv=kv)


def resolve_accelerators(accelerators: AcceleratorLike | Sequence[AcceleratorLike]) -> list[Accelerator]:
    """A list of :class:`~roofline_decode.Accelerator` from one id/object or a sequence of them."""
    from ..catalog import load_accelerator
    from ..specs.accelerator import Accelerator

    several = [accelerators] if isinstance(accelerators, (str, Path, Accelerator)) else accelerators
    resolved = [load_accelerator(a) for a in several]
    if not resolved:
        raise InvalidValueError("accelerators", [], "at least one accelerator id or Accelerator")
    return resolved


def axis_values(name: str, values: Broadcastable | None, default: Broadcastable, several: bool = False) -> np.ndarray:
    """A sorted 1-D array of distinct grid values (``default`` when ``values`` is None).

    With ``several``, at least two distinct values are needed (the plot draws a line or a map
    along this axis).
    """
    array = np.unique(_floats(name, default if values is None else values).ravel())
    if array.size < (2 if several else 1):
        allowed = "at least two distinct values (this plot draws along it)" if several else "at least one value"
        raise InvalidValueError(name, values, allowed)
    return array


def _floats(name: str, values: Broadcastable) -> np.ndarray:
    """``values`` as an at-least-1-D float array under the rule of
    :func:`~roofline_decode.floors.decode.checked_array` (batch >= 1, context and prompt >= 0,
    acceptance in [0, 1]; real numbers only); :class:`InvalidValueError` otherwise."""
    from ..floors.grid import checked_array

    array = np.atleast_1d(checked_array(name, values, 1.0 if name == "batch" else 0.0, inclusive=True))
    if name == "acceptance" and np.any(array > 1):
        raise InvalidValueError(name, values, "rates in [0, 1]")
    return array


def longest_context(model: Model) -> float:
    """The default context range's end [tokens]: the model's maximum position, at most 128k."""
    return float(min(model.max_position_embeddings or 131072, 131072))


def geometric_batches(largest: float, points: int = 48) -> np.ndarray:
    """Whole batch sizes from 1 to ``largest``, evenly spaced on a log axis (for smooth curves)."""
    return np.unique(np.round(np.geomspace(1.0, max(float(largest), 2.0), points)))


def precision_label(*floors: DecodeFloor) -> str:
    """``"bf16 weights, fp8 KV, bf16 compute"`` for one or more DecodeFloors of one model.

    The compute precision is named when every accelerator with a published peak computes in
    the same one; otherwise the title leaves it to the legend (and says so), and it is left
    out when no accelerator has a peak.
    """
    compute = sorted({f.compute_precision for f in floors if f.compute_bounded})
    label = f"{floors[0].weight_format} weights, {floors[0].kv_format} KV"
    if len(compute) == 1:
        return f"{label}, {compute[0]} compute"
    return f"{label}, compute precision per accelerator in the legend" if compute else label


def title(model: Model, floor: DecodeFloor, accelerator: Accelerator | None = None) -> str:
    """Plot title naming the model, its precision and (optionally) the accelerator."""
    where = f" on {accelerator.name}" if accelerator is not None else ""
    return f"{model.name}{where}\n{precision_label(floor)}"


def hardware_label(accelerator: Accelerator, floor: DecodeFloor) -> str:
    """``"NVIDIA H100 SXM5 80GB: 3.35 TB/s, 989.5 TFLOP/s bf16"`` (one unit for every device)."""
    bandwidth = f"{accelerator.memory_bandwidth / TB:.3g} TB/s"
    if not floor.compute_bounded:
        from ..floors import NO_COMPUTE_PEAK

        return f"{accelerator.name}: {bandwidth}, {NO_COMPUTE_PEAK}"
    if np.ndim(floor.peak_flops) == 0:
        return f"{accelerator.name}: {bandwidth}, {floor.peak_flops / TFLOP:.4g} TFLOP/s {floor.compute_precision}"
    # several precisions: each one's peak (the roof drawn is the effective peak FLOPs / compute time)
    peaks = dict.fromkeys(f"{floor.group_peak_flops[g] / TFLOP:.4g} {p}" for g, p in floor.compute_precisions.items()
                          if not np.isnan(floor.group_peak_flops[g]))
    return f"{accelerator.name}: {bandwidth}, {' / '.join(peaks)} TFLOP/s"


def context_label(context: float) -> str:
    """``4096 -> "4k"``, ``131072 -> "128k"``, ``1000 -> "1000"`` (token counts)."""
    context = float(context)
    if context >= 1024 and context % 1024 == 0:
        return f"{context / 1024:g}k"
    return f"{context:g}"


def usable_memory(accelerator: Accelerator | str) -> float:
    """Bytes the plots let weights and KV cache fill [B].

    :func:`roofline_decode.planning.usable_memory` with its defaults: the printed GB read as
    GiB, minus a 2 GiB runtime reserve.
    """
    from ..floors import capacity

    return float(capacity.usable_memory(accelerator))


def memory_label(accelerator: Accelerator | str) -> str:
    """``"78 GiB usable"``: :func:`usable_memory` in GiB."""
    return f"{usable_memory(accelerator) / GiB:.4g} GiB usable"


def resident_bytes(model: Model, floor: DecodeFloor) -> np.ndarray:
    """Memory a decode floor's grid needs resident on one accelerator [B] (broadcast over the grid).

    :func:`roofline_decode.planning.resident_bytes` at the floor's ``batch`` and ``context``:
    all weights (``model.weight_bytes``: every expert of a MoE model is stored even if few are
    read) plus the KV cache of ``batch`` sequences holding ``context`` tokens (sliding-window
    layers hold their window).  Activations and workspace are left to the reserve of
    :func:`usable_memory`.
    """
    from ..floors import capacity

    return np.asarray(capacity.resident_bytes(model, floor.batch, floor.context), dtype=np.float64)


def fits(model: Model, floor: DecodeFloor, accelerator: Accelerator | str) -> np.ndarray:
    """Boolean array: does :func:`resident_bytes` fit :func:`usable_memory`?"""
    return resident_bytes(model, floor) <= usable_memory(accelerator)


def layout_share(model: Model, accelerator: Accelerator, batch: Any, context: Any, *, sparse: bool = False,
                 latency: Any = None, parallel: Any = None) -> ParallelFloor | None:
    """The busiest device's floor of ``model`` under the layout ``parallel``
    (``decode_floor(..., parallel=)``), or None without a layout or with a one-device one (the
    plain floor then holds)."""
    if parallel is None:
        return None
    from ..floors.decode import decode_floor
    from ..floors.layout_result import ParallelFloor

    share = decode_floor(model, accelerator, batch=batch, context=context, sparse=sparse, latency=latency,
                         parallel=parallel)
    return share if isinstance(share, ParallelFloor) else None


def share_fits(share: ParallelFloor, accelerator: Accelerator | str) -> np.ndarray:
    """Boolean array over the share's grid: does what one device holds fit :func:`usable_memory`?"""
    return np.broadcast_to(np.asarray(share.resident_bytes_per_device) <= usable_memory(accelerator), share.shape)


def max_batch(model: ModelLike, accelerator: AcceleratorLike, context: float) -> float:
    """Largest whole batch whose weights and KV cache fit one accelerator at ``context`` (0 if none).

    :func:`roofline_decode.planning.max_batch` with its defaults; a context below one token
    counts as one (the planning rule needs a cache to divide by).
    """
    from ..catalog import load_accelerator
    from ..floors import capacity

    tokens = single_value("context", context)
    if tokens < 0:
        raise InvalidValueError("context", context, "a finite number of tokens >= 0")
    return float(np.asarray(capacity.max_batch(resolve_model(model), load_accelerator(accelerator), max(tokens, 1.0))))


def save(ax_or_figure: Axes | Figure, path: str | Path, dpi: float = 150) -> Path:
    """Save the figure of an Axes (or a Figure) to ``path``; the extension picks PNG, SVG or PDF.

    Creates missing parent folders and returns the path written.

    Raises
    ------
    InvalidValueError
        If the extension is not one of ``.png``, ``.svg``, ``.pdf``, if ``dpi`` is not between
        :data:`MIN_DPI` (20) and :data:`MAX_DPI` (1200), or if the file cannot be written there (the
        message says why).
    """
    path = Path(path)
    check_output_path(path)
    figure = getattr(ax_or_figure, "figure", None) or ax_or_figure
    if not hasattr(figure, "savefig"):
        raise InvalidValueError("ax_or_figure", type(ax_or_figure).__name__, "a matplotlib Axes or Figure")
    try:
        resolution = float(dpi)
    except (TypeError, ValueError):
        resolution = float("nan")
    if isinstance(dpi, bool) or not MIN_DPI <= resolution <= MAX_DPI:
        raise InvalidValueError("dpi", dpi, f"a resolution from {MIN_DPI} to {MAX_DPI} [dots per inch]")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, format=path.suffix[1:].lower(), dpi=resolution, bbox_inches="tight")
    except OSError as exc:
        reason = (exc.strerror or str(exc)) + (f": {exc.filename}" if exc.filename else "")
        raise InvalidValueError("output", str(path), f"a file path that can be written ({reason})") from None
    return path


def check_output_path(path: str | Path) -> Path:
    """Raise :class:`InvalidValueError` unless ``path`` ends in .png, .svg or .pdf."""
    path = Path(path)
    if path.suffix.lower() not in SAVE_FORMATS:
        raise InvalidValueError("output", str(path), "a file name ending in " + ", ".join(SAVE_FORMATS))
    return path


def single_accelerator(accelerator: AcceleratorLike | Sequence[AcceleratorLike]) -> Accelerator:
    """Exactly one :class:`~roofline_decode.Accelerator` (an id, a spec path or an object)."""
    devices = resolve_accelerators(accelerator)
    if len(devices) != 1:
        raise InvalidValueError("accelerator", [d.id or d.name for d in devices],
                                "exactly one accelerator (ridge_plot and batch_plot compare several)")
    return devices[0]


def single_value(name: str, value: Broadcastable) -> float:
    """A scalar from a number or a one-element array (the axis a plot holds fixed)."""
    array = _floats(name, value).ravel()
    if array.size != 1 or not np.isfinite(array[0]):
        raise InvalidValueError(name, value, "a single finite number here (this plot sweeps the other axis)")
    return float(array[0])


def tokens_formatter() -> FuncFormatter:
    """A tick formatter writing token counts as 512, 4k, 128k."""
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _: context_label(value) if value >= 0 else "")


def count_formatter(minor: bool = False) -> FuncFormatter:
    """A tick formatter for counts on log axes: 1, 10, 100, 1k, 10k, 1M (see :func:`plain_formatter`)."""
    return plain_formatter(minor=minor, counts=True)


def batch_axis(ax: Axes) -> None:
    """Batch on the x axis of ``ax``: log base 2, ticks written 1, 4, 16, labelled with its unit."""
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(plain_formatter())
    ax.set_xlabel(BATCH_AXIS_LABEL)


def token_axis(axis: Axis, largest: float, log: bool = False) -> None:
    """Ticks at powers of two (linear: multiples of one) labelled 512, 4k, 128k on a token axis."""
    from matplotlib.ticker import LogLocator, MultipleLocator, NullFormatter

    if log:
        axis.set_major_locator(LogLocator(base=4.0))
        axis.set_minor_formatter(NullFormatter())
    else:
        step = 2.0 ** np.ceil(np.log2(max(float(largest), 8.0) / 8.0))
        axis.set_major_locator(MultipleLocator(step))
    axis.set_major_formatter(tokens_formatter())


def plain_formatter(minor: bool = False, counts: bool = False) -> FuncFormatter:
    """A tick formatter writing 0.1, 1, 10, 1024 instead of powers of ten.

    With ``minor``, only the 2x and 5x minor ticks of a log axis are labelled (less clutter);
    with ``counts``, thousands and millions are written 10k and 1M.
    """
    from matplotlib.ticker import FuncFormatter

    def fmt(value: float, _: int | None) -> str:
        if minor:
            mantissa = value / 10 ** np.floor(np.log10(value)) if value > 0 else 0
            if not (np.isclose(mantissa, 2) or np.isclose(mantissa, 5)):
                return ""
        if counts:
            for factor, suffix in ((1e6, "M"), (1e3, "k")):
                if value >= factor:
                    return f"{value / factor:g}{suffix}"
        return f"{value:g}" if value < 1e5 else f"{value:.0e}"

    return FuncFormatter(fmt)


def headless() -> ModuleType:
    """Switch matplotlib to the file-only Agg backend (CLI and scripts); returns ``pyplot``."""
    try:
        import matplotlib
    except ImportError:
        raise MissingExtraError("matplotlib", "plot", "plotting") from None
    matplotlib.use("Agg")
    return pyplot()


def check_slo(slo_ms: float | None) -> float | None:
    """``slo_ms`` as a float (None stays None); :class:`InvalidValueError` unless it is a finite number > 0."""
    if slo_ms is None:
        return None
    try:
        value = float(slo_ms)
    except (TypeError, ValueError):
        value = float("nan")
    if not (np.isfinite(value) and value > 0):
        raise InvalidValueError("slo_ms", slo_ms, "a finite latency target > 0 [ms]")
    return value
