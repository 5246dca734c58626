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
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from ..backend import Backend, Erasure
from ..errors import StoreExistsError, StoreIoError
from ..sql import SqlBackend
from .database import DB_FILE, Database, translate

__all__ = ["MNEM_DIR", "SqliteBackend", "io_error"]


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


def _fsync(path: Path, flags: int = os.O_DIRECTORY) -> None:
    fd = os.open(path, os.O_RDONLY | flags)
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


class SqliteBackend(SqlBackend):
    """One store's SQLite database, behind the storage seam."""

    def __init__(self, db: Database, location: str) -> None:
        super().__init__(db, location, read_only=db.read_only)
        self.db = db
        self._identity = _identity(db.path)

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
        import shutil  # only creating a store needs these: kept off every read's start-up

        from ..scratch import remove_dead, scratch_name

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
            _fsync(root)
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
                raise translate(exc) from None
        finally:
            db.close()  # the last connection: SQLite folds the WAL into the file and removes it
        _fsync(path, 0)
        _fsync(build)

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def replaced(self) -> bool:
        """Whether the database file is no longer the one opened (another device or inode, or gone)."""
        return _identity(self.db.path) != self._identity

    # ------------------------------------------------------------ transactions
    def read(self) -> AbstractContextManager[None]:
        """A read snapshot (nested snapshots join the outer one): the connection's own."""
        return self.db.read()

    @contextmanager
    def write(self) -> Iterator[None]:
        """One ``BEGIN IMMEDIATE`` transaction."""
        with self.db.write():
            yield

    def erasing(self, *, rewrite: bool = True) -> AbstractContextManager[Erasure]:
        """One ``BEGIN IMMEDIATE`` transaction, the WAL emptied after it commits (``Database.erasing``).

        ``rewrite`` changes nothing here: no table is rewritten, and emptying the WAL costs little.
        """
        return self.db.erasing()

    def exclusive(self) -> AbstractContextManager[None]:
        """A ``BEGIN IMMEDIATE`` transaction: SQLite's one write lock already keeps every other writer out."""
        return self.write()

    def size(self) -> int:
        """The database file's bytes and its WAL's."""
        total = 0
        for path in (self.db.path, self.db.path.with_name(f"{DB_FILE}-wal")):
            try:
                total += path.stat().st_size
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise io_error(f"reading {path.name}", exc) from None
        return total

    def compact(self, *, rewrite: bool = True) -> None:
        """``VACUUM`` (the database rewritten without its free pages), then the WAL folded in and truncated.

        Without ``rewrite`` no ``VACUUM``: free pages stay, for later writes to reuse.

        A ``VACUUM`` writes through the WAL like any write, so the file
        shrinks when the checkpoint after it copies the pages back; a reader
        in another process holding an older snapshot may keep that
        checkpoint from finishing, and the next one finishes it.
        """
        try:
            if rewrite:
                self.db.conn.execute("VACUUM")
            self.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error as exc:
            raise translate(exc) from None
