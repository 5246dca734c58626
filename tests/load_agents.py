"""The load tests' processes (agents writing through the bridge, readers watching) and their checks.

Run as ``python load_agents.py ROLE MNEM STORE ...``; each role prints one
JSON report on standard output when it ends, so the test can check what every
process saw without sharing memory with it.

Every writer ``n`` remembers ``w<n>:0``, ``w<n>:1``, … in order, waiting for
each commit before the next, so in any committed state the ids of one writer
form a prefix ``0..k-1``.  A state that breaks that shape would be a half
applied or reordered write; ``prefix_violation`` names it.
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


def writer(mnem: str, store: str, number: int, count: int) -> dict[str, Any]:
    """Remember ``count`` facts, one commit each; report the failures and busy retries."""
    counter = _BusyCounter()
    logger = logging.getLogger("mnem_bridge.agents")
    logger.addHandler(counter)
    logger.setLevel(logging.DEBUG)
    failures: list[str] = []
    with mnem_bridge.open(store, client=mnem_bridge.Mnem(mnem)) as memory:
        for seq in range(count):
            try:
                agents.remember(memory, node_id(number, seq), {"writer": number, "seq": seq},
                                step=f"step {seq}", source=f"writer {number}")
            except mnem_bridge.MnemError as exc:
                failures.append(f"{exc.code}: {exc}")
    return {"failures": failures, "busy_retries": counter.count}


def _watch(stop: Path, read: Any) -> dict[str, Any]:
    """Call ``read()`` (→ node id → content) until ``stop`` exists; report what was wrong and how much was seen."""
    reads, largest, errors = 0, 0, []
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
    return {"reads": reads, "largest": largest, "errors": errors}


def reader(mnem: str, store: str, stop: str) -> dict[str, Any]:
    """Read the state of HEAD's commit through the bridge, over and over, until told to stop."""
    with mnem_bridge.open(store, client=mnem_bridge.Mnem(mnem)) as memory:
        def read() -> dict[str, Any]:
            head = memory.head_commit()
            if head is None:
                return {}
            return {key: node.content for key, node in memory.state_at(head).items()}
        return _watch(Path(stop), read)


def cli_reader(mnem: str, store: str, stop: str) -> dict[str, Any]:
    """Read working memory with a one-shot ``mnem --json show``, as a user at a terminal would."""
    def read() -> dict[str, Any]:
        run = subprocess.run([mnem, "-C", store, "--json", "show"], capture_output=True, check=False)
        if run.returncode != 0:
            raise RuntimeError(run.stdout.decode() + run.stderr.decode())
        return {key: node["content"] for key, node in orjson.loads(run.stdout).items()}
    return _watch(Path(stop), read)


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
    """Each reader read many times while the writers ran, and every state it saw was whole."""
    for report in reports:
        assert report["errors"] == [], report["errors"][:5]
        assert report["reads"] >= 10, report


ROLES = {"writer": lambda m, s, n, c: writer(m, s, int(n), int(c)), "reader": reader, "cli-reader": cli_reader}


if __name__ == "__main__":
    started = time.monotonic()
    report = ROLES[sys.argv[1]](*sys.argv[2:])
    report["seconds"] = round(time.monotonic() - started, 2)
    sys.stdout.write(orjson.dumps(report).decode())
