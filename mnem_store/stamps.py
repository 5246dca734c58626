"""Node time stamps: when each node's value was written and when the node came to be.

A key-value view of memory (the LangGraph store) needs ``created_at`` and
``updated_at`` for every item it returns.  Blaming each node separately
walks the history once per node; this module answers for many nodes in one
walk, visiting each commit once, and reads only the per-commit change index
(``Repo.changes_of``) except at merge commits.

Both stamps follow blame's rule through merges: from a commit, step to the
first parent (in parent order) that satisfies the walk's test, and stop
where no parent does.

* ``updated``: the test is "holds the identical object", so the stop is the
  commit blame names, and the stamp equals ``blame(node).time``: the node's
  ``event_time`` if it has one, else that commit's time.
* ``created``: the test is "holds the node at all", so the stop is the commit
  that made the node exist after it last did not (a deletion and a re-add
  start a new life).  The stamp is the blame time of the value written
  there: its ``event_time`` if set, else that commit's time.

A value written on a side branch and merged later is stamped with the side
branch's commit, not the merge: the merge only carried it over.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .objects import Commit, MemoryNode
from .repo import Nodes, Repo

__all__ = ["Stamped", "node_stamps"]


@dataclass(frozen=True, slots=True)
class Stamped:
    """A node with its two stamps (Unix ms)."""

    node: MemoryNode
    created: int
    updated: int

    def to_dict(self) -> dict[str, Any]:
        """``{"node": MemoryNode, "created": ms, "updated": ms}``."""
        return {"node": self.node.to_dict(), "created": self.created, "updated": self.updated}


class _History:
    """Commits and merge-parent state maps, decoded once for one ``node_stamps`` call."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self._commits: dict[bytes, Commit] = {}
        self._states: dict[bytes, Nodes] = {}

    def commit(self, raw: bytes) -> Commit:
        if raw not in self._commits:
            self._commits[raw] = self.repo.commit_obj(raw)
        return self._commits[raw]

    def nodes(self, raw: bytes) -> Nodes:
        if raw not in self._states:
            self._states[raw] = self.repo.state_nodes(self.commit(raw).state)
        return self._states[raw]


def _walk(history: _History, start: bytes, targets: Nodes, *, presence: bool) -> dict[str, bytes]:
    """Where each node's walk from ``start`` stops.

    All nodes walk together, newest commit first, so a commit shared by many
    walks is read once.  A node absent from a commit's change set holds the
    same object in the first parent, which satisfies either test; a
    ``modified`` node is present there too, which satisfies the presence
    test.  Only otherwise, and only at merges, are the other parents' states
    loaded.  Commit times need not be monotonic: a commit reached again
    after it was processed is simply processed again for the late arrivals.
    """
    pending: dict[bytes, set[str]] = {start: set(targets)}
    queue = [(-history.commit(start).time, start)]
    stops: dict[str, bytes] = {}
    while queue:
        _, raw = heapq.heappop(queue)
        here = pending.pop(raw, None)
        if not here:
            continue
        parents = history.commit(raw).parents
        changes = history.repo.changes_of(raw) if parents else {}
        for node_id in here:
            nxt = None
            if parents:
                kind = changes.get(node_id)
                if kind is None or (presence and kind == "modified"):
                    nxt = parents[0]
                else:
                    nxt = next((p for p in parents[1:] if _holds(history.nodes(p).get(node_id), targets[node_id], presence)), None)
            if nxt is None:
                stops[node_id] = raw
                continue
            if nxt not in pending:
                pending[nxt] = set()
                heapq.heappush(queue, (-history.commit(nxt).time, nxt))
            pending[nxt].add(node_id)
    return stops


def _holds(found: bytes | None, target: bytes, presence: bool) -> bool:
    return found is not None if presence else found == target


def _blame_time(node: MemoryNode, commit_time: int) -> int:
    return node.event_time if node.event_time is not None else commit_time


def node_stamps(repo: Repo, start: bytes | None, ids: Iterable[str] | None = None) -> dict[str, Stamped]:
    """Stamp the nodes of the state at commit ``start``, in node-id order.

    Args:
        repo: The open store; call inside ``repo.db.read()`` for one snapshot.
        start: The commit whose memory to stamp; ``None`` (an unborn branch) stamps nothing.
        ids: Only these node ids (absent ones are left out); ``None`` for every node.

    Returns:
        ``{node_id: Stamped}`` for each requested node present at ``start``.
    """
    if start is None:
        return {}
    history = _History(repo)
    state = repo.commit_nodes(start)
    wanted = sorted(state if ids is None else set(ids) & state.keys())
    targets = {node_id: state[node_id] for node_id in wanted}
    written = _walk(history, start, targets, presence=False)
    born = _walk(history, start, targets, presence=True)
    first_values = _first_values(repo, history, {n: born[n] for n in wanted if born[n] != written[n]})
    out: dict[str, Stamped] = {}
    for node_id in wanted:
        node = repo.node(targets[node_id])
        updated = _blame_time(node, history.commit(written[node_id]).time)
        first = first_values.get(node_id)
        created = updated if first is None else _blame_time(repo.node(first), history.commit(born[node_id]).time)
        out[node_id] = Stamped(node, created, updated)
    return out


def _first_values(repo: Repo, history: _History, born: dict[str, bytes]) -> dict[str, bytes]:
    """The object each node held where it was born, for nodes changed since.

    One state map per birth commit, loaded and dropped in turn, so memory
    stays at one state however many commits are involved.
    """
    by_commit: dict[bytes, list[str]] = {}
    for node_id, raw in born.items():
        by_commit.setdefault(raw, []).append(node_id)
    found: dict[str, bytes] = {}
    for raw, node_ids in by_commit.items():
        nodes = repo.state_nodes(history.commit(raw).state)
        found.update((node_id, nodes[node_id]) for node_id in node_ids)
    return found
