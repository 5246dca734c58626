"""langmem's memory tools on MnemosyneStore, unmodified: found by questions, updated not duplicated, explained.

A real graph (an agent node, a ``ToolNode`` with langmem's manage and search
tools, a checkpointer) runs two conversations.  The agent node stands in for
the chat model and decides as one would from what the tools answer: in the
second conversation it searches with a natural-language question and updates
the memory the search ranked first, by the id the search returned.  The
store ranks queries by BM25 (``query_mode="bm25"``): ADR-0016's default
substring filter would answer such a question with nothing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langmem import create_manage_memory_tool, create_search_memory_tool

#: The ``store_root`` and ``ranked_store`` fixtures (tests/langgraph has no conftest.py: see that module).
pytest_plugins = ["langgraph_fixtures"]

USER = "u-42"
NS = ("memories", USER)
FACTS = ["User's favourite food is sushi", "User works at a bakery in Lyon", "User prefers short answers"]

#: What the stand-in model does next, given the conversation so far: tool calls, or None to answer and stop.
Policy = Callable[[list[BaseMessage]], list[dict] | None]


def build(store, policy: Policy):
    tools = [create_manage_memory_tool(namespace=("memories", "{langgraph_user_id}")),
             create_search_memory_tool(namespace=("memories", "{langgraph_user_id}"))]

    def agent(state: MessagesState) -> dict[str, list[AIMessage]]:
        calls = policy(state["messages"])
        return {"messages": [AIMessage("done" if calls is None else "", tool_calls=calls or [])]}

    def route(state: MessagesState) -> str:
        return "tools" if state["messages"][-1].tool_calls else "__end__"

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge("__start__", "agent")
    graph.add_conditional_edges("agent", route)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=InMemorySaver(), store=store)


def learn_facts(messages: list[BaseMessage]) -> list[dict] | None:
    """First conversation: record each fact once."""
    if isinstance(messages[-1], ToolMessage):
        return None
    return [{"name": "manage_memory", "args": {"content": fact, "action": "create"}, "id": f"call_create_{n}"}
            for n, fact in enumerate(FACTS)]


def correct_food(messages: list[BaseMessage]) -> list[dict] | None:
    """Second conversation: look the food memory up by a question, then update what was found first."""
    last = messages[-1]
    if isinstance(last, HumanMessage):
        return [{"name": "search_memory", "args": {"query": "What food does the user like to eat?"},
                 "id": "call_search"}]
    if isinstance(last, ToolMessage) and last.name == "search_memory":
        found = json.loads(last.content)
        return [{"name": "manage_memory", "id": "call_update",
                 "args": {"content": "User's favourite food is ramen now", "action": "update", "id": found[0]["key"]}}]
    return None


def config(thread: str) -> dict:
    return {"configurable": {"thread_id": thread, "langgraph_user_id": USER}}


def test_langmem_finds_memories_by_question_and_updates_instead_of_duplicating(ranked_store):
    build(ranked_store, learn_facts).invoke({"messages": [HumanMessage("hi, some facts about me")]}, config("first"))
    assert sorted(i.value["content"] for i in ranked_store.search(NS)) == sorted(FACTS)
    sushi = next(i.key for i in ranked_store.search(NS) if "sushi" in i.value["content"])

    app = build(ranked_store, correct_food)
    result = asyncio.run(app.ainvoke({"messages": [HumanMessage("I eat ramen now")]}, config("second")))

    searched = json.loads(next(m for m in result["messages"] if getattr(m, "name", None) == "search_memory").content)
    assert searched[0]["key"] == sushi and searched[0]["score"] > 0
    assert len(searched) == 3  # a question ranks the namespace; it hides nothing
    memories = ranked_store.search(NS)
    assert len(memories) == 3  # updated, not duplicated
    assert ranked_store.get(NS, sushi).value == {"content": "User's favourite food is ramen now"}

    updated = ranked_store.why(NS, sushi).provenance
    assert (updated.source, updated.agent_step, updated.tool_call) == (
        "langgraph thread second", "tools:4", "call_update")  # agent 1, search 2, agent 3, update 4
    created = ranked_store.why(NS, next(i.key for i in memories if "bakery" in i.value["content"])).provenance
    assert (created.source, created.agent_step) == ("langgraph thread first", "tools:2")
    assert created.tool_call.startswith("call_create_")
