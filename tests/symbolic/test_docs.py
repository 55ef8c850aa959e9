"""The generated pages are current, and the generator's command line works."""

from pathlib import Path

import pytest

from roofline_decode.symbolic import GLOSSARY, latex, twins
from roofline_decode.symbolic.__main__ import main
from roofline_decode.symbolic.docs import render_derivation, render_glossary, write_docs

DOCS = Path(__file__).resolve().parents[2] / "docs"
REGENERATE = "regenerate with: python -m roofline_decode.symbolic --write-docs docs"


@pytest.fixture(scope="module")
def pages():
    return {"derivation.md": render_derivation(), "glossary.md": render_glossary()}


@pytest.mark.parametrize("name", ["derivation.md", "glossary.md"])
def test_checked_in_page_is_current(pages, name):
    assert (DOCS / name).read_text(encoding="utf-8") == pages[name], f"docs/{name} is stale; {REGENERATE}"


def test_derivation_states_the_headline_numbers(pages):
    text = pages["derivation.md"]
    assert "ridge point of F / BW = 295.4 FLOP/byte" in text  # H100 SXM dense bf16
    assert "| 1 | 1.00 | 295.4 | memory |" in text  # intensity about B at batch 1
    assert "| 297 | 296.17 | 295.4 | compute |" in text  # just past B* = 296.2
    for name in ("weight_bytes_read", "kv_read_bytes", "memory_time", "step_time"):
        assert latex(name) in text


def test_glossary_lists_every_entry_and_every_formula(pages):
    text = pages["glossary.md"]
    for name, e in GLOSSARY.items():
        assert f"| `{name}` | ${e.latex}$ | {e.unit} |" in text
    for name in twins():
        assert f"returned by `{name}`" in text


def test_command_line_writes_then_checks(tmp_path, capsys, monkeypatch, pages):
    from roofline_decode.symbolic import docs

    monkeypatch.setattr(docs, "render_derivation", lambda: pages["derivation.md"])  # rendering is tested above
    monkeypatch.setattr(docs, "render_glossary", lambda: pages["glossary.md"])
    assert main(["--check-docs", str(tmp_path)]) == 1  # nothing there yet: stale
    assert main(["--write-docs", str(tmp_path / "derivation.md")]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["derivation.md", "glossary.md"]
    assert main(["--check-docs", str(tmp_path)]) == 0
    assert write_docs(tmp_path, check=True) == []
    assert "wrote" in capsys.readouterr().out
