"""Checkpoints cannot run code: no agent can plant one, and the saver loads no type it was not told to.

A checkpoint node's values are LangGraph's serializer's bytes, which can name
any callable to run on load (``planted``).  Two defences hold, each tried
with a node naming ``os.mkdir`` (a folder appears if it runs):

* every writer but the saver is refused an id under ``.checkpoint:`` with a
  ``usage`` error that names the fix, and writes nothing: the MCP tools over
  stdio and over HTTP with ``mnem:write`` (``remember``, ``revise``,
  ``remember_many``, ``forget``, and a ``merge`` resolution), and
  ``MnemosyneStore`` (whose labels may not hold ``.``);
* a pusher with ``mnem:write`` may still bring reserved nodes in a commit
  (syncing a store that holds checkpoints is legitimate), so the saver loads
  strictly: LangGraph's safe types and those named by the app, nothing else,
  never pickle; a node naming another type is an ``UnreadableCheckpointError``
  naming the node, the type and the option that allows it.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pg_stores
import pytest
from conftest import MNEM, open_repo, store_fingerprint
from http_support import HttpServer, Issuer, connect, free_port
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.base import InvalidNamespaceError
from langgraph.types import Command, Send, interrupt
from mcp_support import connect as mcp_connect
from mcp_support import fail
from mnem_history import ok
from planted import calls, checkpoint_node, latin1, pickled

import mnem_bridge
from mnem_langgraph import MnemosyneSaver, MnemosyneStore, UnreadableCheckpointError
from mnem_store import porcelain
from mnem_store.objects import MemoryNode

pytestmark = pytest.mark.anyio

#: The node a planted checkpoint ``x`` of thread ``t1`` is, in the saver's layout.
PLANTED = ".checkpoint:t1::c:x"


def thread(name: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    return {"configurable": {"thread_id": name, "checkpoint_ns": "",
                             **({"checkpoint_id": checkpoint_id} if checkpoint_id else {})}}


def a_real_checkpoint(saver: MnemosyneSaver, thread_id: str) -> str:
    """Put one checkpoint with one channel value; its node id."""
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"], checkpoint["channel_versions"] = {"v": "kept"}, {"v": "1"}
    saver.put(thread(thread_id), checkpoint, {"step": 0}, {"v": "1"})
    return f".checkpoint:{thread_id}::c:{checkpoint['id']}"


async def test_the_mcp_write_tools_over_stdio_refuse_a_reserved_id_and_write_nothing(store: Path,
                                                                                    tmp_path: Path) -> None:
    address, marker = pg_stores.address(store), tmp_path / "pwned"
    with MnemosyneSaver(address, mnem=MNEM) as saver:
        real = a_real_checkpoint(saver, "t0")
        before = store_fingerprint(store)
        async with mcp_connect("stdio", address, tools="all") as client:
            planted = checkpoint_node(marker)
            attempts: list[tuple[str, dict[str, Any]]] = [
                ("remember", {"id": PLANTED, "content": planted}),
                ("revise", {"id": real, "content": planted}),
                ("remember_many", {"items": [{"id": "fine", "content": 1}, {"id": PLANTED, "content": planted}]}),
                ("forget", {"id": real}),
                ("merge", {"theirs": "main", "resolutions": {PLANTED: {"content": planted}}}),
            ]
            for tool, arguments in attempts:
                text = await fail(client, tool, **arguments)
                assert text.startswith("usage: ") and "reserved" in text and "MnemosyneSaver" in text, text
                assert "choose an id that does not start with '.checkpoint:'" in text, text
        assert store_fingerprint(store) == before  # nothing written, not even remember_many's good item
        assert saver.get_tuple(thread("t1")) is None
        kept = saver.get_tuple(thread("t0"))
        assert kept is not None and kept.checkpoint["channel_values"] == {"v": "kept"}
    assert not marker.exists()


@pytest.fixture
def hub(backend: str, store: Path) -> Any:
    """An HTTP server with JWT auth over a store that holds one real checkpoint (thread ``t0``)."""
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(audience)
    try:
        with MnemosyneSaver(pg_stores.address(store), mnem=MNEM) as saver:
            a_real_checkpoint(saver, "t0")
        server = HttpServer(pg_stores.address(store), ["--auth", "jwt", "--issuer", issuer.url,
                                                       "--audience", audience], port=port)
        try:
            yield server, issuer
        finally:
            server.stop()
    finally:
        issuer.close()


async def test_a_writer_over_http_is_refused_and_a_pushed_checkpoint_is_refused_on_load(hub: Any, store: Path,
                                                                                        tmp_path: Path) -> None:
    server, issuer = hub
    marker = tmp_path / "pwned"
    writer = issuer.mint("mallory@example.com", scope="mnem:read mnem:write")
    before = store_fingerprint(store)
    async with connect(server.url, writer) as client:
        result = await client.call_tool("remember", {"id": PLANTED, "content": checkpoint_node(marker)})
        assert result.is_error and result.content[0].text.startswith("usage: "), result.content[0].text
        assert "reserved" in result.content[0].text
    assert store_fingerprint(store) == before

    # The same token may push: a clone, a commit made by the engine's own write (no CLI, no refusal), a push.
    env = {"MNEM_TOKEN": writer}
    ok("clone", server.url, str(tmp_path / "mine"), cwd=tmp_path, env=env)
    with open_repo(tmp_path / "mine") as repo:
        porcelain.write(repo, [MemoryNode(PLANTED, checkpoint_node(marker))], [], "checkpoint t1 step 0 (loop)",
                        "mallory", None)
    pushed = ok("--json", "push", "origin", "main", cwd=tmp_path / "mine", env=env).json
    assert pushed["status"] == "fast-forwarded"

    with MnemosyneSaver(pg_stores.address(store), mnem=MNEM) as saver:
        for read in (lambda: saver.get_tuple(thread("t1")), lambda: list(saver.list(thread("t1")))):
            with pytest.raises(UnreadableCheckpointError) as refused:
                read()
            assert refused.value.code == "corrupt_store"
            assert refused.value.node_id == PLANTED and refused.value.blocked == ("os.mkdir",)
            assert "allowed_types" in refused.value.message and "os.mkdir" in refused.value.message
        kept = saver.get_tuple(thread("t0"))
        assert kept is not None and kept.checkpoint["channel_values"] == {"v": "kept"}
    assert not marker.exists()


def plant(store: Path, nodes: dict[str, Any]) -> None:
    """Commit nodes by the engine's own write, as a pusher's commit brings them (no CLI refusal on the way)."""
    with open_repo(store) as repo:
        porcelain.write(repo, [MemoryNode(node_id, content) for node_id, content in nodes.items()], [],
                        "planted", "mallory", None)


def test_pickle_and_blocked_types_never_load_whatever_the_serializer_says_it_blocks(store: Path,
                                                                                     tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    planted = checkpoint_node(marker)
    plant(store, {
        ".checkpoint:pickled::c:x": {**planted, "metadata": pickled(marker)},
        ".checkpoint:nested::c:x": {**planted, "metadata": latin1({"ok": [1, {"deep": calls("os", "mkdir", "m")}]})},
        ".checkpoint:planted::c:x": planted,
    })
    strict_of_its_own = JsonPlusSerializer(allowed_msgpack_modules=None)
    for serde in (None, strict_of_its_own):
        with MnemosyneSaver(pg_stores.address(store), mnem=MNEM, serde=serde) as saver:
            with pytest.raises(UnreadableCheckpointError) as refused:
                saver.get_tuple(thread("pickled"))
            assert refused.value.blocked == () and "'pickle'" in refused.value.message
            for name in ("nested", "planted"):
                with pytest.raises(UnreadableCheckpointError) as refused:
                    saver.get_tuple(thread(name))
                assert refused.value.blocked == ("os.mkdir",)
                assert "MnemosyneSaver(allowed_types=[('os', 'mkdir')])" in refused.value.message
    assert not marker.exists() and not (tmp_path / "m").exists()


@dataclass
class Ticket:
    number: int
    title: str


class Desk(TypedDict):
    ticket: Ticket


def desk(saver: MnemosyneSaver) -> Any:
    graph = StateGraph(Desk)
    graph.add_node("bump", lambda state: {"ticket": Ticket(state["ticket"].number + 1, state["ticket"].title)})
    graph.add_edge(START, "bump")
    return graph.compile(checkpointer=saver)


def test_the_apps_own_types_load_only_when_allowed_and_a_blocked_one_names_the_option(store: Path) -> None:
    address, config = pg_stores.address(store), thread("desk")
    with MnemosyneSaver(address, mnem=MNEM) as saver:
        app = desk(saver)
        app.invoke({"ticket": Ticket(1, "printer")}, config)
        with pytest.raises(UnreadableCheckpointError) as refused:  # not the raw {"number": 2, ...} in its place
            saver.get_tuple(config)  # what app.get_state reads, unless LANGGRAPH_STRICT_MSGPACK widened the graph's
        assert refused.value.blocked == (f"{__name__}.Ticket",)
        assert f"MnemosyneSaver(allowed_types=[('{__name__}', 'Ticket')])" in refused.value.message
        widened = saver.with_allowlist([(__name__, "Ticket")])
        assert desk(widened).get_state(config).values == {"ticket": Ticket(2, "printer")}
    for allowed in ([Ticket], [(__name__, "Ticket")]):
        with MnemosyneSaver(address, mnem=MNEM, allowed_types=allowed) as saver:
            assert desk(saver).get_state(config).values == {"ticket": Ticket(2, "printer")}
    with pytest.raises(mnem_bridge.UsageError, match="allowed_types or serde, not both"):
        MnemosyneSaver(address, mnem=MNEM, serde=JsonPlusSerializer(), allowed_types=[Ticket])
    with pytest.raises(mnem_bridge.UsageError, match="classes or \\(module, name\\) pairs"):
        MnemosyneSaver(address, mnem=MNEM, allowed_types=["os.system"])  # type: ignore[list-item]


#: A graph whose state holds a dataclass, compiled in a fresh interpreter (LangGraph reads
#: LANGGRAPH_STRICT_MSGPACK once, when it is imported).
SCHEMA_TYPES = textwrap.dedent("""
    import sys
    from dataclasses import dataclass
    from typing import TypedDict
    from langgraph.graph import START, StateGraph
    from mnem_langgraph import MnemosyneSaver, UnreadableCheckpointError

    @dataclass
    class Ticket:
        number: int

    class Desk(TypedDict):
        ticket: Ticket

    graph = StateGraph(Desk)
    graph.add_node("bump", lambda state: {"ticket": Ticket(state["ticket"].number + 1)})
    graph.add_edge(START, "bump")
    config = {"configurable": {"thread_id": "schema"}}
    with MnemosyneSaver(sys.argv[1], mnem=sys.argv[2]) as saver:
        app = graph.compile(checkpointer=saver)
        app.invoke({"ticket": Ticket(1)}, config)
        print(repr(app.get_state(config).values["ticket"]))
        try:
            saver.get_tuple(config)  # the saver itself was not widened: only the graph's copy of it
        except UnreadableCheckpointError as exc:
            print(exc.blocked)
