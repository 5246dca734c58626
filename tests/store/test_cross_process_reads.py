"""A long-lived reader in another process always sees the latest write, on both backends.

``mnem serve`` keeps what it read between requests (``mnem_store.cache``:
the memo and the shelves), and trusts it only while the store's generation
has not moved.  Here one worker writes through every verb that changes a
store (writes with and without a lease, staging and commits, branches,
checkouts, merges, lease refreshes, expiry, vectors new and replaced,
reindex, redaction), and after each write a second, long-lived worker answers every
read path; each answer must equal that of a worker started just for it,
which has had nothing to keep.  Separate OS processes, no shared memory:
what this catches is exactly a cache that outlives another process's write.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from conftest import BACKENDS, new_store
from hypothesis import example, given, settings
from hypothesis import strategies as st

import mnem_bridge
from mnem_bridge.store import pack_vector

IDS = ["a", "b", "c"]
BRANCHES = ["main", "side"]
MODEL = "m"
#: The writer's clock, and the readers' a little later: a lease of ``GONE`` has run out for them, ``LONG`` never.
WRITTEN, READ = 1_800_000_000_000, 1_800_000_000_010
LONG, GONE = 10**9, 1

turn = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(IDS), st.integers(0, 3), st.sampled_from([None, LONG, GONE])),
    st.tuples(st.just("delete"), st.sampled_from(IDS)),
    st.tuples(st.just("stage"), st.sampled_from(IDS), st.integers(0, 3)),
    st.tuples(st.just("unstage"), st.sampled_from(IDS)),
    st.tuples(st.just("commit")),
    st.tuples(st.just("checkout"), st.sampled_from(BRANCHES)),
    st.tuples(st.just("merge"), st.sampled_from(BRANCHES)),
    st.tuples(st.just("delete-branch")),
    st.tuples(st.just("touch"), st.sampled_from(IDS)),
    st.tuples(st.just("expire")),
    st.tuples(st.just("embed"), st.sampled_from(IDS), st.integers(0, 2)),
    st.tuples(st.just("reindex")),
    st.tuples(st.just("redact"), st.sampled_from(IDS)),
)


def apply(store: mnem_bridge.Store, move: tuple[Any, ...]) -> None:
    """One write through the writer's worker; a refusal (nothing to commit, a conflict) writes nothing."""
    kind, *args = move
    try:
        if kind == "write":
            node_id, value, ttl = args
            put: dict[str, Any] = {"id": node_id, "content": str(value)}
            if ttl is not None:
                put["ttl_ms"] = ttl
            store.write([put], message=f"write {node_id}")
        elif kind == "delete":
            store.write(deletes=[args[0]], message=f"delete {args[0]}", skip_missing=True)
        elif kind == "stage":
            store.add(args[0], str(args[1]))
        elif kind == "unstage":
            store.unstage(args[0])
        elif kind == "commit":
            store.commit("commit")
        elif kind == "checkout":
            branch = args[0]
            if branch in dict(store.branches()):
                store.checkout(branch)
            else:
                store.checkout(create=branch)
        elif kind == "merge":
            store.merge(args[0], message="merge")
        elif kind == "delete-branch":
            store.delete_branch("side")
        elif kind == "touch":
            store.touch([args[0]])
        elif kind == "expire":
            store.expire()
        elif kind == "embed":
            store.embed(MODEL, {args[0]: {"content": pack_vector([1.0, float(args[1])])}})
        elif kind == "reindex":
            store.client.call(store.root, "reindex")
        elif kind == "redact":
            store.redact(nodes=[args[0]], reason="r")
    except mnem_bridge.MnemError:
        pass


def reads(store: mnem_bridge.Store) -> dict[str, Callable[[], Any]]:
    """Every read path an adapter uses, each answered by ``store``'s process."""
    return {
        "head": store.head,
        "head_commit": store.head_commit,
        "branches": store.branches,
        "staged": store.staged,
        "working memory": store.working_memory,
        "log": lambda: [commit.id for commit in store.log()],
        "ids": lambda: store.node_ids(live=True),
        "times": lambda: store.node_times(live=True),
        "times by id": lambda: store.node_times(IDS),
        "node": lambda: [store.working_node(node_id) for node_id in IDS],
        "similar": lambda: store.similar(MODEL, [1.0, 1.0], live=True),
        "blame": lambda: [_blame(store, node_id) for node_id in IDS],
        "diff": lambda: store.diff("main", "side") if "side" in dict(store.branches()) else None,
    }


def _blame(store: mnem_bridge.Store, node_id: str) -> Any:
    try:
        return store.blame(node_id)
    except mnem_bridge.MnemError as exc:
        return exc.code


def answers(store: mnem_bridge.Store) -> dict[str, Any]:
    """Each read's answer, or the error code it failed with."""
    found: dict[str, Any] = {}
    for name, read in reads(store).items():
        try:
            found[name] = read()
        except mnem_bridge.MnemError as exc:
            found[name] = exc.code
    return found


@contextmanager
def worker(address: str, now: int) -> Iterator[mnem_bridge.Store]:
    """A ``mnem serve`` worker of its own on the store, whose clock stands at ``now``."""
    with mnem_bridge.Mnem(mode="worker", clock=lambda: now) as client:
        yield mnem_bridge.Store(address, client=client)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=10, deadline=None)
@example(turns=[("write", "a", 0, None), ("embed", "a", 0), ("embed", "a", 2)])  # vectors replaced: a rebuild
@example(turns=[("write", "a", 0, None), ("embed", "a", 0), ("redact", "a")])  # a value and its vectors gone
@example(turns=[("write", "a", 0, None), ("write", "b", 1, GONE), ("reindex",), ("expire",)])
@given(st.lists(turn, min_size=1, max_size=10))
def test_a_long_lived_reader_sees_every_write_of_another_process(backend: str, turns: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        address = pg_stores.address(new_store(Path(tmp) / "store", backend))
        with worker(address, WRITTEN) as writer, worker(address, READ) as reader:
            answers(reader)  # the reader learns the empty store first
            for move in turns:
                apply(writer, move)
                with worker(address, READ) as fresh:
                    assert answers(reader) == answers(fresh), move
