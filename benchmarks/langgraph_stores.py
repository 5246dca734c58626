"""LangGraph stores side by side: ``MnemosyneStore`` next to ``InMemoryStore`` and ``SqliteStore``.

The same ``BaseStore`` calls on each store, interleaved: ``put`` (one item),
``get`` (one item) and ``search`` (a namespace of 100 items, a filter, limit
10).  ``InMemoryStore`` keeps nothing on disk; ``SqliteStore``
(langgraph-checkpoint-sqlite) overwrites rows in place; ``MnemosyneStore``
makes every ``put`` a durable commit with provenance through the bridge (its
default ``mnem serve`` worker).  Targets (issue #7): ``get`` ≤ 3x and ``put``
≤ 5x ``SqliteStore``.  A second table times ``aget`` inside an event loop,
next to LangGraph's ``AsyncSqliteStore``.

Run: ``python benchmarks/langgraph_stores.py [--quick]``; writes
``benchmarks/results/langgraph_stores.md``.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import anyio
from benchlib import Samples, table, timed, write_report
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

import mnem_bridge
from mnem_langgraph import MnemosyneStore

NAMESPACE = ("memories", "acme")


def stores(directory: Path) -> dict[str, BaseStore]:
    mnem_bridge.init(directory / "mnem").close()
    conn = sqlite3.connect(directory / "lg.sqlite", check_same_thread=False, isolation_level=None)
    sqlite_store = SqliteStore(conn)
    sqlite_store.setup()
    return {"MnemosyneStore": MnemosyneStore(directory / "mnem"), "SqliteStore": sqlite_store,
            "InMemoryStore": InMemoryStore()}


def operations(store: BaseStore) -> dict[str, Callable[[], object]]:
    counter = iter(range(10**9))
    return {
        "put": lambda: store.put(NAMESPACE, f"key-{next(counter) % 100}",
                                 {"tier": "pro", "seats": 40, "_meta": {"source": "bench"}}),
        "get": lambda: store.get(NAMESPACE, "key-7"),
        "search (filter, limit 10)": lambda: store.search(NAMESPACE, filter={"tier": "pro"}, limit=10),
    }


#: The large store: this many namespaces (one per user) of this many items.
USERS, PER_USER = 100, 100


def large_operations(store: BaseStore) -> dict[str, Callable[[], object]]:
    return {
        "search one user's namespace (filter, limit 10)": lambda: store.search(
            ("users", "u42"), filter={"tier": "pro"}, limit=10),
        "list_namespaces (prefix, limit 100)": lambda: store.list_namespaces(prefix=("users",), limit=100),
        "search the whole store (filter, limit 10)": lambda: store.search((), filter={"tier": "pro"}, limit=10),
    }


def large_table(directory: Path, repeat: int) -> list[str]:
    """The same reads on 10,000 items in 100 namespaces, MnemosyneStore next to SqliteStore."""
    by_store = {name: store for name, store in stores(directory).items() if name != "InMemoryStore"}
    for store in by_store.values():
        for user in range(USERS):  # one batch (one commit) per user
            store.batch([PutOp(("users", f"u{user}"), f"key-{i}", {"tier": "pro" if i % 2 else "free", "n": i})
                         for i in range(PER_USER)])
    ops = {name: large_operations(store) for name, store in by_store.items()}
    results = {name: {op: Samples() for op in ops[name]} for name in by_store}
    for op in ops["SqliteStore"]:
        for name in by_store:
            ops[name][op]()  # warm
        for _ in range(repeat):
            for name in by_store:
                results[name][op].add(timed(ops[name][op], 1).seconds[0])
    by_store["MnemosyneStore"].close()  # type: ignore[attr-defined]
    return versus_sqlite(results, tail="p90")


async def async_gets(directory: Path, repeat: int) -> dict[str, dict[str, Samples]]:
    """``aget`` of one item inside a running event loop: each store's async path, interleaved call by call.

    ``AsyncSqliteStore`` is LangGraph's async SQLite store (aiosqlite: a
    thread per connection); ``MnemosyneStore.aget`` runs the bridge call on
    the loop's thread (``mnem_bridge.run_inline``).
    """
    mnem = MnemosyneStore(directory / "mnem")
    async with AsyncSqliteStore.from_conn_string(str(directory / "lg-async.sqlite")) as sqlite_store:
        await sqlite_store.setup()
        by_store: dict[str, BaseStore] = {"MnemosyneStore": mnem, "AsyncSqliteStore": sqlite_store,
                                          "InMemoryStore": InMemoryStore()}
        await by_store["InMemoryStore"].aput(NAMESPACE, "key-7", {"tier": "pro", "seats": 7})
        await sqlite_store.aput(NAMESPACE, "key-7", {"tier": "pro", "seats": 7})
        results: dict[str, dict[str, Samples]] = {name: {"aget": Samples()} for name in by_store}
        for i in range(20 + repeat):  # warm-up calls first, then samples; the order alternates
            for name in by_store if i % 2 else list(by_store)[::-1]:
                start = time.perf_counter()
                await by_store[name].aget(NAMESPACE, "key-7")
                if i >= 20:
                    results[name]["aget"].add(time.perf_counter() - start)
    mnem.close()
    return results


def versus_sqlite(results: dict[str, dict[str, Samples]], tail: str, reference: str = "SqliteStore") -> list[str]:
    """One row per operation and store: p50, the ``tail`` percentile (p99 needs 1000 samples), p50 vs ``reference``."""
    rows = []
    for op in results[reference]:
        ref = results[reference][op].p50
        for name, by_op in results.items():
            samples = by_op[op]
            rows.append([op, name, f"{samples.p50:.3f}", f"{getattr(samples, tail):.3f}", f"{samples.p50 / ref:.2f}x"])
    return table(["operation", "store", "p50 ms", f"{tail} ms", f"vs {reference} (p50)"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()
    repeat = 100 if args.quick else 1000
    with tempfile.TemporaryDirectory() as tmp:
        by_store = stores(Path(tmp))
        for store in by_store.values():  # the same 100 items everywhere
            for i in range(100):
                store.put(NAMESPACE, f"key-{i}", {"tier": "pro" if i % 2 else "free", "seats": i})
        results: dict[str, dict[str, Samples]] = {name: {} for name in by_store}
        ops = {name: operations(store) for name, store in by_store.items()}
        for op in ops["InMemoryStore"]:
            for name in by_store:
                results[name][op] = Samples()
                for _ in range(20):  # warm up
                    ops[name][op]()
            for _ in range(repeat):  # interleave the stores sample by sample
                for name in by_store:
                    results[name][op].add(timed(ops[name][op], 1).seconds[0])
        by_store["MnemosyneStore"].close()  # type: ignore[attr-defined]
        async_results = anyio.run(async_gets, Path(tmp), repeat)
    with tempfile.TemporaryDirectory() as tmp:
        large_repeat = 20 if args.quick else 100
        large = large_table(Path(tmp), large_repeat)
    write_report("langgraph_stores", "LangGraph stores: MnemosyneStore next to InMemoryStore and SqliteStore", [
        f"{repeat} samples per operation and store after 20 warm-up calls, interleaved; 100 items in the namespace.",
        versus_sqlite(results, tail="p99" if repeat >= 1000 else "p90"),
        "### The async path: `aget` inside an event loop",
        f"{repeat} samples per store after 20 warm-up calls, interleaved, in one asyncio loop: "
        "`MnemosyneStore.aget` (the bridge call on the loop's thread, `mnem_bridge.run_inline`), LangGraph's "
        "`AsyncSqliteStore.aget` (aiosqlite, a thread per connection) and `InMemoryStore.aget`.",
        versus_sqlite(async_results, tail="p99" if repeat >= 1000 else "p90", reference="AsyncSqliteStore"),
        "### A large store: 10,000 items in 100 namespaces",
        f"{USERS} users' namespaces of {PER_USER} items each, written one batch (one commit) per user; "
        f"{large_repeat} samples per read and store (p90, not p99), interleaved after a warm-up read. "
        "MnemosyneStore reads only the namespace a search can return (`mnem stamps --prefix`), a listing only ids "
        "(`mnem ls`); a search of the whole store still reads every item and its times.",
        large,
    ])


if __name__ == "__main__":
    main()
