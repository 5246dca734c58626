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

        memory = (await call(client, "recall"))["memory"]
        assert sorted(memory) == ["customer-4821", "owner", "seats"]
        assert memory["owner"]["content"] == {"name": "alice", "email": "alice@acme"}
        assert memory["seats"]["provenance"]["source"] == "crm"
        one = (await call(client, "recall", id="customer-4821"))["memory"]
        assert list(one) == ["customer-4821"] and one["customer-4821"]["content"] == PRO
        assert (await call(client, "recall", id="nobody"))["memory"] == {}
        then = (await call(client, "recall_at", commit=first, id="customer-4821"))["memory"]
        assert then["customer-4821"]["content"] == ENTERPRISE

        why = await call(client, "why", id="customer-4821")
        assert why["commit"] == misread and why["node"]["content"] == PRO
        assert why["node"]["provenance"] == {
            "agent_step": "step-31", "observation": "billing-note-8842", "tool_call": "read_note#3",
            "source": "billing-note-8842", "note": "the note may be about another account",
        }
        assert (await call(client, "why", id="customer-4821", at=first))["commit"] == first

        found = await call(client, "when_did", id="customer-4821", condition="equals", value=PRO)
        assert found["commit"] == misread and found["blame"] == why
        assert (await call(client, "when_did", id="seats", condition="present"))["commit"] == batch
        assert (await call(client, "whats_new", commit=batch))["changed"] == {"owner": "added", "seats": "added"}
        assert (await call(client, "whats_new", commit=misread))["changed"] == {"customer-4821": "modified"}

        gone = (await call(client, "forget", id="owner", summary="owner left"))["commit"]
        assert (await call(client, "recall", id="owner"))["memory"] == {}
        absent = await call(client, "when_did", id="owner", condition="absent", good=batch)
        assert absent == {"commit": gone, "blame": None}

        commits = (await call(client, "history"))["commits"]
        assert [c["id"] for c in commits] == [gone, batch, misread, first]  # exactly one commit per write
        assert [c["message"] for c in commits] == [
            "owner left", "what the CRM says", "remember customer-4821", "remember customer-4821"]
        assert {c["author"] for c in commits} == {"agent"}
        assert [c["id"] for c in (await call(client, "history", limit=2))["commits"]] == [gone, batch]

        assert (await fail(client, "forget", id="owner")).startswith("invalid_ref: ")


@pytest.mark.parametrize("mode", MODES[:2])
async def test_when_did_takes_an_explicit_condition(mode: Mode, store: Path) -> None:
    async with connect(mode, pg_stores.address(store)) as client:
        await call(client, "remember", id="flag", content="on")
        cleared = (await call(client, "remember", id="flag", content=None))["commit"]
        assert (await call(client, "recall", id="flag"))["memory"]["flag"]["content"] is None

        found = await call(client, "when_did", id="flag", condition="equals", value=None)
        assert found["commit"] == cleared and found["blame"]["node"]["content"] is None
        assert (await call(client, "when_did", id="flag", condition="equals"))["commit"] == cleared  # value: null

        assert (await fail(client, "when_did", id="flag")) == "usage: when_did: condition: required"
        assert (await fail(client, "when_did", id="flag", condition="present", value="on")) == (
            "usage: when_did: value goes with condition 'equals' only, not 'present'")
        assert (await fail(client, "when_did", id="flag", condition="equal")).startswith(
            "usage: when_did: condition: Input should be 'equals', 'absent' or 'present'")
        old_form = await fail(client, "when_did", id="flag", equals=None)
        assert old_form.startswith("usage: when_did: condition: required; equals: unknown argument"), old_form


async def test_the_sessions_mnem_worker_ends_with_the_session(store: Path) -> None:
    before = mnem_workers()
    async with connect("in-process", pg_stores.address(store)) as client:
        await call(client, "remember", id="plan", content="pro")
        await call(client, "recall")
        started = mnem_workers() - before
        assert len(started) == 1  # every call went through one worker
    assert not mnem_workers() & started
