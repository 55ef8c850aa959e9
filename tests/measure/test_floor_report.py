"""docs/how_close_is_the_floor.md is current, states the protocol's figures, and its plot renders."""

from pathlib import Path

import pytest

from roofline_decode.measure.extrapolation import protocol_splits, run_protocol
from roofline_decode.measure.floor_report import PAGE, efficiency_rows, main, plot_page, render_page

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def results():
    return run_protocol(protocol_splits())


@pytest.fixture(scope="module")
def page(results):
    return render_page(results=results)


def test_checked_in_page_is_current(page):
    assert (DOCS / PAGE).read_text(encoding="utf-8") == page, (
        f"docs/{PAGE} is stale; regenerate with: python -m roofline_decode.measure.floor_report --write-docs docs")


def test_page_states_the_figures(page, results):
    for r in results:
        assert f"| {r.median:.2%} | {r.p90:.2%} | {r.max:.2%} | {r.coverage:.0%} |" in page
    assert "| HF transformers eager (knlp) | 93 |" in page and "| rtx-4090 | 12 | 69% |" in page
    assert "img/how_close_is_the_floor.png" in page and (DOCS / "img" / "how_close_is_the_floor.png").is_file()


def test_left_out_rows_are_the_impossible_and_offloaded_ones():
    kept, left = efficiency_rows()
    assert all(c.efficiency <= 1 for c in kept)
    assert len(left) == 9 and {c.model for c in left} == {"gemma-2-27b", "Qwen2.5-72B", "Llama-3.1-70B"}


def test_plot_renders(tmp_path, results):
    pytest.importorskip("matplotlib")
    path = plot_page(tmp_path / "img" / "page.png", results=results)
    assert path.stat().st_size > 20_000


def test_check_command(capsys, tmp_path):
    assert main(["--check", str(DOCS)]) == 0 and "current" in capsys.readouterr().out
    (tmp_path / PAGE).write_text("old\n")
    assert main(["--check", str(tmp_path)]) == 1 and "stale" in capsys.readouterr().out


def test_the_at_a_glance_table_takes_the_worst_device_split():
    from roofline_decode.measure.expected_accuracy import AccuracyResult, render_section

    def split(engine, quantity, median, coverage, name="device: fit h100-sxm, predict h200-sxm"):
        return AccuracyResult(engine, name, quantity, 10, 10, median, 0.5, 1.0, coverage)

    results = [split("vllm", "TPOT", 0.10, 0.9), split("vllm", "TPOT", 0.14, 0.85, "device: fit h200-sxm, predict h100-sxm"),
               split("vllm", "TTFT", 0.20, 0.9), split("vllm", "TPOT", 0.9, 0.1, "model: each of 6 models"),
               split("sglang", "TPOT", 0.10, 0.79), split("sglang", "TTFT", 0.10, 0.9)]
    page = render_section(results, {})
    assert "| vllm | 14.0% | 85% | 20.0% | 90% | met |" in page  # the model split is not a device split
    assert "| sglang | 10.0% | 79% | 10.0% | 90% | not met |" in page  # coverage under 80 %
    assert "| tensorrt-llm | - | - | - | - | no device split |" in page
