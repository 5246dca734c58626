"""The ``leases`` table: when nodes on a branch expire (LangGraph's TTL), beside the history.

A row is ``(branch, node id, expires, ttl)``.  Nothing in a commit refers
to it, so it changes without a commit: ``mnem write`` sets or ends a put's
lease in the transaction that records the put, ``mnem touch`` restarts
leases on read, and ``mnem expire`` records the removal of expired nodes
as a commit and drops their rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..backend import Leases
from .session import Session

__all__ = ["SqlLeases", "in_list"]

#: Ids per statement: well under every engine's limit on parameters.
_CHUNK = 500


def in_list(values: list[Any]) -> Iterator[tuple[str, list[Any]]]:
    """``(placeholders, chunk)`` pairs covering ``values``, for ``IN (...)`` clauses of bounded size."""
    for start in range(0, len(values), _CHUNK):
        chunk = values[start : start + _CHUNK]
        yield ", ".join("?" * len(chunk)), chunk


class SqlLeases(Leases):
    """Leases as rows of one table, over one ``Session``."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def set(self, branch: str, rows: Iterable[tuple[str, int, int]]) -> None:
        """Upsert ``(node id, expires, ttl)`` rows."""
        db = self.session
        db.executemany(
            "INSERT INTO leases (branch, node_id, expires, ttl) VALUES (?, ?, ?, ?) ON CONFLICT (branch, node_id) "
            "DO UPDATE SET expires = excluded.expires, ttl = excluded.ttl",
            [(branch, db.node_name(node_id), expires, ttl) for node_id, expires, ttl in rows],
        )

    def drop(self, branch: str, ids: Iterable[str]) -> None:
        """Delete the rows of these ids."""
        db = self.session
        for marks, chunk in in_list([db.node_name(node_id) for node_id in ids]):
            db.execute(f"DELETE FROM leases WHERE branch = ? AND node_id IN ({marks})", (branch, *chunk))

    def of(self, branch: str, ids: Iterable[str] | None = None) -> dict[str, int]:
        """Expiry by node id, for the ids asked (or every row of the branch).

        Where the memo outlives reads, whether the branch has any
        lease is learnt once and remembered: most stores hold none, and a
        read of a few nodes then asks nothing.
        """
        db = self.session
        if not db.writing and not self._any(branch):
            return {}
        if ids is None:
            rows = db.execute("SELECT node_id, expires FROM leases WHERE branch = ?", (branch,)).fetchall()
        else:
            rows = []
            for marks, chunk in in_list([db.node_name(node_id) for node_id in ids]):
                rows += db.execute(
                    f"SELECT node_id, expires FROM leases WHERE branch = ? AND node_id IN ({marks})", (branch, *chunk)
                ).fetchall()
        return {db.node_id(name): expires for name, expires in rows}

    def _any(self, branch: str) -> bool:
        """Whether the branch has a lease (remembered for the reads that follow, while nothing changes)."""
        found: bool | None = self.session.memo.get(("leased", branch))
        if found is None:
            row = self.session.execute("SELECT 1 FROM leases WHERE branch = ? LIMIT 1", (branch,)).fetchone()
            found = self.session.memo["leased", branch] = row is not None
        return found

    def touch(self, branch: str, ids: Iterable[str], now: int) -> dict[str, int]:
        """Set ``expires = now + ttl`` on the unexpired rows among ``ids``."""
        db = self.session
        touched: dict[str, int] = {}
        for marks, chunk in in_list([db.node_name(node_id) for node_id in ids]):
            rows = db.execute(
                f"UPDATE leases SET expires = ? + ttl WHERE branch = ? AND expires > ? AND node_id IN ({marks}) "
                "RETURNING node_id, expires",
                (now, branch, now, *chunk),
            ).fetchall()
            touched.update((db.node_id(name), expires) for name, expires in rows)
        return touched

    def expired(self, branch: str, now: int) -> list[str]:
        """Ids whose ``expires`` is at or before ``now``."""
        db = self.session
        rows = db.execute("SELECT node_id FROM leases WHERE branch = ? AND expires <= ?", (branch, now)).fetchall()
        return sorted(db.node_id(row[0]) for row in rows)
