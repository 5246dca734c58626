"""Node time stamps: when each node's value was written and when the node came to be.

A key-value view of memory (the LangGraph store) needs ``created_at`` and
``updated_at`` for every item it returns, and ``mnem stamps`` answers for
many nodes in one process instead of one ``blame`` each.

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

Two ways to get there, chosen by how many nodes are asked for:

* a few (``ids``, e.g. a batch of gets): per node, blame's own lookup plus
  the same for presence; each step is an indexed ``last_change`` probe that
  jumps over every commit that did not touch the node, so the cost follows
  the node's changes, not the history's length;
* every node (a search or a listing): one walk over the history that moves
  all nodes together, commit by commit, reading each commit's change set
  once; nodes a commit did not touch move on as one set, so the cost
  follows the commits and their changes, not nodes times commits.  Its
  answer is kept (the last few), and the answer for a commit whose first
  parent's is kept is derived from it: the nodes the commit did not change
  keep their stamps, and only the changed ones are probed as above.

What the walk reads about a commit (its parents, time and change set), the
time of the value a node was born with there, and a node's two stamps at a
commit (asked for by id) are fixed by the commit's id, which hashes its
content, so they are kept on the store's shelves (``mnem_store.cache``): a long-lived
``mnem serve`` worker answers repeated reads of a long history without
decoding it again, a get of an item it has stamped before at HEAD's
commit reads only the item, and a search after a write costs the write's
changes.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterable
from typing import Any, NamedTuple, TypeVar

from .blame import find_blame
from .cache import Shelf
from .errors import CorruptStoreError, rust_debug
from .graph import Graph
from .objects import MemoryNode
from .repo import Nodes, Repo

__all__ = ["CACHE_SIZE", "Stamped", "node_stamps"]

#: Entries (commit facts, birth times) one process keeps; each is a few hundred bytes.
CACHE_SIZE = 100_000
T = TypeVar("T")


class Stamped(NamedTuple):
    """A node's object id with its two stamps (Unix ms).

    The id, not the node: the caller reads the nodes it needs, and a
    worker's JSON answer splices each node's document in from its cache
    (``cli/documents.py``) without decoding the node again.
    """

    object: bytes
    created: int
    updated: int
    #: When the node's lease on the branch read runs out (``stamps --live``), or None: it does not expire.
    expires: int | None = None


class _Facts(NamedTuple):
    """What the walk needs from a commit: immutable, since its id hashes its content."""

    parents: tuple[bytes, ...]
    time: int
    changes: dict[str, str]


def _shelf(graph: Graph) -> Shelf:
    """The store's shelf of stamps, walk facts and birth times."""
    return graph.repo.backend.kept.shelf("stamps", CACHE_SIZE)


def _cached(shelf: Shelf, key: Hashable, compute: Callable[..., T], *args: Any) -> T:
    """``compute(*args)``, kept under ``key`` (which must name something fixed by commit ids) on ``shelf``.

    The caller finds the shelf once, and the arguments are passed rather
    than bound first, so a kept answer costs the lookup alone: a search
    page's ten stamps took ~25% less (issue #46).
    """
    # one key names one computation, so it holds what that computation returned (None included): one lookup
    kept: T = shelf.get(key, _UNKNOWN)
    if kept is _UNKNOWN:
        return shelf.keep(key, compute(*args))  # type: ignore[no-any-return]  # (compute's value, just kept)
    shelf.move_to_end(key)
    return kept


#: What ``_cached`` finds on the shelf under a key never computed (None is a computation's answer).
_UNKNOWN: Any = object()


def _facts(graph: Graph, raw: bytes) -> _Facts:
    def read() -> _Facts:
        commit = graph.commit(raw)
        return _Facts(commit.parents, commit.time, graph.repo.changes_of(raw) if commit.parents else {})

    return _cached(_shelf(graph), ("facts", raw), read)


