"""LangGraph checkpointers side by side: ``MnemosyneSaver`` next to ``SqliteSaver`` and ``PostgresSaver``.

Issue #35 asks that checkpoints in the memory store be cheap enough to leave
on, and that a growing state not copy its unchanged channel values into
every checkpoint; issue #48 measures each backend against its true peer: a
checkpoint write on SQLite costs at most 2x LangGraph's ``SqliteSaver``
(langgraph-checkpoint-sqlite), and on PostgreSQL at most 1.5x LangGraph's
``PostgresSaver`` (langgraph-checkpoint-postgres) on the same server.
``PostgresSaver`` keeps its ``from_conn_string`` defaults (an autocommit
connection, each ``put`` one pipeline of upserts: one transaction) and its
tables in a database of its own on the server that holds MnemosyneSaver's
PostgreSQL store, so neither sees the other's tables.  This measures every
saver in one run, interleaved sample by sample after a warm-up:

* ``put`` of one checkpoint, as the raw saver call, for a messages-style
  state (one message more per step, a small counter channel and a 16 KB
  ``context`` channel written once);
* one step of a real compiled graph (``graph.invoke`` of a one-node graph on
  one thread: the latest checkpoint read, then three checkpoints and two
  tasks' pending writes, through whatever the saver does per call);
* bytes per step: how much the store grows per ``graph.invoke`` around step
  10 and around step 200, the stores' SQLite files measured after a WAL
  checkpoint, for the plain ``add_messages`` channel (whose whole list is a
  new channel value every step, in every saver) and for the same messages in
  LangGraph's ``DeltaChannel`` (which writes only the step's new message).

Run: ``python benchmarks/checkpointer.py [--quick]`` (``PostgresSaver`` needs the ``bench``
extra: ``pip install -e ".[test,bench]"``; ``--no-postgres`` leaves PostgreSQL out); writes
``benchmarks/results/checkpointer.md``.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import string
import sys
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, TypedDict

sys.path.insert(0, str(Path(__file__).parent))

from backends import peer_database, start_postgres
from benchlib import Samples, table, timed, write_report
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages

import mnem_bridge
from mnem_langgraph import MnemosyneSaver

#: Words of the chat: random letters, so the stored values compress about as prose does, not as a repeated line.
WORDS = ["".join(random.Random(i).choices(string.ascii_lowercase, k=1 + i % 9)) for i in range(3000)]
#: The unchanged channel: written by the first step, never again.
CONTEXT = " ".join(random.Random(0).choices(WORDS, k=4000))[:16384]  # 16 KB of prose-like text
WARMUP = 20


def message(step: int) -> AnyMessage:
    """The step's message, about 200 characters, alternating user and assistant as a chat does."""
    text = " ".join(random.Random(-step).choices(WORDS, k=36))[:200]
    return HumanMessage(text, id=f"m{step}") if step % 2 else AIMessage(text, id=f"m{step}")


class Plain(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    counter: int
    context: str


def _fold(state: list[Any], writes: Sequence[Any]) -> list[Any]:
    """``add_messages`` over a batch of writes, as ``DeltaChannel`` wants its reducer."""
    for write in writes:
        state = add_messages(state, write)  # type: ignore[assignment]
    return state


class Delta(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], DeltaChannel(_fold)]
    counter: int
    context: str


def graph(schema: type[Any], saver: BaseCheckpointSaver[Any]) -> Any:
    """A one-node graph: the node counts the step; the caller's input adds the message."""
    builder = StateGraph(schema)
    builder.add_node("step", lambda state: {"counter": state.get("counter", 0) + 1})
    builder.add_edge(START, "step")
    return builder.compile(checkpointer=saver)


