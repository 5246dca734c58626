"""``MnemosyneSaver`` under real compiled graphs, beside long-term memory in the same store.

A ``StateGraph`` compiled with ``checkpointer=MnemosyneSaver(...)`` runs,
reads its state and history back, replays from a past checkpoint (a fork),
stops at an ``interrupt`` and resumes from it, sync and async.  The
checkpoints live in the store ``MnemosyneStore`` and the MCP tools read,
and neither shows them.
"""

from __future__ import annotations

import asyncio
import base64
import operator
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pg_stores
import pytest
from conftest import BACKENDS, MNEM, new_store
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

import mnem_bridge
from mnem_bridge.reserved import CHECKPOINT_PREFIX
from mnem_langgraph import MnemosyneSaver, MnemosyneStore
from mnem_mcp import operations, resources

#: The ``verbs`` fixture, which counts ``mnem`` calls (tests/langgraph has no conftest.py: see that module).
pytest_plugins = ["langgraph_fixtures"]


class Chat(TypedDict, total=False):
    user: str
    log: Annotated[list[str], operator.add]


def greet(state: Chat, runtime: Runtime) -> Chat:
    if runtime.store is not None:
        runtime.store.put(("users", state["user"]), "seen", {"times": len(state.get("log", [])) + 1})
    return {"log": [f"hello {state['user']}"]}


def answer(state: Chat) -> Chat:
    return {"log": [f"turn {len(state['log'])}"]}


def build(saver: MnemosyneSaver, store: MnemosyneStore | None = None, *, ask: bool = False) -> Any:
    graph = StateGraph(Chat)
    graph.add_node("greet", greet)
    graph.add_node("answer", answer)
    graph.add_edge(START, "greet")
    if ask:
        graph.add_node("ask", lambda state: {"log": [f"user said {interrupt('plan?')}"]})
        graph.add_edge("greet", "ask")
        graph.add_edge("ask", "answer")
    else:
        graph.add_edge("greet", "answer")
    graph.add_edge("answer", END)
    return graph.compile(checkpointer=saver, store=store)


@pytest.fixture(scope="module", params=BACKENDS)
def address(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    folder: Path = new_store(tmp_path_factory.mktemp("graph") / "memory", request.param)
    return pg_stores.address(folder)


@pytest.fixture(scope="module")
def saver(address: str) -> Iterator[MnemosyneSaver]:
    with MnemosyneSaver(address, author="graph", mnem=MNEM) as opened:
        yield opened


@pytest.fixture(scope="module")
def mstore(address: str) -> Iterator[MnemosyneStore]:
    with MnemosyneStore(address, author="graph", mnem=MNEM) as opened:
        yield opened


def thread(name: str, **more: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name, **more}}


def test_a_graph_runs_reads_its_state_and_history_and_forks_from_a_past_checkpoint(saver, mstore):
    app = build(saver, mstore)
    first = app.invoke({"user": "ada"}, thread("t-run"))
    assert first["log"] == ["hello ada", "turn 1"]
    second = app.invoke({"user": "ada"}, thread("t-run"))
    assert second["log"] == ["hello ada", "turn 1", "hello ada", "turn 3"]  # the thread's state carried over

    state = app.get_state(thread("t-run"))
    assert state.values["log"] == second["log"] and state.next == ()
    history = list(app.get_state_history(thread("t-run")))
    assert len(history) == 8  # per run: the input, then one checkpoint per step (start, greet, answer)
    assert [snapshot.config["configurable"]["checkpoint_id"] for snapshot in history] == sorted(
        (snapshot.config["configurable"]["checkpoint_id"] for snapshot in history), reverse=True)
    assert history[-1].parent_config is None and history[0].parent_config == {
        "configurable": {**history[1].config["configurable"]}}

    after_first = next(s for s in history if s.values.get("log") == ["hello ada", "turn 1"] and s.next == ())
    forked = app.invoke({"user": "ada"}, after_first.config)  # a new input from a past checkpoint: a fork
    assert forked["log"] == ["hello ada", "turn 1", "hello ada", "turn 3"]
    replayed = app.invoke(None, history[-2].config)  # replay from the first run's start
    assert replayed["log"] == ["hello ada", "turn 1"]
    assert len(list(app.get_state_history(thread("t-run")))) > len(history)
    assert mstore.get(("users", "ada"), "seen") is not None  # the memory the graph wrote sits beside


