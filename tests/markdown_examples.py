"""Run the ``>>>`` examples of a docs page as a doctest: the pages show the library's output."""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np

DOCS = Path(__file__).resolve().parents[1] / "docs"


def run_page(page: Path, min_examples: int = 1, skip=None) -> None:
    """Assert that ``page`` has at least ``min_examples`` examples and that they all pass.

    Code fences become blank lines, so a fence never reads as expected output; ``skip`` drops
    examples that only show a call (e.g. placeholder paths)."""
    np.set_printoptions(legacy="1.25")
    text = "\n".join("" if line.startswith("```") else line for line in page.read_text(encoding="utf-8").splitlines())
    test = doctest.DocTestParser().get_doctest(text, {}, page.name, str(page), 0)
    if skip is not None:
        test.examples = [e for e in test.examples if not skip(e)]
    # a page without examples would pass whatever the library does
    assert len(test.examples) >= min_examples, f"{page.name}: {len(test.examples)} >>> examples, {min_examples} wanted"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"{page.name}: {runner.failures} example(s) give other output"
