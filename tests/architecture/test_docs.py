"""The examples in docs/architecture/*.md are the library's actual output."""

import doctest
from pathlib import Path

import numpy as np
import pytest

PAGES = sorted((Path(__file__).resolve().parents[2] / "docs" / "architecture").glob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_architecture_page_examples_run(page):
    np.set_printoptions(legacy="1.25")
    # code fences become blank lines, so a fence never reads as expected output
    text = "\n".join("" if line.startswith("```") else line for line in page.read_text(encoding="utf-8").splitlines())
    test = doctest.DocTestParser().get_doctest(text, {}, page.name, str(page), 0)
    # placeholders such as "path/to/config.json" show a call, not an output
    test.examples = [e for e in test.examples if "path/to/" not in e.source]
    # a page without examples would pass whatever the library does: each page shows its numbers
    assert test.examples, f"{page.name} has no >>> examples; show the page's figures as library output"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0

