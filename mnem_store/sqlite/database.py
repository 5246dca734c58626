"""The SQLite database under ``.mnem/``: schema, connections and transactions.

One file holds the whole truth of a store: objects, refs *and HEAD*, the
config, staging and tombstones, and the tables that store states as
per-commit changes (see ``states``).  Because HEAD and config are rows, a
checkout or an init is one SQLite transaction like any commit, and a kill
at any moment leaves either the old store or the new one.  The journal is
WAL so readers never block; every write runs in ``BEGIN IMMEDIATE`` so
writers queue on SQLite's lock for a bounded time and then fail with
``busy`` instead of deadlocking or half-writing.

A store on a read-only file system or folder is opened read-only: every
read works, and a write fails at once with a ``store_io`` error that says so.
"""

from __future__ import annotations

import os
import sqlite3
from _thread import allocate_lock
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any

from ..backend import Erasure
from ..errors import BusyError, CorruptStoreError, StoreIoError
from ..logs import logger
from ..sql import Session
from ..sql.session import GENERATION, bump, busy_timeout_s, generation
from .schema import SCHEMA

__all__ = ["DB_FILE", "SCHEMA_VERSION", "Database", "translate"]

#: The first words of the statements that change a database; ``_refuse_outside_write`` refuses them outside a write.
_WRITING_WORDS = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER"})
_writes: dict[str, bool] = {}  # statement text -> whether it writes (the engine's statements are a fixed set)


def _refuse_outside_write(sql: str) -> None:
    """Refuse a statement that writes when no write transaction is open, before SQLite sees it.

    A verb that forgot ``backend.write()`` is a bug; this makes it write
    nothing instead of committing on its own (or with a read's snapshot).
    The guard is here, in Python, rather than SQLite's ``query_only``: that
    pragma, switched around every write, makes SQLite prepare every
    statement again, which doubled the cost of a commit.
    """
    writes = _writes.get(sql)
    if writes is None:
        writes = _writes[sql] = sql.lstrip().split(None, 1)[0].upper() in _WRITING_WORDS
    if writes:
        raise RuntimeError(f"{sql.split(None, 1)[0]} outside a write transaction: the store is read only there")


DB_FILE = "store.sqlite3"
#: 2: states are stored as per-commit change rows with occasional snapshots.
#: 3: HEAD and config are rows of ``meta`` (no longer files beside the database), and
#:    every commit has a corrected time for history in graph order.
#: 4: ``leases`` and ``vectors``, what adapters keep beside history (TTL, embeddings).
#: 5: ``pushes`` and ``pushed_commits``, who pushed each branch move and the commits it brought.
#: 6: ``redactions``, the node versions whose bytes were removed (``mnem redact``), and who removed them, why.
SCHEMA_VERSION = 6
#: Half SQLite's default: a store has about a dozen tables and indexes of one
#: page each before it holds anything, and small rows, so 4 KiB pages spent
#: a quarter of a young store on empty space; large snapshots just overflow
#: into more pages.
PAGE_SIZE = 2048


#: SQLite's words for a file that is damaged, or is not (all of) a store's database.
_DAMAGED = ("malformed", "not a database", "could not decode", "no such table", "no such column")

#: What every SQLite database file starts with.
SQLITE_MAGIC = b"SQLite format 3\x00"


#: SQLite's words for a write refused because the file or its folder cannot be written.
_READ_ONLY = ("readonly database", "read-only file system", "read only")