def test_an_interrupt_stops_the_run_and_a_resume_continues_from_the_checkpoint(saver):
    app = build(saver, ask=True)
    stopped = app.invoke({"user": "bo"}, thread("t-ask"))
    assert stopped["__interrupt__"][0].value == "plan?"
    assert app.get_state(thread("t-ask")).next == ("ask",)
    done = app.invoke(Command(resume="pro"), thread("t-ask"))
    assert done["log"] == ["hello bo", "user said pro", "turn 2"]


def test_the_async_api_runs_a_graph_and_lists_its_checkpoints(saver):
    app = build(saver)

    async def run() -> tuple[dict[str, Any], int]:
        result = await app.ainvoke({"user": "cy"}, thread("t-async"))
        return result, len([s async for s in app.aget_state_history(thread("t-async"))])

    result, steps = asyncio.run(run())
    assert result["log"] == ["hello cy", "turn 1"] and steps == 4
    assert saver.get_tuple(thread("t-async")) is not None
    saver.delete_thread("t-async")
    assert saver.get_tuple(thread("t-async")) is None


def test_checkpoints_are_invisible_to_memory_reads_and_the_mcp_tools(saver, mstore, address):
    app = build(saver, mstore)
    app.invoke({"user": "di"}, thread("t-hidden"))
    bridge = mnem_bridge.open(address, client=mnem_bridge.Mnem(MNEM), exact=True)
    try:
        ids = bridge.node_ids()
        assert any(i.startswith(CHECKPOINT_PREFIX) for i in ids), "the checkpoints are in the store"
        assert all(not item.key.startswith(".") for item in mstore.search((), limit=1000))
        assert all(ns[0] == "users" for ns in mstore.list_namespaces())
        assert ("users", "di") in mstore.list_namespaces()

        whole = operations.recall(bridge)
        assert isinstance(whole, mnem_bridge.WholeMemory)  # the memory as the binary printed it
        assert "users:di:seen" in whole.document and b".checkpoint" not in whole.json
        for recalled in (whole.document, operations.recall(bridge, prefix=CHECKPOINT_PREFIX), resources.memory(bridge)):
            assert isinstance(recalled, Mapping)
            assert [i for i in recalled if i.startswith(CHECKPOINT_PREFIX)] == []
        page = operations.recall(bridge, limit=1000)
        assert isinstance(page, mnem_bridge.MemoryPage)
        assert [i for i in page.document["memory"] if i.startswith(CHECKPOINT_PREFIX)] == []
        assert "users:di:seen" in page.document["memory"] and b".checkpoint" not in page.json
        hidden = next(i for i in ids if i.startswith(CHECKPOINT_PREFIX))
        assert operations.recall(bridge, hidden) is None
        assert resources.node(bridge, hidden) is None
        last = bridge.log(limit=1)[0]
        assert resources.commit(bridge, last.id)["changed"] == {}  # the run's last commit is a checkpoint
    finally:
        bridge.client.close()


def test_each_call_costs_the_mnem_invocations_the_docs_promise(saver, verbs):
    def cost(action: Any) -> list[str]:
        verbs.seen.clear()
        action()
        return list(verbs.seen)

    checkpoint = empty_checkpoint()
    checkpoint["channel_values"], checkpoint["channel_versions"] = {"a": 1, "b": 2}, {"a": "1", "b": "1"}
    stored: list[Any] = []
    assert cost(lambda: stored.append(saver.put(thread("t-cost", checkpoint_ns=""), checkpoint,
                                                {"source": "input", "step": -1}, {"a": "1", "b": "1"}))) == ["write"]
    assert cost(lambda: saver.put_writes(stored[0], [("a", 2), ("b", 3)], "task-1")) == ["write"]
    assert cost(lambda: saver.put_writes(stored[0], [("a", 20), ("b", 30)], "task-1")) == ["write"]  # kept: a retry
    assert cost(lambda: saver.get_tuple(stored[0])) == ["show", "show"]
    assert cost(lambda: saver.get_tuple(thread("t-cost", checkpoint_ns=""))) == ["ls", "show", "show"]
    assert cost(lambda: list(saver.list(thread("t-cost")))) == ["ls", "show", "show"]
    found = saver.get_tuple(stored[0])
    assert found is not None and found.checkpoint["channel_values"] == {"a": 1, "b": 2}
    assert [(task, channel, value) for task, channel, value in found.pending_writes or []] == [
        ("task-1", "a", 2), ("task-1", "b", 3)]


