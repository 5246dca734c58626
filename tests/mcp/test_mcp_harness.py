"""The harness tools (``--tools all``): a hypothesis branch, switching, and merging it back."""

from __future__ import annotations

from pathlib import Path

import pg_stores
import pytest
from mcp_support import call, connect, fail

pytestmark = pytest.mark.anyio


async def test_a_hypothesis_branch_is_explored_and_merged_back(store: Path) -> None:
    async with connect("in-process", pg_stores.address(store), tools="all") as client:
        base = (await call(client, "remember", id="plan", content="enterprise", source="ticket-4821"))["commit"]
        assert await call(client, "branch", name="what-if-churn") == {"branch": "what-if-churn"}
        assert await call(client, "switch", target="what-if-churn") == {"head": "ref: what-if-churn"}
        churn = (await call(client, "revise", id="plan", content="cancelled", note="hypothesis"))["commit"]
        assert await call(client, "switch", target="main") == {"head": "ref: main"}
        assert (await call(client, "recall", id="plan"))["content"] == "enterprise"

        merged = await call(client, "merge", theirs="what-if-churn")
        assert merged == {"status": "fast-forwarded", "commit": churn, "conflicts": []}
        assert (await call(client, "merge", theirs="what-if-churn"))["status"] == "up-to-date"
        assert (await call(client, "why", id="plan"))["node"]["provenance"]["note"] == "hypothesis"

        assert await call(client, "switch", target=base) == {"head": base}  # detached: look, do not touch
        assert (await call(client, "recall", id="plan"))["content"] == "enterprise"
        assert (await fail(client, "branch", name="what-if-churn")).startswith("invalid_ref: ")


async def test_conflicts_write_nothing_until_resolved(store: Path) -> None:
    async with connect("in-process", pg_stores.address(store), tools="all") as client:
        await call(client, "remember_many", items=[{"id": "plan", "content": "enterprise"},
                                                   {"id": "seats", "content": 100}])
        await call(client, "branch", name="billing")
        await call(client, "remember_many", items=[{"id": "plan", "content": "pro"}, {"id": "seats", "content": 120}])
        await call(client, "switch", target="billing")
        await call(client, "remember_many", items=[{"id": "plan", "content": "team"}, {"id": "seats", "content": 90}])
        await call(client, "switch", target="main")
        before = await call(client, "history")

        stopped = await call(client, "merge", theirs="billing")
        assert stopped["status"] == "conflicts" and stopped["commit"] is None
        assert [(c["id"], c["kind"], c["ours"]["content"], c["theirs"]["content"]) for c in stopped["conflicts"]] == [
            ("plan", "edit/edit", "pro", "team"), ("seats", "edit/edit", 120, 90)]
        assert await call(client, "history") == before

        done = await call(client, "merge", theirs="billing", resolutions={"plan": {"content": "team-annual"}},
                          strategy="ours", summary="settle billing")
        assert done["status"] == "merged" and done["conflicts"] == []
        memory = await call(client, "recall")
        assert memory["plan"]["content"] == "team-annual" and memory["seats"]["content"] == 120
        head = (await call(client, "history", limit=1))[0]
        assert head["id"] == done["commit"] and head["message"] == "settle billing" and len(head["parents"]) == 2