def translate(exc: sqlite3.Error | UnicodeDecodeError) -> Exception:
    """The taxonomy's error for a failure SQLite reported.

    Damage is ``corrupt_store``: a malformed file, text that is not UTF-8
    ("Could not decode"), a schema missing the store's tables.  A
    ``UnicodeDecodeError`` is damage too: SQLite's own message quoted bytes
    of a damaged schema, and Python's sqlite3 then failed to decode the
    message instead of raising it.  A full disk and a read-only store are
    ``store_io`` with a message that names the fix.
    """
    if isinstance(exc, UnicodeDecodeError):
        return CorruptStoreError(f"the database file is damaged: {exc.object[:200].decode('utf-8', 'replace')}")
    text = str(exc)
    lowered = text.lower()
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return BusyError("another writer holds the store; try again")
    if "disk is full" in lowered or "no space" in lowered:
        return StoreIoError("the disk is full: nothing was written; free some space and try again")
    if any(sign in lowered for sign in _READ_ONLY):
        return StoreIoError(READ_ONLY_MESSAGE)
    if isinstance(exc, sqlite3.DatabaseError) and any(sign in lowered for sign in _DAMAGED):
        return CorruptStoreError(f"the database file is damaged: {text}")
    return StoreIoError(text)


class _translated:  # noqa: N801  (named as the context manager it is used as)
    """Run the body; on any failure run ``undo`` first, and raise SQLite's failures as the taxonomy's.

    A class rather than a ``contextmanager`` generator: every read snapshot
    enters three, and a generator's set-up and close cost ~1 us each of a
    worker's ~70 us search (issue #46).
    """

    __slots__ = ("undo",)

    def __init__(self, undo: Callable[[], object] | None = None) -> None:
        self.undo = undo

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc is None:
            return
        if self.undo is not None:
            self.undo()
        if isinstance(exc, (sqlite3.Error, UnicodeDecodeError)):
            raise translate(exc) from None


class _Snapshot:
    """``Database.read``'s context: a snapshot begun on entry and ended on exit, or the open transaction joined.

    A class, as ``_translated`` is: a worker enters one for every read it
    answers, and a generator's set-up and close cost ~1 us of each.
    """

    __slots__ = ("_db", "_joined")

    def __init__(self, db: Database) -> None:
        self._db = db
        self._joined = False

    def __enter__(self) -> None:
        if self._db.conn.in_transaction:
            self._joined = True
        else:
            self._db._begin_read()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._joined:
            return
        if exc is not None:  # the body's failure ends the snapshot quietly and is translated, never replaced
            _translated(self._db._end_read).__exit__(kind, exc, tb)
            return
        with _translated():
            self._db._end_read(quiet=False)


#: What a write on a store that cannot be written says.
READ_ONLY_MESSAGE = (
    "the store is read-only (its folder or file system cannot be written): reads work, writes do not; "
    "copy the store somewhere writable to change it"
)


#: How many connections this process has open to each database file, by (device, inode).  SQLite locks
#: the file with POSIX advisory locks, and closing *any* descriptor of the file in this process drops every
#: one of them (SQLite's "How To Corrupt An SQLite Database File", 2.2).  Another process then takes itself
#: for the last connection, checkpoints and deletes the WAL under ours, and what ours commits afterwards is
#: written to a deleted file: acknowledged, then lost.  So the file is opened outside SQLite
#: (``_check_header``) only while this process holds no connection to it.  The lock is ``threading.Lock``
#: itself, taken from ``_thread``: a one-shot read then never imports ``threading``.
_connections: dict[tuple[int, int], int] = {}
_connections_lock = allocate_lock()


