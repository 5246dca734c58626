"""Limits on one call under LangGraph, on both backends: ``MnemosyneStore`` is held to ``mnem``'s limits, the
saver's checkpoints are not, and the messages both generate cut a long id.

A put is an agent's write: past a limit it is ``UsageError`` naming the limit and the variable, and nothing is
written.  A checkpoint is the graph's whole state (its message list grows with the conversation) and copying a
thread writes every node it has: ``MnemosyneSaver`` writes them with ``--allow-reserved``, which no agent can
pass, and ``mnem`` does not hold those to the limits (``mnem_store.limits``).  So a graph whose state is far past
them runs, checkpoints, forks, copies and deletes its thread as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from conftest import MNEM, run_mnem, store_fingerprint
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

import mnem_bridge
from mnem_langgraph import MnemosyneSaver, MnemosyneStore

SMALL = {"MNEM_MAX_ID_BYTES": "60", "MNEM_MAX_VALUE_BYTES": "2000", "MNEM_MAX_WRITE_NODES": "3",
         "MNEM_MAX_WRITE_BYTES": "4000"}


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small limits for every ``mnem`` started from here on (each adapter starts its own worker)."""
    for name, value in SMALL.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def memory(store: Path, small: None) -> Iterator[MnemosyneStore]:
    with MnemosyneStore(pg_stores.address(store), author="tester", mnem=MNEM) as opened:
        yield opened


def test_a_put_past_a_limit_is_refused_and_writes_nothing(memory: MnemosyneStore, store: Path) -> None:
    memory.put(("users", "u1"), "prefs", {"tone": "short"})
    before = store_fingerprint(store)
    for namespace, key, value, option in [
        (("users", "u1"), "notes", {"text": "n" * 2000}, "MNEM_MAX_VALUE_BYTES"),
        (("users", "u1"), "k" * 60, {"v": 1}, "MNEM_MAX_ID_BYTES"),
        (("users", "u1"), "prefs", {"tone": "t" * 1000, "_meta": {"source": "s" * 1000}}, "MNEM_MAX_VALUE_BYTES"),
    ]:
        with pytest.raises(mnem_bridge.UsageError) as caught:
            memory.put(namespace, key, value)
        assert f"({option}); " in caught.value.message and "(0 lifts the limit)" in caught.value.message
    with pytest.raises(mnem_bridge.UsageError, match="MNEM_MAX_WRITE_NODES"):
        memory.batch([_put(("users", "u2"), f"k{i}", {"i": i}) for i in range(4)])
    assert store_fingerprint(store) == before
    assert memory.get(("users", "u1"), "prefs").value == {"tone": "short"}  # type: ignore[union-attr]


def _put(namespace: tuple[str, ...], key: str, value: dict[str, Any]) -> Any:
    from langgraph.store.base import PutOp

    return PutOp(namespace, key, value)


def _chat() -> StateGraph[MessagesState]:
    def bot(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content="a" * 500)]}

    graph = StateGraph(MessagesState)
    graph.add_node("bot", bot)
    graph.add_edge(START, "bot")
    graph.add_edge("bot", END)
    return graph


def test_the_savers_checkpoints_are_not_held_to_the_limits(store: Path, small: None) -> None:
    """Ten turns make a message list of ~10 KB (five times the value limit here), a thread id past the id limit, and
    a thread of 60 nodes: every checkpoint is written, read back, copied and deleted."""
    thread = "t" * 80
    with MnemosyneSaver(pg_stores.address(store), mnem=MNEM) as saver:
        app = _chat().compile(checkpointer=saver)
        config: Any = {"configurable": {"thread_id": thread}}
        for turn in range(10):
            app.invoke({"messages": [HumanMessage(content=f"{turn} " + "q" * 500)]}, config)
        state = app.get_state(config)
        assert len(state.values["messages"]) == 20
        assert len(list(app.get_state_history(config))) >= 10
        saver.copy_thread(thread, "copy")
        assert len(app.get_state({"configurable": {"thread_id": "copy"}}).values["messages"]) == 20
        saver.delete_thread(thread)
        assert app.get_state(config).values == {}
    history = run_mnem("--json", "log", cwd=store).json
    copied = run_mnem("--json", "show", history[1]["id"], cwd=store).json  # before the delete: both threads
    largest = max(len(json.dumps(node["content"], separators=(",", ":"))) for node in copied.values())
    assert largest > 4 * int(SMALL["MNEM_MAX_VALUE_BYTES"]) and len(copied) > int(SMALL["MNEM_MAX_WRITE_NODES"])
    with MnemosyneStore(pg_stores.address(store), mnem=MNEM) as memory, pytest.raises(mnem_bridge.UsageError):
        memory.put(("notes",), "transcript", {"text": "x" * largest})  # the same size from an agent is refused


def test_generated_messages_cut_a_long_key_and_a_long_thread(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEM_MAX_ID_BYTES", "0")  # old-style long ids, as a store written before the limits holds
    key, thread = "k" * 500, "t" * 500
    with MnemosyneStore(pg_stores.address(store), author="tester", mnem=MNEM) as opened:
        opened.put(("docs",), key, {"v": 1})
        opened.put(("docs",), "short", {"v": 2})
    with MnemosyneSaver(pg_stores.address(store), mnem=MNEM) as saver:
        _chat().compile(checkpointer=saver).invoke({"messages": [HumanMessage(content="hi")]},
                                                   {"configurable": {"thread_id": thread}})
    messages = [line.split(" ", 1)[1] for line in run_mnem("log", "--oneline", cwd=store).out.splitlines()]
    assert messages[-2:] == ["put docs:short", f"put {('docs:' + key)[:77]}..."]
    assert any(m.startswith(f"checkpoint {'t' * 77}... step") for m in messages), messages
    assert max(map(len, messages)) < 200  # uncut, each would be over 500
