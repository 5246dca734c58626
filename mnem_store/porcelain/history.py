"""The history verbs: the log, what a commit or a range changed, a node's timeline, blame and bisect.

Each reads one snapshot; ``NodeChange`` (a node's two values) is the
record every diff-shaped answer is made of.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..objects import Commit, MemoryNode
from ..repo import Nodes, Repo, diff_nodes
from .reading import load_node, node_dict

if TYPE_CHECKING:
    from ..backend import Push
    from ..bisect import Predicate
    from ..blame import Blame
    from ..review import ChangedBy
    from ..timeline import Step

__all__ = ["Bisected", "ChangePage", "NodeChange", "Proposal", "ProposedChange", "Timeline", "TimelineEntry",
           "bisect", "blame", "blame_many", "changes", "diff", "diff_proposed", "holds_checkpoints", "log",
           "pushes_of", "threads_of", "timeline"]


class NodeChange(NamedTuple):
    """One node's difference between two memories, with both values loaded."""

    id: str
    kind: str
    old: MemoryNode | None
    new: MemoryNode | None

    def to_dict(self) -> dict[str, Any]:
        """SDK ``NodeChange.to_dict()``."""
        return {"id": self.id, "kind": self.kind, "old": node_dict(self.old), "new": node_dict(self.new)}


class ProposedChange(NamedTuple):
    """One change a branch proposes (``mnem diff A...B``) and the commit on that branch that made it."""

    change: NodeChange
    by: ChangedBy | None

    def to_dict(self) -> dict[str, Any]:
        """``NodeChange``'s shape plus ``"by"``: that commit's ``{commit, author, message, time}`` (or null)."""
        return {**self.change.to_dict(), "by": self.by.to_dict() if self.by is not None else None}


class Proposal(NamedTuple):
    """What merging ``tip`` would propose: its changes since ``base``, the merge base, in node-id order."""

    tip: bytes
    base: bytes
    changes: list[ProposedChange]


class Bisected(NamedTuple):
    """The first commit where a predicate holds, its message, and the blame of the node there."""

    commit: bytes
    message: str
    blame: Blame | None


class TimelineEntry(NamedTuple):
    """One change of a node: the chain's commit, the commit that wrote the value, and the values on each side."""

    commit: bytes
    commit_obj: Commit
    origin: bytes
    origin_obj: Commit
    kind: str
    value: MemoryNode | None
    previous: MemoryNode | None


class Timeline(NamedTuple):
    """A page of a node's history, newest first, and the commit the next page starts at (None: no more)."""

    entries: list[TimelineEntry]
    next: bytes | None


class ChangePage(NamedTuple):
    """A page of what one commit changed against its first parent, with both values of each node loaded."""

    commit: bytes
    commit_obj: Commit
    total: int
    changes: list[NodeChange]


def node_changes(repo: Repo, old: Nodes, new: Nodes) -> list[NodeChange]:
    return [NodeChange(c.id, c.kind, load_node(repo, c.old), load_node(repo, c.new)) for c in diff_nodes(old, new)]


# ----------------------------------------------------------------------- reading
def holds_checkpoints(repo: Repo) -> bool:
    """Whether any commit of this store ever wrote a LangGraph checkpoint's node, on any branch (one index probe)."""
    from mnem_ids.checkpoints import CHECKPOINT_PREFIX

    with repo.backend.read():
        return repo.ever_named_under(CHECKPOINT_PREFIX)


