"""Limits on one call over MCP, on both backends: each write tool is refused past ``mnem``'s limits, coded ``usage``,
naming the limit and the variable, and nothing is written; the largest allowed value is written and recalled whole.

The server's ``mnem`` worker inherits the server's environment, so a ``MNEM_MAX_*`` variable set where mnem-mcp
starts holds for every tool (``mnem_store.limits``): set on the spawned server (stdio), or on this process for a
server built in it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pg_stores
import pytest
from conftest import run_mnem, store_fingerprint
from mcp_support import Mode, call, connect, fail

pytestmark = pytest.mark.anyio

SMALL = {"MNEM_MAX_ID_BYTES": "20", "MNEM_MAX_VALUE_BYTES": "200", "MNEM_MAX_WRITE_NODES": "3"}
MiB = 1 << 20


def conflicting(store: Path) -> None:
    """``plan`` changed differently on ``main`` and ``side``: merging ``side`` needs a resolution."""
    for args in (["write", "-m", "base"], ["checkout", "-b", "side"], ["write", "-m", "theirs"],
                 ["checkout", "main"], ["write", "-m", "ours"]):
        content = {"base": "free", "theirs": "pro", "ours": "enterprise"}.get(args[-1])
        payload = None if content is None else json.dumps({"put": [{"id": "plan", "content": content}]})
        assert run_mnem(*args, cwd=store, input=payload).code == 0


@pytest.mark.parametrize("mode", ["in-process", "stdio"])
async def test_each_write_tool_is_refused_past_a_limit_and_writes_nothing(store: Path, mode: Mode,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    conflicting(store)
    if mode == "in-process":
        for name, value in SMALL.items():
            monkeypatch.setenv(name, value)
    async with connect(mode, pg_stores.address(store), tools="all", env=SMALL) as client:
        before = store_fingerprint(store)
        for tool, arguments, option in [
            ("remember", {"id": "doc", "content": "v" * 199}, "MNEM_MAX_VALUE_BYTES"),
            ("remember", {"id": "k" * 21, "content": 1}, "MNEM_MAX_ID_BYTES"),
            ("revise", {"id": "plan", "content": "p" * 150, "source": "s" * 100}, "MNEM_MAX_VALUE_BYTES"),
            ("remember_many", {"items": [{"id": str(i), "content": i} for i in range(4)]}, "MNEM_MAX_WRITE_NODES"),
            ("merge", {"theirs": "side", "resolutions": {"plan": {"content": "x" * 199}}}, "MNEM_MAX_VALUE_BYTES"),
        ]:
            first = (await fail(client, tool, **arguments)).splitlines()[0]  # then a rerun: line, for a local client
            assert first.startswith("usage: ") and f"({option}); " in first, (tool, first[:500])
            assert first.endswith(f"or raise {option} (0 lifts the limit)"), (tool, first[:500])
        assert store_fingerprint(store) == before


async def test_the_largest_allowed_value_round_trips_and_one_byte_more_is_refused(store: Path) -> None:
    """At the default limit (1 MiB of compact JSON) over the real stdio wire; BENCHMARKS.md times this recall."""
    largest = "x" * (MiB - 2)  # with its quotes, 1 MiB exactly
    async with connect("stdio", pg_stores.address(store)) as client:
        await call(client, "remember", id="doc", content=largest)
        assert (await call(client, "recall", id="doc"))["content"] == largest
        text = await fail(client, "remember", id="doc", content=largest + "x")
        assert text.startswith('usage: put[0] (node "doc") holds 1048577 bytes'), text[:300]
        assert (await call(client, "recall", id="doc"))["content"] == largest


async def test_the_variable_where_the_server_starts_lifts_the_limit(store: Path) -> None:
    big = "v" * (2 * MiB)
    async with connect("stdio", pg_stores.address(store)) as client:
        assert "(MNEM_MAX_VALUE_BYTES); " in await fail(client, "remember", id="doc", content=big)
    async with connect("stdio", pg_stores.address(store), env={"MNEM_MAX_VALUE_BYTES": "0"}) as client:
        await call(client, "remember", id="doc", content=big)
        assert (await call(client, "recall", id="doc"))["content"] == big
