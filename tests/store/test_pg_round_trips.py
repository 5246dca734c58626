"""A commit on PostgreSQL waits for the server a fixed, small number of times (issues #34, #48).

Every round trip costs the writer and the server a wakeup each, and on a
machine whose cores they share that is what bounds throughput
(BENCHMARKS.md, "Backends").  A write runs in libpq's pipeline mode and
asks only what it needs to compute its commit (``mnem_store/postgres/session.py``);
its rows go in batches that find their keys by id, so a commit is 3 round
trips whatever its size, where a one-node commit was 22, then 8, and each
further node cost one more.  These tests count
them in libpq's own protocol trace: a round trip is the client sending and
then the server answering, so a statement that is sent and not waited for
costs none.  They fail if a change makes a commit wait again.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from typing import Any

import pg_stores
import pytest

from mnem_store import porcelain
from mnem_store.errors import StoreIoError
from mnem_store.layout import StoreUrl
from mnem_store.objects import MemoryNode
from mnem_store.postgres import PostgresBackend
from mnem_store.postgres.connect import Connections, OneConnection, PooledConnections
from mnem_store.repo import Repo

#: Round trips of a commit, whatever its size: BEGIN with HEAD; the branch's lock with its tip, graph row and
#: commit; and the commit itself, with the generation's move and COMMIT.
ROUND_TRIPS = 3

#: Statements of the last round trip, whatever the commit's size: the objects (the nodes', the state's and the
#: commit's); the node names; the graph row with its lane; the change rows; the ref's move; the leases' end;
#: the generation's move; COMMIT.
LAST_STATEMENTS = 8

#: The URLs of the stores ``traced_store`` made, newest last.
STORES: list[str] = []


class Traced(Connections):
    """A store's connections, each one's protocol traced into ``lines`` while ``tracing``."""

    def __init__(self, inner: Connections) -> None:
        self.inner = inner
        self.tracing = False
        self.lines: list[str] = []

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """The inner connection, traced for the transaction when asked."""
        from psycopg import pq

        with self.inner.connection() as conn, tempfile.TemporaryFile("w+") as trace:
            if not self.tracing:
                yield conn
                return
            conn.pgconn.trace(trace.fileno())
            conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
            try:
                yield conn
            finally:
                conn.pgconn.untrace()
                trace.seek(0)
                self.lines += trace.read().splitlines()

    def reset(self) -> None:
        """As the inner connections."""
        self.inner.reset()

    def close(self) -> None:
        """As the inner connections."""
        self.inner.close()

    def bursts(self) -> list[tuple[str, list[str]]]:
        """What was traced as runs of messages one way: ``("F", sent)`` by the client, ``("B", ...)`` by the server."""
        runs: list[tuple[str, list[str]]] = []
        for line in self.lines:
            side = line[:1]
            if side not in ("F", "B"):
                continue
            if not runs or runs[-1][0] != side:
                runs.append((side, []))
            runs[-1][1].append(line)
        return runs

    def round_trips(self) -> int:
        """Times the client sent and then the server answered, in what was traced."""
        return sum(1 for (sent, _), (answered, _) in pairwise(self.bursts()) if (sent, answered) == ("F", "B"))


@contextmanager
def traced_store(pooled: bool) -> Iterator[tuple[Repo, Traced]]:
    """A new PostgreSQL store with a few commits, opened as a one-shot ``mnem`` or as a worker (``pooled``) does."""
    address = pg_stores.new_url("rt")
    STORES.append(address)
    url = StoreUrl.parse(address)
    Repo.init(url).close()
    pools = PooledConnections() if pooled else None
    connections = Traced(pools.for_database(url.conninfo) if pools is not None else OneConnection(url.conninfo))
    try:
        with Repo(PostgresBackend.open(url, connections)) as repo:
            for i in range(10):  # past psycopg's prepare threshold: every statement prepared, as in a worker
                remember(repo, [MemoryNode(f"warm-{i}", {"i": i})])
            yield repo, connections
    finally:
        if pools is not None:
            pools.close()


def remember(repo: Repo, nodes: list[MemoryNode]) -> None:
    """What an agent's remember runs: one write of these nodes."""
    porcelain.write(repo, nodes, [], message="m", author="agent", time_ms=None)


def trips_of(repo: Repo, traced: Traced, nodes: list[MemoryNode]) -> int:
    """Round trips of one commit of ``nodes``."""
    traced.lines.clear()
    traced.tracing = True
    try:
        remember(repo, nodes)
    finally:
        traced.tracing = False
    return traced.round_trips()


def last_statements(traced: Traced) -> int:
    """Statements the traced commit's last round trip carried, which must end with its COMMIT."""
    (side, sent), (_, answered) = traced.bursts()[-2:]
    assert side == "F" and "Sync" in sent[-2] + sent[-1]
    assert any('CommandComplete\t "COMMIT"' in line for line in answered)
    return sum("Execute" in line for line in sent)


@pytest.mark.parametrize("pooled", [False, True], ids=["one-shot", "worker"])
def test_a_one_node_commit_is_three_round_trips(pooled: bool) -> None:
    with traced_store(pooled) as (repo, traced):
        assert trips_of(repo, traced, [MemoryNode("customer-1", {"plan": "pro"})]) == ROUND_TRIPS
        assert last_statements(traced) == LAST_STATEMENTS
        # A node written again (its name known, its object new) and a value written back (its object known).
        assert trips_of(repo, traced, [MemoryNode("customer-1", {"plan": "team"})]) == ROUND_TRIPS
        assert trips_of(repo, traced, [MemoryNode("customer-1", {"plan": "pro"})]) == ROUND_TRIPS
        assert last_statements(traced) == LAST_STATEMENTS


def test_further_nodes_cost_no_round_trip_and_no_statement() -> None:
    """A commit's rows go in batches: its objects, names and change rows are one statement each, however many."""
    with traced_store(pooled=True) as (repo, traced):
        nodes = [MemoryNode(f"fact-{i}", {"i": i}) for i in range(6)]
        assert trips_of(repo, traced, nodes) == ROUND_TRIPS
        assert last_statements(traced) == LAST_STATEMENTS
        assert all(repo.node_at(repo.head_commit(), node.id) is not None for node in nodes)


def test_an_error_in_a_statement_nobody_waited_for_ends_the_write_and_writes_nothing() -> None:
    """A change row is sent and never read; its failure arrives with COMMIT's round trip, typed, and undoes it all."""
    with traced_store(pooled=True) as (repo, _):
        store = STORES[-1]
        before = pg_stores.fingerprint(store)
        with pg_stores.connect(store) as conn:
            conn.execute("ALTER TABLE changes ADD CONSTRAINT refuse_all CHECK (kind < 0) NOT VALID")
        with pytest.raises(StoreIoError, match="refuse_all"):
            remember(repo, [MemoryNode("never", 1)])
        with pg_stores.connect(store) as conn:
            conn.execute("ALTER TABLE changes DROP CONSTRAINT refuse_all")
        assert pg_stores.fingerprint(store) == before
        remember(repo, [MemoryNode("after", 1)])  # the connection is clean for the next write
        assert repo.node_at(repo.head_commit(), "after") is not None
