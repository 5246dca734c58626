"""A million commits, measured: how each agent call grows with history, on SQLite and PostgreSQL.

Each size (default 10k, 100k and 1M commits) is a store of its own, built
in process through the engine's write path, ``Repo.write``, the call
``mnem write`` and ``porcelain.write`` make, with ``BATCH`` commits to a
write transaction (the engine nests any number of ``Repo.write`` in one
``Backend.write``; one durable transaction per commit would time the disk's
flushes, not the engine).  Nothing is written past it: every commit is
hashed, indexed and its ref moved as a ``mnem write`` does it.  The lease
bookkeeping ``porcelain.write`` adds ends leases of the ids written, and
the store has none.

The workload holds the memory at ``--facts`` (default 100,000) LangGraph
items at every size, so what changes between sizes is the history alone
(``scale.py`` measures the memory's size instead):

* the first ``facts / 1000`` commits each add 1,000 items, spread over 100
  namespaces ``("team", "t0")`` .. ``("team", "t99")``;
* every later commit updates one item (a remember with a provenance step),
  never ``OLDEST``, so its last change lies behind the whole history;
* ``plan`` is "enterprise" from the first commit and "pro" from the middle
  one (``when_did``'s question).

The calls are timed through the bridge's worker (``mnem serve``, the
agent's path, as the other agent-path figures of BENCHMARKS.md), one worker
per store, every size's call made in turn before the next call, the order
alternating, after a warm-up:

* recall one (``working_node``), recall all (``working_memory``), why of
  ``OLDEST`` and of ``plan`` (``blame``), when_did (``bisect_explain``),
  history (``log(limit=20)``), search (one namespace's items, a substring
  query, ``limit=10``), a remember (``agents.remember``: one durable commit);
* a checkpoint ``put`` and a ``get_tuple`` of ``MnemosyneSaver`` on the same
  store (checkpoints on HEAD's branch, beside the memory, its default);
* a 10-commit fetch into a clone (10 remembers on the source first,
  untimed), the clone itself (once per size), ``mnem verify`` (a one-shot
  process), each up to ``--ops-max`` commits (they take minutes per
  million), and the store's bytes per commit (``Backend.size``);
* the export (``mnem export -o FILE``) of stores of their own
  (``--export-sizes`` commits of ``--export-facts`` items): upstream's
  export holds every commit's state in full, so at the main stores' sizes
  it would be hundreds of gigabytes.

Run: ``python benchmarks/bigstore.py [--sizes 10000 100000 1000000] [--facts N] [--keep DIR]``;
writes ``benchmarks/results/bigstore.md``.  ``--keep DIR`` keeps the built
stores (and the PostgreSQL server's data folder) in ``DIR`` and reuses them
on the next run; ``--build-only`` stops after building, ``--only-built``
measures the kept stores built whole so far and builds none.
"""

from __future__ import annotations

import argparse
import math
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, write_report
from checkpointer import RawPuts

import mnem_bridge
from mnem_bridge import agents
from mnem_ids.items import node_id
from mnem_langgraph import MnemosyneSaver
from mnem_store.layout import StoreUrl
from mnem_store.location import Address
from mnem_store.objects import MemoryNode, Provenance
from mnem_store.repo import Repo

MNEM = str(Path(sys.executable).with_name("mnem"))
BACKENDS = ("SQLite", "PostgreSQL")
#: Commits per write transaction while building.
BATCH = 10_000
#: Items per onboarding commit, and the namespaces they are spread over.
ONBOARD, NAMESPACES = 1_000, 100
#: The item no update touches: ``why`` of it looks behind the whole history.
OLDEST = node_id(("team", "t0"), "fact-0")
#: Canonical bytes per state entry (an id of ~20 characters and a 32-byte object id): the export's size estimate.
STATE_ENTRY = 56


def item(index: int, version: int) -> MemoryNode:
    """Item ``index`` at its ``version``-th write: a short sentence, a topic the search finds, a provenance."""
    return MemoryNode(node_id(("team", f"t{index % NAMESPACES}"), f"fact-{index}"),
                      {"text": f"fact {index} about topic {index % 97}, version {version}", "n": index},
                      provenance=Provenance(agent_step=f"step-{version}", source="bench"))


