"""Fixtures shared by every test package: a clean environment, the real ``mnem``, and bounded processes.

The suite runs on ``pytest-xdist`` workers (``-n 3`` in pyproject's ``addopts``).  Two rules keep it
reliable there and cheap everywhere:

* Load tests, which run many writers (``SERIAL_MODULES``, or ``@pytest.mark.serial``), run alone: they take
  a lock that every other test takes shared, so no other test shares the cores with them
  (``pytest_runtest_protocol``).  That is for capacity, not timing: no test depends on how fast it runs.
* Every test ends with at most ``MAX_LIVE_WORKERS`` ``mnem serve`` workers alive under this process
  (``_bounded_workers``): a worker a test started and left open is closed at its end, and more than the
  bound left over (held by module or session fixtures) fails the test.
"""

from __future__ import annotations

import compileall
import contextlib
import fcntl
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fuzzing
import orjson
import pg_stores
import pytest
from hypothesis import settings

from mnem_bridge import worker as bridge_worker

#: In CI the property suites draw a fixed sequence of examples, so a red run is reproducible and a green one
#: lands the same way every time; a developer's runs draw new examples each time and keep any failure in the
#: local example database (.hypothesis/) until it is fixed.  Neither has a per-example deadline: the suites
#: check what values do, not how fast, and on two shared cores a first example that builds a schema can take
#: longer than hypothesis's 200 ms default (test_mcp_shapes failed that way under load); speed is measured
#: in benchmarks/.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

#: The ``mnem`` console script installed beside this interpreter (the project's own).
MNEM = str(Path(sys.executable).with_name("mnem"))
REPO = Path(__file__).resolve().parent.parent


#: The most ``mnem serve`` workers (children of this pytest process) a test may leave alive: those of module-
#: and session-scoped fixtures.  Workers a test started and did not close are closed before the count.
MAX_LIVE_WORKERS = 6

#: Modules whose tests must not share the cores with another test (xdist): load tests that run many writer
#: processes and would only slow each other (a load test among other tests is marked ``serial`` itself).
#: None is serial to be on time: no test asserts how long something took.  The kill tests (test_crash,
#: test_atomic, test_remotes' fetch, test_postgres' ended sessions) choose their points from the program's own
#: progress (tests/killpoints.py), and the tests that hold a write or a call (test_http_transport's SIGTERM,
#: test_http_tenants' parallel stores, tests/held_writes.py) wait for the program to say it got there, so they
#: all run beside others.
SERIAL_MODULES = frozenset({
    "tests/bridge/test_load.py",
    "tests/mcp/test_mcp_load.py",
})


def live_workers() -> dict[int, bytes]:
    """This process's children that are ``mnem serve --stdio`` workers, by pid (Linux: read from /proc)."""
    found: dict[int, bytes] = {}
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):
            for pid in (task / "children").read_text().split():
                with contextlib.suppress(OSError):
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                    if b"serve\0--stdio" in cmdline:
                        found[int(pid)] = cmdline
    return found


_peak_workers = 0  # the most workers alive at the end of a test, before any were closed
_peak_after = 0  # the most alive once the leftovers were closed (what the bound checks)


def _close_worker(pid: int) -> None:
    """End a worker this process started: through its open ``WorkerRunner`` if there is one, else directly.

    A runner dropped without ``close()`` is collected, but ``subprocess`` keeps its running ``Popen`` (and
    so the worker's stdin) alive until the interpreter exits; closing that stdin ends the worker politely.
    """
    for runner in list(bridge_worker._live):
        if runner.pid == pid:
            runner.close()
            return
    for proc in list(getattr(subprocess, "_active", None) or ()):
        if getattr(proc, "pid", None) == pid and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=2)
            break
    with contextlib.suppress(ProcessLookupError):
        if Path(f"/proc/{pid}/cmdline").read_bytes():  # still running (a zombie's is empty)
            os.killpg(pid, signal.SIGKILL)  # the worker leads its own process group


