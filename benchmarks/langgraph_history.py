"""MnemosyneStore reads on a long history: what item times cost as commits pile up.

Every ``put`` is a commit, so an agent's memory grows a long history, and
every item a read returns carries ``created_at`` / ``updated_at`` from it
(``mnem stamps``).  ``langgraph_stores.py`` times the calls on a short
history next to other stores; this times the reads at ``--commits``
1000 and 5000 (single-item puts over one item per 10 commits), through the
bridge's ``mnem serve`` worker (warm: repeated calls; cold: the first search
of a newly opened store, worker start-up included) and with one process per
call.  ``get`` stamps only its item (indexed probes); ``search`` stamps every
item (one walk over the history).

Run: ``python benchmarks/langgraph_history.py [--quick]``; writes
``benchmarks/results/langgraph_history.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, timed, write_report
from langgraph.store.base import PutOp

import mnem_bridge
from mnem_langgraph import MnemosyneStore

NAMESPACE = ("memories", "acme")


@contextlib.contextmanager
def bridge_mode(mode: str) -> Iterator[None]:
    """Open stores with the bridge in ``worker`` or ``oneshot`` mode (its ``MNEM_BRIDGE_MODE``)."""
    before = os.environ.get("MNEM_BRIDGE_MODE")
    os.environ["MNEM_BRIDGE_MODE"] = mode
    try:
        yield
    finally:
        if before is None:
            del os.environ["MNEM_BRIDGE_MODE"]
        else:
            os.environ["MNEM_BRIDGE_MODE"] = before


def grow(root: Path, commits: int) -> None:
    """``commits`` single-item commits over ``commits // 10`` items, each a one-put batch."""
    items = max(1, commits // 10)
    with MnemosyneStore(root) as store:
        for i in range(commits):
            store.batch([PutOp(NAMESPACE, f"key-{i % items}", {"v": i, "tier": "pro" if i % 2 else "free"})])


def reads(store: MnemosyneStore) -> dict[str, Callable[[], object]]:
    return {
        "get": lambda: store.get(NAMESPACE, "key-0"),
        "search (filter, limit 10)": lambda: store.search(NAMESPACE, filter={"tier": "pro"}, limit=10),
    }


def cold_search(root: Path) -> float:
    """Seconds for a newly opened store's first search: a new worker, nothing cached."""
    with MnemosyneStore(root) as store:
        return timed(lambda: store.search(NAMESPACE, limit=10), 1).seconds[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples, 1000 commits only")
    args = parser.parse_args()
    repeat = 10 if args.quick else 50
    rows = []
    for commits in (1000,) if args.quick else (1000, 5000):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            mnem_bridge.init(root).close()
            grow(root, commits)
            for mode in ("worker", "oneshot"):
                with bridge_mode(mode), MnemosyneStore(root) as store:
                    for name, op in reads(store).items():
                        op()  # warm-up: the worker starts, its cache fills
                        samples = timed(op, repeat if mode == "worker" else max(3, repeat // 5))
                        rows.append([commits, commits // 10, name, mode, f"{samples.p50:.2f}", f"{samples.p90:.2f}"])
            with bridge_mode("worker"):
                cold = Samples(cold_search(root) for _ in range(3))
            rows.append([commits, commits // 10, "first search of a newly opened store", "worker, cold",
                         f"{cold.p50:.2f}", f"{cold.p90:.2f}"])
    write_report("langgraph_history", "MnemosyneStore reads on a long history", [
        f"{repeat} samples per warm worker read; one-shot and cold reads take fewer.",
        table(["commits", "items", "call", "bridge", "p50 ms", "p90 ms"], rows),
    ])


if __name__ == "__main__":
    main()
