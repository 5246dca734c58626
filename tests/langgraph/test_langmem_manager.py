"""langmem's ``create_memory_store_manager`` on MnemosyneStore, unmodified: finds by meaning, updates, explains.

A real graph (a stand-in chat node, then the manager itself as the
``remember`` node, a checkpointer, the store given at compile time) runs
two conversations.  The chat model the manager drives is a fake that
answers with the tool calls langmem and trustcall expect: ``Memory`` calls
to record new facts, and a ``PatchDoc`` call (a JSON patch on the
``json_doc_id`` trustcall showed it) to change an existing one.  The store
embeds memories with a deterministic bag-of-known-words embedder, so the
manager's own semantic search (the last message as the query) ranks the
memories exactly.  The first conversation runs the manager's sync path, the
second its async one.
"""

from __future__ import annotations

import ast
import asyncio
import re
from collections.abc import Callable, Sequence
from typing import Any

from conftest import MNEM
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState, StateGraph
from langmem import create_memory_store_manager
from pydantic import Field

from mnem_langgraph import MnemosyneStore

pytest_plugins = ["langgraph_fixtures"]

USER = "u-7"
NS = ("memories", USER)
SUSHI = "User's favourite food is sushi"
RAMEN = "User's favourite food is ramen now"
#: What the user tells in the first conversation, one memory each.  Against the second conversation's
#: query the first three score 0.71, 0.5 and 0.29 (cosine, below); the last three score 0.
FACTS = [SUSHI, "User cooks food for friends on Sundays", "User eats lunch at a bakery in Lyon",
         "User plays the cello", "User commutes by bike", "User prefers short answers"]
#: The manager's query in the second conversation is its last message, the chat node's reply.
REPLY = "Noted: ramen is your favourite food now, you no longer eat sushi."
WORDS = ("food", "sushi", "ramen", "eat", "bakery", "lyon", "cello", "bike", "answers")
#: The manager's default: it puts at most this many found memories before the model.
QUERY_LIMIT = 5
#: ``<instance id=... schema_type="Memory">\n{...}\n</instance>``: how trustcall shows an existing memory.
INSTANCE = re.compile(r'<instance id=(\S+) schema_type="(\w+)">\n(.*?)\n</instance>', re.DOTALL)


def embed(texts: list[str]) -> list[list[float]]:
    """A deterministic bag-of-known-words embedder: texts sharing words are near."""
    return [[float(text.lower().count(word)) for word in WORDS] for text in texts]


def shown(prompt: Sequence[BaseMessage]) -> list[tuple[str, str]]:
    """The existing memories a prompt showed the model, in order: ``(json_doc_id, content)``."""
    text = "\n".join(str(m.content) for m in prompt)
    return [(doc_id, ast.literal_eval(value)["content"]) for doc_id, _, value in INSTANCE.findall(text)]


class ScriptedChatModel(BaseChatModel):
    """A chat model whose answer is ``respond(prompt)``; it keeps every prompt and the tools it was offered."""

    respond: Callable[[list[BaseMessage]], AIMessage]
    calls: list[tuple[list[BaseMessage], list[str]]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], tool_choice=tool_choice, **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.calls.append((list(messages), [t["function"]["name"] for t in kwargs.get("tools") or []]))
        return ChatResult(generations=[ChatGeneration(message=self.respond(list(messages)))])


def memory_manager_model(prompt: list[BaseMessage]) -> AIMessage:
    """What a model would do: record the facts when nothing is known; else correct the food memory it was shown."""
    existing = shown(prompt)
    if not existing:
        return AIMessage("", tool_calls=[{"name": "Memory", "args": {"content": fact}, "id": f"call_mem_{n}"}
                                         for n, fact in enumerate(FACTS)])
    doc_id = next(doc_id for doc_id, content in existing if "sushi" in content)
    return AIMessage("", tool_calls=[{"name": "PatchDoc", "id": "call_patch", "args": {
        "json_doc_id": doc_id, "planned_edits": "The user now prefers ramen: replace /content.",
        "patches": [{"op": "replace", "path": "/content", "value": RAMEN}]}}])


