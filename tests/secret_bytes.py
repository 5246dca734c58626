"""Where a secret's bytes could still be after a redaction: a store's files, an export, a pack.

A node's bytes are stored deflated, so the plain text alone proves nothing:
a secret is looked for both as its text and as the bytes its version is
stored as (the same in every store, since deflate's level and dictionary
are fixed), in every file of a SQLite store (database, WAL, shared memory)
and in the files of a PostgreSQL store's ``objects`` and ``vectors`` tables
(their TOAST tables too), read after a checkpoint.
"""

from __future__ import annotations

from pathlib import Path

import pg_stores
from conftest import store_sql
from mnem_history import ok

__all__ = ["holds", "store_files", "stored_form", "version_of"]


def version_of(store: Path, node_id: str, rev: str = "HEAD") -> bytes:
    """The object id of a node's version at ``rev``."""
    return bytes.fromhex(ok("--json", "ls", "--objects", rev, cwd=store).json["nodes"][node_id])


def stored_form(store: Path, raw: bytes) -> bytes:
    """A version's bytes as the store keeps them (deflated), read while it still has them."""
    rows = store_sql(store, "SELECT data FROM objects WHERE id = ?", raw)
    assert rows and rows[0][0] is not None, "the version's bytes are not there to look for"
    return bytes(rows[0][0])


def _sqlite_files(store: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted((store / ".mnem").iterdir()) if path.is_file())


def _pg_files(url: str) -> bytes:
    data = pg_stores.data_dir()
    found = b""
    with pg_stores.connect(url) as conn:
        conn.execute("CHECKPOINT")  # dirty buffers to the files
        for table in ("objects", "vectors"):
            oid = conn.execute("SELECT oid FROM pg_class WHERE oid = to_regclass(%s)", (table,)).fetchone()[0]
            toast = conn.execute("SELECT reltoastrelid FROM pg_class WHERE oid = %s", (oid,)).fetchone()[0]
            for relation in (oid, toast):
                if relation:
                    path = conn.execute("SELECT pg_relation_filepath(%s)", (relation,)).fetchone()[0]
                    for segment in sorted(data.glob(f"{path}*")):
                        found += segment.read_bytes()
    return found


def store_files(store: Path) -> bytes:
    """Every byte where a store keeps its objects, read now (see the module's docstring)."""
    url = pg_stores.url_of(store)
    return _pg_files(url) if url else _sqlite_files(store)


def holds(data: bytes, secret: str, stored: bytes) -> bool:
    """Whether ``data`` holds the secret, as text (an export, a pack) or as its stored bytes."""
    return secret.encode() in data or stored in data
