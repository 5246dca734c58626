"""The tool functions as plain Python over a bridge ``Store``: no MCP session involved."""

from __future__ import annotations

from pathlib import Path

import orjson
import pg_stores
import pytest

import mnem_bridge
from mnem_mcp import tools
from mnem_mcp.answers import answer
from mnem_mcp.models import ContentResolution, RememberItem


@pytest.fixture
def bridge_store(store: Path):
    with mnem_bridge.open(pg_stores.address(store)) as opened:
        yield opened


def test_writes_are_one_commit_each_and_reads_return_the_bridges_results(bridge_store) -> None:
    first = tools.remember(bridge_store, "plan", "enterprise", source="ticket-1", step="s1")["commit"]
    batch = tools.remember_many(bridge_store, [RememberItem(id="plan", content="pro", observation="obs-7"),
                                               RememberItem(id="seats", content=[240])])["commit"]
    assert [c.id for c in bridge_store.log(first_parent=True)] == [batch, first]
    assert bridge_store.staged() == [] and bridge_store.staged_deletions() == []
    plan = tools.recall(bridge_store, "plan")
    assert isinstance(plan, mnem_bridge.MemoryNode) and plan.content == "pro"
    assert plan.provenance == mnem_bridge.Provenance(observation="obs-7")
    assert tools.recall(bridge_store) == bridge_store.working_memory()
    assert tools.recall(bridge_store, "nobody") is None
    assert tools.recall_at(bridge_store, first) == bridge_store.state_at(first)
    assert tools.recall_at(bridge_store, first, "plan").provenance.agent_step == "s1"
    assert tools.recall_at(bridge_store, first, "seats") is None
    assert tools.whats_new(bridge_store, batch) == {"plan": "modified", "seats": "added"}
    assert [c.id for c in tools.history(bridge_store)] == [batch, first]
    assert tools.forget(bridge_store, "seats")["commit"] == bridge_store.head_commit()


def test_remember_many_takes_the_adrs_plain_dicts(bridge_store) -> None:
    """ADR-0016: ``items: [{id, content, ...}]``; a direct caller passes dicts, the server its validated models."""
    commit = tools.remember_many(bridge_store, [{"id": "plan", "content": "pro", "source": "ticket-9"},
                                                RememberItem(id="seats", content=40, step="s2")])["commit"]
    assert bridge_store.changed_by(commit) == {"plan": "added", "seats": "added"}
    assert bridge_store.working_node("plan").provenance.source == "ticket-9"
    assert bridge_store.working_node("seats").provenance.agent_step == "s2"


def test_when_did_takes_exactly_one_of_equals_absent_present(bridge_store) -> None:
    first = tools.remember(bridge_store, "plan", "enterprise")["commit"]
    pro = tools.remember(bridge_store, "plan", "pro")["commit"]
    found = tools.when_did(bridge_store, "plan", equals="pro")
    assert found == {"commit": pro, "blame": bridge_store.blame("plan", at=pro)}
    for chosen in ({}, {"equals": "pro", "absent": True}, {"absent": True, "present": True}):
        with pytest.raises(mnem_bridge.UsageError, match="exactly one of equals, absent or present"):
            tools.when_did(bridge_store, "plan", **chosen)
    with pytest.raises(mnem_bridge.InvalidRefError):  # as upstream: the search starts after the first commit
        tools.when_did(bridge_store, "plan", present=True)
    assert tools.when_did(bridge_store, "plan", present=True, include_root=True)["commit"] == first
    with pytest.raises(mnem_bridge.InvalidRefError):  # with an explicit good, upstream's precondition stands
        tools.when_did(bridge_store, "plan", present=True, good=first)
    gone = tools.forget(bridge_store, "plan")["commit"]
    assert tools.when_did(bridge_store, "plan", absent=True) == {"commit": gone, "blame": None}


def test_every_write_records_the_same_author(bridge_store) -> None:
    tools.remember(bridge_store, "plan", "enterprise")
    tools.remember_many(bridge_store, [RememberItem(id="seats", content=1)])
    tools.branch(bridge_store, "other")
    tools.switch(bridge_store, "other")
    tools.remember(bridge_store, "plan", "team")
    tools.switch(bridge_store, "main")
    tools.forget(bridge_store, "seats")
    assert tools.merge(bridge_store, "other").status == "merged"
    assert {commit.author for commit in bridge_store.log()} == {tools.AUTHOR}


def test_a_content_resolution_becomes_a_node_for_the_bridge(bridge_store) -> None:
    tools.remember(bridge_store, "plan", "enterprise")
    tools.branch(bridge_store, "other")
    tools.remember(bridge_store, "plan", "pro")
    tools.switch(bridge_store, "other")
    tools.remember(bridge_store, "plan", "team")
    tools.switch(bridge_store, "main")
    result = tools.merge(bridge_store, "other", resolutions={"plan": ContentResolution(content={"tier": "mixed"})})
    assert result.status == "merged"
    assert bridge_store.working_node("plan").content == {"tier": "mixed"}


def test_recall_pages_memory_only_when_asked(bridge_store) -> None:
    tools.remember_many(bridge_store, [RememberItem(id=f"fact-{i:03d}", content=i) for i in range(250)]
                        + [RememberItem(id="other", content="x")])
    assert len(tools.recall(bridge_store)) == 251  # the ADR's "the whole current memory"
    assert list(tools.recall(bridge_store, prefix="fact-")) == [f"fact-{i:03d}" for i in range(250)]
    first = tools.recall(bridge_store, cursor="fact-000")
    assert len(first.memory) == 100 and first.next_cursor == "fact-100"  # a cursor alone: the default page
    seen, cursor = [], None
    while True:
        page = tools.recall(bridge_store, prefix="fact-", limit=60, cursor=cursor)
        seen += list(page.memory)
        if (cursor := page.next_cursor) is None:
            break
    assert seen == [f"fact-{i:03d}" for i in range(250)]
    assert list(tools.recall(bridge_store, limit=10_000).memory)[-1] == "other"
    with pytest.raises(mnem_bridge.UsageError, match="not both"):
        tools.recall(bridge_store, "fact-001", prefix="fact-")


def test_a_result_is_one_compact_json_text_equal_to_its_structured_content(bridge_store) -> None:
    tools.remember(bridge_store, "plan", {"tier": "pro"}, source="ticket-1")
    for value in (tools.recall(bridge_store, limit=5), tools.why(bridge_store, "plan"), tools.history(bridge_store)):
        result = answer(value)
        text = result.content[0].text
        assert orjson.loads(text) == result.structured_content and "\n" not in text and ", " not in text
