"""The worked examples of docs/energy.md are the library's actual output."""

import doctest
from pathlib import Path

import numpy as np

DOC = Path(__file__).resolve().parents[2] / "docs" / "energy.md"


def test_energy_page_examples_run():
    np.set_printoptions(legacy="1.25")
    text = "\n".join("" if line.startswith("```") else line for line in DOC.read_text(encoding="utf-8").splitlines())
    test = doctest.DocTestParser().get_doctest(text, {}, "energy.md", str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert len(test.examples) >= 10
    assert runner.failures == 0