""")


@pytest.mark.parametrize("strict", ["true", "false"])
def test_a_graph_compiled_under_langgraph_strict_msgpack_adds_its_schema_types(store: Path, strict: str) -> None:
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": strict}
    done = subprocess.run([sys.executable, "-c", SCHEMA_TYPES, pg_stores.address(store), MNEM], env=env,
                          capture_output=True, text=True, timeout=120)
    if strict == "true":
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["Ticket(number=2)", "('__main__.Ticket',)"]
    else:  # LangGraph's permissive default does not reach the saver: without the variable nothing widens it
        assert done.returncode != 0 and "UnreadableCheckpointError" in done.stderr


def joined(state: list[str], writes: list[list[str]]) -> list[str]:
    return [*state, *itertools.chain.from_iterable(writes)]


class Flow(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    notes: Annotated[list[str], DeltaChannel(joined)]
    topic: str


def ask(state: Flow) -> Flow:
    topics = interrupt({"question": "which topics?"})
    return {"messages": [AIMessage(f"working on {topics}", id="ai-1",
                                   tool_calls=[{"name": "work", "args": {"topics": topics}, "id": "call-1"}])]}


def fan_out(state: Flow) -> list[Send]:
    return [Send("work", {"topic": topic}) for topic in state["messages"][-1].tool_calls[0]["args"]["topics"]]


def work(state: Flow) -> Flow:
    return {"notes": [f"worked {state['topic']}"],
            "messages": [ToolMessage(f"done {state['topic']}", tool_call_id="call-1", id=f"tool-{state['topic']}")]}


def run_flow(saver: Any) -> list[Any]:
    """Messages, an interrupt and its resume, a ``Send`` fan-out and a ``DeltaChannel``: what each step read back."""
    graph = StateGraph(Flow)
    graph.add_node("ask", ask)
    graph.add_node("work", work)
    graph.add_edge(START, "ask")
    graph.add_conditional_edges("ask", fan_out, ["work"])
    graph.add_edge("work", END)
    app, config = graph.compile(checkpointer=saver), thread("flow")
    stopped = app.invoke({"messages": [HumanMessage("hi", id="h-1")], "notes": []}, config)
    asked = [item.value for item in stopped.pop("__interrupt__")]  # its id is derived from the checkpoint's
    done = app.invoke(Command(resume=["a", "b"]), config)
    return [stopped, asked, done, [(snapshot.values, snapshot.next) for snapshot in app.get_state_history(config)]]


def test_messages_sends_interrupts_and_delta_channels_read_back_as_in_memory(store: Path) -> None:
    with MnemosyneSaver(pg_stores.address(store), mnem=MNEM) as saver:
        ours = run_flow(saver)
    assert ours == run_flow(InMemorySaver())
    assert ours[2]["notes"] == ["worked a", "worked b"] and isinstance(ours[2]["messages"][1], AIMessage)


def test_no_mnemosyne_store_write_reaches_a_reserved_id(store: Path) -> None:
    address = pg_stores.address(store)
    with MnemosyneSaver(address, mnem=MNEM) as saver, MnemosyneStore(address, mnem=MNEM) as memory:
        a_real_checkpoint(saver, "t0")
        before = store_fingerprint(store)
        with pytest.raises(InvalidNamespaceError):  # a label may not hold "."
            memory.put((".checkpoint:t0",), "c:x", {"planted": True})
        memory.delete((), ".checkpoint:t0::c:x")  # no label: the key is escaped, so it names no checkpoint
        assert store_fingerprint(store) == before
        kept = saver.get_tuple(thread("t0"))
        assert kept is not None and kept.checkpoint["channel_values"] == {"v": "kept"}
