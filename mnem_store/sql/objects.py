"""The ``objects`` table: content-addressed objects behind small integer keys.

Every object keeps its 32-byte id, but the other tables refer to it by the
row's integer key: a change row or a graph row then costs a few bytes per
reference instead of 32, which is most of what makes a commit's storage
proportional to its change.  A state's ``data`` may be NULL: that state is
*virtual*, its bytes rebuilt from the commit graph on demand (``states``).

Nodes and commits are stored deflated against a preset dictionary of their
CBOR field names: at ~100 bytes, a node's field names ("memory_node",
"content_kind", "provenance", ...) are over half its size, and deflate with
that dictionary stores a typical node in about a third.  Stored states are
kept as they are (their bulk is random ids, and a snapshot is read by
slicing it).  Canonical CBOR of an object starts with a map header, so the
tag byte of a packed object can never be mistaken for one.

Deflate runs at level 1: on a LangGraph checkpoint's channel value (tens of
kilobytes of serialized messages) level 9 took a third of the commit for
about 7% fewer bytes (issue #35).  The level is not part of the format:
inflating reads any level, and an object's id hashes its canonical bytes,
never its stored form, so objects packed at level 9 by older releases read
and verify as before.  Nor is the compressor's memory level: it runs at 8
(zlib's default), whose buffers are 64 KiB each.  At 9 two of them are
128 KiB, glibc's default threshold for giving a block a mapping of its own:
a worker's heap was then handed back to the system and taken again around
the objects of every commit (three times the ``brk`` calls), so deflate
began by faulting in and zeroing fresh pages, and a checkpoint's commit took
half as long again to deflate (issue #48).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from contextlib import suppress

from ..backend import KIND_CODES, ObjectIndex, ObjectRow
from ..canonical import encode
from ..errors import CorruptStoreError
from .session import Session

__all__ = ["SqlObjectStore", "pack", "unpack"]

_STATE = KIND_CODES["state"]
#: Ids per ``prefetch`` statement: well under every engine's limit on parameters.
_CHUNK = 500
#: ``SqlObjectStore.add``: objects ``(id, kind code, stored bytes)`` unless stored, in id order (so that concurrent
#: writers of one store take the unique index's locks in one order).
_ADD = ("INSERT INTO objects (id, kind, data) WITH t(id, kind, data) AS ({rows}) "
        "SELECT id, kind, data FROM t WHERE true ORDER BY id ON CONFLICT (id) DO NOTHING")

#: Objects larger than this (bytes) are remembered only until their transaction ends: a SQLite memo outlives
#: its read (``sqlite/database.py``), and a worker that read a 100 MB value would keep it until the store changed.
MEMO_OBJECT_BYTES = 1 << 20

#: Deflate's level for new objects: the fastest (see the module docstring); any level reads back.
_LEVEL = 1
#: Deflate's memory level for new objects: buffers of 64 KiB, under glibc's 128 KiB threshold (see above).
_MEMORY = 8

#: Tag of a deflated object (raw deflate, ``_DICTIONARY`` version 1).  Never
#: change the dictionary in place: stored bytes depend on it; add a new tag.
_DEFLATED_V1 = b"\x01"
_DICTIONARY = encode(
    {"kind": "commit", "time": 0, "state": b"", "author": "", "message": "", "parents": []}
) + encode(
    {
        "id": "",
        "kind": "memory_node",
        "content": "",
        "event_time": 0,
        "provenance": {"note": "", "source": "", "tool_call": "", "agent_step": "", "observation": ""},
        "content_kind": "note",
    }
)


def pack(kind: str, data: bytes) -> bytes:
    """The stored form of an object's canonical bytes (deflated when that is smaller)."""
    if kind == "state":
        return data
    squeezer = zlib.compressobj(_LEVEL, zlib.DEFLATED, -15, _MEMORY, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY)
    packed = _DEFLATED_V1 + squeezer.compress(data) + squeezer.flush()
    return packed if len(packed) < len(data) else data


