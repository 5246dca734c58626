"""Leases: nodes that expire (LangGraph's TTL), kept beside history and removed by a commit.

A lease gives a node on one branch an expiry time (``Backend.leases``).
Once it has passed, live reads (``stamps --live``, ``ls --live``) leave the
node out at once, although the branch's commits still hold it; ``expire``
then records the removal of every expired node as one commit, so history
keeps the audit trail: the commit's message names the nodes and the TTL,
and ``show``/``diff`` of it list what went.

A lease changes only with the node's own writes: a ``write`` put that
carries a ``ttl`` (re)starts its lease from the commit's time, and any
other put or deletion of the node ends it (a value written without a TTL
does not expire).  ``touch`` restarts unexpired leases on read.  Leases
belong to the branch written: a branch made from another starts with none,
and a merge carries none over.
"""

from __future__ import annotations

from collections.abc import Mapping

from .clock import now_ms
from .errors import UsageError
from .objects import MemoryNode
from .repo import Repo

__all__ = ["expired_present", "live_leases", "record_leases", "refuse_rev"]


def record_leases(
    repo: Repo, puts: list[MemoryNode], deletes: list[str], ttls: Mapping[str, int], time_ms: int,
    *, branch: str | None = None,
) -> None:
    """Start the leases of ``ttls``'s puts at ``time_ms`` and end every other written node's (write transaction).

    The leases are those of ``branch``, the branch written (default HEAD's).
    """
    branch = branch or repo.attached_branch("commit")
    ended = [node.id for node in puts if node.id not in ttls] + deletes
    if ended:
        repo.backend.leases.drop(branch, ended)
    if ttls:
        repo.backend.leases.set(branch, [(node_id, time_ms + ttl, ttl) for node_id, ttl in ttls.items()])


def live_leases(repo: Repo, branch: str | None, ids: list[str] | None) -> dict[str, int | None]:
    """Leases of HEAD's ``branch`` among ``ids`` (None: all): expiry, or None for one that has run out.

    A detached HEAD (``branch`` None) reads a commit, not a branch, and no lease applies.
    """
    if branch is None:
        return {}
    now = now_ms()
    return {
        node_id: expires if expires > now else None for node_id, expires in repo.backend.leases.of(branch, ids).items()
    }


def expired_present(repo: Repo, branch: str, now: int) -> tuple[list[str], list[str]]:
    """``(expired node ids the branch tip holds, every expired lease)`` at ``now`` (inside a write)."""
    expired = repo.backend.leases.expired(branch, now)
    held = repo.commit_nodes(repo.branch_tip(branch))
    return [node_id for node_id in expired if node_id in held], expired


def refuse_rev(rev: str | None, command: str) -> None:
    """Leases belong to a branch: a live read of a given revision is refused rather than half-applied."""
    if rev is not None:
        raise UsageError(
            f"{command} --live reads HEAD's branch, whose leases decide what has expired; leave out the revision "
            "(or drop --live to read the revision as committed)"
        )
