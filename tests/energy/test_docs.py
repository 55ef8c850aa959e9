"""The worked examples of docs/energy.md are the library's actual output."""

from tests.markdown_examples import DOCS, run_page


def test_energy_page_examples_run():
    run_page(DOCS / "energy.md", min_examples=10)