def unpack(stored: bytes) -> bytes:
    """An object's canonical bytes from its stored form."""
    if stored[:1] != _DEFLATED_V1:
        return stored
    try:
        return zlib.decompressobj(-15, _DICTIONARY).decompress(stored[1:])
    except zlib.error as exc:
        raise CorruptStoreError(f"bad object: {exc}") from None


class SqlObjectStore(ObjectIndex):
    """Key and id lookups plus idempotent inserts over the ``objects`` table."""

    def __init__(self, db: Session) -> None:
        self.db = db

    def row(self, raw: bytes) -> ObjectRow | None:
        """``(key, kind, canonical bytes or None for a virtual state)``."""
        found: ObjectRow | None = self.db.memo.get(("object", raw))
        if found is not None:
            return found
        row = self.db.execute("SELECT key, kind, data FROM objects WHERE id = ?", (raw,)).fetchone()
        if row is None:
            return None
        key, kind, data = row
        canonical = None if data is None else unpack(data)
        found = key, kind, canonical
        if canonical is not None:
            self._remember(raw, found)
        return found

    def remember_stored(self, raw: bytes, key: int, kind: int, stored: bytes | None) -> None:
        """Memoise an object row another statement read along (``SqlBackend.ref``: the tip a write builds on)."""
        if stored is not None:
            with suppress(CorruptStoreError):  # left for ``row`` to report, when and as a caller reads it
                self._remember(raw, (key, kind, unpack(stored)))

    def _remember(self, raw: bytes, found: ObjectRow) -> None:
        """Memoise an object's row; one larger than ``MEMO_OBJECT_BYTES`` only until its transaction ends."""
        data = found[2]
        if data is not None and len(data) > MEMO_OBJECT_BYTES:
            self.db.remember_briefly(("object", raw), found)
        else:
            self.db.memo["object", raw] = found

    def prefetch(self, raws: Iterable[bytes]) -> None:
        """Read objects by the hundred (a state's nodes): one round trip per chunk instead of one per object."""
        wanted = [raw for raw in dict.fromkeys(raws) if ("object", raw) not in self.db.memo]
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            rows = self.db.execute(
                f"SELECT id, key, kind, data FROM objects WHERE id IN ({', '.join('?' * len(chunk))})", chunk
            ).fetchall()
            for raw, key, kind, data in rows:
                if data is None:
                    continue
                try:
                    self._remember(bytes(raw), (key, kind, unpack(data)))
                except CorruptStoreError:
                    continue  # left for ``row`` to report, when and as a caller reads it


    def stored_rows(self) -> Iterator[tuple[bytes, int, bytes | None]]:
        """Every object's ``(id, kind code, stored bytes or None)`` in id order, as kept (``verify`` unpacks them)."""
        yield from self.db.execute("SELECT id, kind, data FROM objects ORDER BY id").fetchall()

    def all_rows(self) -> Iterable[tuple[int, bytes, bytes | None]]:
        """Every object's ``(key, id, canonical bytes or None)``, in id order."""
        for key, raw, data in self.db.execute("SELECT key, id, data FROM objects ORDER BY id").fetchall():
            yield key, raw, None if data is None else unpack(data)

    def key(self, raw: bytes) -> int | None:
        """The key of an object id, or None."""
        known = self.db.memo.get(("object", raw))
        if known is not None:
            found: int = known[0]
            return found
        row = self.db.execute("SELECT key FROM objects WHERE id = ?", (raw,)).fetchone()
        return row[0] if row else None

    def id_of(self, key: int) -> bytes:
        """The id behind a key; a dangling key is ``corrupt_store``."""
        row = self.db.execute("SELECT id FROM objects WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise CorruptStoreError(f"object key {key} is referenced but not stored")
        raw: bytes = row[0]
        return raw

    def insert(self, raw: bytes, kind: str, data: bytes | None) -> int:
        """Store an object unless its id is already there; returns its key.

        Writing an existing id is a no-op, except that storing the bytes of
        a virtual state materialises it (the bytes are the ones its id names,
        so nothing a reader sees changes).
        """
        db = self.db
        stored = None if data is None else pack(kind, data)
        if db.upsert_object is not None:
            found = db.execute(db.upsert_object, (raw, KIND_CODES[kind], stored, raw)).fetchone()
        else:
            # Insert first (a new object is the usual case: one statement); ON CONFLICT yields to an object that
            # is there already, also one a concurrent writer (PostgreSQL) inserted first.
            row = db.execute(
                "INSERT INTO objects (id, kind, data) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING key",
                (raw, KIND_CODES[kind], stored),
            ).fetchone()
            found = None if row is None else (row[0], True, False)
        if found is not None and found[1]:
            new: int = found[0]
            if data is not None:
                db.memo["object", raw] = (new, KIND_CODES[kind], data)
            return new
        if found is None:  # there already (on PostgreSQL: stored by a concurrent writer after the snapshot)
            row = db.execute("SELECT key, data IS NULL FROM objects WHERE id = ?", (raw,)).fetchone()
            found = (row[0], False, bool(row[1]))
        key: int = found[0]
        if found[2] and data is not None:
            db.execute("UPDATE objects SET data = ? WHERE key = ? AND kind = ?", (data, key, _STATE))
            db.memo.pop(("object", raw), None)
        elif data is not None:  # the stored bytes are these (the id names them): a commit's change rows need the key
            db.memo["object", raw] = (key, KIND_CODES[kind], data)
        return key

    def add(self, rows: list[tuple[bytes, str, bytes | None]]) -> None:
        """Store objects ``(id, kind, canonical bytes or None)`` unless stored, in one statement; no key comes back.

        A commit's write sends it and goes on without waiting: the rows that
        refer to these objects find their keys by id (``SqlStateStore.record``).
        Unlike ``insert``, bytes given for a virtual state are not stored over
        its NULL (snapshots are ``SqlStateStore``'s to make).
        """
        self.db.execute_rows(_ADD, ("bytea", "smallint", "bytea"), [
            (raw, KIND_CODES[kind], None if data is None else pack(kind, data)) for raw, kind, data in rows
        ])

    def missing(self, raws: Iterable[bytes]) -> list[bytes]:
        """Those of these ids no object row has: one statement per few hundred ids, none for those known here."""
        memo = self.db.memo
        wanted = [raw for raw in dict.fromkeys(raws) if ("object", raw) not in memo]
        found: set[bytes] = set()
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            found.update(bytes(raw) for (raw,) in self.db.execute(
                f"SELECT id FROM objects WHERE id IN ({', '.join('?' * len(chunk))})", chunk))
        return [raw for raw in wanted if raw not in found]

    def insert_many(self, rows: Iterable[tuple[bytes, str, bytes | None]]) -> None:
        """Store many new objects ``(id, kind, canonical bytes or None)`` at once (a fresh store's import)."""
        self.db.executemany(
            "INSERT INTO objects (id, kind, data) VALUES (?, ?, ?)",
            [(raw, KIND_CODES[kind], None if data is None else pack(kind, data)) for raw, kind, data in rows],
        )

    def commits_with_prefix(self, low: bytes, high: bytes, limit: int) -> list[bytes]:
        """Up to ``limit`` commit ids in ``[low, high]`` (the kind column skips nodes and states)."""
        rows = self.db.execute(
            "SELECT id FROM objects WHERE id BETWEEN ? AND ? AND kind = ? LIMIT ?",
            (low, high, KIND_CODES["commit"], limit),
        ).fetchall()
        return [raw for (raw,) in rows]

    def count_commits_with_prefix(self, low: bytes, high: bytes) -> int:
        """How many commit ids lie in ``[low, high]``."""
        count: int = self.db.execute(
            "SELECT count(*) FROM objects WHERE id BETWEEN ? AND ? AND kind = ?", (low, high, KIND_CODES["commit"])
        ).fetchone()[0]
        return count
