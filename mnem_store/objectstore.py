"""The ``objects`` table: content-addressed objects behind small integer keys.

Every object keeps its 32-byte id, but the other tables refer to it by the
row's integer key: a change row or a graph row then costs a few bytes per
reference instead of 32, which is most of what makes a commit's storage
proportional to its change.  A state's ``data`` may be NULL: that state is
*virtual*, its bytes rebuilt from the commit graph on demand (``states``).
"""

from __future__ import annotations

import sqlite3

from .db import KIND_CODES, Database
from .errors import CorruptStoreError

__all__ = ["ObjectStore", "ObjectRow"]

#: ``(key, kind code, data or None)`` of one stored object.
ObjectRow = tuple[int, int, bytes | None]

_STATE = KIND_CODES["state"]


class ObjectStore:
    """Key and id lookups plus idempotent inserts over the ``objects`` table."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def row(self, raw: bytes) -> ObjectRow | None:
        return self.db.conn.execute("SELECT key, kind, data FROM objects WHERE id = ?", (raw,)).fetchone()

    def key(self, raw: bytes) -> int | None:
        row = self.db.conn.execute("SELECT key FROM objects WHERE id = ?", (raw,)).fetchone()
        return row[0] if row else None

    def id_of(self, key: int) -> bytes:
        row = self.db.conn.execute("SELECT id FROM objects WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise CorruptStoreError(f"object key {key} is referenced but not stored")
        return row[0]

    def insert(self, conn: sqlite3.Connection, raw: bytes, kind: str, data: bytes | None) -> int:
        """Store an object unless its id is already there; returns its key.

        Writing an existing id is a no-op, except that storing the bytes of
        a virtual state materialises it (the bytes are the ones its id names,
        so nothing a reader sees changes).
        """
        row = conn.execute("SELECT key, data FROM objects WHERE id = ?", (raw,)).fetchone()
        if row is None:
            cursor = conn.execute("INSERT INTO objects (id, kind, data) VALUES (?, ?, ?)", (raw, KIND_CODES[kind], data))
            return cursor.lastrowid  # type: ignore[return-value]
        key, stored = row
        if stored is None and data is not None:
            conn.execute("UPDATE objects SET data = ? WHERE key = ? AND kind = ?", (data, key, _STATE))
        return key
