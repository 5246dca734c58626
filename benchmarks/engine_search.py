"""The engine's one-read search next to SqliteStore (issue #46): ``mnem search`` and ``mnem namespaces`` at 10k items.

10,000 items (100 namespaces of 100, as ``langgraph_stores.py``'s large
store), written one batch per namespace; then, interleaved call by call
after a warm-up, on the bridge's worker (one ``mnem`` call each):

* ``Store.search(("users", "u42"), filter={"tier": "pro"}, limit=10)`` and
  the whole store's, next to ``SqliteStore.search`` with the same filter;
* ``Store.namespaces(prefix=("users",), limit=100)``, next to
  ``SqliteStore.list_namespaces``.

Targets (issue #46): each ≤ 1.5x SqliteStore's p50.  This measures the
engine's verbs through the bridge alone; ``MnemosyneStore`` makes each of
its searches and listings one such call and adds its own conversion to
LangGraph's items, which ``langgraph_stores.py`` measures: the difference
between the two is the adapter's share.

Run: ``python benchmarks/engine_search.py [--quick]``; writes ``benchmarks/results/engine_search.md``.
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
from langgraph.store.base import PutOp
from langgraph.store.sqlite import SqliteStore

import mnem_bridge

USERS, PER_USER = 100, 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()
    repeat = 30 if args.quick else 300
    with tempfile.TemporaryDirectory() as tmp:
        store = mnem_bridge.init(Path(tmp) / "mnem")
        conn = sqlite3.connect(Path(tmp) / "lg.sqlite", check_same_thread=False, isolation_level=None)
        sqlite_store = SqliteStore(conn)
        sqlite_store.setup()
        for user in range(USERS):  # one batch (one commit) per user
            values = [{"tier": "pro" if i % 2 else "free", "n": i} for i in range(PER_USER)]
            store.write([{"id": f"users:u{user}:key-{i}", "content": value} for i, value in enumerate(values)],
                        message=f"user {user}")
            sqlite_store.batch([PutOp(("users", f"u{user}"), f"key-{i}", value) for i, value in enumerate(values)])
        ops: dict[str, dict[str, Callable[[], object]]] = {
            "search one namespace (filter, limit 10)": {
                "mnem search": lambda: store.search(("users", "u42"), filter={"tier": "pro"}, limit=10, live=True),
                "SqliteStore": lambda: sqlite_store.search(("users", "u42"), filter={"tier": "pro"}, limit=10)},
            "search the whole store (filter, limit 10)": {
                "mnem search": lambda: store.search((), filter={"tier": "pro"}, limit=10, live=True),
                "SqliteStore": lambda: sqlite_store.search((), filter={"tier": "pro"}, limit=10)},
            "list_namespaces (prefix, limit 100)": {
                "mnem namespaces": lambda: store.namespaces(prefix=("users",), limit=100, live=True),
                "SqliteStore": lambda: sqlite_store.list_namespaces(prefix=("users",), limit=100)},
        }
        rows = []
        for op, by_store in ops.items():
            results = {name: Samples() for name in by_store}
            for call in by_store.values():
                for _ in range(10):  # warm up
                    call()
            for i in range(repeat):  # interleaved, the order alternating
                for name in list(by_store) if i % 2 else list(by_store)[::-1]:
                    results[name].add(timed(by_store[name], 1).seconds[0])
            reference = results["SqliteStore"].p50
            rows += [[op, name, f"{samples.p50:.3f}", f"{samples.p90:.3f}", f"{samples.p50 / reference:.2f}x"]
                     for name, samples in results.items()]
        store.close()
        conn.close()
    write_report("engine_search", "The engine's one-read search next to SqliteStore, 10,000 items", [
        f"{USERS} namespaces of {PER_USER} items; {repeat} samples per call after 10 warm-up calls, interleaved "
        "(the order alternating); `mnem` calls through the bridge's worker.",
        table(["operation", "store", "p50 ms", "p90 ms", "vs SqliteStore (p50)"], rows),
    ])


if __name__ == "__main__":
    main()
