"""A one-shot ``--json`` answer is the worker's answer byte for byte, though only the worker loads orjson."""

from __future__ import annotations

from unittest.mock import patch

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_store.canonical import I64_MIN, U64_MAX
from mnem_store.cli import jsonout

# What a store can hold: JSON with integers in the range the engine accepts, finite floats, any text.
scalars = (st.none() | st.booleans() | st.integers(I64_MIN, U64_MAX) | st.text()
           | st.floats(allow_nan=False, allow_infinity=False)
           | st.builds(lambda m, e: m * 10.0**e, st.floats(1, 10), st.integers(-12, 20)))
documents = st.recursive(scalars, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=30)


@pytest.fixture
def one_shot(monkeypatch: pytest.MonkeyPatch) -> None:
    """jsonout as a one-shot process has it: orjson not chosen."""
    monkeypatch.setattr(jsonout, "orjson", None)


@settings(max_examples=500, deadline=None)
@given(documents)
def test_the_standard_library_path_writes_orjsons_bytes(document: object) -> None:
    with patch.object(jsonout, "orjson", None):  # as a one-shot process has it
        assert jsonout.dumps(document).encode() == orjson.dumps(document)


def test_text_that_is_not_unicode_is_refused_alike(one_shot: None) -> None:
    for document in ({"id": "bad \udc80"}, ["e-0 \ud800"]):
        with pytest.raises(TypeError):
            orjson.dumps(document)
        with pytest.raises(TypeError):
            jsonout.dumps(document)

