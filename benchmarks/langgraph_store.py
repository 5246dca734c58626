"""What a MnemosyneStore operation costs, next to InMemoryStore.

Each BaseStore call is one ``batch``: a read is one ``mnem stamps``, a write
one ``mnem write``.  This times the common calls on a store of ``--items``
items, with the bridge's persistent worker (the default) and with one
process per call, and then the item-time walk on a long history
(``--commits`` single-item commits), where ``search`` must stamp every item
and ``get`` only its own, warm and on a newly started worker.

Usage: ``.venv/bin/python benchmarks/langgraph_store.py [--calls N] [--items N] [--commits N] [--out FILE]``.
Writes a Markdown table (default ``benchmarks/results/langgraph_store.md``) and prints it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore

import mnem_bridge
from mnem_langgraph import MnemosyneStore

RESULTS = Path(__file__).with_name("results") / "langgraph_store.md"
MNEM = str(Path(sys.executable).with_name("mnem"))
NS = ("memories", "u1")


@contextlib.contextmanager
def bridge_mode(mode: str) -> Iterator[None]:
    """Run the bridge as ``worker`` or ``oneshot`` (its ``MNEM_BRIDGE_MODE``, read when a store opens)."""
    before = os.environ.get("MNEM_BRIDGE_MODE")
    os.environ["MNEM_BRIDGE_MODE"] = mode
    try:
        yield
    finally:
        if before is None:
            del os.environ["MNEM_BRIDGE_MODE"]
        else:
            os.environ["MNEM_BRIDGE_MODE"] = before


def median_ms(action: Callable[[], object], calls: int) -> float:
    action()  # warm-up: the worker starts, caches fill
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def seed(store: BaseStore, items: int) -> None:
    store.batch([PutOp(NS, f"k{i}", {"i": i, "tier": "pro" if i % 2 else "free"}) for i in range(items)])


def operations(store: BaseStore) -> dict[str, Callable[[], object]]:
    counter = iter(range(10**9))
    return {
        "put (one commit)": lambda: store.put(NS, "hot", {"n": next(counter)}),
        "get": lambda: store.get(NS, "k1"),
        "search, filter, limit 10": lambda: store.search(NS, filter={"tier": "pro"}, limit=10),
        "list_namespaces": lambda: store.list_namespaces(),
        "batch of 20 puts (one commit)": lambda: store.batch(
            [PutOp(NS, f"b{i}", {"n": next(counter)}) for i in range(20)]),
    }


def per_op_table(calls: int, items: int) -> list[str]:
    columns: dict[str, dict[str, float]] = {}
    memory = InMemoryStore()
    seed(memory, items)
    columns["InMemoryStore"] = {name: median_ms(op, calls) for name, op in operations(memory).items()}
    for mode in ("worker", "oneshot"):
        with tempfile.TemporaryDirectory() as tmp, bridge_mode(mode):
            mnem_bridge.init(tmp, client=mnem_bridge.Mnem(MNEM)).close()
            with MnemosyneStore(tmp, mnem=MNEM) as store:
                seed(store, items)
                columns[f"MnemosyneStore ({mode})"] = {
                    name: median_ms(op, calls) for name, op in operations(store).items()}
    names = list(columns)
    rows = [f"| call ({items} items) | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for op in columns[names[0]]:
        rows.append(f"| {op} | " + " | ".join(f"{columns[n][op]:.2f}" for n in names) + " |")
    return rows


def history_table(calls: int, commits: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp, bridge_mode("worker"):
        mnem_bridge.init(tmp, client=mnem_bridge.Mnem(MNEM)).close()
        with MnemosyneStore(tmp, mnem=MNEM) as store:
            keys = max(1, commits // 10)
            for i in range(commits):
                store.put(NS, f"k{i % keys}", {"v": i})
            rows = [f"| call ({commits} commits, {keys} items) | MnemosyneStore (worker) |", "| --- | ---: |"]
            for name, op in (("get", lambda: store.get(NS, "k0")),
                             ("search, limit 10 (stamps every item)", lambda: store.search(NS, limit=10)),
                             ("at(main).get (first read stamps every item)",
                              lambda: store.at("main").get(NS, "k0"))):
                rows.append(f"| {name} | {median_ms(op, calls):.2f} |")
            rows.append(f"| first search of a newly opened store (worker start-up, nothing cached) | "
                        f"{statistics.median(first_search(tmp) for _ in range(3)):.2f} |")
    return rows


def first_search(root: str) -> float:
    """Milliseconds for a new store object's first search: a new worker, with a cold cache."""
    start = time.perf_counter()
    with MnemosyneStore(root, mnem=MNEM) as store:
        store.search(NS, limit=10)
        return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    lines = [
        "# MnemosyneStore: cost per call",
        "",
        f"Generated by `benchmarks/langgraph_store.py --calls {args.calls} --items {args.items} "
        f"--commits {args.commits}` on {platform.platform()}, Python {platform.python_version()}. "
        "Medians in milliseconds, after one warm-up call.",
        "",
        *per_op_table(args.calls, args.items),
        "",
        *history_table(args.calls, args.commits),
        "",
    ]
    text = "\n".join(lines)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