def commits_of(commits: int, facts: int) -> Iterator[list[MemoryNode]]:
    """Each commit's puts, oldest first (the module's docstring)."""
    onboard = -(-facts // ONBOARD)
    for step in range(commits):
        if step < onboard:
            puts = [item(i, 0) for i in range(step * ONBOARD, min(facts, (step + 1) * ONBOARD))]
            if step == 0:
                puts.append(MemoryNode("plan", "enterprise", provenance=Provenance(source="ticket-1")))
        elif step == commits // 2:
            puts = [MemoryNode("plan", "pro", provenance=Provenance(source="billing-note-8842"))]
        else:
            puts = [item(1 + (step * 7919) % (facts - 1), step)]  # never item 0, OLDEST
        yield puts


def build(where: Address, commits: int, facts: int) -> float:
    """Write the store's history through ``Repo.write``, ``BATCH`` commits a transaction; seconds taken."""
    start = time.perf_counter()
    with Repo.init(where) as repo:
        writes = commits_of(commits, facts)
        for first in range(0, commits, BATCH):
            with repo.backend.write():
                for step in range(first, min(commits, first + BATCH)):
                    repo.write(next(writes), [], f"step {step}", "bench", 1_000 + step)
            print(f"  {where}: {min(commits, first + BATCH)} commits, {time.perf_counter() - start:.0f} s",
                  file=sys.stderr, flush=True)
    return time.perf_counter() - start


class Places:
    """Where each backend's stores live: folders under ``root``, or named stores on one PostgreSQL server."""

    def __init__(self, root: Path, uri: str) -> None:
        self.root, self.uri = root, uri

    def address(self, backend: str, name: str) -> Address:
        if backend == "SQLite":
            return self.root / name
        return StoreUrl.parse(self.where(backend, name))

    def where(self, backend: str, name: str) -> str:
        """The store as the bridge and ``mnem`` take it."""
        if backend == "SQLite":
            return str(self.root / name)
        return f"{self.uri}{'&' if '?' in self.uri else '?'}store={name}"

    def built(self, backend: str, name: str) -> Path:
        """The file that says a store was built whole, and in how many seconds (a killed build leaves none)."""
        return self.root / f"{backend.lower()}-{name}.built"


@contextmanager
def postgres(folder: Path, keep: bool) -> Iterator[str]:
    """A real PostgreSQL server with its data in ``folder`` (kept with ``keep``, for the next run) and its URI."""
    import pgserver

    server = pgserver.get_server(folder, cleanup_mode="stop" if keep else "delete")  # type: ignore[attr-defined]
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


def label(commits: int) -> str:
    """1M, 100k, 500."""
    for unit, suffix in ((1_000_000, "M"), (1000, "k")):
        if commits % unit == 0:
            return f"{commits // unit}{suffix}"
    return str(commits)


def store_name(commits: int, facts: int) -> str:
    return f"big{label(commits).lower()}f{facts}"


def ensure(places: Places, backend: str, commits: int, facts: int) -> float:
    """The store of ``commits`` and ``facts``, built unless a whole one is kept; seconds its build took."""
    name = store_name(commits, facts)
    marker = places.built(backend, name)
    if not marker.exists():
        drop(places, backend, name)  # what a killed build left
        marker.write_text(str(build(places.address(backend, name), commits, facts)))
    return float(marker.read_text())


def agent_calls(store: mnem_bridge.Store, chain: RawPuts) -> dict[str, Callable[[], object]]:
    """The agent's calls on one store, each a bridge call (the saver's through its own worker)."""
    counter = iter(range(10**9))
    one = node_id(("team", "t7"), "fact-7")
    return {  # the writes last: each adds a commit, which the reads before them must not see
        "recall one": lambda: store.working_node(one),
        "why (an item of the first commits)": lambda: store.blame(OLDEST),
        "why (plan, set mid-history)": lambda: store.blame("plan"),
        "when_did (plan became pro)": lambda: store.bisect_explain("plan", equals="pro"),
        "history (20)": lambda: store.log(limit=20),
        "search (one namespace, limit 10)": lambda: store.search(("team", "t7"), query="topic 5", limit=10),
        "get_tuple (latest checkpoint)": lambda: chain.saver.get_tuple(chain.config),
        "remember": lambda: agents.remember(store, f"new-{next(counter)}", "x", source="bench"),
        "checkpoint put": chain.put,
    }


#: Calls whose answer is the whole memory: fewer samples.
HEAVY: dict[str, Callable[[mnem_bridge.Store], object]] = {"recall all": mnem_bridge.Store.working_memory}


def interleave(by_size: dict[int, dict[str, Callable[[], object]]], samples: int, warmup: int,
               setups: dict[int, dict[str, Callable[[], object]]] | None = None) -> dict[str, dict[int, Samples]]:
    """Each call at every size in turn (the sizes' order alternating), ``warmup`` rounds untimed first."""
    sizes = list(by_size)
    names = list(next(iter(by_size.values())))
    out: dict[str, dict[int, Samples]] = {name: {size: Samples() for size in sizes} for name in names}
    for name in names:
        for round_ in range(warmup + samples):
            for size in sizes if round_ % 2 else sizes[::-1]:
                setup = (setups or {}).get(size, {}).get(name)
                if setup is not None:
                    setup()
                start = time.perf_counter()
                by_size[size][name]()
                if round_ >= warmup:
                    out[name][size].add(time.perf_counter() - start)
    return out


def agent_table(places: Places, backend: str, sizes: list[int], facts: int, samples: int,
                heavy: int) -> dict[str, dict[int, Samples]]:
    """Every agent call at every size, through one bridge worker (and one saver) per store."""
    with ExitStack() as stack:
        calls: dict[int, dict[str, Callable[[], object]]] = {}
        prepares: dict[int, dict[str, Callable[[], object]]] = {}
        whole: dict[int, dict[str, Callable[[], object]]] = {}
        for commits in sizes:
            where = places.where(backend, store_name(commits, facts))
            store = stack.enter_context(mnem_bridge.open(where, client=mnem_bridge.Mnem(MNEM)))
            saver = MnemosyneSaver(where, mnem=MNEM)
            stack.callback(saver.close)
            chain = RawPuts(saver)
            chain.prepare()
            chain.put()  # the thread's first checkpoint: get_tuple has one to read
            calls[commits] = agent_calls(store, chain)
            prepares[commits] = {"checkpoint put": chain.prepare}
            whole[commits] = {name: partial(call, store) for name, call in HEAVY.items()}
        found = interleave(whole, heavy, 1)
        found.update(interleave(calls, samples, max(5, samples // 10), prepares))
        return found


def once(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def run_mnem(*args: str) -> Callable[[], object]:
    """A one-shot ``mnem`` run, checked."""
    return partial(subprocess.run, [MNEM, *args], check=True, capture_output=True)


def remember_ten(source: mnem_bridge.Store, counter: Iterator[int]) -> None:
    """Ten remembers on a fetch's source: the commits the next fetch brings."""
    for _ in range(10):
        agents.remember(source, f"fetched-{next(counter)}", "x", source="bench")


def drop(places: Places, backend: str, name: str) -> None:
    """Remove a store the benchmark made (a clone): its folder, or its schema on the server."""
    if backend == "SQLite":
        shutil.rmtree(places.root / name, ignore_errors=True)
        return
    import psycopg

    url = StoreUrl.parse(places.where(backend, name))
    with psycopg.connect(places.uri, autocommit=True) as conn:
        conn.execute(psycopg.sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(psycopg.sql.Identifier(url.schema)))


def store_table(places: Places, backend: str, sizes: list[int], facts: int, fetches: int,
                verify: bool) -> dict[str, dict[int, float]]:
    """Clone, 10-commit fetch (p50) and verify at every size, in seconds."""
    client = mnem_bridge.Mnem(MNEM, timeout=24 * 3600)
    out: dict[str, dict[int, float]] = {"clone": {}, "fetch (10 commits)": {}, "verify": {}}
    if not sizes:
        return out
    with ExitStack() as stack:
        fetch_calls: dict[int, dict[str, Callable[[], object]]] = {}
        setups: dict[int, dict[str, Callable[[], object]]] = {}
        for commits in sizes:
            name = store_name(commits, facts)
            if verify:
                out["verify"][commits] = once(run_mnem("-C", places.where(backend, name), "verify"))
            drop(places, backend, f"clone{name}")
            stack.callback(drop, places, backend, f"clone{name}")
            source = stack.enter_context(mnem_bridge.open(places.where(backend, name), client=client))
            start = time.perf_counter()
            clone = mnem_bridge.clone(places.where(backend, name), places.where(backend, f"clone{name}"),
                                      client=client)
            out["clone"][commits] = time.perf_counter() - start
            stack.enter_context(clone)
            fetch_calls[commits] = {"fetch": partial(clone.fetch, "origin")}
            setups[commits] = {"fetch": partial(remember_ten, source, iter(range(10**9)))}
        fetched = interleave(fetch_calls, fetches, 1, setups)["fetch"]
        out["fetch (10 commits)"] = {commits: got.p50 / 1000 for commits, got in fetched.items()}
    return out


def bytes_per_commit(places: Places, backend: str, sizes: list[int], facts: int) -> dict[int, float]:
    """The store's bytes (``Backend.size``: the database and its WAL, or the server's tables) over its commits."""
    out = {}
    for commits in sizes:
        with Repo.open(places.address(backend, store_name(commits, facts))) as repo:
            out[commits] = repo.backend.size() / commits
    return out


def export_table(places: Places, backend: str, sizes: list[int], facts: int) -> dict[int, tuple[float, int]]:
    """``mnem export -o FILE`` of small-memory stores: seconds and the file's bytes (its answer)."""
    out = {}
    for commits in sizes:
        name = store_name(commits, facts)
        ensure(places, backend, commits, facts)
        target = places.root / f"{name}-{backend.lower()}.json"
        seconds = once(run_mnem("-C", places.where(backend, name), "export", "-o", str(target)))
        out[commits] = (seconds, target.stat().st_size)
        target.unlink()
    return out


def exponent(small: float, big: float, n_small: int, n_big: int) -> float:
    """``k`` in time ~ n^k between two sizes: 0 flat, 1 linear in the history."""
    return math.log(big / small) / math.log(n_big / n_small)


def shape(k: float) -> str:
    """What an exponent over the sizes shows (noise on a shared machine blurs O(1) and O(log n) together)."""
    if k < 0.1:
        return "flat: O(1) / O(log n)"
    if k < 0.75:
        return f"sublinear (n^{k:.2f})"
    return f"O(n) (n^{k:.2f})"


def growth_row(name: str, values: dict[int, float], cells: dict[int, str], sizes: list[int]) -> list[str]:
    """A table row: each size's cell ("not run" where none), the largest size's value over the smallest's, its shape."""
    row = [name, *(cells.get(n, "not run") for n in sizes)]
    measured = sorted(values)
    if len(measured) < 2:
        return [*row, "", ""]
    small, big = measured[0], measured[-1]
    growth = values[big] / values[small]
    return [*row, f"**{growth:.2f}x**" + ("" if big == sizes[-1] else f" ({label(big)})"),
            shape(exponent(values[small], values[big], small, big))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000], metavar="COMMITS")
    parser.add_argument("--facts", type=int, default=100_000, help="items in the memory at every size")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("--samples", type=int, default=100, help="timed samples of each light call per store")
    parser.add_argument("--heavy", type=int, default=5, help="timed samples of recall all per store")
    parser.add_argument("--fetches", type=int, default=5, help="timed 10-commit fetches per store")
    parser.add_argument("--no-verify", action="store_true", help="leave out mnem verify (it re-hashes every state)")
    parser.add_argument("--ops-max", type=int, metavar="COMMITS",
                        help="clone, fetch and verify only stores of at most this many commits (each takes minutes "
                             "per million commits)")
    parser.add_argument("--export-sizes", type=int, nargs="+", default=[1_000, 10_000], metavar="COMMITS",
                        help="the export's own stores (its answer is every state in full)")
    parser.add_argument("--export-facts", type=int, default=100, help="items in the export's stores")
    parser.add_argument("--keep", type=Path, help="build the stores here and reuse them on the next run")
    parser.add_argument("--build-only", action="store_true", help="build the stores and stop")
    parser.add_argument("--only-built", action="store_true",
                        help="with --keep: measure the stores built whole so far, build none")
    args = parser.parse_args()
    sizes = sorted(args.sizes)
    with ExitStack() as stack:
        root = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mnembig-", dir="/tmp")))
        root.mkdir(parents=True, exist_ok=True)
        uri = stack.enter_context(postgres(root / "pg", args.keep is not None)) if "PostgreSQL" in args.backends else ""
        places = Places(root, uri)
        built = {}
        present: dict[str, list[int]] = {}
        for backend in args.backends:
            present[backend] = []
            for commits in sizes:
                if args.only_built and not places.built(backend, store_name(commits, args.facts)).exists():
                    continue
                built[backend, commits] = ensure(places, backend, commits, args.facts)
                present[backend].append(commits)
        if args.build_only:
            return
        sections: list[str | list[str]] = [
            f"Stores of {', '.join(label(n) for n in sizes)} commits, each holding {args.facts:,} LangGraph items "
            "at its tip (the script's docstring: the first commits add them, 1,000 a commit, every later commit "
            "updates one), built in process through `Repo.write`, 10,000 commits a write transaction. Agent "
            "calls through the bridge's worker, one per store, every size's call in turn after a warm-up; "
            f"{args.samples} samples of each call per store ({args.heavy} of recall all). Times in ms, p50 / p90; "
            "the growth is the p50 at the largest size over the smallest, and its shape the exponent k of "
            "time ~ commits^k between them (below 0.1: flat, which on a shared machine cannot tell O(1) from "
            "O(log n)).",
        ]
        headers = [f"{label(n)} commits" for n in sizes]
        growth = f"{label(sizes[-1])} / {label(sizes[0])}"
        for backend in args.backends:
            here = present[backend]
            if not here:
                sections += [f"### {backend}", "No store of these sizes is built (`--only-built`)."]
                continue
            found = agent_table(places, backend, here, args.facts, args.samples, args.heavy)
            agent_rows = [growth_row(name, {n: got.p50 for n, got in by_size.items()},
                                     {n: f"{got.p50:.2f} / {got.p90:.2f}" for n, got in by_size.items()}, sizes)
                          for name, by_size in found.items()]
            small = [n for n in here if args.ops_max is None or n <= args.ops_max]
            stored = store_table(places, backend, small, args.facts, args.fetches, not args.no_verify)
            per_commit = bytes_per_commit(places, backend, here, args.facts)
            store_rows = [
                ["build (s, the whole history)", *(f"{built[backend, n]:.0f}" if n in here else "not built"
                                                   for n in sizes), "", ""],
                growth_row("bytes per commit", per_commit, {n: f"{v:,.0f}" for n, v in per_commit.items()}, sizes),
                *(growth_row(f"{name} (ms)", by_size, {n: f"{v * 1000:.1f}" for n, v in by_size.items()}, sizes)
                  for name, by_size in stored.items() if by_size),
            ]
            exported = export_table(places, backend, sorted(args.export_sizes), args.export_facts)
            export_rows = [[label(commits), f"{seconds * 1000:.0f}", f"{size / 1e6:.1f}",
                            f"{seconds / (size / 1e6) * 1000:.0f}"] for commits, (seconds, size) in exported.items()]
            sections += [
                f"### {backend}",
                table(["agent call (ms, p50 / p90)", *headers, growth, "shape"], agent_rows),
                "",
                table(["store operation", *headers, growth, "shape"], store_rows),
                "",
                f"Export (`mnem export -o FILE`, one run each) of stores of {args.export_facts} items: upstream's "
                "export holds every commit's state in full, so its answer is commits x items.",
                "",
                table(["commits", "ms", "MB written", "ms per MB"], export_rows),
            ]
    write_report("bigstore", "A million commits: each call as history grows", sections)


if __name__ == "__main__":
    main()
