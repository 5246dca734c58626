"""History at the cost of the answer: ``log -n 20`` next to ``why`` as the history grows.

``log`` lists history in graph order by each commit's corrected time, with
a heap over the frontier, so the 20 newest commits cost about 20 commit
reads however long the history is.  Before, ``history(limit=20)`` walked,
decoded and sorted every ancestor.  ``why`` (a blame) is the reference: one
indexed probe per step back.  Both are timed through the bridge's worker
(what the MCP server and ``MnemosyneStore`` use), interleaved call by call,
after a warm-up, on a linear history and on one with a merge every 10
commits.

Run: ``python benchmarks/history.py [--quick]``; writes ``benchmarks/results/history.md``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, write_report

import mnem_bridge
from mnem_store import porcelain
from mnem_store.objects import MemoryNode
from mnem_store.repo import Repo


def grow(root: Path, commits: int, merges: bool) -> None:
    """``commits`` one-fact commits on ``main`` (with ``merges``, a side commit merged in every 10th)."""
    repo = Repo.init(root)
    try:
        for i in range(commits):
            if merges and i % 10 == 9:
                porcelain.checkout(repo, None, create=f"side-{i}")
                porcelain.write(repo, [MemoryNode(f"side-{i}", i)], [], f"side {i}", "bench", 1_000 + i)
                porcelain.checkout(repo, "main")
                porcelain.merge(repo, f"side-{i}", author="bench", time_ms=1_000 + i)
            else:
                porcelain.write(repo, [MemoryNode(f"fact-{i % 100}", i)], [], f"step {i}", "bench", 1_000 + i)
    finally:
        repo.close()


def measure(root: Path, samples: int) -> dict[str, Samples]:
    """Interleave history(limit=20) and why on one warm worker."""
    calls = {
        "history (limit 20)": lambda store: store.log(limit=20),
        "why": lambda store: store.blame("fact-7"),
    }
    out = {name: Samples() for name in calls}
    with mnem_bridge.open(root) as store:
        for _ in range(20):  # warm-up: worker start, page cache, state images
            for call in calls.values():
                call(store)
        for _ in range(samples):
            for name, call in calls.items():
                start = time.perf_counter()
                call(store)
                out[name].add(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k commits and fewer samples")
    args = parser.parse_args()
    sizes = [1_000] if args.quick else [1_000, 10_000]
    samples = 100 if args.quick else 1_000
    tail = "p99" if samples >= 1_000 else "p90"  # p99 only over 1000 samples
    rows = []
    for commits in sizes:
        for merges in (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp) / "store"
                grow(root, commits, merges)
                found = measure(root, samples)
            why = found["why"].p50
            for name, got in found.items():
                shape = "merge every 10" if merges else "linear"
                rows.append((commits, shape, name, f"{got.p50:.2f}", f"{getattr(got, tail):.2f}",
                             f"{got.p50 / why:.2f}x"))
    write_report("history", "History at the cost of the answer", [
        f"{samples} interleaved samples per call after 20 warm-up rounds, through the bridge's worker; "
        "the ratio is p50 over why's p50 on the same store.",
        table(("commits", "history", "call", "p50 ms", f"{tail} ms", "vs why"), rows),
    ])


if __name__ == "__main__":
    main()
