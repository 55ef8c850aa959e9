"""The snippets of docs/plotting.md run and print what the page says."""

from tests.markdown_examples import DOCS, run_page

DOC = DOCS / "plotting.md"


def test_plotting_page_examples_run():
    run_page(DOC, min_examples=8)


def test_plotting_page_lists_every_example():
    examples = DOC.parents[1] / "examples"
    text = DOC.read_text(encoding="utf-8")
    for path in list(examples.glob("*.py")) + list(examples.glob("*.ipynb")):
        assert f"`{path.name}`" in text, path.name
