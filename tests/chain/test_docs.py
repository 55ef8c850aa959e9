"""The worked answers in docs/constraints.md are the library's actual output."""

from tests.markdown_examples import DOCS, run_page


def test_constraints_page_examples_run():
    run_page(DOCS / "constraints.md", min_examples=10)
