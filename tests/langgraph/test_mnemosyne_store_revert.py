"""``MnemosyneStore.revert``: undo what one poisoned source or one LangGraph thread wrote (issue #47).

A real graph run on a thread puts items without ``_meta`` (so their source is
the thread, ``mnem_langgraph.runinfo``); a billing note put with ``_meta`` is
the other way a source is named.  One revert undoes either, reports an item
corrected since by another writer, and ``why`` names the revert.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.config import get_store
from langgraph.graph import MessagesState, StateGraph

import mnem_bridge
from mnem_langgraph.keys import node_id

#: The ``store_root`` and ``mstore`` fixtures (tests/langgraph has no conftest.py: see that module).
pytest_plugins = ["langgraph_fixtures"]

NS = ("customers", "4821")


def poisoned_thread(store: Any, thread: str) -> None:
    """A real graph run on ``thread`` whose node puts a wrong plan, a new discount band and a contact."""

    def agent(state: MessagesState) -> dict[str, Any]:
        memory = get_store()
        memory.put(NS, "plan", {"tier": "pro"})
        memory.put(NS, "discount-band", {"band": "pro-tier (10%)"})
        memory.put(NS, "contact", {"email": "billing@acme.example"})
        return {"messages": []}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_edge("__start__", "agent")
    graph.add_edge("agent", "__end__")
    graph.compile(store=store).invoke({"messages": []}, {"configurable": {"thread_id": thread}})


def test_one_revert_undoes_a_poisoned_thread_and_why_names_it(mstore: Any) -> None:
    mstore.put(NS, "plan", {"tier": "enterprise", "_meta": {"source": "ticket-4821"}})
    mstore.put(NS, "contact", {"email": "dana@acme.example", "_meta": {"source": "ticket-4821"}})
    poisoned_thread(mstore, "t-poisoned")
    assert mstore.why(NS, "plan").provenance.source == "langgraph thread t-poisoned"
    mstore.put(NS, "contact", {"email": "dana.r@acme.example", "_meta": {"source": "crm"}})
    commits = len(mstore.history(limit=100))

    preview = mstore.revert(thread="t-poisoned", dry_run=True)
    assert preview.commit is None and len(mstore.history(limit=100)) == commits
    done = mstore.revert(thread="t-poisoned")
    assert isinstance(done, mnem_bridge.Reverted) and done.commit is not None
    assert [(fact.id, fact.action) for fact in done.reverted] == [
        (node_id(NS, "discount-band"), "remove"), (node_id(NS, "plan"), "restore")]
    assert [fact.id for fact in done.skipped] == [node_id(NS, "contact")]
    assert (preview.reverted, preview.skipped) == (done.reverted, done.skipped)

    assert mstore.get(NS, "plan").value == {"tier": "enterprise"}
    assert mstore.get(NS, "discount-band") is None
    assert mstore.get(NS, "contact").value == {"email": "dana.r@acme.example"}  # corrected since: kept
    why = mstore.why(NS, "plan")
    assert why.commit == done.commit.id and why.provenance.source == "ticket-4821"
    assert mstore.history(limit=1)[0].author == mstore.author


def test_a_meta_source_is_reverted_and_refusals_are_typed(mstore: Any) -> None:
    mstore.put(NS, "plan", {"tier": "enterprise", "_meta": {"source": "ticket-4821"}})
    mstore.put(NS, "plan", {"tier": "pro", "_meta": {"source": "billing-note-8842", "step": 31}})
    done = mstore.revert(source="billing-note-8842", step="31")
    assert [fact.id for fact in done.reverted] == [node_id(NS, "plan")]
    assert mstore.get(NS, "plan").value == {"tier": "enterprise"}
    with pytest.raises(mnem_bridge.InvalidRefError, match="nothing to revert"):
        mstore.revert(source="billing-note-8842")
    with pytest.raises(mnem_bridge.NotFoundError):
        mstore.revert(thread="never-ran")
    with pytest.raises(ValueError, match="not both"):
        mstore.revert(source="billing-note-8842", thread="t")
    with pytest.raises(ValueError):
        mstore.revert()
