"""A store kept open between reads (a worker's) answers every read as a newly opened one would.

Open stores keep what reads learnt (HEAD, its commit's row and lanes, node
names, objects, whether a branch has leases) from one read to the next
while the store's generation has not moved (``mnem_store/cache.py``); each
open store keeps its own, so two in one process are as two processes.
Here two open stores take random turns writing (some with a TTL lease,
some refused and rolled back), moving HEAD and reading, and every read is
compared with the same read through a store opened just for it, which
remembers nothing; on both backends.
"""

from __future__ import annotations

import tempfile
from contextlib import suppress
from pathlib import Path

import pytest
from conftest import BACKENDS, init_repo, open_repo, store_sql
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_store import porcelain
from mnem_store.errors import CorruptStoreError, MnemError
from mnem_store.objects import MemoryNode
from mnem_store.repo import Repo

IDS = ["a", "b", "c"]
#: A TTL no test outlives: a lease that runs out between two reads of one turn would make them differ.
LEASE = 10**12

turn = st.one_of(
    st.tuples(st.just("write"), st.integers(0, 1), st.sampled_from(IDS), st.integers(0, 3) | st.none(), st.booleans()),
    st.tuples(st.just("checkout"), st.integers(0, 1), st.sampled_from(["main", "side"])),
    st.tuples(st.just("read"), st.integers(0, 1)),
    st.tuples(st.just("refused"), st.integers(0, 1), st.sampled_from(IDS)),
    st.tuples(st.just("stage"), st.integers(0, 1), st.sampled_from(IDS), st.integers(0, 3) | st.none()),
    st.tuples(st.just("commit"), st.integers(0, 1)),
)


def seen(repo: Repo) -> tuple:
    """What a reader sees: HEAD, each node's value and times, working memory (staging included), the ids, the log."""
    stamped = porcelain.stamps(repo, ids=IDS, live=repo.head().branch is not None)
    return (
        repo.head(),
        {node_id: porcelain.show_node(repo, node_id) for node_id in IDS},
        {node_id: (entry.object, entry.created, entry.updated, entry.expires) for node_id, entry in stamped.items()},
        porcelain.ls(repo),
        [raw for raw, _ in porcelain.log(repo)],
    )


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=40, deadline=None)
@given(st.lists(turn, max_size=25))
def test_reads_of_stores_kept_open_match_a_store_opened_for_each_read(backend, turns):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        with init_repo(root, backend) as first:
            porcelain.write(first, [MemoryNode("a", 0)], [], "root", "t", 1)
            porcelain.branch_create(first, "side")
        stores = [open_repo(root), open_repo(root)]
        try:
            clock = 2
            for kind, who, *rest in turns:
                store = stores[who]
                if kind == "write":
                    node_id, value, leased = rest
                    clock += 1
                    puts = [MemoryNode(node_id, value)] if value is not None else []
                    porcelain.write(store, puts, [node_id] if value is None else [], "w", "t", clock,
                                    skip_missing=True, ttls={node_id: LEASE} if leased and puts else None)
                elif kind == "checkout":
                    with suppress(MnemError):  # refused while changes are staged
                        porcelain.checkout(store, rest[0])
                elif kind == "stage":  # an add, or a removal (a tombstone)
                    node_id, value = rest
                    if value is None:
                        with suppress(MnemError):  # not in memory: nothing to remove
                            porcelain.rm(store, node_id)
                    else:
                        porcelain.add(store, MemoryNode(node_id, value))
                elif kind == "commit":
                    clock += 1
                    with suppress(MnemError):  # nothing staged, or a detached HEAD
                        porcelain.commit(store, "c", "t", clock)
                elif kind == "refused":  # a write that fails after storing its node: rolled back whole
                    with pytest.raises(MnemError):
                        porcelain.write(store, [MemoryNode(rest[0], 99)], ["ghost"], "w", "t", clock + 1)
                with open_repo(root) as fresh:
                    expected = seen(fresh)
                assert seen(stores[0]) == expected
                assert seen(stores[1]) == expected
        finally:
            for store in stores:
                store.close()


def test_a_large_value_read_is_not_kept_between_reads(tmp_path):
    """The memo outlives a read, so it must not keep a large value: a worker would hold it until the store changed."""
    big = "x" * (4 << 20)
    with Repo.init(tmp_path) as repo:
        porcelain.write(repo, [MemoryNode("big", big), MemoryNode("small", 1)], [], "w", "t", 1)
    with Repo.open(tmp_path) as repo:
        assert porcelain.show_node(repo, "big").content == big
        assert porcelain.show_node(repo, "small").content == 1
        kept = [value for key, value in repo.backend.session.memo.items() if key[0] == "object"]
        assert kept and all(len(data or b"") < (1 << 20) for _, _, data in kept)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_repeated_read_of_a_quiet_store_asks_the_database_nothing_new(tmp_path, backend, monkeypatch):
    """What makes a worker's reads cheap: a read that changes nothing for the next asks nothing again.

    Once another connection has written, the next read asks again, and sees the write.
    """
    root = tmp_path / "store"
    with init_repo(root, backend) as repo:
        porcelain.write(repo, [MemoryNode("a", 1)], [], "w", "t", 1)
    with open_repo(root) as reader, open_repo(root) as writer:
        first = porcelain.stamps(reader, ids=["a"])
        assert porcelain.show_node(reader, "a").content == 1
        session = reader.backend.session
        asked: list[str] = []
        execute = session.execute
        monkeypatch.setattr(session, "execute", lambda statement, *params: asked.append(statement) or execute(
            statement, *params))
        assert porcelain.stamps(reader, ids=["a"]) == first
        assert porcelain.show_node(reader, "a").content == 1
        assert asked == []
        porcelain.write(writer, [MemoryNode("a", 2)], [], "w", "t", 2)
        assert porcelain.show_node(reader, "a").content == 2
        assert porcelain.stamps(reader, ids=["a"]) != first
        assert asked


@pytest.mark.parametrize("backend", BACKENDS)
def test_forget_lets_go_of_the_commits_a_graph_decoded(tmp_path, backend):
    """``Kept.forget`` (what ``verify`` runs first) trusts nothing kept: not the commits a ``Graph`` decoded either.

    A blame's commits are decoded once and kept on the store's ``commits``
    shelf.  Once a commit's bytes are damaged behind the engine's back, a
    forget makes the next read meet the damage rather than the kept copy.
    """
    root = tmp_path / "store"
    with init_repo(root, backend) as repo:
        porcelain.write(repo, [MemoryNode("a", 1)], [], "set a", "t", 1)
        tip = porcelain.head(repo)[1]
    with open_repo(root) as repo:
        assert porcelain.blame_many(repo, ["a"])["a"][1].message == "set a"
        store_sql(root, "UPDATE objects SET data = (SELECT data FROM objects WHERE kind = 0 LIMIT 1) WHERE id = ?",
                  tip)
        repo.backend.kept.forget()
        with pytest.raises(CorruptStoreError, match="not a commit"):
            porcelain.blame_many(repo, ["a"])
