"""LangGraph's SqliteStore TTL suite, run against MnemosyneStore on a SQLite-backed store.

Ported from langgraph's ``libs/checkpoint-sqlite/tests/test_ttl.py``: each
test is named after the upstream test it restates, with the same checks.
TTLs are upstream's, in minutes as upstream gives them; where upstream
sleeps, the store's ``ManualClock`` is moved on by as long, so nothing here
waits and every expiry falls exactly where upstream's timeline puts it.
The sweeper tests keep upstream's sweep interval (it wakes by the real
clock) and wait for its commit.  ``sweep_ttl``, ``start_ttl_sweeper`` and
``stop_ttl_sweeper`` are MnemosyneStore's (synchronous) methods, called
from the async tests too, where upstream awaited AsyncSqliteStore's.  What
was changed, and why: docs/langgraph-ported.md.
"""

from __future__ import annotations

import pytest
from manual_clock import ManualClock, eventually
from store_support import StoreFactory

from mnem_langgraph import MnemosyneStore

pytest_plugins = ["ported_stores"]


def minutes(seconds: float) -> float:
    """Upstream's TTLs are seconds, given to the store in minutes."""
    return seconds / 60


async def aget_item1(store: MnemosyneStore) -> None:
    """item1 is there, with the value the async tests wrote."""
    item = await store.aget(("test",), "item1")
    assert item is not None and item.value["value"] == "test"


async def aswept_item1(store: MnemosyneStore, clock: ManualClock, seconds: float) -> None:
    """``seconds`` later (where upstream sleeps) and after a sweep, item1 is gone."""
    clock.advance(seconds=seconds)
    store.sweep_ttl()  # type: ignore[attr-defined]
    assert await store.aget(("test",), "item1") is None


def swept(store: MnemosyneStore, key: str) -> bool:
    """Whether the last commit is a sweep that removed ``test:key``."""
    return any(c.message.startswith("expire ") and f"test:{key}" in c.message for c in store.history(limit=1))


