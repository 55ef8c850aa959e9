"""docs/serving.md: its examples run and give the numbers the text states."""

from pathlib import Path

from tests.markdown_examples import run_page

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_serving_page_examples():
    run_page(DOCS / "serving.md", min_examples=5)
