"""Shared pytest setup: doctests print numpy scalars as plain numbers (numpy >= 2 repr)."""

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _plain_numpy_repr(doctest_namespace):
    np.set_printoptions(legacy="1.25")
    yield
