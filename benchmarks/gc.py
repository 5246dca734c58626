"""How long ``mnem gc`` takes on a large store: a 100k-commit history with thrown-away replay branches.

The store is grown through the engine's own write path (``Repo.write``, a
commit per step, exactly what ``mnem write`` records), a thousand commits
to a transaction so that growing it does not wait for a disk sync per
commit.  Nine in ten commits go to ``main``, each setting one of a
thousand facts; every tenth hundred is a ``replay/N`` branch forked from
``main``'s tip, written with values of its own and then deleted, the way a
LangGraph replay is thrown away.  ``gc`` then has a tenth of the commits,
their states and values to drop, and the rest to walk and keep.

Timed: ``porcelain.gc`` in process (what ``mnem gc`` runs after start-up),
the dry run (one read: the walk and the counts) and the real run (the walk,
the deletes in one write transaction, then ``VACUUM`` and the WAL
truncated), each on a fresh copy of the grown store; and ``verify`` after.

Run: ``python benchmarks/gc.py [--commits N] [--repeat R] [--postgres]``;
writes ``benchmarks/results/gc.md``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, write_report

from mnem_store import porcelain
from mnem_store.layout import StoreUrl
from mnem_store.location import Address
from mnem_store.objects import MemoryNode
from mnem_store.repo import Repo

#: Commits per write transaction while growing the store.
BATCH = 1_000
#: Commits of each replay branch, and one replay per this many commits.
REPLAY = 100
EVERY = 1_000


def grow(where: Address, commits: int) -> int:
    """Grow a store to ``commits`` commits (one in ten on deleted replay branches); returns the commits dropped."""
    repo = Repo.init(where)
    dropped = 0
    try:
        done = 0
        while done < commits:
            with repo.backend.write():
                for _ in range(min(BATCH, commits - done)):
                    replay = done % EVERY >= EVERY - REPLAY
                    branch = f"replay/{done // EVERY}" if replay else "main"
                    if replay and done % EVERY == EVERY - REPLAY:
                        repo.create_branch(branch, "main")
                    value = {"step": done, "replayed": replay, "text": f"observation {done} " * 4}
                    repo.write([MemoryNode(f"fact-{done % 1_000}", value)], [], f"step {done}", "bench",
                               1_000 + done, branch=branch)
                    dropped += replay
                    done += 1
                for name, _ in repo.branches():
                    if name.startswith("replay/"):
                        repo.delete_branch(name)
    finally:
        repo.close()
    return dropped


def fresh(template: Address, tmp: Path, postgres: str | None, n: int, commits: int) -> Address:
    """A store to collect: a copy of the grown folder, or on PostgreSQL one grown again (an export of every
    state of a 100k-commit history would not fit in memory)."""
    if postgres is None:
        assert isinstance(template, Path)
        return Path(shutil.copytree(template, tmp / f"copy{n}"))
    if n == 0:
        return template
    url = StoreUrl.parse(f"{postgres}&store=gc_{os.getpid()}_{n}")
    grow(url, commits)
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=100_000, help="commits in the grown store")
    parser.add_argument("--repeat", type=int, default=3, help="fresh copies collected (each timed once)")
    parser.add_argument("--postgres", metavar="URL", help="a PostgreSQL server URL (no store=) to measure there too")
    args = parser.parse_args()
    rows = []
    backends: list[str | None] = [None, *([args.postgres] if args.postgres else [])]
    for postgres in backends:
        with tempfile.TemporaryDirectory() as tmp:
            template: Address = (Path(tmp) / "grown" if postgres is None
                                 else StoreUrl.parse(f"{postgres}&store=gc_{os.getpid()}_0"))
            start = time.perf_counter()
            dropped = grow(template, args.commits)
            grown = time.perf_counter() - start
            dry, real, check = Samples(), Samples(), Samples()
            answer = None
            for n in range(args.repeat):
                where = fresh(template, Path(tmp), postgres, n, args.commits)
                with Repo.open(where) as repo:
                    start = time.perf_counter()
                    counted = porcelain.gc(repo, dry_run=True)
                    dry.add(time.perf_counter() - start)
                    start = time.perf_counter()
                    answer = porcelain.gc(repo)
                    real.add(time.perf_counter() - start)
                    start = time.perf_counter()
                    assert not porcelain.verify(repo).problems
                    check.add(time.perf_counter() - start)
                assert answer.commits == counted.commits == dropped, (answer, dropped)
            assert answer is not None
            rows.append((
                "PostgreSQL" if postgres else "SQLite", f"{args.commits:,}", f"{answer.commits:,}",
                f"{answer.objects:,}", f"{answer.before / 1e6:.1f} -> {answer.after / 1e6:.1f}",
                f"{dry.p50:.2f}", f"{real.p50:.2f}", f"{check.p50:.2f}", f"{grown:.0f}",
            ))
    write_report("gc", "How long gc takes on a large store", [
        f"A store grown to {args.commits:,} commits through `Repo.write` ({BATCH:,} to a transaction), one commit "
        f"in ten on a `replay/N` branch of {REPLAY} commits that is then deleted; `porcelain.gc` timed in process on "
        f"{args.repeat} fresh copies (median; on PostgreSQL each grown afresh), then `verify`.",
        table(("backend", "commits", "commits dropped", "objects dropped", "MB before -> after", "dry run ms",
               "gc ms", "verify ms", "growing s"), rows),
    ])


if __name__ == "__main__":
    main()