def log(
    repo: Repo, *, first_parent: bool = False, limit: int | None = None, rev: str | None = None,
    touching: Sequence[str] = (), threads: Sequence[str] = (), since: int | None = None, until: int | None = None,
    every: bool = False,
) -> list[tuple[bytes, Commit]]:
    """History from ``rev`` (default HEAD), or with ``every`` from every branch and HEAD, newest first, in one read.

    The order is ``Repo.log``'s graph order.  With ``touching`` or
    ``threads`` only some commits are listed, decided from each commit's
    change rows (its change set against its first parent), so no state is
    loaded: a commit is listed when it changed a node under one of the
    ``touching`` prefixes (``git log -- PATH``), or, for each of
    ``threads``, when it changed one of that thread's checkpoint nodes or
    no checkpoint node at all (a memory commit).  The filters add up: a
    commit that passes one is listed.  ``since`` / ``until`` (Unix ms,
    inclusive) narrow that to the commits dated in the range.

    ``every`` (``mnem ui``'s history of all branches) lists each commit
    reachable from a branch or from HEAD once.  ``Repo.log`` orders every
    commit by one key (corrected time, then id, descending), whatever the
    walk's start, so the first ``limit`` of the union are among the first
    ``limit`` of each tip's own walk: merging those walks by that key is
    the walk from every tip at once, and the filters drop commits from every
    walk alike.
    """
    keep = None
    if touching or threads:
        from mnem_ids.checkpoints import CHECKPOINT_PREFIX, thread_prefix

        prefixes = tuple(touching) + tuple(thread_prefix(thread) for thread in threads)

        def keep(raw: bytes) -> bool:
            changed = repo.changes_of(raw)
            if any(node_id.startswith(prefixes) for node_id in changed):
                return True
            return bool(threads) and not any(node_id.startswith(CHECKPOINT_PREFIX) for node_id in changed)

    with repo.backend.read():
        head = repo.head_commit()
        if not every:
            return repo.log(repo.resolve(rev) if rev is not None else head,
                            first_parent=first_parent, limit=limit, keep=keep, since=since, until=until)
        tips = {tip for _, tip in repo.branches()} | ({head} if head is not None else set())
        found = {raw: commit for tip in tips
                 for raw, commit in repo.log(tip, first_parent=first_parent, limit=limit, keep=keep, since=since,
                                             until=until)}
        order = sorted(found, key=lambda raw: (repo.corrected_time(found[raw]), raw), reverse=True)
        return [(raw, found[raw]) for raw in order[:limit]]


def threads_of(repo: Repo, commits: Sequence[bytes]) -> dict[bytes, list[str]]:
    """The LangGraph threads whose checkpoint nodes each commit changed, in order of first appearance, in one read.

    Read from the commits' change rows, so no state is loaded; a memory
    commit has ``[]``.  ``mnem ui``'s history tells by it what the graph did
    from what the agent learnt.
    """
    from mnem_ids.checkpoints import thread_of

    with repo.backend.read():
        return {raw: list(dict.fromkeys(thread for node_id in repo.changes_of(raw)
                                        if (thread := thread_of(node_id)) is not None))
                for raw in commits}


def pushes_of(repo: Repo, commits: Collection[bytes]) -> dict[bytes, Push]:
    """Who pushed each of ``commits`` into this store and when, for those a push brought (one read).

    A read of its own, after the one that listed the commits: a push record
    is written in the transaction that writes its commits and never changes,
    so every commit that read saw has its record in this one.
    """
    if not commits:
        return {}
    with repo.backend.read():
        return repo.backend.pushes.of(commits)


def changes(repo: Repo, rev: str, offset: int = 0, limit: int | None = None) -> ChangePage:
    """What commit ``rev`` changed against its first parent, ``limit`` nodes from ``offset`` in node-id order.

    Each node's value before and after is looked up alone, so a page costs
    its own nodes even when the commit changed thousands (an import).
    """
    with repo.backend.read():
        raw = repo.resolve(rev)
        commit_obj = repo.commit_obj(raw)
        changed = repo.changes_of(raw)
        picked = sorted(changed)[offset:None if limit is None else offset + limit]
        parent = commit_obj.parents[0] if commit_obj.parents else None
        found = []
        for node_id in picked:
            old, new = repo.node_at(parent, node_id), repo.node_at(raw, node_id)
            found.append(NodeChange(node_id, changed[node_id], load_node(repo, old), load_node(repo, new)))
        return ChangePage(raw, commit_obj, len(changed), found)


