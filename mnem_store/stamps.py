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

What the walk reads about a commit (its parents, time and change set) is
fixed by the commit's id, which hashes its content, so it is kept in a
bounded process-wide cache: a long-lived ``mnem serve`` worker answers
repeated reads of a long history without decoding it again.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from .graph import Graph
from .objects import MemoryNode
from .repo import Nodes, Repo

__all__ = ["Stamped", "node_stamps", "FACTS_CACHE_SIZE"]

#: Commits whose facts one process keeps (a few hundred bytes each).
FACTS_CACHE_SIZE = 100_000


@dataclass(frozen=True, slots=True)
class Stamped:
    """A node with its two stamps (Unix ms)."""

    node: MemoryNode
    created: int
    updated: int

    def to_dict(self) -> dict[str, Any]:
        """``{"node": MemoryNode, "created": ms, "updated": ms}``."""
        return {"node": self.node.to_dict(), "created": self.created, "updated": self.updated}


class _Facts(NamedTuple):
    """What the walk needs from a commit: immutable, since its id hashes its content."""

    parents: tuple[bytes, ...]
    time: int
    changes: dict[str, str]


_facts_cache: OrderedDict[bytes, _Facts] = OrderedDict()


def _facts(graph: Graph, raw: bytes) -> _Facts:
    found = _facts_cache.get(raw)
    if found is None:
        commit = graph.commit(raw)
        changes = graph.repo.changes_of(raw) if commit.parents else {}
        found = _facts_cache[raw] = _Facts(commit.parents, commit.time, changes)
        if len(_facts_cache) > FACTS_CACHE_SIZE:
            _facts_cache.popitem(last=False)
    else:
        _facts_cache.move_to_end(raw)
    return found


def _walk(graph: Graph, start: bytes, targets: Nodes, *, presence: bool) -> dict[str, bytes]:
    """Where each node's walk from ``start`` stops.

    All nodes walk together, newest commit first, so a commit shared by many
    walks is read once.  A node absent from a commit's change set holds the
    same object in the first parent, which satisfies either test, so the
    nodes a commit did not touch move on to the first parent as one set and
    only the touched ones are looked at: the cost follows the changes, not
    nodes times commits.  A ``modified`` node is present in the first parent
    too, which satisfies the presence test.  Only otherwise, and only at
    merges, are the other parents' states loaded.  Commit times need not be
    monotonic: a commit reached again after it was processed is processed
    again for the late arrivals.
    """
    pending: dict[bytes, set[str]] = {}
    queue: list[tuple[int, bytes]] = []
    stops: dict[str, bytes] = {}

    def send(raw: bytes, node_ids: set[str]) -> None:
        if raw in pending:
            pending[raw] |= node_ids
        else:
            pending[raw] = node_ids
            heapq.heappush(queue, (-_facts(graph, raw).time, raw))

    send(start, set(targets))
    while queue:
        _, raw = heapq.heappop(queue)
        here = pending.pop(raw, None)
        if not here:
            continue
        parents, _, changes = _facts(graph, raw)
        if not parents:
            stops.update(dict.fromkeys(here, raw))
            continue
        touched = here.intersection(changes)
        onward = here - touched if touched else here
        for node_id in touched:
            if presence and changes[node_id] == "modified":
                onward.add(node_id)
                continue
            target = targets[node_id]
            holder = next((p for p in parents[1:] if _holds(graph.nodes(p).get(node_id), target, presence)), None)
            if holder is None:
                stops[node_id] = raw
            else:
                send(holder, {node_id})
        if onward:
            send(parents[0], onward)
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
        updated = _blame_time(node, _facts(graph, written[node_id]).time)
        first = first_values.get(node_id)
        created = updated if first is None else _blame_time(repo.node(first), _facts(graph, born[node_id]).time)
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