def savers(directory: Path, tag: str, server: object = None) -> dict[str, BaseCheckpointSaver[Any]]:
    """A fresh saver of each kind, the two on disk under ``directory``; with a server, two more on PostgreSQL.

    On the server: MnemosyneSaver in a store of its own (a schema of the
    server's default database) and PostgresSaver in a database of its own,
    both new for ``tag``, so each run's savers start empty.
    """
    mnem_bridge.init(directory / f"mnem-{tag}").close()
    conn = sqlite3.connect(directory / f"lg-{tag}.sqlite", check_same_thread=False)
    sqlite_saver = SqliteSaver(conn)
    sqlite_saver.setup()
    found: dict[str, BaseCheckpointSaver[Any]] = {"MnemosyneSaver": MnemosyneSaver(directory / f"mnem-{tag}")}
    if server is not None:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver  # the bench extra's
        from psycopg.rows import dict_row

        uri: str = server.get_uri()  # type: ignore[attr-defined]
        found[PG] = MnemosyneSaver(f"{uri}{'&' if '?' in uri else '?'}store=cp_{tag}", create=True)
        # As PostgresSaver.from_conn_string connects, kept open until ``close``.
        peer = psycopg.Connection.connect(peer_database(server, f"langgraph_{tag}"), autocommit=True,
                                          prepare_threshold=0, row_factory=dict_row)
        found[PEER] = PostgresSaver(peer)
        found[PEER].setup()  # type: ignore[attr-defined]
    return {**found, "SqliteSaver": sqlite_saver, "InMemorySaver": InMemorySaver()}


PG = "MnemosyneSaver (PostgreSQL)"
PEER = "PostgresSaver"


def close(by_saver: dict[str, BaseCheckpointSaver[Any]]) -> None:
    """End the Mnemosyne savers' workers and PostgresSaver's connection."""
    for name, saver in by_saver.items():
        if isinstance(saver, MnemosyneSaver):
            saver.close()
        elif name == PEER:
            saver.conn.close()  # type: ignore[attr-defined]


class RawPuts:
    """One saver's chain of checkpoints on one thread, each ``put`` the next step of a growing chat."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver
        self.config: RunnableConfig = {"configurable": {"thread_id": "raw", "checkpoint_ns": ""}}
        self.step = 0
        self.messages: list[AnyMessage] = []
        self.versions: dict[str, Any] = {}

    def prepare(self) -> None:
        """Build the next checkpoint (untimed): one message more, the counter up, the context on step 0 only."""
        self.messages = [*self.messages, message(self.step)]
        changed = ["messages", "counter"] + (["context"] if self.step == 0 else [])
        new_versions = {channel: self.saver.get_next_version(self.versions.get(channel), None) for channel in changed}
        self.versions.update(new_versions)
        values = {"messages": self.messages, "counter": self.step, "context": CONTEXT}
        self.pending = (Checkpoint(
            v=4, id=str(uuid6(clock_seq=self.step)), ts=datetime.now(UTC).isoformat(),
            channel_values=values, channel_versions=dict(self.versions),
            versions_seen={"step": {"messages": self.versions["messages"]}}, updated_channels=changed,
        ), {"source": "loop", "step": self.step, "parents": {}}, new_versions)

    def put(self) -> None:
        checkpoint, metadata, new_versions = self.pending
        self.config = self.saver.put(self.config, checkpoint, metadata, new_versions)  # type: ignore[arg-type]
        self.step += 1


def interleaved(actions: dict[str, Callable[[], object]], setups: dict[str, Callable[[], object]],
                repeat: int) -> dict[str, Samples]:
    """``repeat`` timed calls of each action after ``WARMUP`` untimed ones, the savers' order alternating."""
    results = {name: Samples() for name in actions}
    names = list(actions)
    for i in range(WARMUP + repeat):
        for name in names if i % 2 else names[::-1]:
            sample = timed(actions[name], 1, setups.get(name))
            if i >= WARMUP:
                results[name].add(sample.seconds[0])
    return results


def raw_puts(directory: Path, repeat: int, server: object) -> dict[str, Samples]:
    by_saver = savers(directory, "raw", server)
    chains = {name: RawPuts(saver) for name, saver in by_saver.items()}
    results = interleaved({name: chain.put for name, chain in chains.items()},
                          {name: chain.prepare for name, chain in chains.items()}, repeat)
    close(by_saver)
    return results


