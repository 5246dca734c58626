"""Redaction tests' shared help: removed bytes looked for where a store keeps its data, and records made fast.

A node's stored bytes are deflated, so a test looks for the stored form
(``stored``) as well as the plain text, and first checks that both are
there before the verb, so that "not found after" can fail.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pg_stores
from conftest import open_repo, store_sql
from mnem_history import ok

from mnem_store.objects import Redaction
from mnem_store.redaction import apply


def stored(store: Path, raw: bytes) -> bytes:
    """An object's bytes as the store keeps them (deflated)."""
    return bytes(store_sql(store, "SELECT data FROM objects WHERE id = ?", raw)[0][0])


def sqlite_files(store: Path) -> bytes:
    """Every byte of every file of a SQLite store (database, WAL, shared memory), read now."""
    return b"".join(path.read_bytes() for path in sorted((store / ".mnem").iterdir()) if path.is_file())


def pg_files(store: Path) -> bytes:
    """Every byte of the files of the store's ``objects`` and ``vectors`` tables and their TOAST tables.

    A ``CHECKPOINT`` first writes the server's dirty buffers to those files;
    each relation's file is found by ``pg_relation_filepath`` under the
    server's data folder, every 1 GB segment of it.
    """
    url = pg_stores.url_of(store) or ""
    data = pg_stores.data_dir()
    found = b""
    with pg_stores.connect(url) as conn:
        conn.execute("CHECKPOINT")
        for table in ("objects", "vectors"):
            oid, toast = conn.execute("SELECT oid, reltoastrelid FROM pg_class WHERE oid = to_regclass(%s)",
                                      (table,)).fetchone()
            for relation in (oid, toast):
                if relation:
                    path = conn.execute("SELECT pg_relation_filepath(%s)", (relation,)).fetchone()[0]
                    for segment in sorted(data.glob(f"{path}*")):
                        found += segment.read_bytes()
    return found


def files(store: Path) -> bytes:
    """What the store's files hold, on its backend."""
    return pg_files(store) if pg_stores.url_of(store) else sqlite_files(store)


def version_of(store: Path, node_id: str, rev: str = "HEAD") -> bytes:
    """The object id of a node's version at ``rev``."""
    return bytes.fromhex(ok("--json", "ls", "--objects", rev, cwd=store).json["nodes"][node_id])


def holds(data: bytes, secret: str, stored_form: bytes) -> bool:
    """Whether ``data`` (a store's files, an export, a pack) holds the secret, as text or as its stored bytes."""
    return secret.encode() in data or stored_form in data


def records(store: Path, count: int, seed: str) -> None:
    """``count`` records of objects the store does not hold, applied in one write through the engine's API."""
    made = [Redaction(hashlib.sha256(f"{seed}:{i}".encode()).digest(), f"{seed}:{i}", 1_000 + i, "retention",
                      "kept the last 3 checkpoints") for i in range(count)]
    repo = open_repo(store)
    try:
        with repo.backend.write():
            assert len(apply(repo, made)) == count
    finally:
        repo.close()