def test_the_latest_checkpoint_is_found_by_one_id_however_long_the_thread(saver, verbs):
    """``get_tuple`` without an id asks ``mnem ls --last 1``: a long thread's ids never cross to find the newest."""
    config: Any = thread("t-long", checkpoint_ns="")
    for step in range(12):
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"], checkpoint["channel_versions"] = {"step": step}, {"step": str(step + 1)}
        config = saver.put(config, checkpoint, {"step": step}, {"step": str(step + 1)})
    verbs.lines.clear()
    latest = saver.get_tuple(thread("t-long", checkpoint_ns=""))
    assert latest is not None and latest.checkpoint["channel_values"] == {"step": 11}
    assert latest.config["configurable"]["checkpoint_id"] == config["configurable"]["checkpoint_id"]
    listing = [line for line in verbs.lines if " ls " in line]
    assert len(listing) == 1 and "--last=1" in listing[0], verbs.lines


def test_threads_and_namespaces_with_separators_escapes_and_any_text_round_trip(saver):
    names = [("a:b", "child:1|x:2"), ("100%", "%3A"), ("日本", ""), (".checkpoint:", "w:c:b")]
    for thread_id, namespace in names:
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"], checkpoint["channel_versions"] = {"v": thread_id}, {"v": "1"}
        stored = saver.put(thread(thread_id, checkpoint_ns=namespace), checkpoint, {"step": 0}, {"v": "1"})
        saver.put_writes(stored, [("v", namespace)], "task:1")
    for thread_id, namespace in names:
        found = saver.get_tuple(thread(thread_id, checkpoint_ns=namespace))
        assert found is not None and found.config["configurable"]["thread_id"] == thread_id
        assert found.config["configurable"]["checkpoint_ns"] == namespace
        assert found.checkpoint["channel_values"] == {"v": thread_id}
        assert found.pending_writes == [("task:1", "v", namespace)]
    everywhere = {(t.config["configurable"]["thread_id"], t.config["configurable"]["checkpoint_ns"])
                  for t in saver.list(None)}
    assert set(names) <= everywhere
    saver.copy_thread("a:b", "a:b copy")
    copied = saver.get_tuple(thread("a:b copy", checkpoint_ns="child:1|x:2"))
    assert copied is not None and copied.pending_writes == [("task:1", "v", "child:1|x:2")]


def test_values_of_every_byte_round_trip_and_base64_values_of_older_savers_still_read(saver, address):
    everything = bytes(range(256))  # a serializer's bytes hold each of these (as msgpack's bin): NUL, C1, 0xFF
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"], checkpoint["channel_versions"] = {"all": everything}, {"all": "1"}
    stored = saver.put(thread("t-bytes", checkpoint_ns=""), checkpoint, {"step": 0}, {"all": "1"})
    saver.put_writes(stored, [("all", everything)], "task-1")
    found = saver.get_tuple(stored)
    assert found is not None and found.checkpoint["channel_values"] == {"all": everything}
    assert found.pending_writes == [("task-1", "all", everything)]

    def base64_of(typed: dict[str, Any]) -> dict[str, Any]:
        """A value as savers before issue #35 stored it: the serializer's bytes in base64 under ``data``."""
        data = typed.pop("latin1").encode("latin-1")
        return {**typed, "data": base64.b64encode(data).decode("ascii")}

    bridge = mnem_bridge.open(address, client=mnem_bridge.Mnem(MNEM))
    try:
        nodes = bridge.memory_page(limit=100, prefixes=[CHECKPOINT_PREFIX + "t-bytes:"]).document["memory"]
        older = []
        for node_id, node in nodes.items():
            content = dict(node["content"])
            if "checkpoint" in content:
                content |= {"checkpoint": base64_of(dict(content["checkpoint"])),
                            "metadata": base64_of(dict(content["metadata"]))}
            else:
                content = base64_of(content)
            older.append({"id": node_id.replace("t-bytes", "t-older"), "content": content})
        assert len(older) == 3  # the checkpoint, its one channel value and its one write
        bridge.write(older, message="a thread's checkpoints as an older saver stored them", allow_reserved=True)
    finally:
        bridge.client.close()
    read = saver.get_tuple(thread("t-older", checkpoint_ns=""))
    assert read is not None and read.checkpoint["channel_values"] == {"all": everything}
    assert read.pending_writes == [("task-1", "all", everything)]