@pytest.fixture(autouse=True)
def _bounded_workers() -> Iterator[None]:
    """At most ``MAX_LIVE_WORKERS`` ``mnem serve`` workers outlive a test; the ones it left open are closed."""
    global _peak_workers, _peak_after
    before = set(live_workers())
    yield
    after = live_workers()  # every function-scoped fixture has closed what it opened by now
    _peak_workers = max(_peak_workers, len(after))
    for pid in after.keys() - before:  # started during this test (by its body) and never closed
        with contextlib.suppress(OSError):
            _close_worker(pid)
    left = live_workers()
    _peak_after = max(_peak_after, len(left))
    if len(left) > MAX_LIVE_WORKERS:
        pytest.fail(f"{len(left)} mnem serve workers alive after this test (bound {MAX_LIVE_WORKERS}): "
                    f"a fixture opens bridge clients without closing them; pids {sorted(left)}")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Write our packages' bytecode once, before any test spawns ``mnem`` or ``mnem-mcp``.

    The install is editable, so nothing compiled them; where ``PYTHONDONTWRITEBYTECODE`` is set (CI
    images often set it), every spawned process would compile each module it imports from source again,
    about 45 ms of every one-shot ``mnem``.  Python reads bytecode even then; only writing is off.
    """
    if getattr(session.config, "workerinput", None) is None:  # the controller, before xdist's workers start
        for package in ("mnem_ids", "mnem_store", "mnem_bridge", "mnem_mcp", "mnem_langgraph"):
            compileall.compile_dir(REPO / package, quiet=1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.split("::", 1)[0] in SERIAL_MODULES:
            item.add_marker(pytest.mark.serial)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Under xdist, a ``serial`` test holds the run's lock exclusively and every other test holds it shared.

    The lock covers the whole protocol (module fixtures set up in a test's setup and torn down in its
    teardown too).  A turnstile lock in front keeps a waiting serial test from being starved by a stream of
    shared holders.  Without xdist (one process) there is nothing to exclude.
    """
    workerinput = getattr(item.config, "workerinput", None)
    if workerinput is None:
        return (yield)
    # xdist gives each worker the basetemp <run's basetemp>/popen-gwN: the lock lives in the run's, shared by all.
    basetemp = item.config.option.basetemp
    directory = Path(basetemp).parent if basetemp else Path(tempfile.gettempdir())
    base = directory / f"mnem-pytest-{workerinput['testrunuid']}"
    serial = item.get_closest_marker("serial") is not None
    with open(f"{base}.gate", "a") as gate, open(f"{base}.lock", "a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if serial else fcntl.LOCK_SH)
        finally:
            if not serial:
                fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            return (yield)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            if serial:
                fcntl.flock(gate, fcntl.LOCK_UN)


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller reports its peak and its fuzz tally
        workeroutput["mnem_peak_workers"] = (_peak_workers, _peak_after)
        workeroutput["mnem_fuzz_tried"] = dict(fuzzing.TRIED)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    global _peak_workers, _peak_after
    output = getattr(node, "workeroutput", {})
    peak, after = output.get("mnem_peak_workers", (0, 0))
    _peak_workers, _peak_after = max(_peak_workers, peak), max(_peak_after, after)
    fuzzing.TRIED.update(output.get("mnem_fuzz_tried", {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.write_line(
        f"mnem serve workers alive at the end of a test, per pytest process, at most: {_peak_workers} before the "
        f"ones it left open were closed, {_peak_after} after (bound {MAX_LIVE_WORKERS})")
    for line in fuzzing.summary(fuzzing.TRIED):
        terminalreporter.write_line(line)


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
    """Run the real ``mnem`` binary with an argv (no shell) and capture everything.

    Run in a folder that stands for a PostgreSQL store (``pg_stores``), it acts on that store.
    """
    data = input.encode() if isinstance(input, str) else input
    url = pg_stores.url_of(cwd)
    proc = subprocess.run(
        [MNEM, *args], cwd=cwd, input=data if data is not None else b"", capture_output=True,
        env={**os.environ, **({"MNEM_STORE": url} if url else {}), **(env or {})}, timeout=60,
    )
    return Run(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))


def _connect_store(root: Path) -> sqlite3.Connection:
    """A plain connection to a store's database (never creating one)."""
    # Read-write on purpose: a read-only connection cannot remove the -wal/-shm files it creates.
    # mode=rw still refuses to create a missing database.
    return sqlite3.connect(f"{(Path(root) / '.mnem' / 'store.sqlite3').as_uri()}?mode=rw", uri=True)


def store_fingerprint(root: Path) -> list[str]:
    url = pg_stores.url_of(root)
    return pg_stores.fingerprint(url) if url else _sqlite_fingerprint(root)


def _sqlite_fingerprint(root: Path) -> list[str]:
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


def store_sql(root: Path, statement: str, *args: Any) -> list[Any]:
    """Run one statement (``?`` placeholders) on a store's tables behind the engine's back, on either backend;
    returns the rows it yields (to damage a store, or to look inside it)."""
    url = pg_stores.url_of(root)
    if url:
        with pg_stores.connect(url) as pg:
            cursor = pg.execute(statement.replace("?", "%s"), args)
            return cursor.fetchall() if cursor.description else []
    conn = _connect_store(root)
    try:
        with conn:
            return conn.execute(statement, args).fetchall()
    finally:
        conn.close()


def store_meta(root: Path, key: str) -> str | None:
    """One row of a store's ``meta`` table (``head``, ``config``, ``schema_version``), or None."""
    url = pg_stores.url_of(root)
    if url:
        with pg_stores.connect(url) as pg:
            found = pg.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return found[0] if found is not None else None
    conn = _connect_store(root)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    finally:
        conn.close()
    return row[0] if row is not None else None


def set_store_meta(root: Path, key: str, value: str) -> None:
    """Write one row of a store's ``meta`` table behind the engine's back (to damage it, or to reach a state
    the CLI cannot make)."""
    url = pg_stores.url_of(root)
    if url:
        with pg_stores.connect(url) as pg:
            assert pg.execute("UPDATE meta SET value = %s WHERE key = %s", (value, key)).rowcount == 1, key
        return
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


#: The storage backends the engine's tests run on (``mnem_store.backend``); each test that takes ``store`` (or
#: ``backend``) runs once per backend.
BACKENDS = ("sqlite", "postgresql")


def new_store(root: Path, backend: str) -> Path:
    """An empty store on ``backend``, addressed by the folder ``root`` (see ``pg_stores``); returns ``root``.

    Made in process (``Repo.init``, what ``mnem init`` runs): a test's store costs no process start.
    """
    init_repo(root, backend).close()
    return root


def copy_store(template: Path, target: Path) -> Path:
    """A private copy of a store (a template built once per module), on the template's backend."""
    url = pg_stores.url_of(template)
    if url is None:
        shutil.copytree(template, target)
        return target
    from mnem_store import porcelain
    from mnem_store.layout import StoreUrl

    with open_repo(template) as repo:
        document = porcelain.export(repo)
    copy = pg_stores.new_url()
    porcelain.import_(StoreUrl.parse(copy), document)
    return pg_stores.register(target, copy)


def open_repo(folder: Path) -> Any:
    """The engine's ``Repo`` for the store a test folder addresses (in process, on either backend)."""
    from mnem_store.layout import StoreUrl
    from mnem_store.repo import Repo

    url = pg_stores.url_of(folder)
    return Repo.open(StoreUrl.parse(url) if url else folder)


def init_repo(folder: Path, backend: str) -> Any:
    """A new store on ``backend`` made in process (``Repo.init``), addressed by ``folder``; returns it open."""
    from mnem_store.layout import StoreUrl
    from mnem_store.repo import Repo

    if backend == "postgresql":
        url = pg_stores.new_url()
        pg_stores.register(folder, url)
        return Repo.init(StoreUrl.parse(url))
    folder.parent.mkdir(parents=True, exist_ok=True)
    return Repo.init(folder)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each storage backend in turn."""
    name: str = request.param
    return name


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Path:
    """A fresh SQLite store, for tests about what only a store in a folder has (its files, nesting, upgrades)."""
    return new_store(tmp_path / "store", "sqlite")


@pytest.fixture
def store(backend: str, tmp_path: Path) -> Path:
    """A fresh, empty store on each backend; returns the folder that addresses it (``pg_stores``)."""
    return new_store(tmp_path / "store", backend)


def strict_equal(a: Any, b: Any) -> bool:
    """JSON equality type for type: Python's ``==`` says ``1 == 1.0 == True``; a round trip must not."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
