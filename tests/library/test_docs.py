"""The examples of docs/testing.md run and give the printed output."""

import doctest
from pathlib import Path

import numpy as np
import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def test_testing_page_examples_run():
    pytest.importorskip("xarray")
    np.set_printoptions(legacy="1.25")
    text = "\n".join("" if line.startswith("```") else line for line in DOC.read_text(encoding="utf-8").splitlines())
    test = doctest.DocTestParser().get_doctest(text, {}, "testing.md", str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert len(test.examples) >= 10
    assert runner.failures == 0
