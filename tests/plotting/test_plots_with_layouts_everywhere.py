"""The speculative and frontier plots under a layout (issue 26 item 1: one layout for every plot)."""

import numpy as np
import pytest

from roofline_decode.floors.speculative import speculative_floor


def test_speculative_plot_under_a_layout_draws_the_layouts_speedups():
    from roofline_decode.plotting import headless, speculative_plot

    plt = headless()
    ax = speculative_plot("llama-3.1-70b", "h100-sxm", draft="llama-3.2-1b", batch=[1, 64], acceptance=[0.7],
                          parallel="tp4")
    try:
        expected = speculative_floor("llama-3.1-70b", "h100-sxm", draft="llama-3.2-1b", acceptance=0.7,
                                     batch=np.array([1, 64]), parallel="tp4").speedup
        plain = speculative_floor("llama-3.1-70b", "h100-sxm", draft="llama-3.2-1b", acceptance=0.7,
                                  batch=np.array([1, 64])).speedup
        drawn = ax.get_lines()[0].get_ydata()
        assert np.array_equal(drawn, np.ravel(expected)) and not np.array_equal(drawn, np.ravel(plain))
        assert "layout tp4 (4 devices)" in ax.get_title()
    finally:
        plt.close(ax.figure)


def test_speculative_plot_names_a_draft_layout_and_refuses_a_bad_one():
    from roofline_decode.errors import InvalidValueError
    from roofline_decode.plotting import headless, speculative_plot

    plt = headless()
    ax = speculative_plot("llama-3.1-70b", "h100-sxm", draft="llama-3.2-1b", batch=[1, 8], acceptance=[0.7],
                          parallel="tp4", draft_parallel="tp1")
    try:
        assert ax.get_title().splitlines()[0].endswith("draft tp1")
    finally:
        plt.close(ax.figure)
    with pytest.raises(InvalidValueError, match="parallel.tp"):
        speculative_plot("llama-3.1-70b", "h100-sxm", draft="llama-3.2-1b", batch=[1, 8], parallel="tp3")


def test_frontier_plot_draws_one_curve_per_layout():
    from roofline_decode.planning import frontier
    from roofline_decode.plotting import frontier_plot, headless

    plt = headless()
    ax = frontier_plot("deepseek-v3", "h200-sxm", batch=[16, 256], parallel=["tp8", "dp8 ep8"])
    try:
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert labels[:2] == ["h200-sxm tp8", "h200-sxm dp8 ep8"]
        front = frontier("deepseek-v3", "h200-sxm", 4096, batch=[16, 256], parallel=["tp8", "dp8 ep8"])
        ep = [p.tokens_per_s_per_device for p in front.points if p.parallel == "dp8 ep8"]
        markers = [line for line in ax.get_lines() if line.get_label() == "h200-sxm dp8 ep8"]
        assert list(markers[0].get_ydata()) == ep
    finally:
        plt.close(ax.figure)
