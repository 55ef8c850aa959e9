"""The examples of docs/parallel_layouts.md give the output the page shows."""

from tests.markdown_examples import DOCS, run_page


def test_parallel_layouts_page():
    run_page(DOCS / "parallel_layouts.md", min_examples=7)
