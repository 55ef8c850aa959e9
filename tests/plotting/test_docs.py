"""The snippets of docs/plotting.md run and print what the page says."""

import doctest
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "plotting.md"


def test_plotting_page_examples_run():
    # code fences become blank lines, so a fence never reads as expected output
    text = "\n".join("" if line.startswith("```") else line for line in DOC.read_text(encoding="utf-8").splitlines())
    test = doctest.DocTestParser().get_doctest(text, {}, "plotting.md", str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert len(test.examples) >= 8
    assert runner.failures == 0


def test_plotting_page_lists_every_example():
    examples = DOC.parents[1] / "examples"
    text = DOC.read_text(encoding="utf-8")
    for path in list(examples.glob("*.py")) + list(examples.glob("*.ipynb")):
        assert f"`{path.name}`" in text, path.name
