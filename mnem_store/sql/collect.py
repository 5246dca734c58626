"""Garbage collection over the store's tables: the commits to walk, and dropping what the kept ones do not need.

Which rows a set of commits needs follows from where a state lives
(``states``): a commit's state is its first-parent chain's change rows, and
every commit of that chain is kept with it (a kept set is closed under
parents), so the node objects the kept commits need are exactly those their
own change rows set, and the states they need their own.  Kept besides:
staged objects and redacted ones (a record names its object, and records
are never dropped).

The sets are computed here, in Python, from one read of each table, and
dropped by key lists (``Session.keys_table``), never by ``NOT IN`` over a
subquery: PostgreSQL plans that as a scan of the subquery per row once it
outgrows ``work_mem``, quadratic at a hundred thousand commits.  What
hangs off dropped rows is matched by ``NOT EXISTS`` over an indexed column,
which both engines answer with one probe per row.
"""

from __future__ import annotations

from collections.abc import Collection

from ..backend import KIND_CODES, Collector, Dropped
from .objects import unpack
from .session import Session

__all__ = ["SqlCollector"]

#: Rows whose owner is gone, each matched through an index: vectors and pushed-commit rows of dropped objects,
#: node names no change row uses, leases of branches that no longer exist.
_ORPHANS = (
    "DELETE FROM vectors WHERE NOT EXISTS (SELECT 1 FROM objects o WHERE o.id = vectors.object)",
    "DELETE FROM pushed_commits WHERE NOT EXISTS (SELECT 1 FROM objects o WHERE o.id = pushed_commits.commit_id)",
    "DELETE FROM names WHERE NOT EXISTS (SELECT 1 FROM changes ch WHERE ch.name = names.key)",
    "DELETE FROM leases WHERE NOT EXISTS (SELECT 1 FROM refs r WHERE r.name = leases.branch)",
)


class SqlCollector(Collector):
    """``Collector`` over one ``Session``."""

    def __init__(self, db: Session) -> None:
        self.db = db

    def commits(self) -> list[tuple[int, bytes, bytes | None]]:
        """Every commit object, in one statement."""
        rows = self.db.execute("SELECT key, id, data FROM objects WHERE kind = ?", (KIND_CODES["commit"],)).fetchall()
        return [(key, bytes(raw), None if data is None else unpack(data)) for key, raw, data in rows]

    def drop(self, keep: Collection[int], *, dry_run: bool) -> Dropped:
        """See ``Collector.drop``."""
        db = self.db
        kept = set(keep)
        graph = db.execute("SELECT key, state, lane FROM commits").fetchall()
        needed = set(kept)
        needed.update(state for key, state, _ in graph if key in kept)
        needed.update(
            obj for commit_key, obj in db.execute("SELECT commit_key, object FROM changes WHERE object IS NOT NULL")
            if commit_key in kept
        )
        for table in ("staging", "redactions"):
            found = db.execute(f"SELECT o.key FROM {table} x JOIN objects o ON o.id = x.object")
            needed.update(key for (key,) in found)
        commits = [key for key, _, _ in graph if key not in kept]
        objects = [key for (key,) in db.execute("SELECT key FROM objects") if key not in needed]
        if not dry_run and (commits or objects):
            self._delete("changes", "commit_key", commits)
            self._delete("commits", "key", commits)
            self._delete("objects", "key", objects)
            self._relane({key: lane for key, _, lane in graph if key in kept})
            for statement in _ORPHANS:
                db.execute(statement)
            db.rebuild()
        return Dropped(len(commits), len(objects), len(kept))

    def _delete(self, table: str, column: str, keys: list[int]) -> None:
        """Delete the rows of ``table`` whose ``column`` is one of ``keys``, in one statement."""
        if keys:
            found, param = self.db.keys_table(keys)
            self.db.execute(f"DELETE FROM {table} WHERE {column} IN (SELECT j.value FROM {found})", (param,))

    def _relane(self, lanes: dict[int, int]) -> None:
        """Drop the lanes no kept commit is in; a lane that lost its head is headed by its newest kept commit.

        A lane is a chain named by its first commit's key, and what is kept
        of it is a prefix of the chain (a kept commit's ancestors are kept),
        so the lane lives on exactly when its first commit does, and its
        newest kept commit is the one with the largest key.
        """
        db = self.db
        newest: dict[int, int] = {}
        for key, lane in lanes.items():
            newest[lane] = max(key, newest.get(lane, key))
        rows = db.execute("SELECT lane, head FROM lanes").fetchall()
        self._delete("lanes", "lane", [lane for lane, _ in rows if lane not in newest])
        moved = [(newest[lane], lane) for lane, head in rows if lane in newest and head not in lanes]
        if moved:
            db.executemany("UPDATE lanes SET head = ? WHERE lane = ?", moved)
