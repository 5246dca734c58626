"""Who pushed a commit is recorded by the server that took it, and shown beside its author wherever they differ.

A commit's author is whatever its bytes say, and a push carries commits
made anywhere: a ``mnem:write`` token for bob can push commits authored
"alice".  Here a real ``mnem-mcp --auth jwt`` process, on a folder and on
PostgreSQL, takes such a push from the real ``mnem push`` with a real
token: the store records bob as their pusher, with the time, and ``why``,
``history``, ``mnem://log``, ``mnem log --json`` and ``mnem blame --json``
name him beside alice, while the plain ``mnem log`` stays upstream's.  A
commit its author pushed, or wrote over MCP, carries no pusher.  With
``--push-own-commits-only`` the same push is refused, naming the commit,
its author and the pusher, and nothing changes; bob's own commits still go
in.  Without authentication the pusher is the server's ``--author``, the
name every unauthenticated write records.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from conftest import new_store, run_mnem, store_fingerprint
from http_support import HttpServer, Issuer, connect, free_port
from mcp_support import call
from mnem_history import ok, write

pytestmark = pytest.mark.anyio


class Hub:
    """A served store, its issuer (``None`` without authentication), and the server."""

    def __init__(self, store: Path, issuer: Issuer | None, server: HttpServer) -> None:
        self.store, self.issuer, self.server = store, issuer, server

    def env(self, sub: str) -> dict[str, str]:
        """A ``mnem``'s environment sending a read-write token of ``sub`` (nothing without authentication)."""
        return {} if self.issuer is None else {"MNEM_TOKEN": self.issuer.mint(sub)}


@contextlib.contextmanager
def hub(root: Path, backend: str, *extra: str, auth: bool = True) -> Iterator[Hub]:
    store = new_store(root / "hub", backend)
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(audience) if auth else None
    try:
        flags = ["--auth", "jwt", "--issuer", issuer.url, "--audience", audience] if issuer else ["--auth", "none"]
        server = HttpServer(pg_stores.address(store), flags, *extra, port=port)
        try:
            yield Hub(store, issuer, server)
        finally:
            server.stop()
    finally:
        if issuer is not None:
            issuer.close()


def alices_work(root: Path, url: str) -> tuple[Path, list[str]]:
    """A store of two commits authored by alice, with the hub as its remote ``hub``; and their ids."""
    local = new_store(root / "local", "sqlite")
    commits = [write(local, "alice: pro", 1000, {"plan": "pro"}, author="alice"),
               write(local, "alice: 40 seats", 2000, {"seats": 40}, author="alice")]
    ok("remote", "add", "hub", url, cwd=local)
    return local, commits


