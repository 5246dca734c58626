"""The SQLite backend: a store is one database file in a ``.mnem`` folder.

Opening reads the file in place (read-only where the folder or file system
cannot be written).  Creating is atomic: the new store is built whole in a
private sibling folder, its database closed and synced, and only then
renamed to ``.mnem``.  A kill or a full disk during ``init`` or ``import``
therefore leaves either no ``.mnem`` at all or a complete store; the
builder's leftover folder is removed by the next ``init`` or ``import`` in
the same place (or by hand: it is named ``.mnem.new-<pid>-<random>``).
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..backend import Backend
from ..errors import CorruptStoreError, StoreExistsError, StoreIoError
from ..layout import Head, format_head, parse_head
from ..scratch import remove_dead, scratch_name
from .database import DB_FILE, Database
from .objectstore import SqliteObjectStore
from .states import SqliteStateStore

__all__ = ["MNEM_DIR", "SqliteBackend", "io_error"]

logger = logging.getLogger(__name__)

MNEM_DIR = ".mnem"
#: Prefix of the folder a store is built in before it is renamed to ``.mnem``.
_BUILDING = ".mnem.new-"


def io_error(action: str, exc: OSError) -> StoreIoError:
    """A file-system failure as ``store_io``, with the fix for the common causes."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StoreIoError(f"{action}: the disk is full; nothing was changed: free some space and try again")
    if exc.errno == errno.EROFS:
        return StoreIoError(f"{action}: the file system is read-only")
    return StoreIoError(f"{action}: {exc.strerror or exc}")


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _identity(path: Path) -> tuple[int, int]:
    """The database file's device and inode (zeros when it cannot be read)."""
    try:
        info = os.stat(path)
    except OSError:
        return 0, 0
    return info.st_dev, info.st_ino


