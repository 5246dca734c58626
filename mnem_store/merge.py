"""Merging two lines of memory: upstream's stateless, per-node three-way merge.

The pure part (``merge_states``, ``resolve_conflicts``) works on state maps
of object ids, so it can be property-tested without a store.  ``merge``
runs the whole decision and, when it records anything, records it inside
one write transaction that also compare-and-swaps the branch; a merge that
still has unresolved conflicts writes nothing at all (there is no
MERGE_HEAD: the caller merges again with fuller resolutions).  ``preview``
is the same decision in a read snapshot, for ``--dry-run``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NamedTuple, get_args

from .errors import InvalidRefError, rust_debug
from .graph import Graph
from .objects import MemoryNode, encode_object
from .repo import Nodes, Repo

__all__ = [
    "SIDES",
    "STRATEGIES",
    "Conflict",
    "MergeResult",
    "Resolution",
    "Side",
    "StateMerge",
    "Strategy",
    "merge",
    "merge_states",
    "preview",
    "resolve_conflicts",
]

ConflictKind = Literal["edit/edit", "delete/edit", "edit/delete", "add/add"]
Side = Literal["ours", "theirs", "base", "delete"]
Strategy = Literal["ours", "theirs"]
#: A side to take, or a node to store under the conflict's id (the SDK's ``Set``).
Resolution = Side | MemoryNode
Status = Literal["up-to-date", "fast-forwarded", "merged", "conflicts"]

SIDES: tuple[Side, ...] = get_args(Side)
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)


class Conflict(NamedTuple):
    """One node both sides changed differently; object ids, ``None`` where absent."""

    id: str
    kind: ConflictKind
    base: bytes | None
    ours: bytes | None
    theirs: bytes | None


class StateMerge(NamedTuple):
    """The clean part of a three-way merge, and the conflicts left out of it."""

    nodes: Nodes
    conflicts: tuple[Conflict, ...]


class MergeResult(NamedTuple):
    """What a merge did (or, for a preview, would do).

    ``commit`` is the fast-forward target or the new merge commit, else
    ``None``.  ``branch`` and ``ours`` (the tip before, ``None`` when the
    branch was unborn) are what the CLI needs to describe the outcome.
    """

    status: Status
    commit: bytes | None
    conflicts: tuple[Conflict, ...]
    branch: str
    ours: bytes | None


def _conflict_kind(b: bytes | None, o: bytes | None, t: bytes | None) -> ConflictKind:
    if b is None:
        return "add/add"
    if o is None:
        return "delete/edit"
    if t is None:
        return "edit/delete"
    return "edit/edit"


def merge_states(base: Nodes, ours: Nodes, theirs: Nodes) -> StateMerge:
    """Upstream's per-node rule, on object ids, in node-id order.

    Same on both sides -> keep it; only theirs moved -> take theirs; only
    ours moved -> keep ours; otherwise a conflict (left out of ``nodes``).
    "Absent" is a value like any other, so deletions and adds follow the
    same rule.
    """
    nodes: Nodes = {}
    conflicts: list[Conflict] = []
    for node_id in sorted(base.keys() | ours.keys() | theirs.keys()):
        b, o, t = base.get(node_id), ours.get(node_id), theirs.get(node_id)
        if o == t:
            chosen = o
        elif b == o:
            chosen = t
        elif b == t:
            chosen = o
        else:
            conflicts.append(Conflict(node_id, _conflict_kind(b, o, t), b, o, t))
            continue
        if chosen is not None:
            nodes[node_id] = chosen
    return StateMerge(nodes, tuple(conflicts))


def _apply(conflict: Conflict, resolution: Resolution) -> tuple[bytes | None, MemoryNode | None]:
    """The object id a resolution puts under the conflict's id, and a new node to store if any."""
    if isinstance(resolution, MemoryNode):
        return encode_object(resolution)[0], resolution
    if resolution == "ours":
        return conflict.ours, None
    if resolution == "theirs":
        return conflict.theirs, None
    if resolution == "base":
        if conflict.kind == "add/add":
            raise InvalidRefError(f"cannot resolve {rust_debug(conflict.id)} to base: an add/add conflict has no base")
        return conflict.base, None
    return None, None


