"""Writes are refused before their first byte outside a write transaction, on both backends.

The engine writes only inside ``backend.write()``.  A verb that forgot it is
a bug; the guards make that bug write nothing: ``Repo`` refuses a commit or
an object before touching the store, and the session itself refuses a raw
statement (the SQLite session refuses a writing statement outside ``write()``;
PostgreSQL reads run in ``READ ONLY`` transactions).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import open_repo, run_mnem, store_fingerprint

from mnem_store.objects import Commit, MemoryNode


@pytest.fixture
def written(store: Path) -> Path:
    """A store with one commit."""
    assert run_mnem("add", "plan", "--content-json", '"pro"', cwd=store).code == 0
    assert run_mnem("commit", "-m", "first", cwd=store).code == 0
    return store


def test_repo_refuses_a_commit_or_an_object_outside_a_write_transaction(written: Path) -> None:
    before = store_fingerprint(written)
    with open_repo(written) as repo:
        tip = repo.head_commit()
        assert tip is not None
        staged_like = Commit((tip,), repo.commit_obj(tip).state, "sneaky", "bug", 1)
        for attempt in (lambda: repo.put(MemoryNode("plan", "team")),
                        lambda: repo.write([MemoryNode("plan", "team")], [], "sneaky", "bug", 1),
                        lambda: repo.index_commit(staged_like, repo.commit_nodes(tip))):
            with pytest.raises(RuntimeError, match="outside a write transaction"):
                attempt()
    assert store_fingerprint(written) == before


@pytest.mark.parametrize("inside_a_read", [True, False], ids=["in-a-read", "alone"])
def test_the_session_refuses_a_raw_write_outside_a_write_transaction(written: Path, inside_a_read: bool) -> None:
    before = store_fingerprint(written)
    with open_repo(written) as repo, pytest.raises(Exception) as raised:
        if inside_a_read:
            with repo.backend.read():
                repo.backend.objects.insert(b"\x01" * 32, "memory_node", b"\xa0")
        else:
            repo.backend.objects.insert(b"\x01" * 32, "memory_node", b"\xa0")
    assert "read" in str(raised.value).lower() and "only" in str(raised.value).lower(), raised.value
    assert store_fingerprint(written) == before
