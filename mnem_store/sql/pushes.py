"""The ``pushes`` and ``pushed_commits`` tables: who pushed what into the store, beside the history.

A ``pushes`` row is one branch move a push made (``mnem receive-pack``):
the pusher (UTF-8 bytes, so any name a token carries fits PostgreSQL too),
the time in Unix ms, the branch, and its old and new tip.  A
``pushed_commits`` row names a commit that push brought into the store.
Nothing in a commit refers to them: they are written in the transaction
that takes the push, and only read.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..backend import Push, Pushes
from .leases import in_list
from .session import Session

__all__ = ["SqlPushes"]


class SqlPushes(Pushes):
    """Pushes as rows of two tables, over one ``Session``."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def record(self, push: Push, branch: str, old: bytes | None, new: bytes, commits: Iterable[bytes]) -> None:
        """Insert the push's row, then one row per commit it brought (a commit keeps the first push that brought it)."""
        db = self.session
        key = db.execute(
            "INSERT INTO pushes (pusher, at, branch, old, new) VALUES (?, ?, ?, ?, ?) RETURNING push",
            (push.pusher.encode(), push.at, branch, old, new),
        ).fetchone()[0]
        db.executemany("INSERT INTO pushed_commits (commit_id, push) VALUES (?, ?) ON CONFLICT DO NOTHING",
                       [(raw, key) for raw in commits])

    def of(self, commits: Iterable[bytes]) -> dict[bytes, Push]:
        """The push of each commit a push brought, a bounded ``IN`` list per statement.

        Where the memo outlives reads, whether the store holds any push is
        learnt once and remembered: most stores were never pushed to, and a
        ``log`` then asks nothing more.
        """
        db = self.session
        if not db.writing and not self._any():
            return {}
        found: dict[bytes, Push] = {}
        for marks, chunk in in_list(list(commits)):
            for raw, pusher, at in db.execute(
                f"SELECT c.commit_id, p.pusher, p.at FROM pushed_commits c JOIN pushes p ON p.push = c.push "
                f"WHERE c.commit_id IN ({marks})", chunk,
            ):
                found[bytes(raw)] = Push(bytes(pusher).decode(), at)
        return found

    def _any(self) -> bool:
        """Whether the store holds any push (remembered for the reads that follow, while nothing changes)."""
        found: bool | None = self.session.memo.get("pushed")
        if found is None:
            found = self.session.memo["pushed"] = self.session.execute(
                "SELECT 1 FROM pushed_commits LIMIT 1").fetchone() is not None
        return found
