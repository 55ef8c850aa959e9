"""The docs site (mkdocs.yml): every page under docs/ is in the navigation, every nav entry exists;
the home page links only to the site, and the getting-started page shows what the library prints.

`make docs` builds the site with ``mkdocs build --strict``; this test needs no mkdocs, so a page
added to docs/ without a nav entry fails ``make test`` too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NAV_ENTRY = re.compile(r"^\s*-\s*(?:[^:\n]+:\s*)?([\w./-]+\.md)\s*$")


def nav_pages(text: str) -> list[str]:
    """The .md paths listed under ``nav:`` in mkdocs.yml text (relative to docs/)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("nav:"))
    pages = []
    for line in lines[start + 1:]:
        if line and not line[0].isspace() and not line.startswith("-"):
            break  # the next top-level key ends the nav
        match = NAV_ENTRY.match(line)
        if match:
            pages.append(match.group(1))
    return pages


@pytest.fixture(scope="module")
def pages() -> list[str]:
    return nav_pages((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def test_every_docs_page_is_in_the_nav(pages):
    on_disk = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    missing = [p for p in on_disk if p not in pages]
    assert not missing, f"docs pages missing from mkdocs.yml nav: {missing}"


def test_every_nav_entry_exists_once(pages):
    assert [p for p in pages if not (DOCS / p).is_file()] == []
    assert len(pages) == len(set(pages))


def test_nav_parser_sees_a_missing_page():
    text = "site_name: x\nnav:\n  - Home: index.md\n  - Part:\n      - A: a/b.md\n      - c.md\nvalidation:\n  x: 1\n"
    assert nav_pages(text) == ["index.md", "a/b.md", "c.md"]


def test_home_page_links_stay_on_the_site():
    """index.md links only to pages of the site (the README is not on it), getting started first."""
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text)]
    assert targets[0] == "getting-started.md"
    outside = [t for t in targets if "://" in t or not (DOCS / t).resolve().is_relative_to(DOCS)
               or not (DOCS / t).is_file()]
    assert outside == []


def test_getting_started_python_examples_run():
    from tests.markdown_examples import run_page

    run_page(DOCS / "getting-started.md", min_examples=6)


def test_getting_started_cli_output_is_what_the_command_prints(capsys):
    """The page shows a command in a bash fence and its output in the plain fence after it."""
    import shlex

    from roofline_decode.cli import main

    page = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    shown = re.findall(r"```bash\n(roofline-decode [^\n]+)\n```\n\n```\n(.*?)```", page, flags=re.DOTALL)
    assert len(shown) == 1
    for command, output in shown:
        assert main(shlex.split(command)[1:]) == 0
        assert capsys.readouterr().out.strip() == output.strip()
