"""``MnemosyneStore`` refuses what it cannot do exactly, with a ``ValueError`` that names the fix, and changes nothing.

* A value holding an integer beyond 64 bits is refused by ``put`` (and by a
  batch), on both backends, never stored as the nearest float
  (docs/differences.md, "Exact numbers"); the edges of 64 bits round-trip.
* ``search`` and ``list_namespaces`` refuse a ``limit``, ``offset`` or
  ``max_depth`` out of range (``paging``) in every query mode, through
  ``batch``, ``abatch`` and a view of the past, before anything is read.
* A graph's state is the serializer's bytes, never JSON numbers: LangGraph's
  own serializer refuses an integer beyond 64 bits, for every saver alike.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import anyio
import pg_stores
import pytest
from conftest import BACKENDS, MNEM, new_store, store_fingerprint, strict_equal
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import ListNamespacesOp, PutOp, SearchOp

import mnem_bridge
from mnem_langgraph import MnemosyneSaver, MnemosyneStore
from mnem_langgraph.paging import MAX_PAGING


@pytest.fixture(params=BACKENDS)
def folder(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return new_store(tmp_path / "memory", request.param)


@pytest.fixture
def store(folder: Path) -> Iterator[MnemosyneStore]:
    with MnemosyneStore(pg_stores.address(folder), author="tester", mnem=MNEM) as opened:
        opened.put(("a",), "k1", {"text": "hello world"})
        opened.put(("a", "b"), "k2", {"text": "hello"})
        yield opened


@pytest.mark.parametrize("value", [{"n": 2**64}, {"n": -(2**63) - 1}, {"n": [1, {"m": 10**30}]}, {"n": -(10**400)}],
                         ids=["2^64", "-2^63-1", "nested-10^30", "-10^400"])
def test_a_value_beyond_64_bits_is_refused_not_rounded(store: MnemosyneStore, folder: Path, value: Any) -> None:
    before = store_fingerprint(folder)
    for write in (lambda: store.put(("a",), "big", value),
                  lambda: store.batch([PutOp(("a",), "ok", {"n": 1}), PutOp(("a",), "big", value)])):
        with pytest.raises(mnem_bridge.UsageError, match="outside the range a store keeps exactly") as caught:
            write()
        assert isinstance(caught.value, ValueError) and "store it as a string" in str(caught.value)
        assert store_fingerprint(folder) == before
    assert store.get(("a",), "big") is None and store.get(("a",), "ok") is None


def test_the_edges_of_64_bits_round_trip(store: MnemosyneStore) -> None:
    value = {"max": 2**64 - 1, "min": -(2**63), "mid": 2**63, "zero": -0.0, "tiny": 5e-324}
    store.put(("a",), "edges", value)
    item = store.get(("a",), "edges")
    assert item is not None and strict_equal(item.value, value)


#: Paging arguments out of range, each with the argument the message must name.
BAD_SEARCH: list[tuple[dict[str, Any], str]] = [
    ({"offset": -1}, "offset"), ({"limit": -1}, "limit"), ({"offset": MAX_PAGING + 1}, "offset"),
    ({"limit": 2**70}, "limit"), ({"offset": 1.5}, "offset"), ({"limit": "3"}, "limit"), ({"limit": True}, "limit"),
    ({"offset": None}, "offset"),
]
BAD_LISTING = [*BAD_SEARCH, ({"max_depth": 0}, "max_depth"), ({"max_depth": -1}, "max_depth"),
               ({"max_depth": 1.5}, "max_depth"), ({"max_depth": 2**70}, "max_depth")]


def refused(name: str, call: Any, *args: Any, **kwargs: Any) -> None:
    with pytest.raises(mnem_bridge.UsageError) as caught:
        call(*args, **kwargs)
    assert str(caught.value).startswith(f"{name} must be a whole number from "), caught.value
    assert f"to {MAX_PAGING}" in str(caught.value)


@pytest.mark.parametrize("mode", ["substring", "bm25"])
def test_paging_out_of_range_is_a_usage_error_in_every_query_mode(folder: Path, mode: Any) -> None:
    with MnemosyneStore(pg_stores.address(folder), author="tester", mnem=MNEM, query_mode=mode) as store:
        store.put(("a",), "k1", {"text": "hello world"})
        before = store_fingerprint(folder)
        for arguments, name in BAD_SEARCH:
            for query in (None, "hello"):
                refused(name, store.search, ("a",), query=query, **arguments)
                refused(name, store.batch, [SearchOp(("a",), None, 10, 0, query)._replace(**arguments)])
                refused(name, anyio.run, functools.partial(store.asearch, ("a",), query=query, **arguments))
                refused(name, store.at("HEAD").search, ("a",), query=query, **arguments)
        for arguments, name in BAD_LISTING:
            refused(name, store.list_namespaces, **arguments)
            refused(name, store.batch, [ListNamespacesOp(None, None, 100, 0)._replace(**arguments)])
        assert store_fingerprint(folder) == before


def test_paging_in_range_answers_as_before(store: MnemosyneStore) -> None:
    """The edges of the ranges: nothing for ``limit=0``, nothing past the end, everything for the largest limit."""
    assert store.search(("a",), limit=0) == []
    assert store.search(("a",), offset=MAX_PAGING, limit=MAX_PAGING) == []
    assert [item.key for item in store.search(("a",), query="hello", limit=MAX_PAGING)] == ["k1", "k2"]
    assert store.list_namespaces(max_depth=1, limit=MAX_PAGING) == [("a",)]
    assert store.list_namespaces(offset=1) == [("a", "b")]


class State(TypedDict):
    numbers: Annotated[list[int], operator.add]


def test_a_checkpointed_state_beyond_64_bits_is_refused_as_by_langgraphs_own_saver(folder: Path) -> None:
    """A saver's values are LangGraph's serializer's bytes, never JSON numbers: what it refuses, no saver stores.

    LangGraph's msgpack serializer refuses an integer beyond 64 bits (``TypeError``) for ``InMemorySaver``
    and ``MnemosyneSaver`` alike, so no checkpoint holds it; within 64 bits the state is exact.
    """
    graph = StateGraph(State)
    graph.add_node("grow", lambda state: {"numbers": [2**64 - 1, -(2**63)]})
    graph.add_edge(START, "grow")
    graph.add_edge("grow", END)
    config: Any = {"configurable": {"thread_id": "t"}}
    with MnemosyneSaver(pg_stores.address(folder), author="graph", mnem=MNEM) as saver:
        for checkpointer in (InMemorySaver(), saver):
            app = graph.compile(checkpointer=checkpointer)
            big: Any = {"configurable": {"thread_id": "big"}}
            with pytest.raises(TypeError, match="64-bit"):
                app.invoke({"numbers": [2**64]}, big)
            assert "numbers" not in app.get_state(big).values  # no checkpoint holds it, rounded or otherwise
            app.invoke({"numbers": [0]}, config)
            assert app.get_state(config).values["numbers"] == [0, 2**64 - 1, -(2**63)]
