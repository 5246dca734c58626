"""The belief lifecycle through every way a client reaches the server.

One store per mode, one pass through every core tool: the running example
(a customer's plan tier, misread from a billing note) is remembered, revised,
traced with ``why`` and ``when_did``, and the history shows exactly one commit
per write.
"""

from __future__ import annotations

from pathlib import Path

import pg_stores
import pytest
from bridge.support import mnem_workers
from mcp_support import MODES, Mode, call, connect, fail

pytestmark = pytest.mark.anyio

ENTERPRISE = "on the Enterprise plan"
PRO = "downgraded to Pro last month"


@pytest.mark.parametrize("mode", MODES)
async def test_the_belief_lifecycle(mode: Mode, store: Path) -> None:
    async with connect(mode, pg_stores.address(store)) as client:
        first = (await call(client, "remember", id="customer-4821", content=ENTERPRISE, source="ticket-4821"))["commit"]
        misread = (await call(client, "revise", id="customer-4821", content=PRO, source="billing-note-8842",
                              step="step-31", observation="billing-note-8842", tool_call="read_note#3",
                              note="the note may be about another account"))["commit"]
        batch = (await call(client, "remember_many", summary="what the CRM says", items=[
            {"id": "seats", "content": 240, "source": "crm"},
            {"id": "owner", "content": {"name": "alice", "email": "alice@acme"}},
        ]))["commit"]

        memory = await call(client, "recall")
        assert sorted(memory) == ["customer-4821", "owner", "seats"]
        assert memory["owner"]["content"] == {"name": "alice", "email": "alice@acme"}
        assert memory["seats"]["provenance"]["source"] == "crm"
        one = await call(client, "recall", id="customer-4821")
        assert one == memory["customer-4821"] and one["content"] == PRO
        assert await call(client, "recall", id="nobody") is None
        then = await call(client, "recall_at", commit=first, id="customer-4821")
        assert then["content"] == ENTERPRISE
        assert list(await call(client, "recall_at", commit=first)) == ["customer-4821"]

        why = await call(client, "why", id="customer-4821")
        assert why["commit"] == misread and why["node"]["content"] == PRO
        assert why["node"]["provenance"] == {
            "agent_step": "step-31", "observation": "billing-note-8842", "tool_call": "read_note#3",
            "source": "billing-note-8842", "note": "the note may be about another account",
        }
        assert (await call(client, "why", id="customer-4821", at=first))["commit"] == first

        found = await call(client, "when_did", id="customer-4821", equals=PRO)
        assert found["commit"] == misread and {**found["blame"], "author": "agent"} == why  # why adds the author
        assert (await call(client, "when_did", id="seats", present=True))["commit"] == batch
        assert await call(client, "whats_new", commit=batch) == {"owner": "added", "seats": "added"}
        assert await call(client, "whats_new", commit=misread) == {"customer-4821": "modified"}

        gone = (await call(client, "forget", id="owner", summary="owner left"))["commit"]
        assert await call(client, "recall", id="owner") is None
        absent = await call(client, "when_did", id="owner", absent=True, good=batch)
        assert absent == {"commit": gone, "blame": None}

        commits = await call(client, "history")
        assert [c["id"] for c in commits] == [gone, batch, misread, first]  # exactly one commit per write
        assert [c["message"] for c in commits] == [
            "owner left", "what the CRM says", "remember customer-4821", "remember customer-4821"]
        assert {c["author"] for c in commits} == {"agent"}
        assert [c["id"] for c in await call(client, "history", limit=2)] == [gone, batch]

        assert (await fail(client, "forget", id="owner")).startswith("invalid_ref: ")


@pytest.mark.parametrize("mode", MODES[:2])
async def test_when_did_takes_exactly_one_of_equals_absent_present(mode: Mode, store: Path) -> None:
    async with connect(mode, pg_stores.address(store)) as client:
        first = (await call(client, "remember", id="flag", content="on"))["commit"]
        off = (await call(client, "remember", id="flag", content={"state": "off", "since": 2}))["commit"]

        found = await call(client, "when_did", id="flag", equals={"since": 2, "state": "off"})
        assert found["commit"] == off and found["blame"]["node"]["content"] == {"state": "off", "since": 2}
        assert (await call(client, "when_did", id="flag", present=True, include_root=True))["commit"] == first

        for arguments, said in (({}, "none"), ({"equals": "on", "present": True}, "equals and present"),
                                ({"absent": True, "present": True}, "absent and present")):
            assert await fail(client, "when_did", id="flag", **arguments) == (
                f"usage: when_did needs exactly one of equals, absent or present (got {said})")
        other_form = await fail(client, "when_did", id="flag", condition="equals", value="on")
        assert other_form.startswith("usage: when_did: condition: unknown argument; value: unknown argument"), (
            other_form)


async def test_the_sessions_mnem_worker_ends_with_the_session(store: Path) -> None:
    before = mnem_workers()
    async with connect("in-process", pg_stores.address(store)) as client:
        await call(client, "remember", id="plan", content="pro")
        await call(client, "recall")
        started = mnem_workers() - before
        assert len(started) == 1  # every call went through one worker
    assert not mnem_workers() & started
