"""Bisect: the first commit on a first-parent chain where a predicate about memory holds.

The predicate is assumed monotonic along the chain (false up to some commit,
true from it on) and is not checked beyond its two ends, as upstream does;
second parents are never descended, so a merge is one step.

Extension (``mnem bisect --include-root``): upstream searches (good, bad],
with good defaulting to the chain's root, so a predicate that already holds
at the root has no answer and is refused.  With ``include_root`` and no
``good``, the root itself is a candidate: when the predicate holds there
(and at bad), the root is the answer.  A search without it that fails
because the predicate already holds at the root it defaulted to says so,
and names the opt-in in each interface's terms (``INCLUDE_ROOT``): the
message is the one the CLI, the bridge and ``mnem-mcp``'s ``when_did`` show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .canonical import json_equal
from .errors import InvalidRefError
from .objects import MemoryNode
from .repo import Nodes, Repo

__all__ = ["INCLUDE_ROOT", "NodePredicate", "Predicate", "absent", "bisect", "content_equals", "present"]

#: A question about one memory state; gets the store to load node contents when it needs them.
Predicate = Callable[[Repo, Nodes], bool]

#: What a search that started after the root (good by default) adds when the predicate already holds there.
INCLUDE_ROOT = (
    "; the search starts after the line's first commit, which holds already, so it cannot be the answer unless "
    "you ask with include-root: `mnem bisect --include-root`, MCP `when_did` with `include_root: true`, "
    "`Store.bisect_explain(..., include_root=True)`"
)


@dataclass(frozen=True, slots=True)
class NodePredicate:
    """A predicate about one node, answered from that node's object id (None: absent).

    Bisect asks these one node at a time, never loading a whole state; as a
    plain ``Predicate`` over a state map they behave the same.
    """

    node_id: str
    test: Callable[[Repo, bytes | None], bool]

    def __call__(self, repo: Repo, nodes: Nodes) -> bool:
        """Answer as a plain ``Predicate``: look the node up in ``nodes`` and test its object id."""
        return self.test(repo, nodes.get(self.node_id))


def content_equals(node_id: str, value: Any) -> NodePredicate:
    """The node is present and its content equals ``value`` (type-aware: ``1`` is not ``1.0``).

    A redacted version equals no value (not even ``null``): what it held is unknown.
    """
    return NodePredicate(node_id, lambda repo, raw: raw is not None and _equals(repo.node(raw), value))


def _equals(node: MemoryNode, value: Any) -> bool:
    return node.redacted is None and json_equal(node.content, value)


def absent(node_id: str) -> NodePredicate:
    """The node is not in memory."""
    return NodePredicate(node_id, lambda repo, raw: raw is None)


def present(node_id: str) -> NodePredicate:
    """The node is in memory, whatever its content."""
    return NodePredicate(node_id, lambda repo, raw: raw is not None)


def bisect(
    repo: Repo, predicate: Predicate, *, bad: str | None = None, good: str | None = None, include_root: bool = False
) -> bytes:
    """The first commit in (good, bad] on bad's first-parent chain where ``predicate`` holds.

    ``bad`` defaults to HEAD's commit and ``good`` to the chain's root.  The
    ends are checked (good false, bad true) so a wrong guess is an error
    rather than a misleading answer; between them a binary search over the
    commits' keys asks O(log n) commits, each found by one indexed probe
    (``Repo.chain_at``), so the chain is never listed: listing it cost
    O(n), half a second at 100k commits.  A ``NodePredicate`` is asked one
    node per commit, so no state is loaded at all.  With ``include_root``
    and no ``good`` the search is [root, bad] instead: the root is the
    answer when the predicate already holds there.
    """
    include_root = include_root and good is None
    offer_root = good is None and not include_root  # a failure at the root it defaulted to names INCLUDE_ROOT
    bad_raw = repo.resolve(bad) if bad is not None else repo.head_commit()
    if bad_raw is None:
        raise InvalidRefError("cannot bisect: HEAD has no commit")
    if good is None:
        good_key, good_raw = repo.chain_at(bad_raw, None)
    else:
        good_raw = repo.resolve(good)
        good_key = repo.commit_key(good_raw)

    def holds(commit: bytes) -> bool:
        if isinstance(predicate, NodePredicate):
            return predicate.test(repo, repo.node_at(commit, predicate.node_id))
        return predicate(repo, repo.commit_nodes(commit))

    if include_root:
        if not holds(bad_raw):
            raise InvalidRefError(f"bisect: the predicate is false at bad ({bad_raw.hex()})")
        if holds(good_raw):
            return good_raw  # the root: nothing before it, so it is where the predicate first holds
    if good_raw == bad_raw:
        hint = INCLUDE_ROOT if offer_root and holds(good_raw) else ""
        raise InvalidRefError(f"bisect: good and bad are the same commit{hint}")
    if repo.chain_at(bad_raw, good_key)[0] != good_key:
        raise InvalidRefError(f"bisect: {good_raw.hex()} is not on {bad_raw.hex()}'s first-parent history")
    if holds(good_raw):
        hint = INCLUDE_ROOT if offer_root else ""
        raise InvalidRefError(f"bisect: the predicate is already true at good ({good_raw.hex()}){hint}")
    if not holds(bad_raw):
        raise InvalidRefError(f"bisect: the predicate is false at bad ({bad_raw.hex()})")
    # Keys order the chain (``Repo.chain_at``): search the keys between good's (false) and bad's (true), each
    # probe the chain's newest commit at or below the middle key, so the chain is never listed.
    lo, hi, found = good_key, repo.commit_key(bad_raw), bad_raw
    while hi - lo > 1:
        mid = lo + (hi - lo) // 2
        key, raw = repo.chain_at(bad_raw, mid)
        if key > lo and holds(raw):
            hi, found = key, raw
        else:  # the chain's commits up to mid are good's or false like it
            lo = mid
    return found
