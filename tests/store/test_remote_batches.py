"""A fetch or clone of more branches than one upload may name asks in batches, and still brings everything.

An HTTP server takes at most ``peers.MAX_IDS`` ids in each list of an
upload request (``mnem_mcp.remote_sync.MAX_IDS``), so a store with more
branches than that could not be cloned, nor fetched into one with more
branch tips to offer as haves.  Here the limit is made 2, in process, and a
peer that records each request (over a real store) checks that none names
more; the clone and the fetch hold every branch and verify.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO, ClassVar

import pytest
from conftest import init_repo, run_mnem

from mnem_store import porcelain, sync
from mnem_store.location import address
from mnem_store.objects import MemoryNode
from mnem_store.peers import LocalPeer
from mnem_store.redaction_ranges import Summary
from mnem_store.repo import Repo

LIMIT = 2
BRANCHES = [f"topic-{n}" for n in range(7)]


class Recorded(LocalPeer):
    """A folder peer that keeps every upload's wants and haves, and refuses more than ``LIMIT`` of either."""

    asked: ClassVar[list[tuple[int, int]]] = []

    def upload(self, wants: list[bytes], haves: list[bytes], redactions: list[bytes] | None = None,
               held: Summary | None = None) -> BinaryIO:
        assert len(wants) <= LIMIT and len(haves) <= LIMIT, (len(wants), len(haves))
        Recorded.asked.append((len(wants), len(haves)))
        return super().upload(wants, haves, redactions, held)


def grow(repo: Repo, start: int) -> None:
    """One new commit on main and on every topic branch (each branch's own fact)."""
    for n, name in enumerate(["main", *BRANCHES]):
        porcelain.write(repo, [MemoryNode(f"{name}-{start}", start)], [], f"{name} {start}", "t", start + n,
                        branch=name)


@pytest.fixture
def limited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sync, "MAX_IDS", LIMIT)
    monkeypatch.setattr(sync, "LocalPeer", Recorded)
    Recorded.asked = []


@pytest.mark.usefixtures("limited")
def test_a_clone_and_a_fetch_of_more_branches_than_one_request_names_bring_them_all(tmp_path: Path) -> None:
    source = init_repo(tmp_path / "source", "sqlite")
    try:
        porcelain.write(source, [MemoryNode("root", 0)], [], "root", "t", 1)
        for name in BRANCHES:
            porcelain.branch_create(source, name)
        grow(source, 100)
        cloned = sync.clone(str(tmp_path / "source"), address(str(tmp_path / "copy")))
        assert cloned.sent.commits == 1 + 1 + len(BRANCHES)
        assert len(Recorded.asked) == 4  # 8 tips, 2 a request
        grow(source, 200)
    finally:
        source.close()
    Recorded.asked = []
    copy = Repo.open(tmp_path / "copy")
    try:
        fetched = sync.fetch(copy)
    finally:
        copy.close()
    assert fetched.sent.commits == 1 + len(BRANCHES)
    assert len(Recorded.asked) == 4 and all(haves == LIMIT for _, haves in Recorded.asked)
    assert {name for name, _, _ in fetched.moved} == {f"origin/{name}" for name in ["main", *BRANCHES]}
    assert run_mnem("verify", cwd=tmp_path / "copy").code == 0
