"""Upgrading an older store's schema, once per step, each step in one transaction.

Schema 5 to 6 adds the ``redactions`` table (node versions whose bytes were
removed, and why), empty.  Schema 4 to 5 adds the tables that record who pushed what into the store
(``pushes``, ``pushed_commits``), empty; schema 3 to 4 the tables adapters
keep beside history (``leases``, ``vectors``), empty.  Schema 2 to 3 is the
larger step:

Schema 2 kept HEAD and config as files beside the database, so a checkout
renamed a file outside the transaction that moved the refs.  Schema 3 keeps
both as ``meta`` rows and gives every commit its corrected time.  The
upgrade reads the two files, computes the corrected times parents first,
and writes all of it in one write transaction; only then are the files
removed (a kill before that leaves stale files that nothing reads).
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from ..errors import CorruptStoreError, StoreIoError
from ..layout import parse_config, parse_head
from ..logs import logger
from ..objects import Commit, decode_object
from ..sql import pack_time, unpack
from .schema import PUSH_TABLES, REDACTION_TABLES, SIDE_TABLES

__all__ = ["upgrade", "upgrade_from_2", "upgrade_from_3", "upgrade_from_4", "upgrade_from_5"]


class Database(Protocol):
    """What an upgrade uses of ``database.Database``, which calls it (named here, so neither imports the other)."""

    path: Path
    read_only: bool

    def write(self) -> AbstractContextManager[sqlite3.Connection]: ...
    def meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...


def _read(db: Database, name: str) -> str:
    try:
        return (db.path.parent / name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CorruptStoreError(f"{name} is missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptStoreError(f"{name} is unreadable: {exc}") from None


def upgrade(db: Database, version: int) -> None:
    """Bring a schema-2, -3, -4 or -5 store to the current schema, step by step."""
    if db.read_only:
        raise StoreIoError(
            "this store was written by an older release and must be upgraded once, which needs write access: "
            "run any mnem command on it (or on a copy) where it can be written"
        )
    if version == 2:
        upgrade_from_2(db)
    if version <= 3:
        upgrade_from_3(db)
    if version <= 4:
        upgrade_from_4(db)
    upgrade_from_5(db)


def _add_tables(db: Database, version: int, tables: str, what: str) -> None:
    """Add ``tables`` to a schema-``version`` store and make it ``version + 1``, in one write."""
    with db.write() as conn:
        if db.meta("schema_version") != str(version):  # another process upgraded it while we waited
            return
        for statement in filter(str.strip, tables.split(";")):
            conn.execute(statement)
        db.set_meta("schema_version", str(version + 1))
    logger(__name__).info("upgraded %s to schema %d (%s)", db.path.parent, version + 1, what)


def upgrade_from_3(db: Database) -> None:
    """Add the empty ``leases`` and ``vectors`` tables (schema 3 -> 4)."""
    _add_tables(db, 3, SIDE_TABLES, "tables for TTL leases and embeddings")


def upgrade_from_4(db: Database) -> None:
    """Add the empty ``pushes`` and ``pushed_commits`` tables (schema 4 -> 5)."""
    _add_tables(db, 4, PUSH_TABLES, "tables for who pushed what")


def upgrade_from_5(db: Database) -> None:
    """Add the empty ``redactions`` table (schema 5 -> 6)."""
    _add_tables(db, 5, REDACTION_TABLES, "a table for redactions")


def upgrade_from_2(db: Database) -> None:
    """Move HEAD and config into the database and add corrected times (schema 2 -> 3)."""
    head_text, config_text = _read(db, "HEAD"), _read(db, "config")
    parse_head(head_text)
    parse_config(config_text)
    with db.write() as conn:
        if db.meta("schema_version") != "2":  # another process upgraded it while we waited
            return
        conn.execute("ALTER TABLE commits ADD COLUMN corrected BLOB NOT NULL DEFAULT x''")
        corrected: dict[bytes, int] = {}
        rows = conn.execute(
            "SELECT c.key, o.id, o.data FROM commits c JOIN objects o ON o.key = c.key ORDER BY c.key"
        ).fetchall()
        for key, raw, data in rows:
            commit = decode_object(unpack(data))
            if not isinstance(commit, Commit):
                raise CorruptStoreError(f"{raw.hex()} is a {commit.kind}, not a commit")
            value = max([commit.time, *(corrected.get(p, commit.time) + 1 for p in commit.parents)])
            corrected[raw] = value
            conn.execute("UPDATE commits SET corrected = ? WHERE key = ?", (pack_time(value), key))
        db.set_meta("head", head_text.strip())
        db.set_meta("config", config_text)
        db.set_meta("schema_version", "3")
    for name in ("HEAD", "config"):
        try:
            (db.path.parent / name).unlink()
        except OSError as exc:
            logger(__name__).warning("upgraded the store, but could not remove the old %s file: %s", name, exc)
    logger(__name__).info("upgraded %s to schema 3 (HEAD and config now live in the database)", db.path.parent)
