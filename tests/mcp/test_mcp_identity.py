"""Who wrote a fact, over stdio: ``mnem-mcp --author``, ``$MNEM_AUTHOR``, and the author in ``why`` and the log.

Each server is a real ``mnem-mcp`` process spawned by the ``mcp`` client over
stdio.  The author it is started with is what every write records, and what
``why`` (beside ADR-0016's ``{commit, node, time}``), ``mnem://log``,
``history`` and the store's own ``mnem blame --json`` report; the text of
``mnem blame`` stays upstream's.  HTTP's authors (the token's subject) are
tests/mcp/test_http_auth.py's.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pg_stores
import pytest
from conftest import run_mnem
from mcp_support import MNEM_MCP, call, connect, fail, server_env

pytestmark = pytest.mark.anyio


async def test_author_names_who_wrote_each_fact_in_why_the_log_and_blame(store: Path) -> None:
    async with connect("stdio", pg_stores.address(store), "--author", "intake-agent") as client:
        first = (await call(client, "remember", id="plan", content="enterprise", source="ticket-1"))["commit"]
    async with connect("stdio", pg_stores.address(store), "--author", "billing-agent", tools="all") as client:
        second = (await call(client, "revise", id="plan", content="pro", source="billing-note-8842"))["commit"]
        why = await call(client, "why", id="plan")
        assert list(why) == ["commit", "node", "time", "author"]  # the ADR's three keys, then the author
        assert (why["commit"], why["author"]) == (second, "billing-agent")
        assert (await call(client, "why", id="plan", at=first))["author"] == "intake-agent"
        found = await call(client, "when_did", id="plan", equals="pro")
        assert set(found["blame"]) == {"commit", "node", "time"}  # when_did's blame is the ADR's, unextended
        log = json.loads((await client.read_resource("mnem://log")).contents[0].text)
        assert [(c["id"], c["author"]) for c in log] == [(second, "billing-agent"), (first, "intake-agent")]
        await call(client, "branch", name="side")
        await call(client, "switch", target="side")
        await call(client, "remember", id="seats", content=3)
        await call(client, "switch", target="main")
        await call(client, "remember", id="owner", content="ann")
        merged = await call(client, "merge", theirs="side")
        assert merged["status"] == "merged"
        assert (await call(client, "history", limit=1))[0]["author"] == "billing-agent"  # merges too
    blamed = run_mnem("--json", "blame", "plan", cwd=store).json
    assert (blamed["commit"], blamed["author"]) == (second, "billing-agent")
    assert "billing-agent" not in run_mnem("blame", "plan", cwd=store).out  # upstream's text, unchanged


@pytest.mark.parametrize(("argv", "env", "author"), [
    pytest.param([], {}, "agent", id="default"),
    pytest.param([], {"MNEM_AUTHOR": "nightly-batch"}, "nightly-batch", id="env"),
    pytest.param([], {"MNEM_AUTHOR": ""}, "agent", id="empty-env"),
    pytest.param(["--author", "reviewer"], {"MNEM_AUTHOR": "nightly-batch"}, "reviewer", id="flag-over-env"),
])
async def test_the_author_is_the_flag_else_mnem_author_else_agent(
        store: Path, argv: list[str], env: dict[str, str], author: str) -> None:
    async with connect("stdio", pg_stores.address(store), *argv, env=env) as client:
        written = (await call(client, "remember_many", items=[{"id": "seats", "content": 3}]))["commit"]
        assert (await call(client, "history", limit=1))[0]["author"] == author
        assert (await call(client, "why", id="seats"))["author"] == author
        assert (await call(client, "forget", id="seats"))["commit"] != written
        assert (await call(client, "history", limit=1))[0]["author"] == author


async def test_a_client_cannot_name_another_author(store: Path) -> None:
    async with connect("stdio", pg_stores.address(store), "--author", "intake-agent") as client:
        text = await fail(client, "remember", id="plan", content="pro", author="someone-else")
        assert text.startswith("usage: remember: author: unknown argument")
        assert await call(client, "history", limit=1) == []  # nothing was written


def test_an_empty_author_is_a_usage_error() -> None:
    done = subprocess.run([MNEM_MCP, "--author", " "], capture_output=True, text=True, env=server_env(),
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "--author: must name someone" in done.stderr and "Traceback" not in done.stderr
