"""The load tests' processes (agents writing through the bridge, readers watching) and their checks.

Run as ``python load_agents.py ROLE MNEM STORE ...``; each role prints one
JSON report on standard output when it ends, so the test can check what every
process saw without sharing memory with it.

Every writer ``n`` remembers ``w<n>:0``, ``w<n>:1``, … in order, waiting for
each commit before the next, so in any committed state the ids of one writer
form a prefix ``0..k-1``.  A state that breaks that shape would be a half
applied or reordered write; ``prefix_violation`` names it.

The readers must watch the writes happen, however the machine shares its
cores between them: each writer makes its last write only once a ``gate``
file exists, and the test makes it once every reader has said (its
``ready`` file) that it read ``MIN_READS`` states between the first write
and the last.  Nothing is timed.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

import mnem_bridge
from mnem_bridge import agents

#: The load: this many writers, each remembering this many facts.
WRITERS = 8
PER_WRITER = 250
#: States each reader reads between the first write and the last (the writers' last writes wait for them).
MIN_READS = 10
#: Seconds a writer waits for its gate: only a reader that never reads (a hang) reaches it.
HANG = 600.0


def node_id(writer: int, seq: int) -> str:
    """The id writer ``writer`` gives its ``seq``-th fact."""
    return f"w{writer}:{seq}"


def prefix_violation(memory: Mapping[str, Any]) -> str | None:
    """Why ``memory`` (node id → content) cannot be a committed state of the load, or ``None``."""
    seen: dict[int, set[int]] = {}
    for key, content in memory.items():
        writer, seq = (int(part) for part in key[1:].split(":"))
        if content != {"writer": writer, "seq": seq}:
            return f"{key} holds {content!r}"
        seen.setdefault(writer, set()).add(seq)
    for writer, seqs in seen.items():
        if seqs != set(range(len(seqs))):
            return f"writer {writer}'s facts are not a prefix: missing {sorted(set(range(max(seqs))) - seqs)[:5]}"
    return None


class _BusyCounter(logging.Handler):
    """Counts the bridge's busy retries, which it logs at debug level."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += "store busy" in record.getMessage()


def wait_for(gate: Path) -> None:
    """Wait until the file ``gate`` exists (``HANG`` seconds at most: then the writer goes on, and the test fails)."""
    deadline = time.monotonic() + HANG
    while not gate.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def writer(mnem: str, store: str, number: int, count: int, gate: Path) -> dict[str, Any]:
    """Remember ``count`` facts, one commit each, the last once ``gate`` exists; report failures and busy retries."""
    counter = _BusyCounter()
    logger = logging.getLogger("mnem_bridge.agents")
    logger.addHandler(counter)
    logger.setLevel(logging.DEBUG)
    failures: list[str] = []
    with mnem_bridge.open(store, client=mnem_bridge.Mnem(mnem)) as memory:
        for seq in range(count):
            if seq == count - 1:
                wait_for(gate)
            try:
                agents.remember(memory, node_id(number, seq), {"writer": number, "seq": seq},
                                step=f"step {seq}", source=f"writer {number}")
            except mnem_bridge.MnemError as exc:
                failures.append(f"{exc.code}: {exc}")
    return {"failures": failures, "busy_retries": counter.count}


def _watch(stop: Path, ready: Path, read: Any) -> dict[str, Any]:
    """Call ``read()`` (→ node id → content) until ``stop`` exists; report what was wrong and how much was seen.

    ``ready`` is made once ``MIN_READS`` reads saw a state between the first write and the last.
    """
    reads, between, largest, errors = 0, 0, 0, []
    while not stop.exists():
        try:
            memory = read()
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            continue
        problem = prefix_violation(memory)
        if problem is not None:
            errors.append(problem)
        if len(memory) < largest:
            errors.append(f"memory shrank from {largest} to {len(memory)} facts")
        largest = max(largest, len(memory))
        reads += 1
        between += 0 < len(memory) < WRITERS * PER_WRITER
        if between == MIN_READS:
            ready.touch()
    return {"reads": reads, "between": between, "largest": largest, "errors": errors}


def reader(mnem: str, store: str, stop: str, ready: str) -> dict[str, Any]:
    """Read the state of HEAD's commit through the bridge, over and over, until told to stop."""
    with mnem_bridge.open(store, client=mnem_bridge.Mnem(mnem)) as memory:
        def read() -> dict[str, Any]:
            head = memory.head_commit()
            if head is None:
                return {}
            return {key: node.content for key, node in memory.state_at(head).items()}
        return _watch(Path(stop), Path(ready), read)


def cli_reader(mnem: str, store: str, stop: str, ready: str) -> dict[str, Any]:
    """Read working memory with a one-shot ``mnem --json show``, as a user at a terminal would."""
    def read() -> dict[str, Any]:
        run = subprocess.run([mnem, "-C", store, "--json", "show"], capture_output=True, check=False)
        if run.returncode != 0:
            raise RuntimeError(run.stdout.decode() + run.stderr.decode())
        return {key: node["content"] for key, node in orjson.loads(run.stdout).items()}
    return _watch(Path(stop), Path(ready), read)


def assert_every_write_landed_once(store: Path) -> None:
    """History is one straight line of exactly the 2,000 remembers, memory holds them all, and verify is clean."""
    from conftest import run_mnem  # the test side only: the load processes never import pytest

    expected = {node_id(w, i): {"writer": w, "seq": i} for w in range(WRITERS) for i in range(PER_WRITER)}
    log = run_mnem("--json", "log", cwd=store).json
    assert sorted(commit["message"] for commit in log) == sorted(f"remember {key}" for key in expected)
    assert len(run_mnem("--json", "log", "--first-parent", cwd=store).json) == WRITERS * PER_WRITER
    memory = run_mnem("--json", "show", cwd=store).json
    assert {key: node["content"] for key, node in memory.items()} == expected
    verify = run_mnem("verify", cwd=store)
    assert verify.code == 0, verify.out + verify.err


def assert_readers_saw_only_whole_states(reports: list[dict[str, Any]]) -> None:
    """Each reader read states between the first write and the last, and every state it saw was whole."""
    for report in reports:
        assert report["errors"] == [], report["errors"][:5]
        assert report["between"] >= MIN_READS, report


ROLES = {"writer": lambda m, s, n, c, g: writer(m, s, int(n), int(c), Path(g)), "reader": reader,
         "cli-reader": cli_reader}


if __name__ == "__main__":
    started = time.monotonic()
    report = ROLES[sys.argv[1]](*sys.argv[2:])
    report["seconds"] = round(time.monotonic() - started, 2)
    sys.stdout.write(orjson.dumps(report).decode())
