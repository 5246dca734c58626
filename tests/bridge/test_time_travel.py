"""Time travel through the bridge on the real binary, on both backends: revisions by time, ``log(since, until)``,
``event_time`` on the write helpers, and reads by valid time (``memory_valid_at`` and friends).

Commits are dated by a ``ManualClock`` (``Mnem(clock=...)`` sends it as ``--now``), so each answer follows from
the dates below and nothing waits.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pg_stores
import pytest
from conftest import MNEM
from manual_clock import ManualClock

import mnem_bridge
from mnem_bridge import InvalidRefError, Mnem, Store, UsageError, agents, times
from mnem_bridge.errors import ContractError
from mnem_store.errors import UsageError as EngineUsageError
from mnem_store.times import parse_time

from .support import fake_mnem


def ms(year: int, month: int, day: int) -> int:
    return int(datetime(year, month, day, tzinfo=UTC).timestamp() * 1000)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(ms(2026, 1, 10))


@pytest.fixture
def plans(store: Path, clock: ManualClock) -> Iterator[Store]:
    """docs/time.md's customer: Enterprise in January; in May the agent learns it became Pro in March."""
    with Mnem(MNEM, clock=clock) as client, Store(pg_stores.address(store), client=client) as opened:
        agents.remember(opened, "plan", "enterprise", source="ticket-4821", summary="open the case")
        clock.ms = ms(2026, 5, 20)
        agents.remember(opened, "plan", "pro", source="billing-note-8842", event_time="2026-03-01",
                        summary="reconcile the plan")
        clock.ms = ms(2026, 6, 1)
        agents.remember_many(opened, [{"id": "seats", "content": 40, "event_time": datetime(2026, 4, 2)},
                                      {"id": "owner", "content": "dana"}], summary="count seats")
        yield opened


def test_revisions_by_time_read_what_was_known_then(plans: Store) -> None:
    jan, may = plans.log(first_parent=True)[:-3:-1]
    assert plans.resolve("main@{2026-04-15}") == jan.id
    assert plans.state_at("main@{2026-04-15}")["plan"].content == "enterprise"
    assert plans.working_node("plan", at=times.at_time(None, datetime(2026, 5, 20))) == plans.working_node(
        "plan", at=may.id)
    assert plans.resolve(times.at_time("main", ms(2026, 5, 20) - 1)) == jan.id
    with pytest.raises(InvalidRefError, match="give a time at or after it"):
        plans.state_at("main@{2025-12-31}")


def test_log_since_and_until(plans: Store) -> None:
    assert [c.message for c in plans.log(since="2026-05-01")] == ["count seats", "reconcile the plan"]
    assert [c.message for c in plans.log(until=datetime(2026, 5, 19, tzinfo=UTC))] == ["open the case"]
    assert [c.message for c in plans.log(since=ms(2026, 5, 20), until="2026-05-20T00:00:00Z")] == [
        "reconcile the plan"]
    with pytest.raises(UsageError, match="not a time"):
        plans.log(since="last week")


def test_event_time_is_stored_as_unix_ms_from_every_form(plans: Store) -> None:
    assert plans.working_node("plan").event_time == ms(2026, 3, 1)  # ISO text
    assert plans.working_node("seats").event_time == ms(2026, 4, 2)  # a naive datetime is UTC
    assert plans.working_node("owner").event_time is None
    plus_two = datetime(2026, 3, 1, 2, tzinfo=timezone(timedelta(hours=2)))
    plans.write([{"id": "tier", "content": "gold", "event_time": plus_two}], message="tier")
    assert plans.working_node("tier").event_time == ms(2026, 3, 1)
    before = plans.log()
    for bad in ("March", "", True, 1.5):
        with pytest.raises(UsageError, match="not a time"):
            agents.remember(plans, "plan", "free", event_time=bad)  # type: ignore[arg-type]
        with pytest.raises(UsageError, match="not a time"):
            agents.remember_many(plans, [{"id": "x", "content": 1, "event_time": bad}])
    assert plans.log() == before  # a refused time wrote nothing


def test_valid_time_is_not_known_time(plans: Store) -> None:
    assert plans.node_valid_at("plan", "2026-04-15").content == "pro"  # type: ignore[union-attr]
    assert plans.node_valid_at("plan", datetime(2026, 2, 1)).content == "enterprise"  # type: ignore[union-attr]
    assert plans.node_valid_at("plan", ms(2025, 1, 1)) is None
    held = plans.memory_valid_at("2026-04-15")
    assert {key: node.content for key, node in held.items()} == {"plan": "pro", "seats": 40}
    as_known = plans.memory_valid_at("2026-04-15", at="main@{2026-04-30}")
    assert {key: node.content for key, node in as_known.items()} == {"plan": "enterprise"}
    timed = plans.valid_times("2026-04-15", ["plan"])
    assert (timed["plan"].created, timed["plan"].updated) == (ms(2026, 1, 10), ms(2026, 3, 1))
    assert list(plans.valid_times("2026-06-02", prefixes=["s", "o"])) == ["owner", "seats"]
    with pytest.raises(UsageError, match="not a time"):
        plans.memory_valid_at("soon")


def test_the_bridge_reads_times_as_the_binary_does() -> None:
    """``to_ms`` turns an ``event_time`` into Unix ms on this side of the process boundary; the binary reads
    revisions, ``--since`` and ``--valid-at`` on the other: the two must agree on every form."""
    for text in ("2026-12-01", "2026-12-01T09:30", "2026-12-01T09:30Z", "2026-12-01T09:30:00.250+02:00",
                 "2026-12-01 09:30:00.999", "1764547200000", "0", "20261201"):
        assert times.to_ms(text) == parse_time(text), text
    for text in ("yesterday", " 2026-12-01", "2026-13-01", "", "-5", "\uff11\uff12"):
        with pytest.raises(UsageError):
            times.to_ms(text)
        with pytest.raises(EngineUsageError):
            parse_time(text)


def test_a_binary_without_the_features_is_a_contract_error(tmp_path: Path) -> None:
    binary = fake_mnem(tmp_path, "print('{}')")
    (tmp_path / "store" / ".mnem").mkdir(parents=True)
    with Mnem(binary) as client, mnem_bridge.open(tmp_path / "store", client=client) as store:
        with pytest.raises(ContractError, match="log-time"):
            store.log(since="2026-01-01")
        with pytest.raises(ContractError, match="valid-at"):
            store.memory_valid_at("2026-01-01")
        with pytest.raises(ContractError, match="valid-at"):
            store.valid_times("2026-01-01")