def graph_steps(directory: Path, repeat: int, server: object) -> dict[str, Samples]:
    by_saver = savers(directory, "graph", server)
    graphs = {name: graph(Plain, saver) for name, saver in by_saver.items()}
    config: RunnableConfig = {"configurable": {"thread_id": "chat"}}
    for compiled in graphs.values():
        compiled.invoke({"messages": [message(0)], "context": CONTEXT}, config)
    steps = {name: iter(range(1, 10**9)) for name in graphs}

    def invoke(name: str) -> Callable[[], object]:
        return lambda: graphs[name].invoke({"messages": [message(next(steps[name]))]}, config)

    results = interleaved({name: invoke(name) for name in graphs}, {}, repeat)
    close(by_saver)
    return results


def _file_bytes(path: Path) -> int:
    """A SQLite database's size once its WAL is folded in (the writer is closed first)."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


#: Bytes per step are averaged over these windows of graph steps: (first, last) inclusive.
WINDOWS = ((1, 20), (191, 210))


def bytes_per_step(directory: Path, schema: type[Any], tag: str) -> dict[str, tuple[float, float]]:
    """Each on-disk saver's growth per ``graph.invoke`` averaged over ``WINDOWS`` (around steps 10 and 200)."""
    by_saver = {name: saver for name, saver in savers(directory, tag).items() if name != "InMemorySaver"}
    files = {"MnemosyneSaver": directory / f"mnem-{tag}" / ".mnem" / "store.sqlite3",
             "SqliteSaver": directory / f"lg-{tag}.sqlite"}
    graphs = {name: graph(schema, saver) for name, saver in by_saver.items()}
    config: RunnableConfig = {"configurable": {"thread_id": "chat"}}
    marks = {step for window in WINDOWS for step in (window[0] - 1, window[1])}
    sizes: dict[str, dict[int, int]] = {name: {} for name in graphs}
    for step in range(max(marks) + 1):
        for name, compiled in graphs.items():
            update: dict[str, Any] = {"messages": [message(step)]}
            if step == 0:
                update["context"] = CONTEXT
            compiled.invoke(update, config)
            if step in marks:
                if name == "MnemosyneSaver":
                    by_saver[name].close()  # type: ignore[attr-defined]
                sizes[name][step] = _file_bytes(files[name])
    by_saver["MnemosyneSaver"].close()  # type: ignore[attr-defined]
    return {name: tuple((sizes[name][last] - sizes[name][first - 1]) / (last - first + 1)  # type: ignore[misc]
                        for first, last in WINDOWS) for name in graphs}


#: Each backend's peer: the LangGraph saver a MnemosyneSaver on it is held to.
PEERS = {"MnemosyneSaver": "SqliteSaver", PG: PEER}


def versus(results: dict[str, Samples]) -> list[str]:
    """The table: each saver's p50 and p90, and its p50 over SqliteSaver's and (when measured) PostgresSaver's."""
    references = [name for name in ("SqliteSaver", PEER) if name in results]
    rows = [[name, f"{samples.p50:.3f}", f"{samples.p90:.3f}",
             *(f"{samples.p50 / results[ref].p50:.2f}x" for ref in references)] for name, samples in results.items()]
    return table(["saver", "p50 ms", "p90 ms", *(f"vs {ref} (p50)" for ref in references)], rows)


