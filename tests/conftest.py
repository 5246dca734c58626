"""Fixtures shared by every test package: a clean environment and the real ``mnem``."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import settings

#: In CI the property suites draw a fixed sequence of examples, so a red run is reproducible and a green one
#: lands the same way every time; a developer's runs draw new examples each time and keep any failure in the
#: local example database (.hypothesis/) until it is fixed.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

#: The ``mnem`` console script installed beside this interpreter (the project's own).
MNEM = str(Path(sys.executable).with_name("mnem"))


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (``@pytest.mark.anyio``) run on asyncio, the backend the MCP SDK's stdio client is tested on."""
    return "asyncio"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's author, store, colour or echo settings."""
    for name in ("MNEM_AUTHOR", "MNEM_STORE", "NO_COLOR", "MNEM_ECHO", "MNEM_BIN", "MNEM_BRIDGE_MODE", "MNEM_DEBUG"):
        monkeypatch.delenv(name, raising=False)


@dataclass
class Run:
    """One finished ``mnem`` process."""

    code: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        return orjson.loads(self.out)


def run_mnem(*args: str, cwd: Path | str | None = None, input: bytes | str | None = None,
             env: dict[str, str] | None = None) -> Run:
    """Run the real ``mnem`` binary with an argv (no shell) and capture everything."""
    data = input.encode() if isinstance(input, str) else input
    proc = subprocess.run(
        [MNEM, *args], cwd=cwd, input=data if data is not None else b"", capture_output=True,
        env={**os.environ, **(env or {})}, timeout=60,
    )
    return Run(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))


def _connect_store(root: Path) -> sqlite3.Connection:
    """A plain connection to a store's database (never creating one)."""
    # Read-write on purpose: a read-only connection cannot remove the -wal/-shm files it creates.
    # mode=rw still refuses to create a missing database.
    return sqlite3.connect(f"{(Path(root) / '.mnem' / 'store.sqlite3').as_uri()}?mode=rw", uri=True)


def store_fingerprint(root: Path) -> list[str]:
    """What a store holds, for "an error changed nothing" checks: every database row (HEAD and config among them).

    The database is compared by content (``iterdump``), not by file bytes:
    SQLite may legitimately rewrite the file on a read (a WAL checkpoint when
    the last connection closes), which changes bytes but never content.  The
    dump reads through SQLite itself, so it sees committed WAL frames too.
    HEAD and config are rows of the ``meta`` table, so the dump covers them.
    """
    conn = _connect_store(root)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def store_meta(root: Path, key: str) -> str | None:
    """One row of a store's ``meta`` table (``head``, ``config``, ``schema_version``), or None."""
    conn = _connect_store(root)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    finally:
        conn.close()
    return row[0] if row is not None else None


def set_store_meta(root: Path, key: str, value: str) -> None:
    """Write one row of a store's ``meta`` table behind the engine's back (to damage it, or to reach a state
    the CLI cannot make)."""
    conn = _connect_store(root)
    try:
        with conn:
            assert conn.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key)).rowcount == 1, key
    finally:
        conn.close()


@pytest.fixture
def mnem():
    """The ``run_mnem`` helper, as a fixture."""
    return run_mnem


#: The storage backends the engine's tests run on (``mnem_store.backend``); each test that takes ``store`` runs
#: once per backend.  SQLite is the first; a PostgreSQL backend adds its name here and a branch below.
BACKENDS = ("sqlite",)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A fresh, empty store on each backend; returns its root directory."""
    assert request.param == "sqlite", f"no fixture for the {request.param} backend"
    root = tmp_path / "store"
    result = run_mnem("init", str(root))
    assert result.code == 0, result.err
    return root


def strict_equal(a: Any, b: Any) -> bool:
    """JSON equality type for type: Python's ``==`` says ``1 == 1.0 == True``; a round trip must not."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
