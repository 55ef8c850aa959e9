"""The energy and cost table of docs/energy.md is current, and a row checks by hand."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- energy-cost-table:begin -->", "<!-- energy-cost-table:end -->"


def _script():
    spec = importlib.util.spec_from_file_location("energy_cost_table", ROOT / "examples" / "energy_cost_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_checked_in_table_is_current():
    page = (ROOT / "docs" / "energy.md").read_text()
    checked_in = page[page.index(BEGIN) + len(BEGIN):page.index(END)].strip()
    assert checked_in == _script().energy_cost_table(), "regenerate: python examples/energy_cost_table.py"


def test_rows_by_hand():
    rows = {(r["model"], r["accelerator"], r["batch"]): r for r in _script().energy_cost_rows(3.0)}
    assert len(rows) == 2 * 4 * 2
    # 8B bf16 batch 1 on an H100 SXM: 15,546,859,520 bytes x 8 x 4.29 pJ/bit; 700 W x bytes / 3.35 TB/s
    h100 = rows[("llama-3.1-8b", "h100-sxm", 1)]
    assert h100["tp"] == 1
    assert h100["joules_per_token_floor"] == pytest.approx(15_546_859_520 * 8 * 4.29e-12, rel=1e-12)
    assert h100["joules_per_token_at_board_power"] == pytest.approx(700 * 15_546_859_520 / 3.35e12, rel=1e-12)
    assert h100["usd_per_million_tokens"] == pytest.approx(1e6 * 3.0 * 15_546_859_520 / 3.35e12 / 3600, rel=1e-12)
    # 70B bf16 never fits one 80 GB H100: the table takes the smallest fitting TP degree
    assert rows[("llama-3.1-70b", "h100-sxm", 1)]["tp"] == 2
    assert all(r["tp"] is not None for r in rows.values())
