"""Upstream's plain operations, called as upstream's own mnem-mcp tests call them: a documented API that stays.

Upstream's ``mnem-mcp`` publishes, in ``mnem_mcp.server`` (its tests do
``from mnem_mcp import server``), one ``do_<tool>(store, ...)`` function per
tool over an open store, ``do_commit_view`` for the commit resource,
``error_code(exc)`` and ``resolve_store_path(explicit)``
(``../shared/reference/mnemosyne-sdk-and-adapters.md``, sections 2.1 and
2.6).  Its ``tests/test_server.py`` checks a belief's lifecycle through
them and the errors they raise; here the same claims are restated, on both
backends, through both import paths (``mnem_mcp.server.do_x`` and
``from mnem_mcp import do_x``), and every other operation is called once
and answered in upstream's JSON shape.  Each ``do_<tool>`` answers what
the tool itself answers a client, because it is the tool's own function.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from mcp.server.mcpserver.exceptions import ToolError

import mnem_bridge
import mnem_mcp
from mnem_mcp import TOOLS, server
from mnem_mcp.answers import plain
from mnem_mcp.binding import StoreBinding, locate_store
from mnem_mcp.identity import AUTHOR
from mnem_mcp.tools import MemoryTools

#: Every name of upstream's public API (reference, section 2.1), and where upstream's tests reach it.
UPSTREAM_API = ("build_server", "error_code", "resolve_store_path", "do_remember", "do_remember_many", "do_forget",
                "do_recall", "do_recall_at", "do_history", "do_why", "do_when_did", "do_whats_new",
                "do_commit_view", "do_branch", "do_switch", "do_merge")


@pytest.fixture
def opened(store: Path) -> Iterator[mnem_bridge.Store]:
    """The store open through the bridge, as upstream's tests open theirs with ``mnem.open(path)``."""
    with mnem_bridge.open(pg_stores.address(store)) as bridge_store:
        yield bridge_store


def is_json(value: Any) -> bool:
    """Whether ``value`` is plain JSON data, as upstream's operations answer (``to_dict()`` shapes)."""
    return json.loads(json.dumps(value)) == value


def test_every_name_of_upstreams_api_is_where_upstream_has_it() -> None:
    for name in UPSTREAM_API:
        assert callable(getattr(server, name)), name  # ``from mnem_mcp import server``; server.NAME
        assert getattr(mnem_mcp, name) is getattr(server, name), name  # the reference's ``mnem_mcp.NAME``
    tools = {spec.method.__name__ for spec in TOOLS}  # revise is remember's method
    assert {f"do_{name}" for name in tools} <= set(server.__all__) & set(mnem_mcp.__all__)


def test_the_operations_cover_a_beliefs_lifecycle(opened: mnem_bridge.Store) -> None:
    """Upstream's ``test_operations_cover_the_belief_lifecycle``, restated."""
    server.do_remember(opened, "plan", "enterprise", source="ticket-1", step="s1")
    server.do_remember(opened, "plan", "pro", observation="obs-7")
    server.do_remember_many(opened, [{"id": "seats", "content": 240}, {"id": "owner", "content": "alice"}])

    assert server.do_recall(opened, "plan")["content"] == "pro"
    assert set(server.do_recall(opened)) == {"plan", "seats", "owner"}

    why = server.do_why(opened, "plan")  # the value's commit, the fact with its provenance
    assert why["node"]["content"] == "pro"
    assert why["node"]["provenance"]["observation"] == "obs-7"

    found = server.do_when_did(opened, "plan", equals="pro")  # the commit that made it so, and its blame
    assert found["commit"] == why["commit"]
    assert found["blame"]["node"]["provenance"]["observation"] == "obs-7"

    server.do_forget(opened, "owner")
    assert server.do_recall(opened, "owner") is None
    assert len(server.do_history(opened)) == 4  # two remembers, one remember_many, one forget: a commit each


def test_the_operations_raise_the_typed_errors_upstream_raises(opened: mnem_bridge.Store) -> None:
    """Upstream's ``test_operations_raise_typed_errors``, restated, plus the helper that names their codes."""
    server.do_remember(opened, "a", 1)
    with pytest.raises(mnem_bridge.InvalidRefError) as ghost:  # the SDK's own error, not wrapped in a ToolError
        server.do_why(opened, "ghost")
    assert not isinstance(ghost.value, ToolError)
    with pytest.raises(ToolError) as no_condition:  # neither equals, absent nor present
        server.do_when_did(opened, "a")
    assert server.error_code(ghost.value) == "invalid_ref"
    assert server.error_code(no_condition.value) == "usage"  # a client is told usage: the call was malformed
    assert server.error_code(mnem_bridge.NoStoreError("nowhere")) == "no_store"


