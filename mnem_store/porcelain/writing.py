"""The writing verbs past staging: a batch write as one commit (with leases, vectors and erasure), and leases."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from ..clock import now_ms
from ..expiry import expired_present, record_leases
from ..limits import in_message
from ..objects import MemoryNode, encode_object
from ..repo import Repo, Written

if TYPE_CHECKING:
    from ..redaction import Redaction

__all__ = ["Erasing", "Expired", "Written", "embed", "expire", "touch", "write"]


class Expired(NamedTuple):
    """What ``expire`` did: the commit removing expired nodes (``written.commit`` None when none) and their ids."""

    written: Written
    removed: list[str]


class Erasing:
    """What a ``write`` also redacts from history (``mnem write --erase-deleted``), and, once it ran, what it did.

    Asked: every version of each id the write deletes, and of each node
    under ``prefix``, recorded as removed by ``author`` for ``reason``;
    ``rewrite`` False has PostgreSQL run a plain VACUUM instead of
    rewriting the tables after the commit (``Backend.erasing``).
    Done: ``records`` new to the store, and whether no file still holds the
    bytes (``complete``; if not, ``residue`` says what does, and the fix).
    A plain class, not a dataclass: ``dataclasses`` costs a one-shot read's
    start-up an import it never uses.
    """

    __slots__ = ("author", "complete", "prefix", "reason", "records", "residue", "rewrite")

    def __init__(self, reason: str, author: str, prefix: str | None = None, *, rewrite: bool = True) -> None:
        self.reason, self.author, self.prefix, self.rewrite = reason, author, prefix, rewrite
        self.records: list[Redaction] = []
        self.complete = False
        self.residue = "the write did not commit"


def write(
    repo: Repo, puts: list[MemoryNode], deletes: list[str], message: str, author: str, time_ms: int | None,
    *, skip_missing: bool = False, ttls: Mapping[str, int] | None = None,
    vectors: Sequence[tuple[str, MemoryNode, str, bytes]] = (), branch: str | None = None,
    if_absent: Collection[str] = (), erase: Erasing | None = None, orphan: bool = False,
) -> Written:
    """Apply puts and deletes to the branch tip as one commit, bypassing staging.

    In the same transaction, a put in ``ttls`` (node id -> ms) gets a lease
    expiring that long after the commit time, every other put and delete
    ends its lease (``mnem_store.expiry``), and ``vectors`` ``(model, node,
    field, float32 bytes)`` are stored for the nodes' objects.  ``branch``
    (default HEAD's) is the branch written, and the one whose leases change.
    A put whose id is in ``if_absent`` and is at the tip already is left out
    (``Repo.write``), its lease and vectors with it.  With ``erase``, the
    same transaction also redacts every version in history of each id of
    ``deletes`` (and under ``erase.prefix``), and is an erasing one
    (``Backend.erasing``): a crash leaves the write and its erasure both, or
    neither; ``erase`` then holds what was erased.  With ``orphan`` the
    commit has no parent (``Repo.write``).
    """
    if erase is None:
        with repo.backend.write():
            return _write(repo, puts, deletes, message, author, time_ms, skip_missing=skip_missing, ttls=ttls,
                          vectors=vectors, branch=branch, if_absent=if_absent, orphan=orphan)
    from ..redaction import erase as erase_versions

    with repo.backend.erasing(rewrite=erase.rewrite) as erasure:
        written = _write(repo, puts, deletes, message, author, time_ms, skip_missing=skip_missing, ttls=ttls,
                         vectors=vectors, branch=branch, if_absent=if_absent, orphan=orphan)
        erase.records = erase_versions(repo, deletes, erase.prefix, at=now_ms(), author=erase.author,
                                       reason=erase.reason)
    erase.complete, erase.residue = erasure.complete, erasure.residue
    return written


def _write(
    repo: Repo, puts: list[MemoryNode], deletes: list[str], message: str, author: str, time_ms: int | None,
    *, skip_missing: bool, ttls: Mapping[str, int] | None, vectors: Sequence[tuple[str, MemoryNode, str, bytes]],
    branch: str | None, if_absent: Collection[str], orphan: bool,
) -> Written:
    """``write``'s changes, inside the caller's write transaction."""
    written = repo.write(puts, deletes, message, author, time_ms, skip_missing=skip_missing, branch=branch,
                         if_absent=if_absent, orphan=orphan)
    if written.commit is not None:
        if if_absent:  # a put left out (its id was at the tip) starts, ends and stores nothing
            skipped = set(if_absent) - {change.id for change in written.changes}
            puts = [node for node in puts if node.id not in skipped]
            ttls = {node_id: ttl for node_id, ttl in (ttls or {}).items() if node_id not in skipped}
            vectors = [row for row in vectors if row[1].id not in skipped]
        record_leases(repo, puts, deletes, ttls or {}, written.commit[1].time, branch=branch)
        for model in {model for model, *_ in vectors}:
            repo.backend.vectors.add(model, [
                (encode_object(node)[0], path, vector) for name, node, path, vector in vectors if name == model
            ])
    return written


def touch(repo: Repo, ids: list[str]) -> dict[str, int]:
    """Restart the unexpired leases of ``ids`` on HEAD's branch now; returns their new expiry (``expiry``)."""
    with repo.backend.write():
        return repo.backend.leases.touch(repo.attached_branch("touch"), ids, now_ms())


def expire(repo: Repo, author: str, time_ms: int | None = None) -> Expired:
    """Remove the nodes whose lease on the branch has run out, as one commit, and forget every expired lease.

    No node to remove makes no commit.  The message names the nodes (the
    first three, each cut as ``limits.in_message`` cuts a long id, then how
    many more) so ``log`` says why they went.
    """
    with repo.backend.write():
        branch = repo.attached_branch("expire")
        now = time_ms if time_ms is not None else now_ms()
        gone, expired = expired_present(repo, branch, now)
        written = Written(None, [])
        if gone:
            shown = ", ".join(map(in_message, gone[:3])) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
            message = f"expire {shown} (TTL ran out)"
            written = repo.write([], gone, message, author, now)
        repo.backend.leases.drop(branch, expired)
        return Expired(written, gone)


def embed(repo: Repo, model: str, vectors: Mapping[str, Sequence[tuple[str, bytes]]], rev: str | None = None) -> int:
    """Store vectors for the values nodes hold at ``rev`` (default HEAD's commit), without a commit.

    What an adapter runs to (re)build its index, e.g. for a new embedding
    model: ``vectors`` maps node ids to ``(field, float32 bytes)`` pairs;
    ids absent at ``rev`` are skipped.  Returns how many nodes got vectors.
    """
    with repo.backend.write():
        start = repo.resolve(rev) if rev is not None else repo.head_commit()
        held = repo.commit_nodes(start)
        rows = [(held[node_id], field, vector) for node_id, pairs in vectors.items() if node_id in held
                for field, vector in pairs]
        repo.backend.vectors.add(model, rows)
        return len({node_id for node_id in vectors if node_id in held})
