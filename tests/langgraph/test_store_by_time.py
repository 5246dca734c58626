"""``MnemosyneStore`` by time, on both backends: ``at(datetime)`` (what the agent knew then), ``history(since,
until)``, ``_meta={"event_time": ...}`` on ``put``, and ``valid_at(T)`` (what held then, by event times).

A ``ManualClock`` dates every commit, so each answer follows from the dates below and nothing waits.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pg_stores
import pytest
from conftest import MNEM
from manual_clock import ManualClock

from mnem_bridge import InvalidRefError, UsageError
from mnem_langgraph import MnemosyneStore, ReadOnlyError

NS = ("customers", "4821")


def ms(year: int, month: int, day: int) -> int:
    return int(datetime(year, month, day, tzinfo=UTC).timestamp() * 1000)


@pytest.fixture
def plans(store: Path) -> Iterator[MnemosyneStore]:
    """docs/time.md's customer: Enterprise in January; learnt in May it became Pro in March; closed in August."""
    clock = ManualClock(ms(2026, 1, 10))
    with MnemosyneStore(pg_stores.address(store), author="agent", mnem=MNEM, clock=clock) as opened:
        opened.put(NS, "plan", {"tier": "enterprise"})
        clock.ms = ms(2026, 5, 20)
        opened.put(NS, "plan", {"tier": "pro", "_meta": {"source": "billing-note-8842", "event_time": "2026-03-01"}})
        clock.ms = ms(2026, 6, 1)
        opened.put(NS, "seats", {"n": 40})
        clock.ms = ms(2026, 8, 1)
        opened.delete(NS, "plan")
        yield opened


def tier(view: object) -> str | None:
    item = view.get(NS, "plan")  # type: ignore[attr-defined]
    return None if item is None else str(item.value["tier"])


def test_at_a_datetime_is_what_was_known_then(plans: MnemosyneStore) -> None:
    assert tier(plans.at(datetime(2026, 4, 15))) == "enterprise"  # naive: UTC
    assert tier(plans.at(datetime(2026, 5, 20, 1, tzinfo=timezone(timedelta(hours=2))))) == "enterprise"
    assert tier(plans.at(datetime(2026, 5, 20, tzinfo=UTC))) == "pro"
    assert tier(plans.at("main@{2026-07-01}")) == "pro"
    assert plans.at("main@{2026-07-01}").get(NS, "plan").value == {"tier": "pro"}  # type: ignore[union-attr]
    assert tier(plans.at(datetime(2026, 9, 1))) is None and tier(plans) is None
    with pytest.raises(InvalidRefError, match="give a time at or after it"):
        plans.at(datetime(2025, 12, 31))


def test_history_since_and_until(plans: MnemosyneStore) -> None:
    assert len(plans.history()) == 4
    since = plans.history(since=datetime(2026, 5, 20))
    assert [c.time for c in since] == [ms(2026, 8, 1), ms(2026, 6, 1), ms(2026, 5, 20)]
    assert [c.time for c in plans.history(1, until="2026-07-31")] == [ms(2026, 6, 1)]
    assert [c.time for c in plans.history(since=ms(2026, 5, 21), until=ms(2026, 7, 1))] == [ms(2026, 6, 1)]
    with pytest.raises(UsageError, match="not a time"):
        plans.history(since="a while ago")


def test_valid_at_is_what_held_then_by_event_time(plans: MnemosyneStore) -> None:
    april = plans.valid_at("2026-04-15")
    assert tier(april) == "pro"  # true since March, though learnt in May
    item = april.get(NS, "plan")
    assert item is not None and item.value == {"tier": "pro"}  # _meta is never stored
    assert (item.created_at, item.updated_at) == (datetime(2026, 1, 10, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC))
    assert tier(plans.valid_at(datetime(2026, 2, 1))) == "enterprise"
    assert tier(plans.valid_at(ms(2026, 8, 2))) is None  # the deletion (dated by its commit) ended it
    july = plans.valid_at("2026-07-01")
    assert sorted(item.key for item in july.search(NS)) == ["plan", "seats"]  # deleted since, but it held then
    found = april.search(NS, query="PRO")  # searched as the store searches: one engine read, in valid time
    assert [(i.key, i.value, i.updated_at) for i in found] == [
        ("plan", {"tier": "pro"}, datetime(2026, 3, 1, tzinfo=UTC))]
    assert plans.valid_at(datetime(2026, 1, 11)).list_namespaces() == [NS]
    assert plans.valid_at(datetime(2026, 1, 9)).list_namespaces() == [] == plans.valid_at("2026-01-09").search(NS)
    assert tier(plans.valid_at("2026-04-15", at="main@{2026-04-30}")) == "enterprise"  # valid then, as known then
    with pytest.raises(ReadOnlyError):
        april.put(NS, "plan", {"tier": "free"})
    with pytest.raises(UsageError, match="not a time"):
        plans.valid_at("whenever")


@pytest.mark.anyio
async def test_event_time_through_aput_and_a_valid_views_async_reads(store: Path) -> None:
    clock = ManualClock(ms(2026, 5, 20))
    with MnemosyneStore(pg_stores.address(store), mnem=MNEM, clock=clock) as opened:
        await opened.aput(NS, "plan", {"tier": "pro", "_meta": {"event_time": datetime(2026, 3, 1)}})
        found = await opened.valid_at("2026-03-02").aget(NS, "plan")
        assert found is not None and found.updated_at == datetime(2026, 3, 1, tzinfo=UTC)
        assert await opened.valid_at("2026-02-28").aget(NS, "plan") is None
        before = opened.history()
        for bad in ("March", 1.5, True):
            with pytest.raises(UsageError, match="not a time"):
                opened.put(NS, "plan", {"tier": "free", "_meta": {"event_time": bad}})
        assert opened.history() == before  # a refused time wrote nothing
