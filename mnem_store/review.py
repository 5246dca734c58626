"""Reviewing a branch: the merge base a three-dot diff starts from, and which commit made each proposed change.

``mnem diff A...B`` (git's three dots) shows what merging B into A would
propose: B's memory against the merge base of A and B, so A's own changes
since they parted are left out.  A reviewer also needs *why* each belief
changes, so each change names the commit on B's side that made it, with
the commit's author, message and time.

That commit is blame's (``mnem_store.blame``), for every changed fact at once:
from B, a fact is followed to the first parent while a commit's change rows
do not name it, and into the first other parent holding its value when a
merge carried it in; the commit where neither holds wrote it.  All the facts
are followed in one walk from B in corrected-time order, so a commit is read
once however many facts pass through it, and the walk stops when every fact
is placed, without a blame (a walk of its own) per fact.  A fact that reaches
the merge base's history unplaced was carried in by a merge from there; the
last merge that brought it names it.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from .errors import CorruptStoreError, InvalidRefError
from .graph import Graph
from .repo import Repo

__all__ = ["ChangedBy", "changed_by", "review_base"]


class ChangedBy(NamedTuple):
    """The commit that made a proposed change: what ``why`` tells of a fact, for a whole review at once."""

    commit: bytes
    author: str
    message: str
    time: int

    def to_dict(self) -> dict[str, Any]:
        """``{"commit", "author", "message", "time"}``: the ``by`` key of ``mnem diff A...B --json``."""
        return {"commit": self.commit.hex(), "author": self.author, "message": self.message, "time": self.time}


def review_base(graph: Graph, ours: bytes, theirs: bytes, names: tuple[str, str]) -> bytes:
    """The commit ``theirs`` is compared with: the merge base of ``ours`` and ``theirs``, as ``merge`` finds it.

    When one side contains the other the base is that side, found by the bounded ancestry walk;
    otherwise the single merge base, which ``merge`` requires too.

    Args:
        graph: The command's graph.
        ours: The commit a merge would land on (``A`` in ``A...B``).
        theirs: The commit under review (``B``).
        names: ``A`` and ``B`` as the caller wrote them, for the refusal.

    Returns:
        The merge base.

    Raises:
        InvalidRefError: No common ancestor (unrelated histories) or several (criss-cross), each naming the
            two-state diff that still compares them.
    """
    if graph.is_ancestor(ours, theirs):
        return ours
    if graph.is_ancestor(theirs, ours):
        return theirs
    bases = graph.merge_bases(ours, theirs)
    if len(bases) == 1:
        return bases[0]
    a, b = names
    instead = f"compare the two memories with `mnem diff {a} {b}`"
    if not bases:
        raise InvalidRefError(f'"{a}" and "{b}" have no common ancestor (unrelated histories), so no merge base '
                              f"to review from; {instead}")
    raise InvalidRefError(f'"{a}" and "{b}" have {len(bases)} merge bases (criss-cross history); {instead}, '
                          "or merge one into the other first")


def changed_by(repo: Repo, graph: Graph, tip: bytes, base: bytes,
               targets: Mapping[str, bytes | None]) -> dict[str, ChangedBy | None]:
    """For each fact of ``targets``, the commit between ``base`` and ``tip`` that gave it its value at ``tip``.

    Every commit is taken in decreasing corrected time, which puts each commit after all of its descendants:
    the facts passed into a commit have all arrived when it is read, and the mark "in ``base``'s history",
    spread from ``base`` to its parents, has too.  A fact reaching ``base``'s history unplaced keeps the last
    merge that carried it (None if none did: nothing after ``base`` touched it).

    Args:
        repo: The store, inside the caller's read snapshot.
        graph: The command's graph.
        tip: The reviewed commit (``B``).
        base: The merge base it is compared with.
        targets: Fact id -> its object id at ``tip`` (None: removed there).

    Returns:
        Fact id -> the commit that made its change, for every id of ``targets``.
    """
    placed: dict[str, bytes] = {}
    carried: dict[str, bytes] = {}  # the newest merge that brought a fact from another parent
    pending: dict[bytes, set[str]] = {tip: set(targets)} if targets else {}
    history = {base}  # base and the ancestors of it reached so far
    frontier = [_entry(repo, tip)]
    queued = {tip}
    if base != tip:
        frontier.append(_entry(repo, base))
        queued.add(base)
        heapq.heapify(frontier)
    while frontier and pending:
        raw = heapq.heappop(frontier)[1]
        facts = pending.pop(raw, set())
        parents = graph.parents(raw)
        nexts: Sequence[bytes] = parents
        if raw in history:
            history.update(parents)
        else:
            nexts = _follow(repo, raw, parents, facts, targets, pending, placed, carried)
        for parent in nexts:
            if parent not in queued:
                queued.add(parent)
                heapq.heappush(frontier, _entry(repo, parent))
    return {fact: _by(graph, placed.get(fact) or carried.get(fact)) for fact in targets}


def _follow(repo: Repo, raw: bytes, parents: tuple[bytes, ...], facts: set[str],
            targets: Mapping[str, bytes | None], pending: dict[bytes, set[str]], placed: dict[str, bytes],
            carried: dict[str, bytes]) -> list[bytes]:
    """Place each of ``facts`` at commit ``raw`` or pass it to the parent holding its value; the parents passed to.

    A fact the commit's change rows do not name has its value in the first parent; one they name came from
    the first other parent holding the same value (a merge carried it), else this commit wrote it.
    """
    changed = repo.changes_of(raw) if facts else {}
    passed: list[bytes] = []
    for fact in facts:
        if fact not in changed:
            holder = parents[0] if parents else None
        else:
            holder = next((p for p in parents[1:] if repo.node_at(p, fact) == targets[fact]), None)
            if holder is None:
                placed[fact] = raw
                continue
            carried.setdefault(fact, raw)
        if holder is not None:  # a root that does not name the fact never held it: left unplaced
            pending.setdefault(holder, set()).add(fact)
            passed.append(holder)
    return passed


def _entry(repo: Repo, raw: bytes) -> tuple[int, bytes]:
    """A commit's place in the walk: the highest corrected time first (then the id, for a fixed order)."""
    row = repo.states.graph(raw)
    if row is None:
        raise CorruptStoreError(f"commit {raw.hex()} is not in the commit graph")
    return -row.corrected, raw


def _by(graph: Graph, raw: bytes | None) -> ChangedBy | None:
    """The provenance fields of commit ``raw`` (None stays None)."""
    if raw is None:
        return None
    commit = graph.commit(raw)
    return ChangedBy(raw, commit.author, commit.message, commit.time)
