"""Values, provenance, times and filters, checked against InMemoryStore's own helpers.

The filter and namespace rules, which the engine applies (``mnem_store.filters``,
``mnem_store.search.Condition``), are compared with InMemoryStore's private
``_compare_values`` / ``_does_match`` over generated inputs (in process, so
hundreds of cases cost nothing); the oracle's crashes on missing or
non-numeric fields are the one documented difference.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.store.base import MatchCondition, PutOp, SearchOp
from langgraph.store.memory import _compare_values, _does_match

from mnem_bridge import UsageError
from mnem_langgraph import MnemosyneStore
from mnem_langgraph.convert import from_ms, split_meta, value_of
from mnem_store.filters import matches as matches_filter
from mnem_store.search import Condition

pytest_plugins = ["langgraph_fixtures"]


def test_meta_is_lifted_and_stripped():
    content, provenance = split_meta({"tier": "pro", "_meta": {"source": "billing-8842", "step": 31, "note": None}})
    assert content == {"tier": "pro"}
    assert provenance == {"source": "billing-8842", "step": "31"}
    assert split_meta({"x": 1}) == ({"x": 1}, {})


@pytest.mark.parametrize(
    "meta, error",
    [
        ("billing", "must be a dict"),
        ({"source": "s", "confidence": 0.9}, "unknown keys"),
        ({"source": ["a"]}, "must be text"),
        ({"step": True}, "must be text"),
    ],
)
def test_bad_meta_is_refused_not_dropped(meta, error):
    with pytest.raises(ValueError, match=error):
        split_meta({"x": 1, "_meta": meta})


def test_times_are_exact_utc():
    assert from_ms(0) == datetime(1970, 1, 1, tzinfo=UTC)
    assert from_ms(1_700_000_000_123) == datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)
    assert from_ms(-1) == datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)


@given(st.integers(-62_135_596_800_000, 253_402_300_799_999))  # datetime's years 1 to 9999
def test_every_millisecond_time_converts_exactly(ms):
    assert (from_ms(ms) - from_ms(0)) // timedelta(milliseconds=1) == ms
    assert from_ms(ms).microsecond % 1000 == 0 and from_ms(ms).tzinfo is UTC


def test_foreign_content_is_wrapped():
    assert value_of({"a": 1}) == {"a": 1}
    assert value_of("pro") == {"value": "pro"}


scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["a", "b", "7", "x"])
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=2) | st.dictionaries(
    st.sampled_from(["a", "b", "c"]), inner, max_size=2), max_leaves=5)
operators = st.dictionaries(st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]), scalars,
                            min_size=1, max_size=2)
filters = st.dictionaries(st.sampled_from(["a", "b", "c"]), values | operators, max_size=2)


def oracle(value, conditions):
    """InMemoryStore's answer, or None where it crashes (``float(None)``, ``float("x")``)."""
    try:
        return all(_compare_values(value.get(key), wanted) for key, wanted in conditions.items())
    except (TypeError, ValueError):
        return None


@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), values, max_size=3), filters)
def test_filter_matches_inmemorystore_wherever_it_answers(value, conditions):
    expected = oracle(value, conditions)
    if expected is not None:
        assert matches_filter(value, conditions) == expected


def test_a_condition_inmemorystore_crashes_on_is_no_match_or_a_string_order():
    assert not matches_filter({"a": None}, {"a": {"$gt": 1}})
    assert not matches_filter({"a": {"x": 1}}, {"a": {"$lt": 1}})
    assert not matches_filter({"a": "x"}, {"a": {"$gt": 1}})
    # Strings order by code point, as SqliteStore and PostgresStore compare them; numeric text as numbers.
    assert matches_filter({"a": "b"}, {"a": {"$gt": "a", "$lt": "c"}})
    assert not matches_filter({"a": "B"}, {"a": {"$gte": "a"}})
    assert matches_filter({"a": "10"}, {"a": {"$gt": "9"}})
    assert matches_filter({"a": True}, {"a": {"$eq": True, "$gte": 1}})


def test_filters_follow_dotted_paths_into_nested_values():
    value = {"author": {"name": "ada", "stats": {"posts": 12}}, "a.b": "literal", "tags": ["x"]}
    assert matches_filter(value, {"author.name": "ada"})
    assert matches_filter(value, {"a.b": "literal"})  # a key holding a dot is found whole, as InMemoryStore does
    assert matches_filter(value, {"author.missing.deeper": None})  # absent reads as None
    assert matches_filter(value, {"tags.0": None})  # paths go into dicts, not lists
    assert matches_filter(value, {"author.name": "ada", "author.stats.posts": {"$gte": 10, "$lt": 13}})
    assert not matches_filter(value, {"author.stats.posts": {"$gt": 12}})
    assert matches_filter(value, {"author.nickname": {"$ne": "bob"}})
    assert matches_filter(value, {"author.stats": {"posts": 12}})


def test_unsupported_operators_are_refused_before_anything_changes(mstore: MnemosyneStore) -> None:
    mstore.put(("a",), "k", {"a": 1})
    with pytest.raises(ValueError, match=r"'\$in'"):
        mstore.search(("a",), filter={"a": {"$in": [1]}})
    with pytest.raises(UsageError, match=r"\$eq, \$ne, \$gt"):  # the message lists what is allowed
        mstore.batch([SearchOp(("a",), {"a": {"$regex": "1"}}), PutOp(("a",), "k", None)])
    assert mstore.get(("a",), "k") is not None  # the batch's delete was not applied


labels = st.sampled_from(["a", "b", "c"])
paths = st.lists(labels | st.just("*"), max_size=3).map(tuple)


@given(st.sampled_from(["prefix", "suffix"]), paths, st.lists(labels, min_size=1, max_size=4).map(tuple))
def test_namespace_conditions_match_inmemorystore(kind, path, namespace):
    condition = MatchCondition(kind, path)
    assert Condition(kind, path).holds(namespace) == _does_match(condition, namespace)
