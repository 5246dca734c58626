"""``mnem gc``'s walk: which commits anything still reaches, so that the store can drop the rest.

A commit is kept when a branch, HEAD (attached or detached) or a remote's
tracking branch reaches it through parent links, every parent of a merge
included; what the kept commits need (their states, the node objects their
change rows set) is kept with them, and so are staged objects and every
redacted object with its record (``Collector.drop``).  Nothing else reaches
a row: a deleted branch's commits, a replay that was thrown away, an
object a failed import left behind.

The walk reads every commit object once, in one statement, and follows
the parents each one names: at a hundred thousand commits that is about
0.3 s of decoding, where asking for one commit at a time would be a
statement (on PostgreSQL a round trip) each.  A root or a parent the
store does not hold stops the walk with ``corrupt_store`` before anything
is dropped: a store that does not verify is not one to drop rows from.
Runs inside the caller's transaction: ``porcelain.gc`` holds every other
writer off meanwhile (``Backend.exclusive``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .backend import Dropped
from .errors import CorruptStoreError
from .objects import Commit, decode_object

if TYPE_CHECKING:
    from .repo import Repo

__all__ = ["collect", "roots"]


def roots(repo: Repo) -> dict[bytes, str]:
    """The commits the store starts from, each with what names it (the first name, for a message)."""
    named: dict[bytes, str] = {}
    head = repo.head()
    if head.commit is not None:
        named[head.commit] = "HEAD"
    for name, tip in repo.branches():
        named.setdefault(tip, f'branch "{name}"')
    for remote in repo.remotes().values():
        for name, tip in remote.tracking():
            named.setdefault(tip, f'tracking branch "{name}"')
    return named


def collect(repo: Repo, *, dry_run: bool) -> Dropped:
    """Drop (or, with ``dry_run``, count) every commit no root reaches and every object no kept row needs.

    Raises:
        CorruptStoreError: A root or a parent is not a commit the store holds; nothing was dropped.
    """
    graph = {raw: (key, data) for key, raw, data in repo.backend.collector.commits()}
    keep: set[int] = set()
    stack = [(raw, f"{name} points at") for raw, name in roots(repo).items()]
    while stack:
        raw, why = stack.pop()
        found = graph.get(raw)
        if found is None:
            raise CorruptStoreError(f"{why} {raw.hex()}, which is not a commit of this store; nothing was dropped: "
                                    "run `mnem verify` to see the damage")
        key, data = found
        if key in keep:
            continue
        keep.add(key)
        commit = decode_object(data) if data is not None else None
        if not isinstance(commit, Commit):
            raise CorruptStoreError(f"commit {raw.hex()} cannot be read; nothing was dropped: run `mnem verify`")
        stack.extend((parent, f"commit {raw.hex()} names the parent") for parent in commit.parents)
    return repo.backend.collector.drop(keep, dry_run=dry_run)