def timeline(repo: Repo, node_id: str, at: str | None = None, *, limit: int) -> Timeline:
    """Up to ``limit`` changes of a node on the first-parent history of ``at`` (default HEAD's commit), newest first.

    See ``mnem_store.timeline``: the cost follows the node's changes, not the history's length.
    """
    from ..timeline import steps

    with repo.backend.read():
        start = repo.resolve(at) if at is not None else repo.head_commit()
        if start is None:
            return Timeline([], None)
        found, onward = steps(repo, node_id, start, limit)
        return Timeline([_entry(repo, step) for step in found], onward)


def _entry(repo: Repo, step: Step) -> TimelineEntry:
    return TimelineEntry(step.commit, repo.commit_obj(step.commit), step.origin, repo.commit_obj(step.origin),
                         step.kind, load_node(repo, step.value), load_node(repo, step.previous))


def diff(repo: Repo, old: str | None = None, new: str | None = None) -> list[NodeChange]:
    """From ``old`` (default HEAD's commit) to ``new`` (default working memory)."""
    with repo.backend.read():
        before = repo.commit_nodes(repo.resolve(old) if old is not None else repo.head_commit())
        after = repo.commit_nodes(repo.resolve(new)) if new is not None else repo.working_nodes()
        return node_changes(repo, before, after)


def diff_proposed(repo: Repo, into: str, branch: str) -> Proposal:
    """``mnem diff INTO...BRANCH``: what merging ``branch`` into ``into`` would propose, and who proposed it.

    ``branch``'s memory against its merge base with ``into`` (``into``'s own changes since are left out),
    each change with the commit on ``branch``'s side that made it (``mnem_store.review``), read in one
    snapshot so the base, the states and the commits agree.

    Raises:
        InvalidRefError: A revision names no commit, or the two have no single merge base.
    """
    from ..graph import Graph
    from ..review import changed_by, review_base

    with repo.backend.read():
        ours, theirs = repo.resolve(into), repo.resolve(branch)
        graph = Graph(repo)
        base = review_base(graph, ours, theirs, (into, branch))
        after = repo.commit_nodes(theirs)
        changes = node_changes(repo, repo.commit_nodes(base), after)
        by = changed_by(repo, graph, theirs, base, {change.id: after.get(change.id) for change in changes})
        return Proposal(theirs, base, [ProposedChange(change, by[change.id]) for change in changes])


def blame(repo: Repo, node_id: str, at: str | None = None) -> tuple[Blame, Commit]:
    """The commit and provenance behind a node's value, and that commit (its message, its author)."""
    from ..blame import blame as blame_node

    with repo.backend.read():
        found = blame_node(repo, node_id, at)
        return found, repo.commit_obj(found.commit)


def blame_many(repo: Repo, node_ids: Sequence[str], at: str | None = None) -> dict[str, tuple[Blame, Commit]]:
    """Blame each of ``node_ids`` as of ``at`` (default HEAD's commit) in one snapshot, with the commits found.

    Ids absent there are left out.  Each blame is blame's own probes (one
    shared ``Graph``), so a page of facts costs the page, not the history.
    """
    from ..blame import find_blame
    from ..graph import Graph

    with repo.backend.read():
        start = repo.resolve(at) if at is not None else repo.head_commit()
        if start is None:
            return {}
        graph = Graph(repo)
        found = {}
        for node_id in node_ids:
            blamed = find_blame(repo, node_id, start, graph)
            if blamed is not None:
                found[node_id] = (blamed, graph.commit(blamed.commit))
        return found


def bisect(repo: Repo, node_id: str, predicate: Predicate, *, bad: str | None = None,
           good: str | None = None, include_root: bool = False) -> Bisected:
    """The first commit on ``bad``'s first-parent chain where ``predicate`` holds, explained by a blame.

    ``include_root`` (with no ``good``) lets the chain's root be the answer (``mnem bisect --include-root``).
    """
    from ..bisect import bisect as bisect_commit
    from ..blame import find_blame

    with repo.backend.read():
        boundary = bisect_commit(repo, predicate, bad=bad, good=good, include_root=include_root)
        return Bisected(boundary, repo.commit_obj(boundary).message, find_blame(repo, node_id, boundary))
