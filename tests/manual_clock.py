"""``ManualClock``: a clock a test moves by hand, for ``clock=`` (``mnem_bridge.Mnem``, ``MnemosyneStore``).

The store is told the clock's time with every call (``mnem --now``), so
time passes only when the test says so: a TTL runs out because the test
moved the clock past it, exactly there, and never because the machine was
slow; nothing sleeps.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["START_MS", "ManualClock", "eventually"]

#: Where a manual clock starts: 2026-01-01T00:00:00Z, in Unix ms.
START_MS = 1_767_225_600_000


class ManualClock:
    """Answers ``ms`` (Unix milliseconds) until the test moves it; safe to read from a sweeper thread."""

    def __init__(self, ms: int = START_MS) -> None:
        self.ms = ms

    def __call__(self) -> int:
        return self.ms

    def advance(self, *, minutes: float = 0, seconds: float = 0) -> None:
        """Move the clock on (by whole milliseconds, as the store counts them)."""
        self.ms += round(minutes * 60_000 + seconds * 1000)


def eventually(condition: Callable[[], bool], what: str, within: float = 60.0) -> None:
    """Wait until ``condition()`` holds, checking every 50 ms: for a background thread's work, such as a sweep.

    The deadline only bounds a hang; nothing is timed, and a slow machine only waits longer.
    """
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)
