"""Shared pytest setup.

* Doctests print numpy scalars as plain numbers (numpy >= 2 changed their repr).
* Under CI (``CI`` set, as the CI runner does) hypothesis runs derandomized: the same examples
  every run, so a landing never depends on a lucky draw.  Locally the draws stay random and
  keep exploring.
"""

import os

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _plain_numpy_repr(doctest_namespace):
    np.set_printoptions(legacy="1.25")
    yield