def test_every_other_operation_answers_upstreams_json(opened: mnem_bridge.Store) -> None:
    from mnem_mcp import (
        do_branch,
        do_commit_view,
        do_merge,
        do_recall,
        do_recall_at,
        do_remember,
        do_switch,
        do_whats_new,
    )

    first = do_remember(opened, "plan", "enterprise", source="ticket-1")["commit"]
    assert do_branch(opened, "side") == {"branch": "side"}
    assert do_switch(opened, "side") == {"head": "ref: side"}
    side = do_remember(opened, "seats", 10)["commit"]
    assert do_switch(opened, "main") == {"head": "ref: main"}
    do_remember(opened, "owner", "alice")  # main moves on too, so the merge makes a merge commit
    merged = do_merge(opened, "side")
    assert merged["status"] == "merged" and merged["conflicts"] == [], merged
    assert server.do_history(opened, 1)[0]["id"] == merged["commit"]
    assert do_recall(opened, "seats")["content"] == 10
    assert do_recall_at(opened, first, "plan")["content"] == "enterprise"
    assert do_recall_at(opened, first, "seats") is None
    assert set(do_recall_at(opened, side)) == {"plan", "seats"}
    assert set(do_recall(opened)) == {"plan", "seats", "owner"}
    assert do_whats_new(opened, side) == {"seats": "added"}
    view = do_commit_view(opened, first)
    assert view["changed"] == {"plan": "added"} and view["state"]["plan"]["provenance"]["source"] == "ticket-1"
    for value in (merged, view, do_recall(opened), server.do_history(opened), server.do_why(opened, "plan")):
        assert is_json(value), value


@pytest.mark.anyio
async def test_each_operation_answers_what_its_tool_answers_a_client(store: Path, opened: mnem_bridge.Store) -> None:
    """One implementation: the tool's value as a client reads it equals the operation's, call for call."""
    binding = StoreBinding(locate_store(pg_stores.address(store)).path)
    tools = MemoryTools(binding, AUTHOR)
    try:
        server.do_remember(opened, "plan", "pro", source="ticket-1")
        assert plain(await tools.recall()) == server.do_recall(opened)
        assert plain(await tools.why("plan")) == server.do_why(opened, "plan")
        assert plain(await tools.history()) == server.do_history(opened)
        assert plain(await tools.when_did("plan", present=True, include_root=True)) == server.do_when_did(
            opened, "plan", present=True, include_root=True)
    finally:
        binding.close()


def structured(result: Any) -> Any:
    """A call's value as upstream's tests read it: a list unwrapped from ``{"result": ...}``."""
    value = result.structured_content
    return value["result"] if isinstance(value, dict) and list(value) == ["result"] else value


@pytest.mark.anyio
async def test_the_server_answers_as_upstreams_tests_drive_it(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream's tests of ``server.build_server``, restated: the tool sets, a round trip, a failure, the env."""
    address = pg_stores.address(store)
    core = {tool.name for tool in await server.build_server(store_path=address).list_tools()}
    assert {"remember", "why", "when_did"} <= core and {"branch", "switch", "merge"}.isdisjoint(core)
    full = {tool.name for tool in await server.build_server(store_path=address, tools="all").list_tools()}
    assert {"branch", "switch", "merge"} <= full

    built = server.build_server(store_path=address)
    commit = structured(await built.call_tool("remember", {"id": "plan", "content": "enterprise", "source": "t1"}))
    assert json.loads((await built.call_tool("recall", {"id": "plan"})).content[0].text)["content"] == "enterprise"
    assert structured(await built.call_tool("history", {}))[0]["id"] == commit["commit"]
    (memory,) = await built.read_resource("mnem://memory")
    assert json.loads(memory.content)["plan"]["provenance"]["source"] == "t1"
    (plan,) = await built.read_resource("mnem://memory/plan")
    assert json.loads(plan.content)["content"] == "enterprise"
    with pytest.raises(ToolError):
        await built.call_tool("why", {"id": "nothing"})

    monkeypatch.setenv("MNEM_STORE", address)
    from_env = server.build_server()  # no path: $MNEM_STORE
    await from_env.call_tool("remember", {"id": "x", "content": 1})
    assert json.loads((await from_env.call_tool("recall", {"id": "x"})).content[0].text)["content"] == 1


def test_resolve_store_path_follows_mnem_mcps_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream's helper: the explicit path, then ``$MNEM_STORE``; ours ends at the per-user default store."""
    monkeypatch.setenv("MNEM_STORE", str(tmp_path / "from-env"))
    assert server.resolve_store_path(str(tmp_path / "given")) == str(tmp_path / "given")
    assert server.resolve_store_path(None) == str(tmp_path / "from-env")
    monkeypatch.delenv("MNEM_STORE")
    assert server.resolve_store_path(None) == str(mnem_mcp.default_store_path())
