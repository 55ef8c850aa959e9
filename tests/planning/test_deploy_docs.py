"""docs/deploy.md: its examples run and give the numbers the text states."""

from pathlib import Path

from tests.markdown_examples import run_page

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_deploy_page_examples() -> None:
    run_page(DOCS / "deploy.md", min_examples=8)