def _walk(graph: Graph, start: bytes, targets: Nodes, *, presence: bool) -> dict[str, bytes]:
    """Where each node's walk from ``start`` stops (all nodes together, newest commit first: see above).

    A node absent from a commit's change set holds the same object in the
    first parent, which satisfies either test; a ``modified`` one is present
    there too, which satisfies the presence test.  Only otherwise, and only
    at merges, are the other parents' states loaded.  Commit times need not
    be monotonic: a commit reached again after it was processed is processed
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


def node_stamps(
    repo: Repo, start: bytes | None, ids: Iterable[str] | None = None, prefixes: Iterable[str] | None = None,
) -> dict[str, Stamped]:
    """Stamp the nodes of the state at commit ``start``, in node-id order.

    Args:
        repo: The open store; call inside one read snapshot (``porcelain.stamps`` opens it).
        start: The commit whose memory to stamp; ``None`` (an unborn branch) stamps nothing.
        ids: These node ids (absent ones are left out), looked up one by one.
        prefixes: Every node whose id starts with one of these, in one walk
            over the history that follows only them.  With ``ids``, the union;
            with neither, every node.

    Returns:
        ``{node_id: Stamped}`` for each requested node present at ``start``.
    """
    if start is None:
        return {}
    graph = Graph(repo)
    if ids is None and prefixes is None:
        return _all(repo, graph, start)
    found = {} if prefixes is None else _all(repo, graph, start, tuple(prefixes))
    found.update(_some(repo, graph, start, sorted(set(ids or ()) - found.keys())))
    return dict(sorted(found.items()))


def _some(repo: Repo, graph: Graph, start: bytes, ids: list[str]) -> dict[str, Stamped]:
    out = {}
    shelf = _shelf(graph)
    for node_id in ids:
        found = _cached(shelf, ("stamp", start, node_id), _stamp, repo, graph, start, node_id)
        if found is not None:
            out[node_id] = Stamped(*found)
    return out


def _stamp(repo: Repo, graph: Graph, start: bytes, node_id: str) -> tuple[bytes, int, int] | None:
    """``(object id, created, updated)`` of ``node_id`` at commit ``start``, or None where it is absent.

    Fixed by the commit's id, like the walk's facts, so ``_some`` keeps it:
    a worker answering gets of the same items on a quiet store reads only
    each node's object, not its history again.
    """
    change = repo.change_at(start, node_id)  # where blame and the birth walk both start: read once
    if change is None or change[1] is None:
        return None
    blame = find_blame(repo, node_id, start, graph, change)
    if blame is None:
        return None
    birth = _birth(repo, graph, change, node_id)
    created = blame.time if birth == blame.commit else _birth_time(repo, graph, birth, node_id)
    return change[1], created, blame.time


def _birth(repo: Repo, graph: Graph, change: tuple[bytes, bytes | None, str], node_id: str) -> bytes:
    """Where ``node_id`` came to be: the presence walk, by probes, from ``change`` (its last change where it is)."""
    while True:
        changed, _, kind = change
        parents = graph.parents(changed)
        if kind == "modified" and parents:  # the first parent held it: alive before
            current = parents[0]
        else:
            holder = next((p for p in parents[1:] if repo.node_at(p, node_id) is not None), None)
            if holder is None:
                return changed
            current = holder
        found = repo.change_at(current, node_id)
        if found is None:
            raise CorruptStoreError(f"no commit on the history of {current.hex()} wrote {rust_debug(node_id)}")
        change = found


def _birth_time(repo: Repo, graph: Graph, birth: bytes, node_id: str) -> int:
    """The blame time of the value ``node_id`` was born with at ``birth``."""

    def read() -> int:
        first = repo.node_at(birth, node_id)
        if first is None:
            raise CorruptStoreError(f"{rust_debug(node_id)} is not in memory at {birth.hex()}, where it was born")
        return _blame_time(repo.node(first), _facts(graph, birth).time)

    return _cached(_shelf(graph), ("born", birth, node_id), read)


def _all(repo: Repo, graph: Graph, start: bytes, prefixes: tuple[str, ...] | None = None) -> dict[str, Stamped]:
    return {node_id: Stamped(*stamp) for node_id, stamp in _all_stamps(repo, graph, start, prefixes).items()}


#: ``(object id, created, updated)`` per node id.
_Stamps = dict[str, tuple[bytes, int, int]]

#: Whole answers (every node, or every node under some prefixes, at one commit) one process keeps to derive the
#: next commit's from; each is a few dozen bytes per node.
RESULTS_SIZE = 4


def _all_stamps(repo: Repo, graph: Graph, start: bytes, prefixes: tuple[str, ...] | None) -> _Stamps:
    """The stamps of every node at ``start`` (under ``prefixes``), in node-id order.

    Derived from the first parent's answer when it is still kept (see above:
    a search after a write costs the write's changes); otherwise walked.
    """
    key = (start, None if prefixes is None else tuple(sorted(set(prefixes))))
    results = repo.backend.kept.shelf("stamp results", RESULTS_SIZE)
    found: _Stamps | None = results.find(key)
    if found is not None:
        return found
    parents, _, changes = _facts(graph, start)
    base = results.get((parents[0], key[1])) if parents else None
    found = _walked(repo, graph, start, prefixes) if base is None else _derived(repo, graph, start, base, changes,
                                                                                 prefixes)
    results.keep(key, found)
    return found


def _derived(
    repo: Repo, graph: Graph, start: bytes, base: _Stamps, changes: dict[str, str], prefixes: tuple[str, ...] | None,
) -> _Stamps:
    """``start``'s stamps from its first parent's (``base``) and its change set against that parent."""
    found = dict(base)
    shelf = _shelf(graph)
    for node_id in changes:
        if prefixes is not None and not node_id.startswith(prefixes):
            continue
        found.pop(node_id, None)
        stamp = _cached(shelf, ("stamp", start, node_id), _stamp, repo, graph, start, node_id)
        if stamp is not None:  # None: removed here
            found[node_id] = stamp
    return dict(sorted(found.items()))


def _walked(repo: Repo, graph: Graph, start: bytes, prefixes: tuple[str, ...] | None) -> _Stamps:
    """``start``'s stamps by the two walks over the history (``_walk``)."""
    targets = repo.commit_nodes(start) if prefixes is None else repo.commit_nodes_under(start, prefixes)
    written = _walk(graph, start, targets, presence=False)
    born = _walk(graph, start, targets, presence=True)
    repo.objects.prefetch(targets.values())
    out = {}
    for node_id in sorted(targets):
        node = repo.node(targets[node_id])
        updated = _blame_time(node, _facts(graph, written[node_id]).time)
        birth = born[node_id]
        created = updated if birth == written[node_id] else _birth_time(repo, graph, birth, node_id)
        out[node_id] = (targets[node_id], created, updated)
    return out
