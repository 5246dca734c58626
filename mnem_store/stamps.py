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

from .graph import Graph
from .objects import MemoryNode
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


def _walk(graph: Graph, start: bytes, targets: Nodes, *, presence: bool) -> dict[str, bytes]:
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
    queue = [(-graph.commit(start).time, start)]
    stops: dict[str, bytes] = {}
    while queue:
        _, raw = heapq.heappop(queue)
        here = pending.pop(raw, None)
        if not here:
            continue
        parents = graph.commit(raw).parents
        changes = graph.repo.changes_of(raw) if parents else {}
        for node_id in here:
            nxt = None
            if parents:
                kind = changes.get(node_id)
                if kind is None or (presence and kind == "modified"):
                    nxt = parents[0]
                else:
                    target = targets[node_id]
                    nxt = next((p for p in parents[1:] if _holds(graph.nodes(p).get(node_id), target, presence)), None)
            if nxt is None:
                stops[node_id] = raw
                continue
            if nxt not in pending:
                pending[nxt] = set()
                heapq.heappush(queue, (-graph.commit(nxt).time, nxt))
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
    graph = Graph(repo)
    state = repo.commit_nodes(start)
    wanted = sorted(state if ids is None else set(ids) & state.keys())
    targets = {node_id: state[node_id] for node_id in wanted}
    written = _walk(graph, start, targets, presence=False)
    born = _walk(graph, start, targets, presence=True)
    first_values = _first_values(graph, {n: born[n] for n in wanted if born[n] != written[n]})
    out: dict[str, Stamped] = {}
    for node_id in wanted:
        node = repo.node(targets[node_id])
        updated = _blame_time(node, graph.commit(written[node_id]).time)
        first = first_values.get(node_id)
        created = updated if first is None else _blame_time(repo.node(first), graph.commit(born[node_id]).time)
        out[node_id] = Stamped(node, created, updated)
    return out


def _first_values(graph: Graph, born: dict[str, bytes]) -> dict[str, bytes]:
    """The object each node held where it was born, for nodes changed since.

    Grouped by birth commit, so each state is decoded once (the graph keeps
    only a few at a time, however many commits are involved).
    """
    by_commit: dict[bytes, list[str]] = {}
    for node_id, raw in born.items():
        by_commit.setdefault(raw, []).append(node_id)
    found: dict[str, bytes] = {}
    for raw, node_ids in by_commit.items():
        nodes = graph.nodes(raw)
        found.update((node_id, nodes[node_id]) for node_id in node_ids)
    return found