def targets(results: dict[str, Samples], bounds: dict[str, str] | None = None) -> str:
    """Each MnemosyneSaver's p50 over its backend's peer's, and the bound issue #48 sets it, if any."""
    return "; ".join(f"{name} / {peer}: **{results[name].p50 / results[peer].p50:.2f}x**"
                     + (f" ({bounds[name]})" if bounds else "") for name, peer in PEERS.items() if name in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--no-postgres", action="store_true",
                        help="leave out MnemosyneSaver and PostgresSaver on PostgreSQL")
    args = parser.parse_args()
    repeat = 100 if args.quick else 400
    load = os.getloadavg()[0]  # the machine may be shared: the ratios, from one interleaved run, are what compare
    with tempfile.TemporaryDirectory() as tmp:
        server = None if args.no_postgres else start_postgres(Path(tmp) / "pg")[0]
        try:
            puts = raw_puts(Path(tmp), repeat, server)
            steps = graph_steps(Path(tmp), repeat, server)
            durable = "" if server is None else ", ".join(
                f"`{name}` {server.psql(f'SHOW {name};').split()[2]}"  # type: ignore[attr-defined]
                for name in ("fsync", "synchronous_commit"))
        finally:
            if server is not None:
                server.cleanup()  # type: ignore[attr-defined]
        # A new connection to SqliteSaver's WAL database: SqliteSaver sets no synchronous level, so it has this default.
        with sqlite3.connect(Path(tmp) / "lg-raw.sqlite") as conn:
            level = conn.execute("PRAGMA synchronous").fetchone()[0]
        sqlite_sync = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(level, str(level))
        growth = {"`add_messages` list": bytes_per_step(Path(tmp), Plain, "plain"),
                  "`DeltaChannel` messages": bytes_per_step(Path(tmp), Delta, "delta")}
    state_bytes = {step: len(str([message(i).content for i in range(step + 1)])) for step in (10, 200)}
    rows = [[state, name, f"{early:,.0f}", f"{late:,.0f}"]
            for state, by_saver in growth.items() for name, (early, late) in by_saver.items()]
    on_postgres = "" if server is None else (
        f" On PostgreSQL (a server started here with pgserver, as `backends.py` starts it; {durable}, so each "
        "transaction's commit waits for its WAL to reach disk): MnemosyneSaver in a store of its own, one "
        "transaction per commit; PostgresSaver (its `from_conn_string` defaults, `setup()` run once) in a database "
        "of its own on the same server, each `put` one transaction (an autocommit pipeline: the changed channels' "
        "blobs, then the checkpoint row).")
    write_report("checkpointer", "LangGraph checkpointers: MnemosyneSaver next to its peers, SqliteSaver and "
                 "PostgresSaver, and InMemorySaver", [
        f"{repeat} samples per saver after {WARMUP} warm-up calls, interleaved call by call (the order alternating); "
        "every saver on its own thread of one growing chat (one message of about 200 characters more per step, a "
        "counter, and a 16 KB `context` channel written once). MnemosyneSaver makes each checkpoint one commit "
        "through its `mnem serve` worker. On SQLite, MnemosyneSaver's store (WAL, `synchronous=FULL`) next to "
        f"SqliteSaver's database (WAL, its connection's default `synchronous={sqlite_sync}`), each `put` one "
        f"transaction on both.{on_postgres} InMemorySaver keeps dicts. "
        f"Load average when this run started: {load:.1f} on {os.cpu_count()} cores; the savers share the machine "
        "in each sample, so compare the ratios, not the milliseconds, across runs.",
        "### `put` of one checkpoint (the raw saver call)",
        f"Step {WARMUP} to step {WARMUP + repeat} of the chat: the state holds that many messages.",
        versus(puts),
        "Targets (issue #48): MnemosyneSaver's put at most 2x SqliteSaver's on SQLite and at most 1.5x "
        "PostgresSaver's on PostgreSQL: " + targets(puts, {"MnemosyneSaver": "≤ 2x", PG: "≤ 1.5x"}) + ".",
        "### One step of a compiled graph (`graph.invoke` of a one-node graph, one thread)",
        "Each invoke adds one message and runs the node once: LangGraph reads the thread's latest checkpoint, "
        "then writes three checkpoints (the input, after the START step, after the node) and two tasks' pending "
        "writes, which MnemosyneSaver makes five commits.",
        versus(steps),
        "Each MnemosyneSaver next to its peer (no bound set for a whole step): " + targets(steps) + ".",
        "### Bytes per step",
        "Growth of each store's SQLite file (after a WAL checkpoint) per `graph.invoke`, averaged over steps "
        f"{WINDOWS[0][0]}-{WINDOWS[0][1]} (\"at step 10\") and {WINDOWS[1][0]}-{WINDOWS[1][1]} (\"at step 200\"). "
        "With `add_messages` the messages list is one channel, so every step's new version is the whole list, in "
        "every saver; SqliteSaver also copies the unchanged 16 KB `context` into every checkpoint row, where "
        "MnemosyneSaver writes only the channels whose version changed (`new_versions`). With LangGraph's "
        "`DeltaChannel` a step writes only its new message. For scale: the messages' text alone is "
        f"{state_bytes[10]:,} bytes at step 10 and {state_bytes[200]:,} at step 200.",
        table(["state", "saver", "bytes/step at step 10", "bytes/step at step 200"], rows),
    ])


if __name__ == "__main__":
    main()
