"""The examples of docs/testing.md run and give the printed output."""

import pytest

from tests.markdown_examples import DOCS, run_page


def test_testing_page_examples_run():
    pytest.importorskip("xarray")
    run_page(DOCS / "testing.md", min_examples=10)
