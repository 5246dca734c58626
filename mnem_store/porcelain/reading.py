"""The reading verbs: HEAD, a revision, and the memory at a commit (whole, a page, one node, its ids, its times).

What a one-shot read runs (``mnem --json show --node ID``), so this module
imports only what reading needs: the other families, and the algorithms a
verb of theirs runs, stay unloaded.  It also holds the few helpers the
other families read nodes with.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import CommandError
from ..layout import Head
from ..objects import MemoryNode
from ..repo import Nodes, Repo

if TYPE_CHECKING:
    from ..stamps import Stamped

__all__ = ["CACHE_LISTINGS", "Page", "count", "head", "load_nodes", "ls", "ls_objects", "page", "resolve", "show",
           "show_node", "show_stat", "stamps", "valid_at"]


def head(repo: Repo) -> tuple[Head, bytes | None]:
    """HEAD and the commit it names (None on an unborn branch), without reading any memory."""
    with repo.backend.read():
        return repo.head(), repo.head_commit()


def resolve(repo: Repo, rev: str) -> bytes:
    """The commit a branch name or id prefix names."""
    with repo.backend.read():
        return repo.resolve(rev)


def count(repo: Repo, rev: str) -> int:
    """How many nodes the memory at ``rev`` holds: its state map, counted without loading a node."""
    with repo.backend.read():
        return len(repo.commit_nodes(repo.resolve(rev)))


def show(repo: Repo, rev: str | None = None) -> dict[str, MemoryNode]:
    """The memory at ``rev``, or working memory, in node-id order."""
    with repo.backend.read():
        nodes = repo.working_nodes() if rev is None else repo.commit_nodes(repo.resolve(rev))
        return repo.nodes_of(nodes)


class Page(NamedTuple):
    """One page of a memory in id order: the object id of each node on it, and where the next page starts.

    Attributes:
        nodes: Node id -> object id, in id order (at most the page's limit).
        next_cursor: The last id of this page when more follow (pass it as ``cursor`` for the next
            page), else None.
    """

    nodes: dict[str, bytes]
    next_cursor: str | None


def page(
    repo: Repo, rev: str | None = None, *, prefixes: Sequence[str] | None = None, cursor: str | None = None,
    limit: int | None = None,
) -> Page:
    """Up to ``limit`` (None: all) nodes of working memory or of ``rev``, in id order, after ``cursor``.

    Only the ids are read whole (sorted once per state image with
    prefixes, else per call); no node object is read here, so the caller
    decodes just the page.  A cursor is an id, not a position: a page
    read after a write still starts where the last one ended.
    """
    with repo.backend.read():
        if rev is None:
            nodes = repo.working_nodes(prefixes)
        else:
            commit = repo.resolve(rev)
            nodes = repo.commit_nodes(commit) if prefixes is None else repo.commit_nodes_under(commit, prefixes)
    ordered = sorted(nodes)
    start = 0 if cursor is None else bisect_right(ordered, cursor)
    end = len(ordered) if limit is None else start + limit
    picked = ordered[start:end]
    more = end < len(ordered)
    return Page({node_id: nodes[node_id] for node_id in picked}, picked[-1] if more and picked else None)


def load_nodes(repo: Repo, raws: Sequence[bytes]) -> dict[bytes, MemoryNode]:
    """Node objects by object id, read in one snapshot and in chunks (not one statement per node)."""
    with repo.backend.read():
        repo.objects.prefetch(raws)
        return {raw: repo.node(raw) for raw in raws}


def show_node(repo: Repo, node_id: str, rev: str | None = None) -> MemoryNode | None:
    """One node of working memory or of ``rev``, looked up alone (never loading the whole state)."""
    with repo.backend.read():
        return load_node(repo, repo.working_node(node_id) if rev is None else repo.node_at(repo.resolve(rev), node_id))


def show_stat(repo: Repo, rev: str | None = None) -> dict[str, str]:
    """What a commit (default HEAD's) changed against its first parent, in node-id order."""
    with repo.backend.read():
        commit_raw = repo.resolve(rev) if rev is not None else repo.head_commit()
        if commit_raw is None:
            raise CommandError("nothing to show: HEAD has no commit")
        changed = repo.changes_of(commit_raw)
        return {node_id: changed[node_id] for node_id in sorted(changed)}


def read_start(repo: Repo, rev: str | None) -> tuple[bytes | None, str | None]:
    """Where a read starts: ``rev``'s commit, else HEAD's, with HEAD's branch when it reads HEAD (None otherwise).

    A lease applies only to a read of HEAD's branch; the branch comes from the same read of HEAD.
    """
    if rev is not None:
        return repo.resolve(rev), None
    head, commit = repo.head_and_commit()
    return commit, head.branch


def stamps(
    repo: Repo, rev: str | None = None, ids: list[str] | None = None, prefixes: list[str] | None = None,
    *, live: bool = False,
) -> dict[str, Stamped]:
    """The memory at ``rev`` (default HEAD's commit) with each node's created and updated times.

    ``ids`` and ``prefixes`` narrow it to those nodes (their union); neither means every node.
    ``live`` (HEAD's branch only) leaves out nodes whose lease has run out
    and stamps the others' expiry (``mnem_store.expiry``).
    """
    from ..expiry import live_leases, refuse_rev
    from ..stamps import node_stamps

    if live:
        refuse_rev(rev, "stamps")
    with repo.backend.read():
        start, branch = read_start(repo, rev)
        stamped = node_stamps(repo, start, ids, prefixes)
        if not live:
            return stamped
        leases = live_leases(repo, branch, list(stamped))
        if not leases:  # nothing leased: every node is live, with no expiry
            return stamped
        return {
            node_id: entry._replace(expires=leases.get(node_id))
            for node_id, entry in stamped.items()
            if node_id not in leases or leases[node_id] is not None  # an expired lease hides its node
        }


def valid_at(
    repo: Repo, when: int, rev: str | None = None, ids: list[str] | None = None, prefixes: list[str] | None = None,
) -> dict[str, Stamped]:
    """The nodes valid at ``when`` (Unix ms) along the first-parent line of ``rev`` (default HEAD's commit).

    What was true then by the facts' own ``event_time`` (else their commit's time), not what was known then
    (``mnem_store.validtime``).  ``ids`` and ``prefixes`` narrow it as for ``stamps``.
    """
    from ..validtime import valid_at as valid

    with repo.backend.read():
        return valid(repo, repo.resolve(rev) if rev is not None else repo.head_commit(), when, ids, prefixes)


def ls(repo: Repo, rev: str | None = None, prefixes: list[str] | None = None, *, live: bool = False,
       last: int | None = None) -> list[str]:
    """The node ids in the memory at ``rev`` (default HEAD's commit), in id order; only those under ``prefixes``.

    ``live`` leaves out nodes whose lease on HEAD's branch has run out;
    ``last`` keeps only the last that many (the greatest ids): where ids
    sort by time, as LangGraph's checkpoint ids do, the newest, without
    sending a whole thread's ids to find one.

    Reads the state's map alone, never a node: what a namespace listing needs.
    """
    from ..expiry import live_leases, refuse_rev

    if live:
        refuse_rev(rev, "ls")
    with repo.backend.read():
        start, branch = read_start(repo, rev)
        found = sorted(repo.commit_nodes(start) if prefixes is None else repo.commit_nodes_under(start, prefixes))
        if live:
            leases = live_leases(repo, branch, None)
            found = [node_id for node_id in found if node_id not in leases or leases[node_id] is not None]
        return found if last is None else found[len(found) - last:] if last else []


def ls_objects(
    repo: Repo, rev: str | None = None, prefixes: list[str] | None = None, *, live: bool = False,
    unless: bytes | None = None,
) -> tuple[bytes | None, Nodes | None, list[str]]:
    """The commit read (None: unborn), its node ids under ``prefixes`` with their object ids, and the expired ones.

    What a client that keeps values by object id needs to answer a search
    (``mnem ls --objects``): which values the candidates hold, without
    reading a node.  The nodes are the commit's, in id order, whatever
    their leases; with ``live``, the third item lists those whose lease on
    HEAD's branch has run out (else it is empty).  A commit's nodes never
    change: when the commit read is ``unless`` (the one the client already
    listed), the nodes are left out (None) and only what has expired is new.
    """
    from ..expiry import live_leases, refuse_rev

    if live:
        refuse_rev(rev, "ls")
    with repo.backend.read():
        start, branch = read_start(repo, rev)
        nodes = nodes_at(repo, start, prefixes)
        expired = sorted(nid for nid, expires in live_leases(repo, branch, None).items()
                         if expires is None and nid in nodes) if live else []
        if start is not None and start == unless:
            return start, None, expired
        return start, dict(sorted(nodes.items())) if prefixes is None else nodes, expired


#: Node maps (a commit's, under some prefixes or ids) a store keeps for ``ls --objects`` and ``similar``.
CACHE_LISTINGS = 8


def nodes_at(repo: Repo, start: bytes | None, prefixes: list[str] | None, ids: list[str] | None = None) -> Nodes:
    """The nodes of commit ``start`` among ``ids`` and under ``prefixes`` (neither: all), not to be changed.

    A commit's nodes never change, so the map is kept by the commit and
    what was asked (``mnem_store.cache``'s shelves): a search of the same
    namespace at the same commit costs a lookup, not a walk of its ids.
    """
    if start is None:
        return {}
    key = (start, None if prefixes is None else tuple(sorted(set(prefixes))), None if ids is None else tuple(ids))
    shelf = repo.backend.kept.shelf("listings", CACHE_LISTINGS)
    found: Nodes | None = shelf.find(key)
    if found is None:
        if ids is None and prefixes is None:
            found = repo.commit_nodes(start)
        else:  # only the nodes asked for: a namespace's search does not copy the whole state
            found = {**repo.commit_nodes_under(start, prefixes or ()), **repo.commit_nodes_named(start, ids or ())}
        shelf.keep(key, found)
    return found


def node_dict(node: MemoryNode | None) -> dict[str, Any] | None:
    return node.to_dict() if node is not None else None


def load_node(repo: Repo, raw: bytes | None) -> MemoryNode | None:
    return repo.node(raw) if raw is not None else None
