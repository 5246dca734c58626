"""Blame: which commit introduced the exact node a memory holds now.

Identity is the node's object id, so a value re-added identically (same
content, kind, provenance and event time) blames to the older commit, and a
value written on a side branch blames to the side-branch commit that wrote
it, not to the merge that brought it in.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .errors import CorruptStoreError, InvalidRefError, rust_debug
from .graph import Graph
from .objects import MemoryNode
from .repo import Repo

__all__ = ["Blame", "blame", "find_blame", "writer"]


class Blame(NamedTuple):
    """The introducing commit, the node as it is, and when it was formed.

    ``time`` is the node's ``event_time`` when the agent recorded one (when
    the belief was formed), else the commit's time (when it was recorded).
    """

    commit: bytes
    node: MemoryNode
    time: int

    def to_dict(self) -> dict[str, Any]:
        """SDK ``Blame.to_dict()``."""
        return {"commit": self.commit.hex(), "node": self.node.to_dict(), "time": self.time}


def find_blame(
    repo: Repo, node_id: str, start: bytes, graph: Graph | None = None,
    change: tuple[bytes, bytes | None, str] | None = None,
) -> Blame | None:
    """Blame ``node_id`` as of commit ``start``; ``None`` when it is not in memory there.

    The commit is ``writer``'s; ``change`` is ``repo.change_at(start, node_id)`` when the caller has
    already read it (``stamps`` needs it for the birth too).
    """
    graph = graph or Graph(repo)
    if change is None:  # the value at start and the commit that last set it, in one probe
        change = repo.change_at(start, node_id)
    if change is None or change[1] is None:
        return None
    current = writer(repo, graph, node_id, change)
    node = repo.node(change[1])
    return Blame(current, node, node.event_time if node.event_time is not None else graph.commit(current).time)


def writer(
    repo: Repo, graph: Graph, node_id: str, change: tuple[bytes, bytes | None, str],
) -> bytes:
    """The commit that gave ``node_id`` the value ``change`` found (``repo.change_at``).

    A value is an object id, or None for a removal (``mnem revert`` asks who removed a fact, too).  At
    each commit the first parent (in parent order) holding the same value becomes the next commit; when
    none does, this commit wrote it.  The first parent holds it exactly when the commit's change rows do
    not name the node, so the first-parent steps collapse into one ``change_at`` lookup (a few indexed
    probes, whatever the history length); only there are the other parents asked, one node each, and a
    state is never loaded.  A removal carried in from a parent whose line never held the node was made
    by the merge.
    """
    current, target = change[0], change[1]
    while True:  # a merge parent holding the same value carried it in: follow the value there
        holder = next((p for p in graph.parents(current)[1:] if repo.node_at(p, node_id) == target), None)
        if holder is None:
            break
        changed = repo.change_at(holder, node_id)
        if changed is None:
            if target is None:  # the other line never held it: the merge removed it
                break
            raise CorruptStoreError(f"no commit on the history of {holder.hex()} wrote {rust_debug(node_id)}")
        current = changed[0]
    return current


def blame(repo: Repo, node_id: str, at: str | None = None) -> Blame:
    """Blame as of ``at`` (a commit-ish) or HEAD's commit, with upstream's errors."""
    start = repo.resolve(at) if at is not None else repo.head_commit()
    if start is None:
        raise InvalidRefError("cannot blame: HEAD has no commit")
    found = find_blame(repo, node_id, start)
    if found is None:
        raise InvalidRefError(f"blame: {rust_debug(node_id)} is not in memory at {start.hex()}")
    return found
