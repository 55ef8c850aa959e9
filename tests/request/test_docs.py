"""The worked examples of the request pages are the library's actual output."""

import pytest

from tests.markdown_examples import DOCS, run_page


@pytest.mark.parametrize("page", ["prefill.md", "request.md", "speculative.md"])
def test_page_examples_run(page):
    run_page(DOCS / page, min_examples=4)