def test_ttl_basic(new_lite_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_ttl.py::test_ttl_basic."""
    clock = ManualClock()
    store = new_lite_store(ttl={"default_ttl": minutes(1)}, clock=clock)
    store.put(("test",), "item1", {"value": "test"})
    item = store.get(("test",), "item1")
    assert item is not None and item.value["value"] == "test"
    clock.advance(seconds=1 + 1.0)
    store.sweep_ttl()  # type: ignore[attr-defined]
    assert store.get(("test",), "item1") is None


def test_ttl_refresh(new_lite_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_ttl.py::test_ttl_refresh."""
    clock = ManualClock()
    store = new_lite_store(ttl={"default_ttl": minutes(1), "refresh_on_read": True}, clock=clock)
    store.put(("test",), "item1", {"value": "test"})

    clock.advance(seconds=1 - 0.5)  # almost expired
    assert store.sweep_ttl() == 0  # type: ignore[attr-defined]
    assert store.get(("test",), "item1", refresh_ttl=True) is not None  # restarts the TTL

    clock.advance(seconds=1 - 0.5)  # at the first expiry, not the refreshed one
    assert store.sweep_ttl() == 0  # type: ignore[attr-defined]
    item = store.get(("test",), "item1")  # refresh_on_read: restarts it again
    assert item is not None and item.value["value"] == "test"

    clock.advance(seconds=1 + 0.75)  # no read this time
    assert store.sweep_ttl() == 1  # type: ignore[attr-defined]
    assert store.get(("test",), "item1") is None


def test_ttl_sweeper(new_lite_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_ttl.py::test_ttl_sweeper.

    Upstream sleeps past the TTL and a sweep interval; here the clock moves
    past the TTL and the test waits for the sweeper's commit.
    """
    clock = ManualClock()
    ttl = minutes(2)
    store = new_lite_store(ttl={"default_ttl": ttl, "sweep_interval_minutes": ttl / 2}, clock=clock)
    store.start_ttl_sweeper()  # type: ignore[attr-defined]
    store.put(("test",), "item1", {"value": "test"})
    assert store.get(("test",), "item1") is not None
    clock.advance(seconds=2 + 2 / 2 + 0.5)  # expired
    eventually(lambda: swept(store, "item1"), "the sweeper's commit")
    assert store.get(("test",), "item1") is None
    store.stop_ttl_sweeper()  # type: ignore[attr-defined]


def test_ttl_custom_value(new_lite_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_ttl.py::test_ttl_custom_value."""
    clock = ManualClock()
    store = new_lite_store(clock=clock)
    store.put(("test",), "item1", {"value": "short"}, ttl=minutes(1))
    store.put(("test",), "item2", {"value": "long"}, ttl=minutes(3))

    clock.advance(seconds=2)
    store.sweep_ttl()  # type: ignore[attr-defined]
    assert store.get(("test",), "item1") is None
    assert store.get(("test",), "item2") is not None

    clock.advance(seconds=4)
    store.sweep_ttl()  # type: ignore[attr-defined]
    assert store.get(("test",), "item2") is None


def test_ttl_override_default(new_lite_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_ttl.py::test_ttl_override_default."""
    clock = ManualClock()
    store = new_lite_store(ttl={"default_ttl": minutes(5)}, clock=clock)
    store.put(("test",), "item1", {"value": "override"}, ttl=minutes(1))  # shorter than the default
    store.put(("test",), "item2", {"value": "default"})  # the default
    store.put(("test",), "item3", {"value": "permanent"}, ttl=None)  # none

    clock.advance(seconds=2)
    store.sweep_ttl()  # type: ignore[attr-defined]
    assert store.get(("test",), "item1") is None
    assert store.get(("test",), "item2") is not None
    assert store.get(("test",), "item3") is not None

    clock.advance(seconds=4)
    store.sweep_ttl()  # type: ignore[attr-defined]
    assert store.get(("test",), "item2") is None
    assert store.get(("test",), "item3") is not None


def test_search_with_ttl(new_lite_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_ttl.py::test_search_with_ttl."""
    clock = ManualClock()
    store = new_lite_store(ttl={"default_ttl": minutes(1)}, clock=clock)
    store.put(("test",), "item1", {"value": "apple"})
    store.put(("test",), "item2", {"value": "banana"})
    results = store.search(("test",), filter={"value": "apple"})
    assert len(results) == 1 and results[0].key == "item1"
    clock.advance(seconds=1 + 1)
    store.sweep_ttl()  # type: ignore[attr-defined]
    assert store.search(("test",), filter={"value": "apple"}) == []


@pytest.mark.anyio
async def test_async_ttl_basic(new_lite_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_ttl.py::test_async_ttl_basic."""
    clock = ManualClock()
    store = new_lite_store(ttl={"default_ttl": minutes(1)}, clock=clock)
    await store.aput(("test",), "item1", {"value": "test"})
    await aget_item1(store)
    await aswept_item1(store, clock, 1 + 1.0)


@pytest.mark.anyio
async def test_async_ttl_refresh(new_lite_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_ttl.py::test_async_ttl_refresh."""
    clock = ManualClock()
    store = new_lite_store(ttl={"default_ttl": minutes(1), "refresh_on_read": True}, clock=clock)
    await store.aput(("test",), "item1", {"value": "test"})
    clock.advance(seconds=1 - 0.5)
    assert await store.aget(("test",), "item1", refresh_ttl=True) is not None
    clock.advance(seconds=1 - 0.5)  # would have expired without the refresh
    await aget_item1(store)
    await aswept_item1(store, clock, 1 + 1.0)


@pytest.mark.anyio
async def test_async_ttl_sweeper(new_lite_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_ttl.py::test_async_ttl_sweeper (waits for the sweeper's commit)."""
    clock = ManualClock()
    ttl = minutes(2)
    store = new_lite_store(ttl={"default_ttl": ttl, "sweep_interval_minutes": ttl / 2}, clock=clock)
    store.start_ttl_sweeper()  # type: ignore[attr-defined]
    await store.aput(("test",), "item1", {"value": "test"})
    assert await store.aget(("test",), "item1") is not None
    clock.advance(seconds=2 + 2 / 2 + 0.5)
    eventually(lambda: swept(store, "item1"), "the sweeper's commit")
    assert await store.aget(("test",), "item1") is None
    store.stop_ttl_sweeper()  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_async_search_with_ttl(new_lite_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_ttl.py::test_async_search_with_ttl."""
    clock = ManualClock()
    store = new_lite_store(ttl={"default_ttl": minutes(1)}, clock=clock)
    await store.aput(("test",), "item1", {"value": "apple"})
    await store.aput(("test",), "item2", {"value": "banana"})
    results = await store.asearch(("test",), filter={"value": "apple"})
    assert len(results) == 1 and results[0].key == "item1"
    clock.advance(seconds=1 + 1)
    store.sweep_ttl()  # type: ignore[attr-defined]
    assert await store.asearch(("test",), filter={"value": "apple"}) == []


@pytest.mark.anyio
async def test_async_asearch_refresh_ttl(new_lite_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_ttl.py::test_async_asearch_refresh_ttl.

    A search with ``refresh_ttl=True`` restarts the TTL of what it returns, and only of that.
    """
    clock = ManualClock()
    ttl = 4.0  # upstream seconds
    store = new_lite_store(ttl={"default_ttl": minutes(ttl), "refresh_on_read": True}, clock=clock)
    ns = ("docs", "user1")
    await store.aput(ns, "item1", {"text": "content1", "id": 1})  # both expire at 1.0 x ttl
    await store.aput(ns, "item2", {"text": "content2", "id": 2})

    clock.advance(seconds=ttl * 0.75)
    found = await store.asearch(ns, filter={"id": 1}, refresh_ttl=True)  # item1 now expires at 1.75 x ttl
    assert len(found) == 1 and found[0].key == "item1"

    clock.advance(seconds=ttl * 0.5)  # at 1.25 x ttl: item2 expired, item1 not
    store.sweep_ttl()  # type: ignore[attr-defined]
    first = await store.aget(ns, "item1", refresh_ttl=False)
    assert first is not None, "Item1 should exist after asearch refresh and first sweep"
    assert first.value["text"] == "content1"
    assert await store.aget(ns, "item2", refresh_ttl=False) is None, "Item2 should be gone after its original TTL"

    clock.advance(seconds=ttl * 0.625)  # at 1.875 x ttl: item1's refreshed TTL is over too
    store.sweep_ttl()  # type: ignore[attr-defined]
    assert await store.aget(ns, "item1", refresh_ttl=False) is None, "Item1 should be gone after its refreshed TTL"