class SqliteBackend(Backend):
    """One store's SQLite database, behind the storage seam."""

    def __init__(self, db: Database, location: str) -> None:
        self.db = db
        self.location = location
        self._identity = _identity(db.path)
        self.read_only = db.read_only
        self.objects = SqliteObjectStore(db)
        self.states = SqliteStateStore(db)

    # --------------------------------------------------------------- lifecycle
    @classmethod
    def open(cls, mnem_dir: Path) -> SqliteBackend:
        """Open the store in ``mnem_dir`` (a ``.mnem`` folder)."""
        return cls(Database(mnem_dir / DB_FILE), str(mnem_dir))

    @classmethod
    def create(cls, root: Path, meta: dict[str, str], populate: Callable[[Backend], None] | None = None) -> None:
        """Create ``root/.mnem`` atomically, holding ``meta`` and whatever ``populate`` writes.

        ``populate`` runs inside the new store's one write transaction (an
        import fills the store there); if it raises, nothing is published.

        Raises:
            StoreExistsError: ``root/.mnem`` exists (also if it appears while building).
            StoreIoError: The folder cannot be written (a full disk names itself).
        """
        target = root / MNEM_DIR
        remove_dead(root, _BUILDING)
        build = root / scratch_name(_BUILDING)
        try:
            build.mkdir(mode=0o700)
        except OSError as exc:
            raise io_error(f"creating {target}", exc) from None
        try:
            cls._build(build, meta, populate)
            if target.exists() or target.is_symlink():
                raise StoreExistsError(str(target))
            os.rename(build, target)
            _fsync_dir(root)
        except OSError as exc:
            shutil.rmtree(build, ignore_errors=True)
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                raise StoreExistsError(str(target)) from None
            raise io_error(f"creating {target}", exc) from None
        except BaseException:
            shutil.rmtree(build, ignore_errors=True)
            raise

    @classmethod
    def _build(cls, build: Path, meta: dict[str, str], populate: Callable[[Backend], None] | None) -> None:
        """Make the whole store in ``build``, close it and sync it to disk."""
        path = build / DB_FILE
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))  # owner-only whatever the umask
        db = Database(path, create=True, meta=meta)
        try:
            if populate is not None:
                backend = cls(db, str(build))
                with backend.write():
                    populate(backend)
            try:
                db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise db.translate(exc) from None
        finally:
            db.close()  # the last connection: SQLite folds the WAL into the file and removes it
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        _fsync_dir(build)

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def replaced(self) -> bool:
        """Whether the database file is no longer the one opened (another device or inode, or gone)."""
        return _identity(self.db.path) != self._identity

    @property
    def writing(self) -> bool:
        """Whether ``write()`` is open."""
        return self.db.writing

    # ------------------------------------------------------------ transactions
    @contextmanager
    def read(self) -> Iterator[None]:
        """A read snapshot (nested snapshots join the outer one)."""
        with self.db.read():
            yield

    @contextmanager
    def write(self) -> Iterator[None]:
        """One ``BEGIN IMMEDIATE`` transaction."""
        with self.db.write():
            yield

    # ------------------------------------------------------------------ config
    def config_text(self) -> str:
        """The config row, written at creation."""
        text = self.db.meta("config")
        if text is None:
            raise CorruptStoreError("config is missing")
        return text

    # -------------------------------------------------------------- HEAD, refs
    def head(self) -> Head:
        """HEAD from its ``meta`` row."""
        text = self.db.meta("head")
        if text is None:
            raise CorruptStoreError("HEAD is missing")
        return parse_head(text)

    def set_head(self, head: Head) -> None:
        """Write HEAD's row."""
        self.db.set_meta("head", format_head(head).strip())

    def ref(self, name: str) -> bytes | None:
        """A branch tip."""
        row = self.db.conn.execute("SELECT target FROM refs WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def refs(self) -> list[tuple[str, bytes]]:
        """Every branch, sorted by name."""
        return sorted(self.db.conn.execute("SELECT name, target FROM refs").fetchall())

    def set_ref(self, name: str, expected: bytes | None, new: bytes) -> bool:
        """Compare-and-swap inside the write transaction (which already holds SQLite's write lock)."""
        if self.ref(name) != expected:
            return False
        self.db.conn.execute("INSERT OR REPLACE INTO refs (name, target) VALUES (?, ?)", (name, new))
        return True

    def set_refs(self, refs: Iterable[tuple[str, bytes]]) -> None:
        """Create many branches."""
        self.db.conn.executemany("INSERT INTO refs (name, target) VALUES (?, ?)", list(refs))

    def delete_ref(self, name: str) -> bool:
        """Remove a branch."""
        return self.db.conn.execute("DELETE FROM refs WHERE name = ?", (name,)).rowcount > 0

    # ----------------------------------------------------------------- staging
    def staged(self) -> list[tuple[str, bytes]]:
        """Staged adds by node id."""
        return sorted(self.db.conn.execute("SELECT node_id, object FROM staging").fetchall())

    def staged_deletions(self) -> list[str]:
        """Tombstones, sorted."""
        return sorted(row[0] for row in self.db.conn.execute("SELECT node_id FROM tombstones"))

    def staged_node(self, node_id: str) -> tuple[bool, bytes | None]:
        """Staged wins over a tombstone."""
        conn = self.db.conn
        row = conn.execute("SELECT object FROM staging WHERE node_id = ?", (node_id,)).fetchone()
        if row is not None:
            return True, row[0]
        return conn.execute("SELECT 1 FROM tombstones WHERE node_id = ?", (node_id,)).fetchone() is not None, None

    def stage(self, node_id: str, raw: bytes) -> None:
        """Stage an add and lift a tombstone."""
        self.db.conn.execute("INSERT OR REPLACE INTO staging (node_id, object) VALUES (?, ?)", (node_id, raw))
        self.db.conn.execute("DELETE FROM tombstones WHERE node_id = ?", (node_id,))

    def drop_staged(self, node_id: str) -> bool:
        """Drop a staged add."""
        return self.db.conn.execute("DELETE FROM staging WHERE node_id = ?", (node_id,)).rowcount > 0

    def add_tombstone(self, node_id: str) -> None:
        """Stage a deletion."""
        self.db.conn.execute("INSERT OR IGNORE INTO tombstones (node_id) VALUES (?)", (node_id,))

    def unstage(self, node_id: str) -> bool:
        """Drop a staged add and a tombstone."""
        dropped = self.drop_staged(node_id)
        return self.db.conn.execute("DELETE FROM tombstones WHERE node_id = ?", (node_id,)).rowcount > 0 or dropped

    def clear_staging(self) -> None:
        """Drop all of staging."""
        self.db.conn.execute("DELETE FROM staging")
        self.db.conn.execute("DELETE FROM tombstones")

    def is_dirty(self) -> bool:
        """Anything staged."""
        conn = self.db.conn
        return bool(
            conn.execute("SELECT 1 FROM staging LIMIT 1").fetchone()
            or conn.execute("SELECT 1 FROM tombstones LIMIT 1").fetchone()
        )
