"""The worked answers in docs/planning.md are the library's actual output."""

from tests.markdown_examples import DOCS, run_page


def test_planning_page_examples_run():
    run_page(DOCS / "planning.md", min_examples=8)
