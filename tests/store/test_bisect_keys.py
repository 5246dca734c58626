"""Bisect finds its answer by commit keys, one probe a step, and never lists the chain it searches.

Listing a first-parent chain costs O(n) (half a second at 100k commits,
``benchmarks/bigstore.py``); the keys of a chain's commits grow along it, so
a binary search over keys with ``Repo.chain_at`` asks O(log n) commits and
reads no other.  These tests build a chain that crosses three lanes (two
forks), with commits of other branches between its keys, and hold every
answer to the one the listed chain gives, with the listing itself refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import open_repo

from mnem_store import porcelain
from mnem_store.bisect import bisect
from mnem_store.errors import InvalidRefError
from mnem_store.objects import MemoryNode
from mnem_store.repo import Nodes, Repo
from mnem_store.sql.states import SqlStateStore


def at_least(value: int):  # type: ignore[no-untyped-def]
    """The predicate "node n holds at least ``value``": monotonic along a chain where n counts up."""

    def holds(repo: Repo, nodes: Nodes) -> bool:
        raw = nodes.get("n")
        return raw is not None and repo.node(raw).content >= value

    return holds


@pytest.fixture
def forked(store: Path) -> Iterator[tuple[Repo, list[bytes]]]:
    """A store whose ``side2`` chain counts n = 1..7 over three lanes, and that chain, oldest first.

    main writes n = 1, 2, 3, 4; side1 forks at n = 2 and writes 3, 4, 5;
    side2 forks at side1's n = 4 and writes 5, 6, 7.  main and side1 go on
    writing between side2's commits, so the chain's keys have gaps.
    """
    clock = iter(range(1, 10**6))
    repo: Repo = open_repo(store)

    def put(n: int, branch: str = "main") -> bytes:
        written = porcelain.write(repo, [MemoryNode("n", n)], [], f"{branch} {n}", "t", next(clock), branch=branch)
        assert written.commit is not None
        return written.commit[0]

    one, two = put(1), put(2)
    put(3), put(4)
    porcelain.branch_create(repo, "side1", two.hex())
    put(3, "side1")
    four = put(4, "side1")
    put(5, "side1")
    porcelain.branch_create(repo, "side2", four.hex())
    tail = []
    for n in (5, 6, 7):
        tail.append(put(n, "side2"))
        put(100 + n)  # other branches' commits between the chain's keys
        put(100 + n, "side1")
    with repo.backend.read():
        chain = repo.first_parent_chain(repo.resolve("side2"))[::-1]
    assert len(chain) == 7 and chain[0] == one and chain[3] == four and chain[4:] == tail
    try:
        yield repo, chain
    finally:
        repo.close()


@pytest.fixture
def unlisted(forked: tuple[Repo, list[bytes]], monkeypatch: pytest.MonkeyPatch) -> tuple[Repo, list[bytes]]:
    """``forked``, after which listing a chain fails: a bisect that still lists it fails with it."""

    def refuse(self: SqlStateStore, commit_key: int) -> list[bytes]:
        raise AssertionError("bisect listed the first-parent chain")

    monkeypatch.setattr(SqlStateStore, "first_parent_chain", refuse)
    return forked


def test_bisect_answers_as_the_listed_chain_without_listing_it(unlisted: tuple[Repo, list[bytes]]) -> None:
    repo, chain = unlisted
    with repo.backend.read():
        for value in range(2, 8):  # n = value first holds at the chain's value-th commit
            assert bisect(repo, at_least(value), bad="side2") == chain[value - 1]
        for good in range(1, 6):  # from each good commit on, the first that holds after it
            assert bisect(repo, at_least(6), bad="side2", good=chain[good - 1].hex()) == chain[5]
        assert bisect(repo, at_least(1), bad="side2", include_root=True) == chain[0]


def test_bisect_refuses_a_good_off_the_chain_without_listing_it(unlisted: tuple[Repo, list[bytes]]) -> None:
    repo, chain = unlisted
    with repo.backend.read(), pytest.raises(InvalidRefError, match="is not on"):
        bisect(repo, at_least(6), bad="side2", good="main")  # main's tip: not side2's ancestor
    with repo.backend.read(), pytest.raises(InvalidRefError, match="is not on"):
        bisect(repo, at_least(6), bad=chain[2].hex(), good=chain[4].hex())  # a descendant of bad, not an ancestor
