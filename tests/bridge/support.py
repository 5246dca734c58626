"""Helpers shared by the bridge tests (and the MCP and fault-matrix tests): fake ``mnem`` binaries, process checks."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

#: A valid self-description, so a fake passes the contract check and misbehaves afterwards.
DESCRIPTION = {
    "name": "mnem", "version": "9.9.9", "format_version": 1, "contract": 1,
    "implementation": "fake", "features": [],
}


def fake_mnem(directory: Path, body: str, *, describe: bool = True, name: str = "mnem",
              features: Sequence[str] = ()) -> Path:
    """Write an executable Python script that stands in for ``mnem``.

    With ``describe``, ``--version --json`` answers with ``DESCRIPTION`` (listing
    ``features``: ``("serve",)`` makes the bridge run it as a worker) and
    every other invocation runs ``body`` (dedented; ``sys``, ``os``, ``json``,
    ``signal``, ``subprocess`` and ``time`` are imported).
    """
    prelude = "import json, os, signal, subprocess, sys, time\n"
    if describe:
        description = {**DESCRIPTION, "features": list(features)}
        prelude += (f"if sys.argv[1:] == ['--version', '--json']:\n"
                    f"    print({json.dumps(json.dumps(description))})\n    sys.exit(0)\n")
    path = directory / name
    path.write_text(f"#!{sys.executable}\n{prelude}{textwrap.dedent(body)}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def gone(pid: int) -> bool:
    """Whether ``pid`` has exited: no such process, or a zombie (exited, awaiting its parent's ``wait``).

    A killed grandchild is reparented and reaped by init in its own time, so
    a zombie counts as gone: it runs nothing and holds no pipe.
    """
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    state = next(line.split()[1] for line in status.splitlines() if line.startswith("State:"))
    return state in ("Z", "X")


#: Seconds a test waits for a call or a process that must end by itself: far beyond any timeout a test sets,
#: so only a hang reaches it (a slow machine only waits longer).
HANG = 60.0


def still_running(pids: Iterable[int], *, within: float = HANG) -> list[int]:
    """The ``pids`` that have not exited after waiting up to ``within`` seconds.

    SIGKILL is delivered asynchronously, so a process killed a moment ago
    may still show as running; this waits for that, it does not time anything.
    """
    pending = list(pids)
    deadline = time.monotonic() + within
    while pending and time.monotonic() < deadline:
        pending = [pid for pid in pending if not gone(pid)]
        if pending:
            time.sleep(0.02)
    return [pid for pid in pending if not gone(pid)]


def recorded(pids: Path) -> list[int]:
    """The pids a fake wrote to ``pids`` (``fake_mnem`` bodies that record themselves), none if it never ran."""
    return [int(pid) for pid in pids.read_text().split()] if pids.exists() else []


def ends(call: Callable[[], Any], pids: Path) -> Any:
    """What ``call()`` returns or raises (returned, not raised), once it ends by itself.

    The call runs on a thread; one still running after ``HANG`` seconds fails the test, after its fakes (the
    processes recorded in ``pids``) are killed so that it ends.  The bound is a hang's, never what is measured.
    """
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(call())
        except Exception as exc:  # handed to the test, which checks its type
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG)
    if thread.is_alive():
        for pid in recorded(pids):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        thread.join(HANG)
        pytest.fail(f"the call did not end within {HANG:g} s: its own timeout never fired")
    return outcome[0]


def mnem_workers() -> set[int]:
    """Our child processes that are ``mnem serve`` workers (Linux: read from /proc)."""
    children = {int(pid) for task in Path("/proc/self/task").iterdir()
                for pid in (task / "children").read_text().split()}
    return {pid for pid in children if b"serve\0--stdio" in Path(f"/proc/{pid}/cmdline").read_bytes()}


def paste(line: str, cwd: Path, *, status: int = 0) -> Any:
    """Feed an echoed command ``line`` to bash as if pasted at its prompt; the JSON it printed.

    Args:
        line: A shell line from the bridge (``last_command``, ``MnemError.command``, ``MNEM_ECHO``).
        cwd: Where bash runs (a directory the test lists afterwards for stray files).
        status: The exit status the command must end with.
    """
    done = subprocess.run(["bash"], input=line.encode(), cwd=cwd, capture_output=True, timeout=60)
    assert done.returncode == status, done.stderr
    return orjson.loads(done.stdout)
