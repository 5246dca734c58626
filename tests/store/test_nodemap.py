"""NodeMap: a derived map reads exactly as a dict with the same changes applied, folds included."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_store import nodemap
from mnem_store.nodemap import NodeMap

ids = st.sampled_from([f"n{i}" for i in range(12)])
objects = st.one_of(st.none(), st.sampled_from([bytes([i]) * 32 for i in range(3)]))
steps = st.lists(st.dictionaries(ids, objects, max_size=5), max_size=30)


@settings(max_examples=200)
@given(start=st.dictionaries(ids, objects.filter(lambda o: o is not None)), steps=steps, fold=st.integers(1, 6))
def test_a_derived_map_reads_as_the_dict_it_stands_for(start, steps, fold):
    with mock.patch.object(nodemap, "FOLD_AT", fold):  # fold often, so folds meet every kind of change
        check_steps(start, steps)


def check_steps(start, steps):
    current, expected = NodeMap(dict(start)), dict(start)
    history = [(current, dict(expected))]
    for changes in steps:
        derived, effective = current.changed(changes)
        wanted = {k: v for k, v in changes.items() if expected.get(k) != v}
        assert effective == wanted
        for node_id, raw in changes.items():
            if raw is None:
                expected.pop(node_id, None)
            else:
                expected[node_id] = raw
        assert dict(derived) == expected and len(derived) == len(expected)
        assert sorted(derived) == sorted(expected) and len(list(derived)) == len(expected)
        for node_id in [f"n{i}" for i in range(12)]:
            assert (node_id in derived) == (node_id in expected)
            assert derived.get(node_id) == expected.get(node_id)
        assert (derived is current) == (not wanted)
        current = derived
        history.append((current, dict(expected)))
    for earlier, held in history:  # deriving never changes the map derived from
        assert dict(earlier) == held


def test_a_removed_id_raises_key_error():
    derived, _ = NodeMap({"a": b"1" * 32}).changed({"a": None})
    with pytest.raises(KeyError):
        derived["a"]
