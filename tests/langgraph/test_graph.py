"""MnemosyneStore inside real LangGraph graphs: ``compile(store=)``, ``runtime.store``, ``InjectedStore``."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Sequence
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import InjectedStore, create_react_agent
from langgraph.runtime import Runtime
from langgraph.warnings import LangGraphDeprecatedSinceV10

#: The ``store_root`` and ``mstore`` fixtures (tests/langgraph has no conftest.py: see that module).
pytest_plugins = ["langgraph_fixtures"]


class Turn(TypedDict, total=False):
    user: str
    said: str
    known: list[str]


def learn(state: Turn, runtime: Runtime) -> Turn:
    """Record what the user said as a memory, with where it came from."""
    if state.get("said"):
        runtime.store.put(("memories", state["user"]), "plan",
                          {"tier": state["said"], "_meta": {"source": "ticket-1", "step": "learn"}})
    return {}


def recall(state: Turn, runtime: Runtime) -> Turn:
    """Read back everything known about the user, from any thread."""
    return {"known": [item.value["tier"] for item in runtime.store.search(("memories", state["user"]))]}


def build(store: Any) -> Any:
    graph = StateGraph(Turn)
    graph.add_node("learn", learn)
    graph.add_node("recall", recall)
    graph.add_edge(START, "learn")
    graph.add_edge("learn", "recall")
    graph.add_edge("recall", END)
    return graph.compile(store=store, checkpointer=InMemorySaver())


def test_a_compiled_graph_remembers_across_threads_and_why_names_the_source(mstore):
    app = build(mstore)
    first = app.invoke({"user": "u1", "said": "pro"}, {"configurable": {"thread_id": "thread-a"}})
    assert first["known"] == ["pro"]
    second = app.invoke({"user": "u1"}, {"configurable": {"thread_id": "thread-b"}})
    assert second["known"] == ["pro"]  # a different thread sees the long-term memory
    blame = mstore.why(("memories", "u1"), "plan")
    assert blame.provenance.source == "ticket-1" and blame.provenance.agent_step == "learn"
    assert mstore.get(("memories", "u1"), "plan").value == {"tier": "pro"}


def test_an_async_node_uses_the_async_methods(mstore):
    async def alearn(state: Turn, runtime: Runtime) -> Turn:
        await runtime.store.aput(("memories", state["user"]), "plan", {"tier": state["said"]})
        return {"known": [i.value["tier"] for i in await runtime.store.asearch(("memories", state["user"]))]}

    graph = StateGraph(Turn)
    graph.add_node("alearn", alearn)
    graph.add_edge(START, "alearn")
    app = graph.compile(store=mstore)
    assert asyncio.run(app.ainvoke({"user": "u2", "said": "team"}))["known"] == ["team"]


class ToolCallingFake(GenericFakeChatModel):
    """A scripted chat model that accepts tools, so a prebuilt agent can drive it."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ToolCallingFake:
        return self


@tool
def remember_plan(
    user: str,
    tier: str,
    store: Annotated[Any, InjectedStore()],
    tool_call_id: Annotated[str, InjectedToolCallId],
) -> str:
    """Remember the user's plan tier."""
    store.put(("memories", user), "plan", {"tier": tier, "_meta": {"source": "chat", "tool_call": tool_call_id}})
    return f"remembered {tier} for {user}"


def test_a_prebuilt_agent_tool_writes_through_the_injected_store(mstore):
    assert set(remember_plan.tool_call_schema.model_json_schema()["properties"]) == {"user", "tier"}
    model = ToolCallingFake(messages=iter([
        AIMessage("", tool_calls=[{"name": "remember_plan", "args": {"user": "u1", "tier": "enterprise"},
                                   "id": "call-7"}]),
        AIMessage("Done: you are on enterprise."),
    ]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        agent = create_react_agent(model, [remember_plan], store=mstore)
    out = agent.invoke({"messages": [("user", "I upgraded to enterprise")]})
    assert out["messages"][-1].content == "Done: you are on enterprise."
    assert mstore.get(("memories", "u1"), "plan").value == {"tier": "enterprise"}
    why = mstore.why(("memories", "u1"), "plan")
    assert why.provenance.source == "chat" and why.provenance.tool_call == "call-7"
