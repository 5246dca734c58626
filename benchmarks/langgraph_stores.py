"""LangGraph stores side by side: ``MnemosyneStore`` next to ``InMemoryStore`` and ``SqliteStore``.

The same ``BaseStore`` calls on each store, interleaved: ``put`` (one item),
``get`` (one item) and ``search`` (a namespace of 100 items, a filter, limit
10).  ``InMemoryStore`` keeps nothing on disk; ``SqliteStore``
(langgraph-checkpoint-sqlite) overwrites rows in place; ``MnemosyneStore``
makes every ``put`` a durable commit with provenance through the bridge (its
default ``mnem serve`` worker).  Targets (issue #7): ``get`` ≤ 3x and ``put``
≤ 5x ``SqliteStore``.

Run: ``python benchmarks/langgraph_stores.py [--quick]``; writes
``benchmarks/results/langgraph_stores.md``.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, timed, write_report
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()
    repeat = 50 if args.quick else 300
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
            for _ in range(repeat):  # interleave the stores sample by sample
                for name in by_store:
                    results[name][op].add(timed(ops[name][op], 1).seconds[0])
        by_store["MnemosyneStore"].close()  # type: ignore[attr-defined]
    rows = []
    for op in results["InMemoryStore"]:
        ref = results["SqliteStore"][op].p50
        for name in by_store:
            samples = results[name][op]
            rows.append([op, name, f"{samples.p50:.3f}", f"{samples.p99:.3f}", f"{samples.p50 / ref:.2f}x"])
    write_report("langgraph_stores", "LangGraph stores: MnemosyneStore next to InMemoryStore and SqliteStore", [
        f"{repeat} samples per operation and store, interleaved; 100 items in the namespace.",
        table(["operation", "store", "p50 ms", "p99 ms", "vs SqliteStore (p50)"], rows),
    ])


if __name__ == "__main__":
    main()
