"""The ``redactions`` table: node versions whose bytes were removed, and who removed them, when and why.

A row is ``(object id, node id, time in Unix ms, author, reason)``; the
author and reason are kept as UTF-8 bytes (as ``pushes`` keeps a pusher),
so any text a record carries fits PostgreSQL too.  Removing a version sets
its ``objects.data`` to NULL and drops its ``vectors`` rows in the same
statements: the object's row, id and key stay, so every state and change
row that names it still holds and every id still verifies.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..backend import KIND_CODES, Redaction, Redactions
from .leases import in_list
from .session import Session

__all__ = ["SqlRedactions"]

_NODE = KIND_CODES["memory_node"]


class SqlRedactions(Redactions):
    """Redaction records as rows of one table, over one ``Session``."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def remove(self, records: Iterable[Redaction]) -> list[Redaction]:
        """Record what is new, and NULL the bytes and drop the vectors of every object named (recorded or not).

        Bytes of an object recorded earlier are removed again should they be
        there (nothing writes them back, but a record means the bytes must go).
        """
        db = self.session
        wanted = {record.object: record for record in records}
        known = self.of(wanted)
        new = [record for raw, record in wanted.items() if raw not in known]
        db.executemany(
            "INSERT INTO redactions (object, node_id, at, author, reason) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (object) DO NOTHING",
            [(r.object, db.node_name(r.node_id), r.at, r.author.encode(), r.reason.encode()) for r in new],
        )
        changed = 0
        for marks, chunk in in_list(list(wanted)):
            changed += db.execute(
                f"UPDATE objects SET data = NULL WHERE kind = ? AND data IS NOT NULL AND id IN ({marks})",
                (_NODE, *chunk),
            ).rowcount
            changed += db.execute(f"DELETE FROM vectors WHERE object IN ({marks})", chunk).rowcount
        for raw in wanted:
            db.memo.pop(("object", raw), None)
        if changed or new:
            db.rebuild()  # every shelf may hold the value, its document or its vectors under the object's id
        return new

    def of(self, objects: Iterable[bytes]) -> dict[bytes, Redaction]:
        """Records of these objects, a bounded ``IN`` list per statement."""
        found: dict[bytes, Redaction] = {}
        for marks, chunk in in_list(list(objects)):
            for row in self.session.execute(
                f"SELECT object, node_id, at, author, reason FROM redactions WHERE object IN ({marks})", chunk
            ):
                record = self._record(row)
                found[record.object] = record
        return found

    def every(self) -> list[Redaction]:
        """Every record, oldest first, then by object id."""
        rows = self.session.execute(
            "SELECT object, node_id, at, author, reason FROM redactions ORDER BY at, object"
        ).fetchall()
        return [self._record(row) for row in rows]

    def forget_disproved(self, objects: Iterable[bytes]) -> None:
        """Delete the records of these objects, a bounded ``IN`` list per statement."""
        for marks, chunk in in_list(list(objects)):
            self.session.execute(f"DELETE FROM redactions WHERE object IN ({marks})", chunk)

    def count(self) -> int:
        """How many records there are (one indexed count)."""
        return int(self.session.execute("SELECT count(*) FROM redactions").fetchone()[0])

    def ids(self, low: bytes, high: bytes | None, after: bytes | None, limit: int) -> list[bytes]:
        """A page of the primary key, in the byte order both databases compare ``BLOB`` / ``BYTEA`` by."""
        start, strict = (after, ">") if after is not None and after >= low else (low, ">=")
        bound, args = ("", [start, limit]) if high is None else (" AND object < ?", [start, high, limit])
        rows = self.session.execute(
            f"SELECT object FROM redactions WHERE object {strict} ?{bound} ORDER BY object LIMIT ?", args
        ).fetchall()
        return [bytes(row[0]) for row in rows]

    def _record(self, row: tuple[bytes, object, int, bytes, bytes]) -> Redaction:
        raw, name, at, author, reason = row
        return Redaction(bytes(raw), self.session.node_id(name), at, bytes(author).decode(), bytes(reason).decode())
