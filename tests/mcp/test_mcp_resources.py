"""The four resources, their cache hints on each protocol era, and what a cached reader sees after a write."""

from __future__ import annotations

import json
from pathlib import Path

import pg_stores
import pytest
from mcp import MCPError
from mcp.client.caching import CacheConfig
from mcp_support import MODES, Mode, call, connect

pytestmark = pytest.mark.anyio

DAY_MS = 86_400_000


def text(result) -> object:
    """The JSON document of a single-content read result."""
    (content,) = result.contents
    assert content.mime_type == "application/json"
    return json.loads(content.text)


@pytest.mark.parametrize("mode", MODES)
async def test_resources_serve_memory_nodes_log_and_commits(mode: Mode, store: Path) -> None:
    async with connect(mode, pg_stores.address(store)) as client:
        listed = await client.list_resources()
        assert sorted(str(r.uri) for r in listed.resources) == ["mnem://log", "mnem://memory"]
        templates = await client.list_resource_templates()
        assert sorted(t.uri_template for t in templates.resource_templates) == [
            "mnem://commit/{id}", "mnem://memory/{node_id}"]

        first = (await call(client, "remember", id="plan", content="enterprise", source="ticket-1"))["commit"]
        second = (await call(client, "remember_many", items=[
            {"id": "plan", "content": "pro"}, {"id": "team:lead", "content": {"name": "alice"}}]))["commit"]

        memory = text(await client.read_resource("mnem://memory"))
        assert sorted(memory) == ["plan", "team:lead"] and memory["plan"]["content"] == "pro"
        assert text(await client.read_resource("mnem://memory/team:lead"))["content"] == {"name": "alice"}
        assert [c["id"] for c in text(await client.read_resource("mnem://log"))] == [second, first]
        assert text(await client.read_resource(f"mnem://commit/{second}")) == {
            "changed": {"plan": "modified", "team:lead": "added"},
            "state": memory,
        }
        at_first = text(await client.read_resource(f"mnem://commit/{first[:8]}"))
        assert at_first["changed"] == {"plan": "added"} and at_first["state"]["plan"]["content"] == "enterprise"

        assert text(await client.read_resource("mnem://memory/nobody")) is None  # working_node's "nothing"
        with pytest.raises(MCPError) as bad_commit:
            await client.read_resource("mnem://commit/no-such-branch")
        assert bad_commit.value.error.message.startswith("invalid_ref: ")


@pytest.mark.parametrize("mode", ["in-process", "stdio"])
async def test_modern_reads_carry_per_resource_cache_hints(mode: Mode, store: Path) -> None:
    async with connect(mode, pg_stores.address(store)) as client:
        assert client.protocol_version == "2026-07-28"
        commit = (await call(client, "remember", id="plan", content="pro"))["commit"]
        hints = {}
        for uri in ("mnem://memory", "mnem://memory/plan", "mnem://log", "mnem://commit/main",
                    f"mnem://commit/{commit[:12]}", f"mnem://commit/{commit}"):
            read = await client.read_resource(uri)
            hints[uri] = (read.ttl_ms, read.cache_scope)
        live = (3_000, "private")
        assert hints == {
            "mnem://memory": live, "mnem://memory/plan": live, "mnem://log": live,
            "mnem://commit/main": live,  # a branch moves
            f"mnem://commit/{commit[:12]}": live,  # a prefix may become ambiguous
            f"mnem://commit/{commit}": (DAY_MS, "private"),  # a full id never changes
        }
        assert (await client.list_tools()).ttl_ms == 3_600_000


async def test_legacy_reads_carry_no_cache_hints(store: Path) -> None:
    async with connect("legacy", pg_stores.address(store)) as client:
        assert client.protocol_version == "2025-11-25"
        commit = (await call(client, "remember", id="plan", content="pro"))["commit"]
        for uri in ("mnem://memory", f"mnem://commit/{commit}"):
            read = await client.read_resource(uri)
            assert "ttl_ms" not in read.model_fields_set and "cache_scope" not in read.model_fields_set


@pytest.mark.parametrize("mode", ["in-process", "stdio"])
async def test_a_cached_reader_is_stale_until_it_bypasses_the_cache(mode: Mode, store: Path) -> None:
    async with connect(mode, pg_stores.address(store), cache=CacheConfig()) as client:
        await call(client, "remember", id="plan", content="enterprise")
        assert text(await client.read_resource("mnem://memory/plan"))["content"] == "enterprise"
        await call(client, "revise", id="plan", content="pro")
        # Within the 3 s hint the client serves its copy; that is what the hint promises, no more.
        assert text(await client.read_resource("mnem://memory/plan"))["content"] == "enterprise"
        fresh = await client.read_resource("mnem://memory/plan", cache_mode="bypass")
        assert text(fresh)["content"] == "pro"


async def test_a_listening_client_is_told_when_a_write_makes_memory_stale(store: Path) -> None:
    async with connect("in-process", pg_stores.address(store), cache=CacheConfig()) as client:
        await call(client, "remember", id="plan", content="enterprise")
        watched = ["mnem://memory", "mnem://memory/plan", "mnem://log"]
        async with client.listen(resource_subscriptions=watched) as events:
            before = [text(await client.read_resource(uri)) for uri in watched]
            await call(client, "revise", id="plan", content="pro")
            seen = set()
            async for event in events:
                seen.add(event.uri)
                if seen == set(watched):
                    break
        after = [text(await client.read_resource(uri)) for uri in watched]  # cache "use": evicted entries refetch
        assert before[0]["plan"]["content"] == before[1]["content"] == "enterprise"
        assert after[0]["plan"]["content"] == after[1]["content"] == "pro"
        assert len(after[2]) == len(before[2]) + 1