def resolve_conflicts(
    state: StateMerge, resolutions: Mapping[str, Resolution], strategy: Strategy | None
) -> tuple[Nodes, tuple[Conflict, ...], list[MemoryNode]]:
    """Apply explicit resolutions, then the strategy, to a three-way result.

    Returns the merged state map, the conflicts still unresolved, and the
    new nodes a ``Set`` resolution needs stored.  A resolution naming an id
    that is not a conflict is refused, so a stale resolution never silently
    overrides a clean merge.
    """
    conflict_ids = {c.id for c in state.conflicts}
    stale = sorted(node_id for node_id in resolutions if node_id not in conflict_ids)
    if stale:
        raise InvalidRefError(f"resolution given for {rust_debug(stale[0])}, which is not a conflict")
    nodes = dict(state.nodes)
    unresolved: list[Conflict] = []
    new_nodes: list[MemoryNode] = []
    for conflict in state.conflicts:
        resolution = resolutions.get(conflict.id, strategy)
        if resolution is None:
            unresolved.append(conflict)
            continue
        chosen, new_node = _apply(conflict, resolution)
        if new_node is not None:
            new_nodes.append(new_node)
        if chosen is not None:
            nodes[conflict.id] = chosen
    return dict(sorted(nodes.items())), tuple(unresolved), new_nodes


class _Plan(NamedTuple):
    """The decision before anything is written: where the branch is, and what kind of merge this is."""

    branch: str
    ours: bytes | None
    theirs: bytes
    status: Status
    state: StateMerge | None


def _plan(repo: Repo, branch: str, theirs_spec: str) -> _Plan:
    theirs = repo.resolve(theirs_spec)
    ours = repo.branch_tip(branch)
    if ours is None:
        return _Plan(branch, None, theirs, "fast-forwarded", None)
    graph = Graph(repo)
    if graph.is_ancestor(theirs, ours):
        return _Plan(branch, ours, theirs, "up-to-date", None)
    if graph.is_ancestor(ours, theirs):
        return _Plan(branch, ours, theirs, "fast-forwarded", None)
    base = graph.merge_base(ours, theirs)
    state = merge_states(graph.nodes(base), graph.nodes(ours), graph.nodes(theirs))
    return _Plan(branch, ours, theirs, "merged", state)


def preview(repo: Repo, theirs_spec: str) -> MergeResult:
    """What ``merge`` would do with no resolutions, writing nothing (``--dry-run``).

    A dirty index is ignored, as upstream's preview does; ``commit`` is the
    fast-forward target, otherwise ``None``.
    """
    plan = _plan(repo, repo.attached_branch("merge"), theirs_spec)
    if plan.state is None:
        commit = plan.theirs if plan.status == "fast-forwarded" else None
        return MergeResult(plan.status, commit, (), plan.branch, plan.ours)
    status: Status = "conflicts" if plan.state.conflicts else "merged"
    return MergeResult(status, None, plan.state.conflicts, plan.branch, plan.ours)


def merge(
    repo: Repo,
    theirs_spec: str,
    *,
    resolutions: Mapping[str, Resolution] | None = None,
    strategy: Strategy | None = None,
    message: str | None = None,
    author: str,
    time_ms: int | None,
) -> MergeResult:
    """Merge ``theirs_spec`` into the current branch, inside the caller's write transaction.

    ``time_ms`` None dates a merge commit now, never before a parent.
    Preconditions (attached HEAD, clean index) and the decision are taken
    inside the same transaction as the write, so the ref compare-and-swap
    cannot lose to a concurrent writer between the two.
    """
    branch = repo.attached_branch("merge")
    if repo.is_dirty():
        raise InvalidRefError("cannot merge with a dirty index; commit or unstage first")
    plan = _plan(repo, branch, theirs_spec)
    if plan.status == "up-to-date":
        return MergeResult("up-to-date", None, (), branch, plan.ours)
    if plan.state is None:
        repo.move_branch(branch, plan.ours, plan.theirs)
        return MergeResult("fast-forwarded", plan.theirs, (), branch, plan.ours)
    assert plan.ours is not None  # only a born branch reaches a three-way merge
    nodes, unresolved, new_nodes = resolve_conflicts(plan.state, resolutions or {}, strategy)
    if unresolved:
        return MergeResult("conflicts", None, unresolved, branch, plan.ours)
    for node in new_nodes:
        repo.put(node)
    message = message if message is not None else f"merge {theirs_spec} into {branch}"
    commit = repo.write_commit(branch, (plan.ours, plan.theirs), nodes, message, author, time_ms, plan.ours)
    return MergeResult("merged", commit, (), branch, plan.ours)
