"""``mnem reindex``: the derived change index is rebuilt from the commits themselves."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mnem_history import ok, write


def index_rows(store: Path) -> int:
    with sqlite3.connect(store / ".mnem" / "store.sqlite3") as db:
        count = db.execute("SELECT count(*) FROM commit_nodes").fetchone()[0]
    db.close()
    return count


def test_reindex_rebuilds_a_lost_index(store):
    write(store, "one", 1000, {"a": 1, "b": 2})
    second = write(store, "two", 2000, {"a": 3}, delete=["b"])
    with sqlite3.connect(store / ".mnem" / "store.sqlite3") as db:
        db.execute("DELETE FROM commit_nodes")
    db.close()
    assert ok("show", second, "--stat", cwd=store).out == "~ a\n- b\n"  # recomputed on a miss
    assert ok("reindex", cwd=store).out == "Reindexed 2 commit(s)\n"
    assert index_rows(store) == 2
    assert ok("--json", "reindex", cwd=store).json == {"commits": 2}
    assert ok("--json", "show", second, "--stat", cwd=store).json == {"a": "modified", "b": "removed"}


def test_reindex_of_an_empty_store(store):
    assert ok("reindex", cwd=store).out == "Reindexed 0 commit(s)\n"
