"""Eight agent processes remember 2,000 facts through the bridge while three readers watch.

Issue 8's load: 8 writer processes making 250 ``remember`` calls each on one
store, with readers throughout (two through the bridge, one through one-shot
``mnem`` as a user at a terminal).  The processes are real and share nothing
but the store on disk; ``load_agents`` holds what each of them runs and the
checks.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import load_agents
import orjson
import pg_stores
from conftest import MNEM
from load_agents import (
    HANG,
    PER_WRITER,
    WRITERS,
    assert_every_write_landed_once,
    assert_readers_saw_only_whole_states,
)
from manual_clock import eventually

SCRIPT = str(Path(load_agents.__file__))


def spawn(*args: str) -> subprocess.Popen[bytes]:
    """One load process (see ``load_agents``)."""
    return subprocess.Popen([sys.executable, SCRIPT, *args], stdout=subprocess.PIPE)


def report_of(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    """The JSON report a finished load process printed."""
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    return orjson.loads(out)


def test_eight_writer_processes_and_three_readers(store: Path, tmp_path: Path) -> None:
    stop, gate = tmp_path / "stop", tmp_path / "gate"
    ready = [tmp_path / f"ready{n}" for n in range(3)]
    address = pg_stores.address(store)
    readers = [spawn("reader", MNEM, address, str(stop), str(ready[n])) for n in range(2)]
    readers.append(spawn("cli-reader", MNEM, address, str(stop), str(ready[2])))
    writers = [spawn("writer", MNEM, address, str(n), str(PER_WRITER), str(gate)) for n in range(WRITERS)]

    def watched_enough() -> bool:
        assert all(proc.poll() is None for proc in readers), "a reader ended before it was told to"
        return all(path.exists() for path in ready)

    eventually(watched_enough, "every reader read states between the first write and the last", within=HANG)
    gate.touch()  # now the writers make their last writes
    written = [report_of(proc) for proc in writers]
    stop.touch()
    watched = [report_of(proc) for proc in readers]
    print(f"load: {WRITERS}x{PER_WRITER} remembers in {max(r['seconds'] for r in written)} s, "
          f"{sum(r['busy_retries'] for r in written)} busy retries, reads {[r['reads'] for r in watched]}")
    assert_readers_saw_only_whole_states(watched)
    assert [report["failures"] for report in written] == [[]] * WRITERS
    assert_every_write_landed_once(store)


