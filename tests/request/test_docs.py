"""The worked examples of the request pages are the library's actual output."""

import doctest
from pathlib import Path

import numpy as np
import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("page", ["prefill.md", "request.md", "speculative.md"])
def test_page_examples_run(page):
    np.set_printoptions(legacy="1.25")
    path = DOCS / page
    text = "\n".join("" if line.startswith("```") else line for line in path.read_text(encoding="utf-8").splitlines())
    test = doctest.DocTestParser().get_doctest(text, {}, page, str(path), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert len(test.examples) >= 4
    assert runner.failures == 0
