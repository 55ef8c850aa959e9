"""layers_plot: a step's memory and compute time, each stacked by layer kind."""

import pytest


def test_layers_plot_stacks_the_rows_to_the_step_times():
    from roofline_decode import decode_floor, plotting

    ax = plotting.layers_plot("qwen3-next-80b-a3b", "mi300x", batch=32, context=65536)
    floor = decode_floor("qwen3-next-80b-a3b", "mi300x", batch=32, context=65536)
    kinds = [row.kind for row in floor.layers()]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("step floor 24.63 ms (memory)") and labels[1:] == kinds
    # the two bars end at the step's memory and compute times
    ends = {}
    for patch in ax.patches:
        y = round(patch.get_y() + patch.get_height() / 2)
        ends[y] = max(ends.get(y, 0.0), patch.get_x() + patch.get_width())
    assert ends[1] == pytest.approx(float(floor.memory_time_s) * 1e3, rel=1e-12)
    assert ends[0] == pytest.approx(float(floor.compute_time_s) * 1e3, rel=1e-12)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["compute time\n(FLOPs / peak)",
                                                           "memory time\n(bytes / bandwidth)"]
