"""``mnem reindex``: every commit's state is checked against its id, and damaged snapshots are rewritten."""

from __future__ import annotations

from pathlib import Path

import blake3
from conftest import open_repo, store_sql
from mnem_history import memory, ok, write

from mnem_store import porcelain


def stored_states(store: Path) -> list[tuple[bytes, bytes]]:
    """``(id, stored bytes)`` of every state kept in full."""
    rows = store_sql(store, "SELECT id, data FROM objects WHERE kind = 1 AND data IS NOT NULL")
    return [(bytes(raw), bytes(data)) for raw, data in rows]


def test_reindex_rewrites_a_damaged_snapshot(store):
    write(store, "one", 1000, {"a": 1, "b": 2})
    second = write(store, "two", 2000, {"a": 3}, delete=["b"])  # 4 changes outgrow a 1-node state: a snapshot
    (snapshot,) = stored_states(store)
    store_sql(store, "UPDATE objects SET data = ? WHERE id = ?", b"\xa0", snapshot[0])
    assert memory(store, second) == {"a": 3}  # the bad snapshot is skipped, the change rows still hold the state
    assert ok("show", second, "--stat", cwd=store).out == "~ a\n- b\n"
    assert ok("reindex", cwd=store).out == "Reindexed 2 commit(s)\n"
    assert [blake3.blake3(data).digest() for _, data in stored_states(store)] == [snapshot[0]]
    assert ok("--json", "reindex", cwd=store).json == {"commits": 2}


def test_reindex_of_an_empty_store(store):
    assert ok("reindex", cwd=store).out == "Reindexed 0 commit(s)\n"


def test_stamps_learnt_from_a_damaged_index_are_forgotten_by_a_reindex_elsewhere(store):
    """A worker keeps the stamps it read on its shelves; a reindex by any other connection repairs its answers.

    The reindex starts a new epoch (``mnem_store/cache.py``), which the
    worker's next read sees in the generation it reads first.
    """
    write(store, "one", 1000, {"a": 1})
    write(store, "two", 2000, {"a": 2})
    store_sql(store, "UPDATE changes SET kind = 0 WHERE kind = 1")  # 'modified' read as 'added': a rebirth at 2000
    with open_repo(store) as worker, open_repo(store) as elsewhere:
        assert porcelain.stamps(worker, ids=["a"])["a"].created == 2000  # the damaged index's answer, now kept
        assert porcelain.stamps(worker)["a"].created == 2000
        porcelain.reindex(elsewhere)
        assert porcelain.stamps(worker, ids=["a"])["a"].created == 1000
        assert porcelain.stamps(worker)["a"].created == 1000
