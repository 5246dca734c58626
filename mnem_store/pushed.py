"""Who pushed a commit into this store, beside who authored it: recorded with the push, shown where they differ.

A commit's author is part of its bytes, written by whoever made the
commit, anywhere; a push carries commits made anywhere.  The server that
takes a push knows who sent it (``mnem receive-pack``'s ``pusher``: the
token's subject at a ``mnem-mcp`` server), so it records that name and the
time, in the transaction that takes the push (``record``), beside the
history (``Backend.pushes``) and never in a commit or an id.  Reads show it
where it tells something the author does not: ``pushed_by`` and
``pushed_at`` beside a commit's ``author`` when the pusher is someone else
(``shown``).  A server can also take only commits their pusher authored
(``refuse_foreign``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .backend import Push
from .canonical import hex_id
from .clock import now_ms
from .errors import CommandError
from .objects import Commit
from .repo import Repo

__all__ = ["record", "refuse_foreign", "shown", "shown_all"]


def refuse_foreign(repo: Repo, pusher: str, commits: Iterable[bytes]) -> None:
    """Refuse a push that brings a commit its pusher did not author (inside the push's write: nothing is kept).

    Args:
        repo: The receiving store, the pack's commits written in the open transaction.
        pusher: Who sent the push.
        commits: The commits the push brought (those the store did not hold before it).

    Raises:
        CommandError: ``invalid_ref``, naming the first such commit, its author and the pusher.
    """
    for raw in commits:
        author = repo.commit_obj(raw).author
        if author != pusher:
            raise CommandError(
                f"push refused: commit {hex_id(raw)} is authored by {author!r}, and this store takes only commits "
                f"authored by their pusher, {pusher!r}: push commits you made yourself (merge or rewrite the others "
                "first), or have their author push them; nothing was written", "invalid_ref")


def record(repo: Repo, pusher: str, branch: str, old: bytes | None, new: bytes, commits: Iterable[bytes]) -> None:
    """Record who pushed a branch move and the commits it brought, now (inside the push's write transaction).

    Args:
        repo: The receiving store.
        pusher: Who sent the push.
        branch: The branch it moved.
        old: Where the branch was (None: it was created).
        new: Where it is now.
        commits: The commits the push brought.
    """
    repo.backend.pushes.record(Push(pusher, now_ms()), branch, old, new, commits)


def shown(commit: Commit, push: Push | None) -> dict[str, Any]:
    """What a commit's JSON adds about its push: ``pushed_by`` and ``pushed_at`` when another than its author pushed it.

    Args:
        commit: The commit.
        push: The push that brought it, if one did.

    Returns:
        ``{"pushed_by", "pushed_at"}``, or ``{}`` when no push brought it or its author pushed it.
    """
    if push is None or push.pusher == commit.author:
        return {}
    return {"pushed_by": push.pusher, "pushed_at": push.at}


def shown_all(commits: Iterable[tuple[bytes, Commit]], pushes: Mapping[bytes, Push]) -> list[dict[str, Any]]:
    """Each commit's JSON (``Commit.to_dict``) with what ``shown`` adds."""
    return [{**commit.to_dict(raw), **shown(commit, pushes.get(raw))} for raw, commit in commits]
