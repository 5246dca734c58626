"""A put without ``_meta`` inside a LangGraph run records the run: ``why`` names the step and tool call."""

from __future__ import annotations

import asyncio
import re

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_store
from langgraph.graph import MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from mnem_langgraph.runinfo import run_provenance

#: The ``store_root`` and ``mstore`` fixtures (tests/langgraph has no conftest.py: see that module).
pytest_plugins = ["langgraph_fixtures"]

NS = ("memories", "u1")
RUN = re.compile(r"^run [0-9a-f-]{36}; checkpoint [0-9a-f-]{36}$")


@tool
def save_sync(fact: str) -> str:
    """Save a fact (a sync tool, run by ToolNode on a worker thread under ainvoke)."""
    get_store().put(NS, "sync", {"fact": fact})
    return "saved"


@tool
async def save_async(fact: str) -> str:
    """Save a fact (an async tool: its body runs in a task of its own)."""
    await get_store().aput(NS, "async", {"fact": fact})
    return "saved"


@tool
def save_with_meta(fact: str) -> str:
    """Save a fact with the caller's own provenance, which wins whole."""
    get_store().put(NS, "meta", {"fact": fact, "_meta": {"source": "user said so"}})
    return "saved"


CALLS = {
    "save_sync": {"name": "save_sync", "args": {"fact": "likes tea"}, "id": "call_sync_1"},
    "save_async": {"name": "save_async", "args": {"fact": "lives in Lyon"}, "id": "call_async_2"},
    "save_with_meta": {"name": "save_with_meta", "args": {"fact": "is vegetarian"}, "id": "call_meta_3"},
}


def build(store, tools=(save_sync, save_async, save_with_meta)):
    """agent (puts, then calls every tool) -> tools."""

    def agent(state: MessagesState) -> dict[str, list[AIMessage]]:
        get_store().put(NS, "node", {"fact": "seen by the agent node"})
        return {"messages": [AIMessage("", tool_calls=[CALLS[t.name] for t in tools])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(list(tools)))
    graph.add_edge("__start__", "agent")
    graph.add_edge("agent", "tools")
    graph.add_edge("tools", "__end__")
    return graph.compile(checkpointer=InMemorySaver(), store=store)


def test_why_names_the_thread_node_step_and_tool_call_of_an_unmodified_writer(mstore):
    app = build(mstore)
    asyncio.run(app.ainvoke({"messages": []}, {"configurable": {"thread_id": "support-7"}}))

    node = mstore.why(NS, "node").provenance
    assert (node.source, node.agent_step, node.tool_call) == ("langgraph thread support-7", "agent:1", None)
    assert RUN.match(node.note)
    for key, call in (("sync", "call_sync_1"), ("async", "call_async_2")):
        found = mstore.why(NS, key).provenance
        assert (found.source, found.agent_step, found.tool_call) == ("langgraph thread support-7", "tools:2", call)
        assert RUN.match(found.note)
    own = mstore.why(NS, "meta").provenance
    assert (own.source, own.agent_step, own.tool_call, own.note) == ("user said so", None, None, None)
    # The stored values stay exactly what the writers meant as data.
    assert mstore.get(NS, "meta").value == {"fact": "is vegetarian"}


def test_the_sync_path_records_the_run_too(mstore):
    app = build(mstore, tools=(save_sync,))  # invoke() cannot run an async tool
    app.invoke({"messages": []}, {"configurable": {"thread_id": "t-sync"}})
    found = mstore.why(NS, "sync").provenance
    assert (found.source, found.agent_step, found.tool_call) == ("langgraph thread t-sync", "tools:2", "call_sync_1")
    assert mstore.why(NS, "node").provenance.agent_step == "agent:1"


def test_outside_a_run_there_is_nothing_to_record(mstore):
    assert run_provenance() == {}
    mstore.put(NS, "script", {"fact": "from a script"})
    empty = mstore.why(NS, "script").provenance
    assert (empty.source, empty.agent_step, empty.tool_call, empty.note) == (None, None, None, None)
