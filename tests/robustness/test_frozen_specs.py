"""Assigning to a spec raises our own error (tests/foundation/test_specs.py covers real fields)."""

import pytest

from roofline_decode import load_model
from roofline_decode.errors import RooflineError


def test_assigning_an_unknown_name_is_refused_with_our_error():
    model = load_model("llama-3.1-8b")
    with pytest.raises(RooflineError, match="Model has no field 'layers'"):
        model.layers = 3  # type: ignore[attr-defined]  # the point of the test: not a field
