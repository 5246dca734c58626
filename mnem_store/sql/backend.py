"""The storage seam over SQL tables: refs, HEAD, staging and config beside the objects and change index.

``SqlBackend`` implements every ``Backend`` method that is a statement over
the store's tables; an engine's backend adds what is its own: opening and
creating a store, transactions, and how its failures map to the taxonomy.
Inside a write transaction, reading a branch tip or staging first takes
the session's lock on it (``Session.lock``), so that on an engine with
row-level concurrency a write computed from a tip is the only one moving
that tip until it commits.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..backend import Backend
from ..errors import CorruptStoreError
from ..layout import Head, parse_head
from .collect import SqlCollector
from .leases import SqlLeases
from .objects import SqlObjectStore
from .pushes import SqlPushes
from .redactions import SqlRedactions
from .session import Session
from .states import SqlStateStore
from .vectors import SqlVectors

__all__ = ["SqlBackend"]

#: The lock ``Session.lock`` takes before anything in staging is read or changed in a write.
_STAGING = "staging"

#: A branch's tip as a write reads it, with what the commit it builds next reads of the tip (its graph row,
#: then its object's kind and bytes): one statement where there were three, and one round trip to a server.
_TIP = """SELECT r.target, c.key, c.parent, c.state, s.id, c.corrected, c.since, x.kind, x.data
FROM refs r LEFT JOIN objects x ON x.id = r.target LEFT JOIN commits c ON c.key = x.key
LEFT JOIN objects s ON s.key = c.state WHERE r.name = ?"""


class SqlBackend(Backend):
    """Refs, HEAD, staging and config as rows, over one ``Session``."""

    objects: SqlObjectStore
    states: SqlStateStore

    def __init__(self, session: Session, location: str, *, read_only: bool) -> None:
        self.session = session
        self.location = location
        self.read_only = read_only
        self.objects = SqlObjectStore(session)
        self.states = SqlStateStore(session, self.objects)
        self.leases = SqlLeases(session)
        self.vectors = SqlVectors(session)
        self.pushes = SqlPushes(session)
        self.redactions = SqlRedactions(session)
        self.collector = SqlCollector(session)
        self.kept = session.kept

    @property
    def writing(self) -> bool:
        """Whether ``write()`` is open."""
        return self.session.writing

    # ------------------------------------------------------------------- meta
    def config_text(self) -> str:
        """The config row, written at creation."""
        text = self.session.meta("config")
        if text is None:
            raise CorruptStoreError("config is missing")
        return text

    def setting(self, key: str) -> str | None:
        """A ``meta`` row of the store's own (HEAD, config and the generation are rows of their own)."""
        return self.session.meta(f"setting:{key}")

    def set_setting(self, key: str, value: str) -> None:
        """Write a setting's ``meta`` row."""
        self.session.set_meta(f"setting:{key}", value)

    # -------------------------------------------------------------- HEAD, refs
    def head(self) -> Head:
        """HEAD from its ``meta`` row (remembered by a read: only a write moves it)."""
        if self.session.writing:
            return self._read_head()
        head: Head | None = self.session.memo.get("head")
        if head is None:
            head = self.session.memo["head"] = self._read_head()
        return head

    def _read_head(self) -> Head:
        text = self.session.meta("head")
        if text is None:
            raise CorruptStoreError("HEAD is missing")
        return parse_head(text)

    def set_head(self, head: Head) -> None:
        """Write HEAD's row."""
        self.session.set_meta("head", head.text)

    def ref(self, name: str) -> bytes | None:
        """A branch tip; in a write, the branch is locked first, so the tip read is the one a CAS will expect."""
        if not self.session.writing:  # remembered as "tip" (a write's "ref" also means the lock is held)
            if ("tip", name) not in self.session.memo:
                row = self.session.execute("SELECT target FROM refs WHERE name = ?", (name,)).fetchone()
                self.session.memo["tip", name] = row[0] if row else None
            found: bytes | None = self.session.memo["tip", name]
            return found
        if ("ref", name) not in self.session.memo:  # locked from here on: only this transaction moves it
            self.session.lock(f"ref:{name}")
            row = self.session.execute(_TIP, (name,)).fetchone()
            self.session.memo["ref", name] = row[0] if row else None
            if row is not None and row[1] is not None and row[4] is not None:  # the tip's graph row and commit
                self.states.remember_graph(row[0], row[1:7])
                self.objects.remember_stored(row[0], row[1], row[7], row[8])
        tip: bytes | None = self.session.memo["ref", name]
        return tip

    def refs(self) -> list[tuple[str, bytes]]:
        """Every branch, sorted by name."""
        return sorted((name, target) for name, target in self.session.execute("SELECT name, target FROM refs"))

    def set_ref(self, name: str, expected: bytes | None, new: bytes) -> bool:
        """Compare-and-swap, holding the branch's lock (``ref`` takes it)."""
        if self.ref(name) != expected:
            return False
        self.session.execute(
            "INSERT INTO refs (name, target) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET target = excluded.target",
            (name, new),
        )
        self.session.memo["ref", name] = new
        return True

    def set_refs(self, refs: Iterable[tuple[str, bytes]]) -> None:
        """Create many branches."""
        self.session.memo.clear()
        self.session.executemany("INSERT INTO refs (name, target) VALUES (?, ?)", list(refs))

    def delete_ref(self, name: str) -> bool:
        """Remove a branch."""
        self.session.lock(f"ref:{name}")
        self.session.memo.pop(("ref", name), None)
        return self.session.execute("DELETE FROM refs WHERE name = ?", (name,)).rowcount > 0

    # ----------------------------------------------------------------- staging
    def _staging(self) -> Session:
        """The session, holding the staging lock when writing (a commit reads staging, then clears it)."""
        if self.session.writing:
            self.session.lock(_STAGING)
        return self.session

    def staged(self) -> list[tuple[str, bytes]]:
        """Staged adds by node id."""
        db = self._staging()
        return sorted((db.node_id(name), raw) for name, raw in db.execute("SELECT node_id, object FROM staging"))

    def staged_deletions(self) -> list[str]:
        """Tombstones, sorted."""
        db = self._staging()
        return sorted(db.node_id(row[0]) for row in db.execute("SELECT node_id FROM tombstones"))

    def staged_node(self, node_id: str) -> tuple[bool, bytes | None]:
        """Staged wins over a tombstone.

        Where the memo outlives reads, whether anything is staged at all is
        learnt once and remembered: agents write without staging, and a read
        of working memory then asks nothing about it.
        """
        db = self._staging()
        if not db.writing and not self._anything_staged():
            return False, None
        name = db.node_name(node_id)
        row = db.execute(  # one round trip for both tables: a staged object, else a tombstone's NULL
            """SELECT 0 AS rank, object FROM staging WHERE node_id = ?
               UNION ALL SELECT 1, NULL FROM tombstones WHERE node_id = ? ORDER BY rank LIMIT 1""",
            (name, name),
        ).fetchone()
        return (True, row[1]) if row is not None else (False, None)

    def _anything_staged(self) -> bool:
        """Whether staging holds an add or a tombstone (remembered for the reads that follow, while nothing changes)."""
        found: bool | None = self.session.memo.get("staged")
        if found is None:
            row = self.session.execute("SELECT 1 FROM staging UNION ALL SELECT 1 FROM tombstones LIMIT 1").fetchone()
            found = self.session.memo["staged"] = row is not None
        return found

    def stage(self, node_id: str, raw: bytes) -> None:
        """Stage an add and lift a tombstone."""
        db = self._staging()
        name = db.node_name(node_id)
        db.execute(
            "INSERT INTO staging (node_id, object) VALUES (?, ?) ON CONFLICT (node_id) DO UPDATE SET object = "
            "excluded.object",
            (name, raw),
        )
        db.execute("DELETE FROM tombstones WHERE node_id = ?", (name,))

    def drop_staged(self, node_id: str) -> bool:
        """Drop a staged add."""
        db = self._staging()
        return db.execute("DELETE FROM staging WHERE node_id = ?", (db.node_name(node_id),)).rowcount > 0

    def add_tombstone(self, node_id: str) -> None:
        """Stage a deletion."""
        db = self._staging()
        db.execute("INSERT INTO tombstones (node_id) VALUES (?) ON CONFLICT DO NOTHING", (db.node_name(node_id),))

    def unstage(self, node_id: str) -> bool:
        """Drop a staged add and a tombstone."""
        dropped = self.drop_staged(node_id)
        db = self._staging()
        return db.execute("DELETE FROM tombstones WHERE node_id = ?", (db.node_name(node_id),)).rowcount > 0 or dropped

    def clear_staging(self) -> None:
        """Drop all of staging."""
        db = self._staging()
        db.execute("DELETE FROM staging")
        db.execute("DELETE FROM tombstones")

    def is_dirty(self) -> bool:
        """Anything staged."""
        db = self._staging()
        return bool(
            db.execute("SELECT 1 FROM staging LIMIT 1").fetchone()
            or db.execute("SELECT 1 FROM tombstones LIMIT 1").fetchone()
        )
