"""Timeline: every value one node has had along a commit's first-parent history, newest first.

A person debugging a wrong belief wants the whole story of one fact, not
only the commit that set its current value (that is blame).  The change
index already answers "which commit last touched this node at or before
commit C" with a few indexed probes (``Repo.change_at``), so the story is
that question asked again from each answer's first parent: the cost follows
how often the node changed, never the history's length, and no state is
loaded.  A page of ``limit`` steps ends with the commit to continue from.

Like bisect, the walk follows first parents: a side branch's value reaches
the chain at the merge that brought it, and each step also names the commit
that wrote the value (blame's rule), so a merged hypothesis shows the
side-branch commit and its author rather than only the merge.
"""

from __future__ import annotations

from typing import NamedTuple

from .blame import find_blame
from .graph import Graph
from .repo import Repo

__all__ = ["Step", "steps"]


class Step(NamedTuple):
    """One change of a node on the chain: where, what it became, and what it was before.

    ``commit`` is the chain's commit whose change set names the node;
    ``origin`` is the commit that wrote the value (the same commit, or a
    side-branch commit a merge carried over; ``commit`` itself for a
    removal).  ``value`` and ``previous`` are object ids (None: absent).
    """

    commit: bytes
    origin: bytes
    kind: str
    value: bytes | None
    previous: bytes | None


def steps(repo: Repo, node_id: str, start: bytes, limit: int) -> tuple[list[Step], bytes | None]:
    """Up to ``limit`` changes of ``node_id`` at or before ``start``, newest first, and where to go on.

    Runs inside the caller's read snapshot.  The second value is the commit
    a next page starts at (the last step's first parent), or None when the
    node's history on the chain is complete.
    """
    graph = Graph(repo)
    found: list[Step] = []
    cursor: bytes | None = start
    while cursor is not None and len(found) < limit:
        change = repo.change_at(cursor, node_id)  # the commit, the value it set and the kind, in one probe
        if change is None:
            return found, None
        changed, value, kind = change
        parents = graph.parents(changed)
        cursor = parents[0] if parents else None
        previous = repo.node_at(cursor, node_id)
        blamed = find_blame(repo, node_id, changed, graph, change) if value is not None else None
        found.append(Step(changed, blamed.commit if blamed is not None else changed, kind, value, previous))
    more = cursor is not None and repo.change_at(cursor, node_id) is not None
    return found, cursor if more else None
