"""Time travel over MCP, on both backends: ``recall_at`` by date, ``history`` by range, ``event_time`` on the write
tools and ``recall(valid_at=...)``; every argument optional and additive (the ADR's rows stay as they are).

The past is written through the bridge with a ``ManualClock`` (commit times pinned in 2026); the server then
answers about it over the real protocol.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from conftest import MNEM
from manual_clock import ManualClock
from mcp_support import Mode, call, connect, fail

from mnem_bridge import Mnem, Store, agents

pytestmark = pytest.mark.anyio


def ms(year: int, month: int, day: int) -> int:
    return int(datetime(year, month, day, tzinfo=UTC).timestamp() * 1000)


def history_of_the_plan(store: Path) -> None:
    """docs/time.md's customer: Enterprise from January; learnt in May that it became Pro in March."""
    clock = ManualClock(ms(2026, 1, 10))
    with Mnem(MNEM, clock=clock) as client, Store(pg_stores.address(store), client=client) as opened:
        agents.remember(opened, "plan", "enterprise", summary="open the case")
        clock.ms = ms(2026, 5, 20)
        agents.remember(opened, "plan", "pro", event_time=ms(2026, 3, 1), summary="reconcile the plan")


@pytest.mark.parametrize("mode", ["in-process", "stdio"])
async def test_recall_at_a_date_and_valid_at_a_date(store: Path, mode: Mode) -> None:
    history_of_the_plan(store)
    async with connect(mode, pg_stores.address(store)) as client:
        # as known in April: the old plan; valid in April (by what is known now): the new one
        assert (await call(client, "recall_at", commit="main@{2026-04-15}", id="plan"))["content"] == "enterprise"
        assert (await call(client, "recall", id="plan", valid_at="2026-04-15"))["content"] == "pro"
        assert (await call(client, "recall", id="plan", valid_at=ms(2026, 2, 1)))["content"] == "enterprise"
        assert await call(client, "recall", id="plan", valid_at="2025-06-01") is None
        # both: valid in April as known at the end of April
        known = await call(client, "recall_at", commit="@{2026-04-30}", valid_at="2026-04-15")
        assert {key: node["content"] for key, node in known.items()} == {"plan": "enterprise"}
        assert list(await call(client, "recall", valid_at="2026-04-15", prefix="pl")) == ["plan"]
        subjects = [c["message"] for c in (await call(client, "history", since="2026-05-01"))]
        assert subjects == ["reconcile the plan"]
        assert [c["message"] for c in (await call(client, "history", until=ms(2026, 5, 19), limit=5))] == [
            "open the case"]
        assert len(await call(client, "history")) == 2  # the ADR's call is unchanged


async def test_event_time_from_every_write_tool(store: Path) -> None:
    async with connect("in-process", pg_stores.address(store)) as client:
        await call(client, "remember", id="plan", content="pro", event_time="2026-03-01")
        await call(client, "revise", id="seats", content=40, event_time="2026-03-01T01:00:00+01:00")
        await call(client, "remember_many", items=[{"id": "tier", "content": "gold", "event_time": ms(2026, 3, 1)},
                                                   {"id": "owner", "content": "dana"}])
        recalled = await call(client, "recall")
        assert {key: node["event_time"] for key, node in recalled.items()} == {
            "owner": None, "plan": ms(2026, 3, 1), "seats": ms(2026, 3, 1), "tier": ms(2026, 3, 1)}
        valid = await call(client, "recall", valid_at="2026-03-02")  # owner was learnt now, so not yet true then
        assert sorted(valid) == ["plan", "seats", "tier"]


async def test_bad_times_are_typed_errors_that_change_nothing(store: Path) -> None:
    history_of_the_plan(store)
    async with connect("in-process", pg_stores.address(store)) as client:
        before = await call(client, "history")
        assert (await fail(client, "remember", id="plan", content="free", event_time="March")).startswith("usage: ")
        text = await fail(client, "remember_many", items=[{"id": "x", "content": 1, "event_time": "soon"}])
        assert text.startswith("usage: ")
        assert (await fail(client, "recall_at", commit="main@{2025-01-01}")).startswith("invalid_ref: ")
        assert "give a time at or after it" in await fail(client, "recall_at", commit="main@{2025-01-01}", id="plan")
        assert (await fail(client, "recall_at", commit="main@{next week}")).startswith("invalid_ref: ")
        assert (await fail(client, "history", since="last week")).startswith("usage: ")
        assert (await fail(client, "recall", valid_at="whenever")).startswith("usage: ")
        assert (await fail(client, "recall", valid_at="2026-04-01", limit=5)).startswith("usage: ")
        assert await call(client, "history") == before


async def test_the_new_arguments_are_optional_and_described(store: Path) -> None:
    async with connect("in-process", pg_stores.address(store)) as client:
        tools: dict[str, Any] = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name, added in (("remember", "event_time"), ("revise", "event_time"), ("recall", "valid_at"),
                        ("recall_at", "valid_at"), ("history", "since"), ("history", "until")):
        schema = tools[name].input_schema
        assert added in schema["properties"] and added not in schema.get("required", []), (name, added)
        assert "ISO 8601" in schema["properties"][added]["description"], (name, added)
    assert tools["recall_at"].input_schema["required"] == ["commit"]
    assert "main@{" in tools["recall_at"].description
    item = tools["remember_many"].input_schema["$defs"]["RememberItem"]
    assert "event_time" in item["properties"] and set(item["required"]) == {"id", "content"}
