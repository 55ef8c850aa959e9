"""The examples in docs/architecture/*.md are the library's actual output."""

import pytest

from tests.markdown_examples import DOCS, run_page

PAGES = sorted((DOCS / "architecture").glob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_architecture_page_examples_run(page):
    # placeholders such as "path/to/config.json" show a call, not an output; every page must
    # still show its figures as library output
    run_page(page, min_examples=1, skip=lambda example: "path/to/" in example.source)
