"""History in graph order: every history surface lists the tip first and never a commit before its descendants.

Commit times are what a writer said (``--time``), so they may run backwards
or repeat; order by time is then not history's order.  The store here has
times going backwards on ``main`` (1000, 900, 800), three commits in the
same millisecond on a line, a side branch and a merge whose time is older
than all of them, so the graph is not a line and no time order is right.
Every surface (the CLI's ``log`` with and without ``-n``, the bridge's
``Store.log``, the MCP ``history`` tool and ``mnem://log`` resource through
a real client, LangGraph's ``MnemosyneStore.history``) must:

* list the tip first;
* never list a commit before one of its descendants;
* list same-millisecond commits on a line newest (child) first;
* with a limit, give a prefix of the full history.

A commit made without ``--time`` right after one with a time in the future
must not be timed before its parent (the engine takes max(now, parent's
time) inside the write transaction), through the CLI and through the
bridge's ``agents.remember`` (which leaves the time to the engine).  "Now"
is fixed (``--now``, the bridge's ``clock``) an hour before the parent, so
the child's time is exactly its parent's, whatever the wall clock says.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pg_stores
import pytest
from conftest import MNEM, run_mnem
from mcp_support import call, connect

import mnem_bridge
from mnem_bridge import agents
from mnem_langgraph import MnemosyneStore

HOUR_MS = 3_600_000
#: "Now" for the writes without a time (2026-01-01T00:00:00Z); ``FUTURE`` is an hour later.
NOW = 1_767_225_600_000
FUTURE = NOW + HOUR_MS


def write(root: Path, message: str, time_ms: int | None, node: str, content: Any) -> dict[str, Any]:
    """``mnem write`` one node as one commit, at ``--now`` ``NOW``; the commit as printed."""
    args = ["--json", f"--now={NOW}", "write", "-m", message, "--author", "tester"]
    if time_ms is not None:
        args += ["--time", str(time_ms)]
    result = run_mnem(*args, cwd=root, input=orjson.dumps({"put": [{"id": node, "content": content}]}))
    assert result.code == 0, result.out + result.err
    return result.json["commit"]


def ok(root: Path, *args: str) -> Any:
    result = run_mnem("--json", *args, cwd=root)
    assert result.code == 0, f"mnem {' '.join(args)}: {result.out}{result.err}"
    return result.json


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The store (built once per module; the tests only read it) and its commits by name.

    main:  c1(1000) - c2(900) - c3(800) - c4(5000) - c5(5000) - c6(5000) - merge(600)
                                     \\                                    /
    side:                             s1(700) ---------------- s2(5000)
    """
    root = tmp_path_factory.mktemp("history") / "store"
    assert run_mnem("init", str(root)).code == 0
    ids: dict[str, str] = {}
    for name, when in (("c1", 1000), ("c2", 900), ("c3", 800)):
        ids[name] = write(root, name, when, name, name)["id"]
    ok(root, "branch", "side")
    for name in ("c4", "c5", "c6"):
        ids[name] = write(root, name, 5000, name, name)["id"]
    ok(root, "checkout", "side")
    for name, when in (("s1", 700), ("s2", 5000)):
        ids[name] = write(root, name, when, name, name)["id"]
    ok(root, "checkout", "main")
    merged = ok(root, "merge", "side", "-m", "merge side", "--author", "tester", "--time", "600")
    tip = ok(root, "status")["commit"]
    assert tip not in ids.values(), merged
    ids["merge"] = tip
    full = ok(root, "log")
    return {"root": root, "ids": ids, "tip": tip, "full": full}