class State(MessagesState):
    written: list[dict[str, Any]]


def build(store: MnemosyneStore, model: ScriptedChatModel, reply: str):
    manager = create_memory_store_manager(model, namespace=("memories", "{langgraph_user_id}"))

    def chat(state: State) -> dict[str, list[AIMessage]]:
        return {"messages": [AIMessage(reply)]}

    graph = StateGraph(State)
    graph.add_node("chat", chat)
    # The manager is the node: it reads the state's messages and reports its puts as ``written``.
    graph.add_node("remember", manager | RunnableLambda(lambda puts: {"written": puts}))
    graph.add_edge("__start__", "chat")
    graph.add_edge("chat", "remember")
    return graph.compile(checkpointer=InMemorySaver(), store=store)


def config(thread: str) -> dict:
    return {"configurable": {"thread_id": thread, "langgraph_user_id": USER}}


def test_the_memory_store_manager_finds_a_memory_by_meaning_and_updates_it_with_provenance(store_root):
    index = {"dims": len(WORDS), "embed": embed, "fields": ["content.content"]}
    model = ScriptedChatModel(respond=memory_manager_model)
    with MnemosyneStore(store_root, author="tester", mnem=MNEM, index=index) as store:
        # First conversation (the manager's sync path): nothing is known yet, so every fact becomes a memory.
        first = build(store, model, "Nice to meet you!").invoke(
            {"messages": [HumanMessage("Hi! " + ". ".join(FACTS))]}, config("first"))
        assert len(model.calls) == 1 and shown(model.calls[0][0]) == []
        memories = store.search(NS)
        assert sorted(i.value["content"]["content"] for i in memories) == sorted(FACTS)
        assert {i.value["kind"] for i in memories} == {"Memory"}
        assert sorted(p["key"] for p in first["written"]) == sorted(i.key for i in memories)
        sushi = next(i.key for i in memories if i.value["content"]["content"] == SUSHI)
        created = store.why(NS, sushi).provenance
        assert (created.source, created.agent_step, created.tool_call) == ("langgraph thread first", "remember:2", None)
        commits = len(store.history(limit=100))

        # Second conversation (the async path): the manager searches the store with the reply as its query.
        second = asyncio.run(build(store, model, REPLY).ainvoke(
            {"messages": [HumanMessage("I don't eat sushi any more, it's ramen for me now.")]}, config("second")))
        assert len(model.calls) == 2
        prompt, tools = model.calls[1]
        assert "PatchDoc" in tools  # trustcall offered the model a way to update
        found = shown(prompt)
        # The search ranked by meaning: the food memory first, then by score, and only QUERY_LIMIT of the six.
        assert [content for _, content in found[:3]] == FACTS[:3]
        assert len(found) == QUERY_LIMIT
        assert "it's ramen for me now" in prompt[-1].content  # and the conversation itself

        # The model patched the memory it was shown: same key, new value, no duplicate.
        assert second["written"] == [
            {"namespace": NS, "key": sushi, "value": {"kind": "Memory", "content": {"content": RAMEN}}}]
        after = store.search(NS)
        assert len(after) == len(FACTS)
        assert sorted(i.key for i in after) == sorted(i.key for i in memories)
        assert store.get(NS, sushi).value == {"kind": "Memory", "content": {"content": RAMEN}}
        assert [i.value for i in after if i.key != sushi] == [i.value for i in memories if i.key != sushi]
        assert store.search(NS, query="ramen", limit=1)[0].key == sushi  # re-embedded with the new text

        # One commit for the update, naming the conversation and the node step that wrote it; history keeps sushi.
        history = store.history(limit=100)
        assert len(history) == commits + 1
        blame = store.why(NS, sushi)
        assert blame.commit == history[0].id
        updated = blame.provenance
        assert (updated.source, updated.agent_step, updated.tool_call) == (
            "langgraph thread second", "remember:2", None)
        assert updated.note is not None and updated.note.startswith("run ")
        assert store.at(history[1].id).get(NS, sushi).value["content"] == {"content": SUSHI}
