"""What a sender packs: the commits its wants reach and its haves do not, at a cost that does not multiply them.

A fetching client chooses both lists (up to ``mnem_mcp.remote_sync.MAX_IDS``
each), so ``transfer.missing`` must cost about the commits it walks, never
commits times haves.  Its answer is held to plain reachability over a random
history with branches and merges, and its cost is counted in commit-graph
reads (the walk's own steps), not timed.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import init_repo
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_store import porcelain
from mnem_store.errors import InvalidRefError
from mnem_store.graph import Graph
from mnem_store.objects import MemoryNode
from mnem_store.repo import Repo
from mnem_store.transfer import missing

BRANCHES = ("main", "b1", "b2", "b3")


def node(name: str) -> MemoryNode:
    return MemoryNode(name, {"n": name})


def random_history(folder: Path, commits: int, seed: int) -> tuple[Repo, list[bytes]]:
    """A store of ``commits`` writes and merges across four branches (seeded); every commit id in it."""
    rng = random.Random(seed)
    repo: Repo = init_repo(folder, "sqlite")
    porcelain.write(repo, [node("root")], [], "root", "t", 1)
    for name in BRANCHES[1:]:
        porcelain.branch_create(repo, name)
    for n in range(commits):
        branch = rng.choice(BRANCHES)
        if rng.random() < 0.25:
            other = rng.choice([b for b in BRANCHES if b != branch])
            porcelain.checkout(repo, branch)
            with contextlib.suppress(InvalidRefError):  # a criss-cross the engine refuses, as upstream does
                porcelain.merge(repo, other, author="t", time_ms=10 + n)
        else:  # each write sets a node of its own, so merges never conflict
            porcelain.write(repo, [node(f"{branch}-{n}")], [], f"write {n}", "t", 10 + n, branch=branch)
    with repo.backend.read():
        tips = [tip for tip in (repo.branch_tip(b) for b in BRANCHES) if tip is not None]
        every = sorted(Graph(repo)._reach(tips))
    return repo, every


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Repo, list[bytes]]]:
    repo, every = random_history(tmp_path_factory.mktemp("missing") / "store", 80, seed=44)
    try:
        yield repo, every
    finally:
        repo.close()


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_the_commits_sent_are_those_the_wants_reach_and_the_haves_do_not_parents_first(
        history: tuple[Repo, list[bytes]], data: Any) -> None:
    repo, every = history
    wants = data.draw(st.lists(st.sampled_from(every), max_size=4))
    haves = data.draw(st.lists(st.one_of(st.sampled_from(every), st.binary(min_size=32, max_size=32)), max_size=6))
    with repo.backend.read():
        sent = missing(repo, wants, haves)
        graph = Graph(repo)
        expected = graph._reach(wants) - graph._reach([h for h in haves if h in every])
    ids = [raw for raw, _ in sent]
    assert len(ids) == len(set(ids)) and set(ids) == expected
    position = {raw: i for i, raw in enumerate(ids)}
    for raw, commit in sent:
        assert commit == graph.commit(raw)
        assert all(position[parent] < position[raw] for parent in commit.parents if parent in position)


class CountingStates:
    """The commit-graph index with its row reads counted (the walk's steps)."""

    def __init__(self, states: Any) -> None:
        self.states = states
        self.reads = 0

    def graph(self, raw: bytes) -> Any:
        self.reads += 1
        return self.states.graph(raw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.states, name)


def test_a_fetch_naming_every_commit_of_another_line_as_a_have_costs_the_walk_not_commits_times_haves(
        tmp_path: Path) -> None:
    """Main and a side line each 150 commits from one root; want main, have every side commit.

    Before, each of main's 150 commits was checked against each of the 150
    haves (22,500 ancestry checks, each reading rows); the walk reads each
    commit's row a bounded number of times.
    """
    repo: Repo = init_repo(tmp_path / "store", "sqlite")
    try:
        porcelain.write(repo, [node("root")], [], "root", "t", 1)
        porcelain.branch_create(repo, "side")
        side = []
        for n in range(150):
            porcelain.write(repo, [node(f"main-{n}")], [], f"main {n}", "t", 10 + 2 * n)
            side.append(porcelain.write(repo, [node(f"side-{n}")], [], f"side {n}", "t", 11 + 2 * n,
                                        branch="side").commit[0])
        with repo.backend.read():
            tip = repo.branch_tip("main")
            assert tip is not None
            counted = CountingStates(repo.states)
            repo.states = counted  # type: ignore[assignment]
            sent = missing(repo, [tip], side)
        assert len(sent) == 150
        assert counted.reads <= 4 * (150 + 150 + 1), counted.reads
    finally:
        repo.close()