def _file_key(path: Path) -> tuple[int, int] | None:
    """The file's (device, inode), or None when it is missing."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreIoError(f"reading {path.name}: {exc.strerror or exc}") from None
    return info.st_dev, info.st_ino


def _check_header(path: Path) -> None:
    """Refuse a file that cannot be a store's database before SQLite opens it.

    SQLite treats an empty file as a new database and writes a header into
    it on the first statement, so a store whose file was truncated to
    nothing would be "repaired" into an empty one by a mere ``status``.
    Reading the 16-byte magic first keeps a damaged file exactly as it is.
    """
    try:
        with open(path, "rb") as handle:
            magic = handle.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise StoreIoError(f"reading {path.name}: {exc.strerror or exc}") from None
    if not magic:
        raise CorruptStoreError(f"{path.name} is empty")
    if magic != SQLITE_MAGIC:
        raise CorruptStoreError(f"{path.name} is not a SQLite database: the file is damaged or was replaced")


class Database(Session):
    """A connection to one store's database, opened in autocommit mode.

    ``create`` makes a new database with the store's schema and the given
    ``meta`` rows (HEAD and config among them) in one transaction.
    Otherwise the file must exist and be a store's; on a read-only folder
    or file system it is opened read-only (``read_only``).

    Each read asks for the store's generation as its first statement, which
    also fixes the read's snapshot, and hands it to ``kept.observe``
    (``mnem_store.cache``): a worker answering read after read on a quiet
    store asks the database only what each read is about.
    """

    def __init__(self, path: Path, *, create: bool = False, meta: dict[str, str] | None = None) -> None:
        self.path = path
        super().__init__()
        self.read_only = False
        self._file: tuple[int, int] | None = None  # the file's key in ``_connections`` while connected
        with _connections_lock:
            if not create:
                before = _file_key(path)
                if before is None:
                    raise CorruptStoreError(f"{path.name} is missing from the store")
                if not _connections.get(before):  # no connection of ours holds its locks: reading it is safe
                    _check_header(path)
                self.read_only = not (os.access(path.parent, os.W_OK) and os.access(path, os.W_OK))
            self.conn = self._connect(path)
            self._file = _file_key(path) or (0, 0)  # after connecting: a new database's file exists only now
            _connections[self._file] = _connections.get(self._file, 0) + 1
        # an open connection would keep the -wal file of a store that failed to open
        with _translated(self.close):
            self.conn.execute("PRAGMA synchronous=FULL")
            # Every byte a write frees is zeroed, not left in a free page or a cell's old place, so no copy of a
            # value outlives its row: what `mnem redact` removes then leaves no stale copy from any earlier
            # write either.  Debian's SQLite does this by default; other builds do not.
            self.conn.execute("PRAGMA secure_delete=ON")
            if create:
                self.conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
                self.conn.execute("PRAGMA journal_mode=WAL")
                with self.write():
                    for statement in filter(str.strip, SCHEMA.split(";")):
                        self.conn.execute(statement)
                    rows = {**(meta or {}), "schema_version": str(SCHEMA_VERSION)}
                    self.conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", rows.items())
            else:
                # Read before writing anything: a damaged file must fail here untouched.  Only a
                # store that checks out is switched (back) to WAL, which rewrites the header.
                self._check_schema()
                if not self.read_only and self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    self.conn.execute("PRAGMA journal_mode=WAL")

    def _connect(self, path: Path) -> sqlite3.Connection:
        """Open the file; read-only stores first as ``mode=ro``, then as immutable.

        SQLite reads a WAL database read-only only if it can use the
        ``-shm`` file beside it.  On a read-only file system or folder that
        file may not exist and cannot be made, so the database is opened
        ``immutable``: what the file holds is read as it stands (a store
        closed by its last writer has everything in the main file).
        """
        connect = partial(sqlite3.connect, isolation_level=None, timeout=busy_timeout_s(), check_same_thread=False)
        with _translated():
            if not self.read_only:
                return connect(str(path))
            uri = path.absolute().as_uri()
            try:
                conn = connect(f"{uri}?mode=ro", uri=True)
                conn.execute("SELECT 1 FROM meta LIMIT 1").fetchone()
                return conn
            except sqlite3.OperationalError:
                logger(__name__).debug("%s: no usable -shm beside a read-only database; reading it immutable", path)
                return connect(f"{uri}?immutable=1", uri=True)

    def _check_schema(self) -> None:
        with _translated():
            row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None or not isinstance(row[0], str) or not row[0].isdigit():
            raise CorruptStoreError("the database has no schema version")
        version = int(row[0])
        if version > SCHEMA_VERSION:
            raise CorruptStoreError(
                f"the database schema is version {row[0]}, this release reads up to {SCHEMA_VERSION}"
            )
        if version in (2, 3, 4, 5):
            from .migrate import upgrade

            upgrade(self, version)
        elif version < SCHEMA_VERSION:
            raise CorruptStoreError(
                f"the database schema is version {row[0]}, this release reads only {SCHEMA_VERSION}; "
                "export the store with the release that wrote it and import the file"
            )

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run one statement on the connection (a write only inside ``write()``: see ``_refuse_outside_write``)."""
        if not self._writing:
            _refuse_outside_write(sql)
        return self.conn.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement per row (a write only inside ``write()``)."""
        if not self._writing:
            _refuse_outside_write(sql)
        self.conn.executemany(sql, rows)

    def keys_table(self, keys: list[int]) -> tuple[str, Any]:
        """The keys as a JSON array, read by ``json_each`` (no limit on their number, unlike ``IN (?, ...)``)."""
        return "json_each(?) j", f"[{','.join(map(str, keys))}]"

    def lock(self, resource: str) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already holds the whole store's write lock."""

    def close(self) -> None:
        """Close the connection (once; a second close does nothing)."""
        with _connections_lock:
            if self._file is None:
                return
            self.conn.close()
            left = _connections[self._file] - 1
            if left:
                _connections[self._file] = left
            else:
                del _connections[self._file]
            self._file = None

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One durable write transaction; everything inside commits or nothing does."""
        if self.read_only:
            raise StoreIoError(READ_ONLY_MESSAGE)
        self.kept.forget_memo()
        with _translated():
            self.conn.execute("BEGIN IMMEDIATE")
        self._writing = True
        try:
            with _translated(self._rollback):
                yield self.conn
                self.conn.execute(bump())
        finally:
            self._writing = False
            self.kept.forget_memo()
        with _translated(self._rollback):
            self.conn.execute("COMMIT")

    @contextmanager
    def erasing(self) -> Iterator[Erasure]:
        """A write whose removed bytes are then in no file: the database, its free pages or its WAL.

        Every connection runs with ``secure_delete`` (``__init__``), so the
        cells and pages the transaction frees are zeroed in the database.
        The WAL still holds earlier page images: after the transaction
        commits it is checkpointed into the database and truncated to
        nothing.  A reader in another process that holds an old snapshot
        keeps the WAL's frames alive past the busy timeout: the erasure is
        then incomplete, and says so.
        """
        erasure = Erasure()
        with self.write():
            yield erasure
        with _translated():
            busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        erasure.complete = not busy
        erasure.residue = "" if not busy else (
            f"another process is reading the store, so its write-ahead log ({DB_FILE}-wal) may still hold the "
            "removed bytes: run the same command again once that reader is done (nothing is removed twice)"
        )

    def _rollback(self) -> None:
        """Undo the open transaction; on a damaged file the rollback may fail too, and must not hide why."""
        if self.conn.in_transaction:
            with suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")

    def read(self) -> AbstractContextManager[None]:
        """A read snapshot: several queries see one consistent version of the store.

        Ending the snapshot can fail on a damaged file too; that failure is
        translated like any other, and never replaces the error that ended
        the body (it used to escape from ``finally`` as a raw DatabaseError).
        Inside an open transaction the read joins it (``_Snapshot``).
        """
        return _Snapshot(self)

    def _begin_read(self) -> None:
        """Start a read snapshot and apply the cache rule to the generation it sees first."""
        with _translated(self._end_read):
            self.conn.execute("BEGIN")
            found = generation(self.conn.execute(GENERATION).fetchone())  # starts the snapshot, too
        self.kept.observe(found)

    def _end_read(self, *, quiet: bool = True) -> None:
        """End a read snapshot (a read has nothing to commit: a rollback would do as well).

        What the read remembered only for itself (large objects) is let go now, not at the next read.
        """
        self.forget_brief()
        if not self.conn.in_transaction:
            return
        try:
            self.conn.execute("COMMIT")
        except (sqlite3.Error, UnicodeDecodeError):
            if self.conn.in_transaction:
                with suppress(sqlite3.Error):
                    self.conn.execute("ROLLBACK")
            if not quiet:
                raise