def ancestors(full: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Every commit's proper ancestors, from the ``parents`` the full log lists."""
    parents = {entry["id"]: list(entry["parents"]) for entry in full}
    memo: dict[str, set[str]] = {}

    def of(commit: str) -> set[str]:
        if commit not in memo:
            found: set[str] = set()
            for parent in parents.get(commit, []):
                found |= {parent, *of(parent)}
            memo[commit] = found
        return memo[commit]

    return {commit: of(commit) for commit in parents}


def check_history(graph: dict[str, Any], entries: list[dict[str, Any]], surface: str, limit: int | None = None) -> None:
    """The properties every history surface must have; every violation is reported, not just the first."""
    ids = [entry["id"] for entry in entries]
    full = [entry["id"] for entry in graph["full"]]
    names = {commit: name for name, commit in graph["ids"].items()}
    shown = [names.get(commit, commit[:12]) for commit in ids]
    wrong: list[str] = []
    if not ids or ids[0] != graph["tip"]:
        wrong.append(f"the first entry is {shown[:1]}, not the tip (merge)")
    if len(set(ids)) != len(ids):
        wrong.append("a commit is listed twice")
    above = ancestors(graph["full"])
    for later, commit in enumerate(ids):
        early = [shown[i] for i in range(later) if ids[i] in above.get(commit, ())]
        if early:
            wrong.append(f"{early} listed before their descendant {shown[later]}")
    same_ms = [graph["ids"][name] for name in ("c6", "c5", "c4") if graph["ids"][name] in ids]
    if same_ms != [commit for commit in ids if commit in same_ms]:
        wrong.append("same-millisecond commits c4 - c5 - c6 are not listed newest (c6) first")
    expected = full if limit is None else full[:limit]
    if ids != expected:
        wrong.append(f"not {'the full history' if limit is None else f'the first {limit} of the full history'} "
                     f"{[names.get(c, c[:12]) for c in expected]}")
    assert not wrong, f"{surface} listed {shown}:\n  " + "\n  ".join(wrong)


# --------------------------------------------------------------------------- the full log itself
def test_the_full_log_lists_every_commit_in_graph_order(graph) -> None:
    assert sorted(entry["id"] for entry in graph["full"]) == sorted(graph["ids"].values())
    (merge,) = [entry for entry in graph["full"] if entry["id"] == graph["tip"]]
    assert merge["parents"] == [graph["ids"]["c6"], graph["ids"]["s2"]]
    check_history(graph, graph["full"], "mnem --json log")


# --------------------------------------------------------------------------- CLI
@pytest.mark.parametrize("count", [1, 2, 3, 5, 9, 20])
def test_cli_log_with_a_limit_is_a_prefix(graph, count: int) -> None:
    entries = ok(graph["root"], "log", "-n", str(count))
    check_history(graph, entries, f"mnem --json log -n {count}", limit=count)


def test_cli_log_n1_is_the_status_commit(graph) -> None:
    (entry,) = ok(graph["root"], "log", "-n", "1")
    assert entry["id"] == ok(graph["root"], "status")["commit"] == graph["tip"]


def test_cli_text_log_is_in_the_same_order(graph) -> None:
    result = run_mnem("log", "--oneline", cwd=graph["root"])
    assert result.code == 0, result.err
    shorts = [line.split()[0] for line in result.out.splitlines()]
    assert len(shorts) == len(graph["full"]) and graph["tip"].startswith(shorts[0])
    assert shorts == [entry["id"][: len(short)] for entry, short in zip(graph["full"], shorts, strict=True)]


# --------------------------------------------------------------------------- bridge
@pytest.fixture
def bridge_store(graph) -> Iterator[mnem_bridge.Store]:
    client = mnem_bridge.Mnem(MNEM)
    try:
        yield mnem_bridge.open(graph["root"], client=client)
    finally:
        client.close()


@pytest.mark.parametrize("limit", [None, 1, 3])
def test_bridge_log(graph, bridge_store, limit: int | None) -> None:
    entries = [commit.to_dict() for commit in bridge_store.log(limit=limit)]
    check_history(graph, entries, f"Store.log(limit={limit})", limit=limit)


# --------------------------------------------------------------------------- MCP
@pytest.mark.anyio
async def test_mcp_history_tool_and_log_resource(graph) -> None:
    seen: list[tuple[str, list[dict[str, Any]], int | None]] = []
    async with connect("in-process", graph["root"]) as client:
        for limit in (None, 1, 3):
            arguments = {} if limit is None else {"limit": limit}
            seen.append((f"MCP history({arguments})", await call(client, "history", **arguments), limit))
        (content,) = (await client.read_resource("mnem://log")).contents
        seen.append(("MCP mnem://log", json.loads(content.text), None))
    for surface, entries, limit in seen:  # checked outside the session, so a failure is not an exception group
        check_history(graph, entries, surface, limit=limit)


# --------------------------------------------------------------------------- LangGraph
def test_langgraph_history(graph) -> None:
    with MnemosyneStore(graph["root"], author="tester", mnem=MNEM) as store:
        check_history(graph, [c.to_dict() for c in store.history()], "MnemosyneStore.history()")
        for limit in (1, 3):
            entries = [c.to_dict() for c in store.history(limit=limit)]
            check_history(graph, entries, f"MnemosyneStore.history(limit={limit})", limit=limit)


# --------------------------------------------------------------------------- a commit after a future one
def by_id(root: Path) -> dict[str, dict[str, Any]]:
    return {entry["id"]: entry for entry in ok(root, "log")}


def test_cli_write_without_time_after_a_future_commit_is_not_timed_before_its_parent(store: Path) -> None:
    parent = write(store, "from the future", FUTURE, "a", 1)
    child = write(store, "now", None, "b", 2)
    assert child["parents"] == [parent["id"]]
    assert child["time"] == parent["time"] == FUTURE  # now is an hour behind: the parent's time, never before it
    assert [entry["id"] for entry in ok(store, "log")] == [child["id"], parent["id"]]


def test_cli_commit_without_time_after_a_future_commit_is_not_timed_before_its_parent(store: Path) -> None:
    parent = write(store, "from the future", FUTURE, "a", 1)
    assert run_mnem("add", "b", "2", cwd=store).code == 0
    committed = run_mnem(f"--now={NOW}", "commit", "-m", "now", cwd=store)
    assert committed.code == 0, committed.err
    child = by_id(store)[ok(store, "status")["commit"]]
    assert child["parents"] == [parent["id"]]
    assert child["time"] == parent["time"] == FUTURE


def test_bridge_remember_after_a_future_commit_is_not_timed_before_its_parent(store: Path) -> None:
    client = mnem_bridge.Mnem(MNEM, clock=lambda: NOW)
    try:
        bridge = mnem_bridge.open(pg_stores.address(store), client=client)
        parent_id = agents.remember(bridge, "a", 1, time_ms=FUTURE)
        child_id = agents.remember(bridge, "b", 2)
        commits = {commit.id: commit for commit in bridge.log()}
    finally:
        client.close()
    child, parent = commits[child_id], commits[parent_id]
    assert child.parents == (parent_id,)
    assert child.time == parent.time == FUTURE
