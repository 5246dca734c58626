"""What the caches buy: the agent's reads with everything an open store keeps, with its memo only, and with nothing.

An open store keeps two things between reads (``mnem_store.cache``): the
*memo* (what the database said at one generation: HEAD, tips, rows,
objects), emptied by any write, and the *shelves* (values fixed by a content
id: stamps, a node's JSON, a state's image, vectors), emptied only by a
rebuild.  This script times the reads an agent makes most, exactly as a
``mnem serve`` worker answers them (the bridge's recorded invocations through
the worker's ``invoke``, in this process, so the pipe's noise is left out),
three ways, each on its own open store:

* **both kept**: the product as it is;
* **memo only**: every read empties the shelves, as if they did not exist;
* **nothing kept**: every read empties the memo and the shelves.

Each round runs the three in a new (seeded) order after warm-up.  The
search row writes first (untimed), as an agent does between searches, so
the memo is always empty when it is timed and only the shelves can help.

Usage: ``python benchmarks/caches.py [--calls N] [--items N]``; writes
``benchmarks/results/caches.md``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from agent_path_layers import recorded, worker
from benchlib import Samples, table, write_report

from mnem_langgraph import MnemosyneStore
from mnem_store.cache import Kept

WARMUP = 30
NS = ("users", "u1")

Calls = list[tuple[list[str], bytes | None]]

_observe = Kept.observe


def _memo_only(kept: Kept, generation: int | None) -> None:
    _observe(kept, generation)
    kept._shelves.clear()


def _nothing(kept: Kept, generation: int | None) -> None:
    _observe(kept, generation)
    kept.forget()


#: How each open store applies the rule: as the product does, or forgetting part or all of what it keeps.
KEEPING: dict[str, Callable[[Kept, int | None], None]] = {
    "both kept (as shipped)": _observe,
    "memo only (shelves emptied every read)": _memo_only,
    "nothing kept": _nothing,
}


@contextmanager
def keeping(observe: Callable[[Kept, int | None], None]) -> Iterator[None]:
    """Every ``Kept`` observes generations with ``observe`` for the block."""
    Kept.observe = observe  # type: ignore[method-assign]
    try:
        yield
    finally:
        Kept.observe = _observe  # type: ignore[method-assign]


def workloads(store: MnemosyneStore, items: int) -> dict[str, tuple[list[Calls], list[Calls]]]:
    """Per read: the writes to make before each timed call (untimed) and the reads, as recorded invocations."""
    bridge = store._store
    keys = [f"k{i * items // 10}" for i in range(10)]
    gets = [recorded(bridge, lambda key=key: store.get(NS, key)) for key in keys]
    puts = [recorded(bridge, lambda i=i: store.put(NS, "k0", {"text": f"changed {i}", "n": i})) for i in range(10)]
    search = [recorded(bridge, lambda: store.search(NS, limit=10))]
    memory = [recorded(bridge, bridge.working_memory)]
    blame = [recorded(bridge, lambda key=key: bridge.blame(f"users:u1:{key}")) for key in keys]
    return {
        f"MnemosyneStore.get, one item of {items}": ([], gets),
        f"MnemosyneStore.search(namespace, limit=10) right after a put, {items} items": (puts, search),
        f"whole working memory (Store.working_memory), {items} facts": ([], memory),
        f"blame of one fact, {items} commits deep": ([], blame),
    }


def measure(calls: int, items: int, directory: Path) -> list[list[str]]:
    """The table's rows: each read's p50 / p99 under each way of keeping, and its ratio to the product's."""
    with ExitStack() as stack:
        store = MnemosyneStore(directory / "store")
        stack.callback(store.close)
        for i in range(items):  # one commit each, as an agent writes
            store.put(NS, f"k{i}", {"text": f"memory {i} about topic {i % 37}", "n": i})
        reads = workloads(store, items)
        workers = {name: worker() for name in KEEPING}
        rows = []
        turns = random.Random(0)
        for read, (writes, timed) in reads.items():
            times = {name: Samples() for name in KEEPING}
            names = list(KEEPING)
            for i in range(WARMUP + calls):
                turns.shuffle(names)
                for name in names:
                    with keeping(KEEPING[name]):
                        if writes:
                            workers[name](writes[i % len(writes)])
                        start = time.perf_counter()
                        workers[name](timed[i % len(timed)])
                        if i >= WARMUP:
                            times[name].add(time.perf_counter() - start)
            shipped = times[next(iter(KEEPING))].p50
            for name, samples in times.items():
                rows.append([read, name, f"{samples.p50:.3f}", f"{samples.p99:.3f}", f"{samples.p50 / shipped:.2f}x"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="timed calls per read and way of keeping")
    parser.add_argument("--items", type=int, default=1000, help="items in the namespace, one commit each")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(args.calls, args.items, Path(tmp))
    write_report("caches", "What the caches buy", [
        f"{args.items} items in one namespace, each put as its own commit; {args.calls} timed calls per row after "
        f"{WARMUP} warm-up calls, the three ways taking turns in a new (seeded) order each round, each on its own "
        "open store. Each call is the bridge's recorded `mnem` invocations through a worker's dispatch in this "
        "process (no pipe). The ratio is against the product as shipped (both kept); a ratio above 1 is what "
        "that cache buys.",
        table(["read", "what the store keeps", "p50 ms", "p99 ms", "vs both kept (p50)"], rows),
    ])


if __name__ == "__main__":
    main()
