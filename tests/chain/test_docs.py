"""The worked answers in docs/constraints.md are the library's actual output."""

import doctest
from pathlib import Path

import numpy as np

DOC = Path(__file__).resolve().parents[2] / "docs" / "constraints.md"


def test_constraints_page_examples_run():
    np.set_printoptions(legacy="1.25")
    # code fences become blank lines, so a fence never reads as expected output
    text = "\n".join("" if line.startswith("```") else line for line in DOC.read_text(encoding="utf-8").splitlines())
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, "constraints.md", str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert len(test.examples) >= 10
    assert runner.failures == 0
