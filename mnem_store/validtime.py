"""Valid time: what was true at a time according to the facts' own times, not when they were learnt.

A fact has two times.  Its commit's time says when the agent *learnt* it
(``main@{T}`` reads memory as known at T); its ``event_time``, when the
writer gave one, says when it *became true* (a plan changed in March,
recorded in May).  ``valid_at`` answers the second question over a line of
history: for each node, of every version the line ever recorded, the one
whose time is the latest at or before T, where a version's time is its
``event_time``, else the time of the commit that recorded it (it became
true when it was learnt).  A removal is dated by its commit (a deletion
carries no event time) and ends the node's validity from then on; a tie
goes to the version recorded later, the newer knowledge.

So the answer may hold a node that the line has since removed (it was
still true at T), and may lack one recorded before T with an event time
after T (not yet true at T).

The line is the first-parent chain from the commit read (``HEAD`` or a
revision, which may itself be ``main@{T}``: valid at one time as known at
another), as ``bisect`` and the timeline walk it.  A version's time is the
one ``blame`` gives it, so a side branch's value that a merge brought in
without an event time counts from the side-branch commit that wrote it,
not from the merge (which only carried it over), as ``stamps`` dates it.

Each answer carries two times, as ``stamps`` does: ``updated`` is the time
of the version answered, and ``created`` the time of the earliest version
of its unbroken run (since the last removal before it, in valid-time
order), so a key-value view (``MnemosyneStore.valid_at``) reports
``created_at`` / ``updated_at`` in the same valid time.  Every node is read
from the line's change sets (one per commit, as ``log --touching`` reads
them); a node asked for by id is followed by the change index's probes
alone, which skip the commits that did not touch it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from .blame import find_blame
from .graph import Graph
from .repo import Repo
from .stamps import Stamped

__all__ = ["valid_at"]


class _Version(NamedTuple):
    """One change of a node on the line: the value it set (None: removed), where and when it was recorded."""

    value: bytes | None
    order: int
    recorded: int


def valid_at(
    repo: Repo, start: bytes | None, when: int, ids: Iterable[str] | None = None,
    prefixes: Iterable[str] | None = None,
) -> dict[str, Stamped]:
    """Each node valid at ``when`` along ``start``'s first-parent line, in node-id order.

    Runs inside the caller's read snapshot.

    Args:
        repo: The store.
        start: The newest commit of the line (None: an unborn branch, which has nothing).
        when: The time, Unix ms.
        ids: Only these nodes (with ``prefixes``: both sets).
        prefixes: Only nodes whose id starts with one of these.  Neither: every node.

    Returns:
        Node id -> the valid version's object id, with its run's first time (``created``) and its own
        (``updated``), both in valid time.
    """
    if start is None:
        return {}
    chain = repo.first_parent_chain(start)
    order = {raw: len(chain) - index for index, raw in enumerate(chain)}  # the oldest commit is 1
    graph = Graph(repo)
    history: dict[str, list[_Version]] = {}
    if ids is None or prefixes is not None:
        wanted = None if prefixes is None else tuple(prefixes)
        for raw in chain:
            for node_id, (kind, value) in repo.change_set(raw).items():
                if wanted is None or node_id.startswith(wanted):
                    version = _version(graph, node_id, (raw, value, kind), order)
                    history.setdefault(node_id, []).append(version)
    for node_id in ids or ():
        history[node_id] = _probed(graph, start, node_id, order)
    repo.objects.prefetch({version.value for versions in history.values() for version in versions
                           if version.value is not None})
    found: dict[str, Stamped] = {}
    for node_id in sorted(history):
        chosen = _choose(repo, history[node_id], when)
        if chosen is not None:
            found[node_id] = chosen
    return found


def _probed(graph: Graph, start: bytes, node_id: str, order: dict[bytes, int]) -> list[_Version]:
    """Every change of one node on the line, newest first, one change-index probe each."""
    versions: list[_Version] = []
    cursor: bytes | None = start
    while cursor is not None:
        change = graph.repo.change_at(cursor, node_id)
        if change is None:
            break
        versions.append(_version(graph, node_id, change, order))
        parents = graph.parents(change[0])
        cursor = parents[0] if parents else None
    return versions


def _version(graph: Graph, node_id: str, change: tuple[bytes, bytes | None, str], order: dict[bytes, int]) -> _Version:
    """A change on the line as a version, recorded when blame says its value was written (a removal: then)."""
    commit, value = change[0], change[1]
    written = commit
    if value is not None and len(graph.parents(commit)) > 1:  # a merge may have carried the value in
        blamed = find_blame(graph.repo, node_id, commit, graph, change)
        written = commit if blamed is None else blamed.commit
    return _Version(value, order[commit], graph.commit(written).time)


def _choose(repo: Repo, versions: list[_Version], when: int) -> Stamped | None:
    """The version valid at ``when`` with its run's first time, or None (none yet, or removed by then)."""

    def valid_from(version: _Version) -> int:
        if version.value is None:
            return version.recorded
        event_time = repo.node(version.value).event_time
        return version.recorded if event_time is None else event_time

    timed = sorted((valid_from(version), version.order, version.value) for version in versions)
    past = [entry for entry in timed if entry[0] <= when]
    if not past or past[-1][2] is None:
        return None
    first = len(past) - 1
    while first > 0 and past[first - 1][2] is not None:
        first -= 1
    value = past[-1][2]
    return Stamped(value, past[first][0], past[-1][0])
