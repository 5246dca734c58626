"""The time "now" of one invocation: the system clock, unless ``--now`` fixed it.

Every "now" the engine reads comes from ``now_ms``: the time of a commit
made without ``--time`` (so also when a lease written with a ``ttl``
starts), whether a lease has run out for a live read (``stamps --live``,
``ls --live``, ``similar --live``), and the time ``touch`` restarts leases
from and ``expire`` expires at.  Each ``mnem`` is a process of its own (or
one request to a worker), so a caller that keeps a clock of its own (tests
that let a TTL run out without waiting for it, a run replayed at its
original times) passes ``--now MS`` with every invocation;
``mnem_bridge.Mnem(clock=...)`` does it for a Python caller.  Without
``--now`` nothing changes: the system clock is read each time.
"""

from __future__ import annotations

import time

from .errors import UsageError

__all__ = ["MAX_NOW_MS", "fix", "fixed", "now_ms", "parse_now"]

#: The latest ``--now`` (about 146 million years): a lease's expiry, ``now`` plus at most a hundred
#: years, must still fit the signed 64-bit integer a database stores.
MAX_NOW_MS = 2**62

#: What ``now_ms`` answers while an invocation runs with ``--now``; None reads the system clock.
_fixed: int | None = None


def now_ms() -> int:
    """The current time in Unix milliseconds: the one ``--now`` fixed, else the system clock's."""
    return time.time_ns() // 1_000_000 if _fixed is None else _fixed


def fixed() -> int | None:
    """The time ``--now`` fixed for the invocation running, or None (the system clock)."""
    return _fixed


def fix(ms: int | None) -> None:
    """Make ``now_ms`` answer ``ms`` from now on (None: the system clock again)."""
    global _fixed
    _fixed = ms


def parse_now(text: str) -> int:
    """The value of ``--now MS``: Unix milliseconds, a whole number from 0 to ``MAX_NOW_MS``.

    Only ASCII digits are taken: ``int`` would also read ``+5``, ``1_000``
    or other scripts' digits, which no clock prints.

    Raises:
        UsageError: ``text`` is not such a number (exit status 2, code ``usage``).
    """
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_NOW_MS:
        raise UsageError(
            f"--now must be the time in Unix milliseconds, a whole number from 0 to {MAX_NOW_MS} "
            f"(`date +%s%3N` prints the current one); got {text!r}"
        )
    return int(text)
