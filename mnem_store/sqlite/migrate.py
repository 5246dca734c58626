"""Upgrading a schema-2 store (HEAD and config as files) to schema 3, once, in one transaction.

Schema 2 kept HEAD and config as files beside the database, so a checkout
renamed a file outside the transaction that moved the refs.  Schema 3 keeps
both as ``meta`` rows and gives every commit its corrected time.  The
upgrade reads the two files, computes the corrected times parents first,
and writes all of it in one write transaction; only then are the files
removed (a kill before that leaves stale files that nothing reads).
"""

from __future__ import annotations

import logging

from ..errors import CorruptStoreError, StoreIoError
from ..layout import parse_config, parse_head
from ..objects import Commit, decode_object
from ..sql import pack_time, unpack
from .database import Database

__all__ = ["upgrade_from_2"]

logger = logging.getLogger(__name__)


def _read(db: Database, name: str) -> str:
    try:
        return (db.path.parent / name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CorruptStoreError(f"{name} is missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptStoreError(f"{name} is unreadable: {exc}") from None


def upgrade_from_2(db: Database) -> None:
    """Move HEAD and config into the database and add corrected times (schema 2 -> 3)."""
    if db.read_only:
        raise StoreIoError(
            "this store was written by an older release and must be upgraded once, which needs write access: "
            "run any mnem command on it (or on a copy) where it can be written"
        )
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
            logger.warning("upgraded the store, but could not remove the old %s file: %s", name, exc)
    logger.info("upgraded %s to schema 3 (HEAD and config now live in the database)", db.path.parent)
