"""A value that already held at the line's first commit: the refusal names ``include_root``, the fix, where it is read.

``mnem bisect`` searches the commits after ``good``, by default the first
commit of the line, so a fact set there (or on a line of one commit) has no
answer: upstream's ``invalid_ref`` ("the predicate is already true at
good", "good and bad are the same commit").  The extension that lets the
first commit be the answer is opt-in; the refusal names it in each
interface's terms: ``include_root: true`` to an agent calling ``when_did``
over the real protocol (a ``mnem-mcp`` over stdio), ``--include-root`` on
the command line, ``include_root=True`` in the bridge.  Following it
answers the first commit.  With an explicit ``good`` the opt-in does not
apply, and is not offered.
"""

from __future__ import annotations

import json
from pathlib import Path

import pg_stores
import pytest
from conftest import run_mnem
from mcp_support import call, connect, fail

import mnem_bridge

#: What the refusal must say, per interface.
FOR_MCP = "`include_root: true`"
FOR_CLI = "`mnem bisect --include-root`"
FOR_BRIDGE = "include_root=True"


@pytest.mark.anyio
async def test_when_did_over_the_protocol_names_include_root_and_it_answers_the_first_commit(store: Path) -> None:
    async with connect("stdio", pg_stores.address(store)) as client:
        root = (await call(client, "remember", id="plan", content="pro", source="ticket-1"))["commit"]
        only = await fail(client, "when_did", id="plan", equals="pro")  # a line of one commit
        assert only.startswith("invalid_ref: bisect: good and bad are the same commit"), only
        assert FOR_MCP in only, only
        await call(client, "remember", id="seats", content=3)
        held = await fail(client, "when_did", id="plan", equals="pro")
        assert held.startswith(f"invalid_ref: bisect: the predicate is already true at good ({root})"), held
        assert FOR_MCP in held.partition("\nrerun: ")[0], held
        found = await call(client, "when_did", id="plan", equals="pro", include_root=True)  # the fix it names
        assert found["commit"] == root and found["blame"]["node"]["provenance"]["source"] == "ticket-1"
        at_good = await fail(client, "when_did", id="plan", equals="pro", good=root)
        assert at_good.startswith("invalid_ref: bisect: the predicate is already true at good"), at_good
        assert "include_root" not in at_good  # with good, the opt-in does not apply (usage), so it is not offered
        not_now = await fail(client, "when_did", id="plan", equals="team")
        assert not_now.startswith("invalid_ref: bisect: the predicate is false at bad"), not_now
        assert "include_root" not in not_now


def test_mnem_bisect_names_include_root_and_it_answers_the_first_commit(store: Path) -> None:
    assert run_mnem("add", "plan", "pro", cwd=store).code == 0
    assert run_mnem("commit", "-m", "one", "--author", "t", cwd=store).code == 0
    root = json.loads(run_mnem("--json", "log", cwd=store).out)[0]["id"]
    assert run_mnem("add", "seats", "--content-json", "3", cwd=store).code == 0
    assert run_mnem("commit", "-m", "two", "--author", "t", cwd=store).code == 0
    refused = run_mnem("bisect", "--node", "plan", "--present", cwd=store)
    assert refused.code == 1
    assert refused.err.startswith(f"Error: invalid ref: bisect: the predicate is already true at good ({root})")
    assert FOR_CLI in refused.err, refused.err
    as_json = run_mnem("--json", "bisect", "--node", "plan", "--present", cwd=store)
    assert FOR_CLI in json.loads(as_json.out)["error"]["message"]
    found = run_mnem("--json", "bisect", "--node", "plan", "--present", "--include-root", cwd=store)
    assert found.code == 0 and json.loads(found.out)["commit"] == root


def test_the_bridge_names_include_root_and_it_answers_the_first_commit(store: Path) -> None:
    with mnem_bridge.open(pg_stores.address(store)) as opened:
        root = mnem_bridge.agents.remember(opened, "plan", "pro")
        mnem_bridge.agents.remember(opened, "seats", 3)
        with pytest.raises(mnem_bridge.InvalidRefError) as refused:
            opened.bisect_explain("plan", present=True)
        assert FOR_BRIDGE in refused.value.message, refused.value.message
        assert opened.bisect_explain("plan", present=True, include_root=True)[0] == root