def logged(store: Path) -> dict[str, dict[str, Any]]:
    """``mnem log --json`` of a store, by commit id."""
    return {entry["id"]: entry for entry in ok("--json", "log", cwd=store).json}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_bob_pushing_alices_commits_is_recorded_and_shown_beside_her_name(tmp_path: Path, backend: str) -> None:
    with hub(tmp_path, backend) as served:
        local, commits = alices_work(tmp_path, served.server.url)
        before = time.time_ns() // 1_000_000
        assert ok("--json", "push", "hub", "main", cwd=local, env=served.env("bob")).json["status"] == "created"
        after = time.time_ns() // 1_000_000
        async with connect(served.server.url, served.issuer.mint("carol") if served.issuer else None) as client:
            mine = await call(client, "remember", id="owner", content="dana")  # written here by carol herself
            history = {entry["id"]: entry for entry in await call(client, "history", limit=10)}
            why = await call(client, "why", id="plan")
            recent = json.loads((await client.read_resource("mnem://log")).contents[0].text)
        for commit in commits:
            assert history[commit]["author"] == "alice" and history[commit]["pushed_by"] == "bob"
        assert "pushed_by" not in history[mine["commit"]]  # carol wrote it over MCP: she is its author
        assert (why["commit"], why["author"], why["pushed_by"]) == (commits[0], "alice", "bob")
        assert {entry["id"]: entry.get("pushed_by") for entry in recent} == {
            commits[0]: "bob", commits[1]: "bob", mine["commit"]: None}

        entries = logged(served.store)
        for commit in commits:
            assert entries[commit]["author"] == "alice" and entries[commit]["pushed_by"] == "bob"
            assert before <= entries[commit]["pushed_at"] <= after
        assert set(entries[mine["commit"]]) == {"id", "parents", "state", "message", "author", "time"}
        blamed = ok("--json", "blame", "seats", cwd=served.store).json
        assert (blamed["author"], blamed["pushed_by"]) == ("alice", "bob")
        text = ok("log", cwd=served.store).out + ok("blame", "seats", cwd=served.store).out
        assert "bob" not in text and "Author: alice" in text  # the plain text stays upstream's

        # bob's own commit, pushed by bob, names no pusher: there is nothing to add to its author
        ok("pull", "hub", "main", cwd=local, env=served.env("bob"))
        own = write(local, "bob: annual", 3000, {"billing": "annual"}, author="bob")
        ok("push", "hub", "main", cwd=local, env=served.env("bob"))
        assert "pushed_by" not in logged(served.store)[own]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_with_push_own_commits_only_a_push_of_anothers_commits_is_refused_and_changes_nothing(
        tmp_path: Path, backend: str) -> None:
    with hub(tmp_path, backend, "--push-own-commits-only") as served:
        local, commits = alices_work(tmp_path, served.server.url)
        before = store_fingerprint(served.store)
        refused = run_mnem("--json", "push", "hub", "main", cwd=local, env=served.env("bob"))
        assert refused.code != 0 and "Traceback" not in refused.err
        error = json.loads(refused.out)["error"]
        assert error["code"] == "invalid_ref", error
        assert commits[0] in error["message"] and "'alice'" in error["message"] and "'bob'" in error["message"]
        assert store_fingerprint(served.store) == before  # no commit, no branch, no push record
        assert "main" not in ok("--json", "branch", cwd=served.store).out

        ours = new_store(tmp_path / "bobs", "sqlite")
        own = write(ours, "bob: pro", 1000, {"plan": "pro"}, author="bob")
        ok("remote", "add", "hub", served.server.url, cwd=ours)
        assert ok("--json", "push", "hub", "main", cwd=ours, env=served.env("bob")).json["status"] == "created"
        assert logged(served.store)[own]["author"] == "bob"
        ok("branch", "alice-work", cwd=local)  # alice's commits, pushed by alice herself, go in too
        assert ok("--json", "push", "hub", "alice-work", cwd=local, env=served.env("alice")).json["commits"] == 2


async def test_without_authentication_the_pusher_is_the_servers_author(tmp_path: Path) -> None:
    with hub(tmp_path, "sqlite", "--author", "ops", auth=False) as served:
        local, commits = alices_work(tmp_path, served.server.url)
        ok("push", "hub", "main", cwd=local)
        entries = logged(served.store)
        assert [entries[commit]["pushed_by"] for commit in commits] == ["ops", "ops"]


def test_with_deny_non_fast_forwards_a_forced_push_is_refused_and_a_fast_forward_goes_in(tmp_path: Path) -> None:
    """``--deny-non-fast-forwards`` (git's ``receive.denyNonFastForwards``): no push rewrites a branch's history."""
    with hub(tmp_path, "sqlite", "--deny-non-fast-forwards", auth=False) as served:
        local, _ = alices_work(tmp_path, served.server.url)
        assert ok("--json", "push", "hub", "main", cwd=local).json["status"] == "created"
        rewritten = new_store(tmp_path / "rewritten", "sqlite")  # another main, not descended from the hub's
        write(rewritten, "bob: enterprise", 3000, {"plan": "enterprise"}, author="bob")
        ok("remote", "add", "hub", served.server.url, cwd=rewritten)
        ok("fetch", "hub", cwd=rewritten)
        before = store_fingerprint(served.store)
        forced = run_mnem("--json", "push", "--force-with-lease", "hub", "main", cwd=rewritten)
        error = json.loads(forced.out)["error"]
        assert forced.code != 0 and error["code"] == "conflict" and "--deny-non-fast-forwards" in error["message"]
        assert store_fingerprint(served.store) == before
        write(local, "alice: 50 seats", 4000, {"seats": 50}, author="alice")
        assert ok("--json", "push", "hub", "main", cwd=local).json["status"] == "fast-forwarded"
