"""The process layer: the ``Runner`` protocol and the one-shot runner.

A *runner* takes an argv, optional stdin bytes and a timeout, and returns
the exit status and both output streams.  ``SubprocessRunner`` is the
one-shot runner: one ``mnem`` process per call, nothing left running
between calls.  The bridge starts processes in two places: here, and in
``worker`` (``WorkerRunner``, one persistent ``mnem serve --stdio`` behind
the same ``Runner`` protocol, with ``close()`` as its explicit end).  Both
follow the rules below.

Why ``subprocess`` and not ``sh`` (the design's first choice): measured side
by side in one run (benchmarks/spawn_cost.py; benchmarks/results/spawn_cost.md),
``sh`` adds about 7-10 ms per call with no timeout, about 30-105 ms per call
with the timeout the bridge must always pass (``sh`` enforces ``_timeout``
with a polling thread), and about 67 ms to import.  On a ~120 ms ``mnem``
call that is a large tax, and it buys nothing the bridge uses: no shell, no
piping, no text decoding.  We also need exact control of the session, the
environment merge (``sh``'s ``_env`` replaces the whole environment) and the
group kill on timeout, which plain ``Popen`` gives directly.

Rules every call follows (GitPython's leaked and hung processes are the
lesson): an argv list, never a shell string; the environment is a copy of
ours plus ``LC_ALL=C.UTF-8`` and ``NO_COLOR=1``; the child starts in a new
session, so on timeout, or if the caller is interrupted, the whole process
group is killed and reaped; output is read with ``communicate`` so full
pipes cannot deadlock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from . import inline

__all__ = ["RunResult", "Runner", "SubprocessRunner", "child_env"]

logger = logging.getLogger(__name__)

#: How long to wait for the pipes to close after killing a timed-out group.
#: Only a grandchild that left the group (its own ``setsid``) can hold them longer.
REAP_GRACE_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class RunResult:
    """One finished (or killed) process.

    Attributes:
        exit_status: The exit status; negative when killed by that signal.
        stdout: Everything the child wrote to standard output.
        stderr: Everything the child wrote to standard error.
        timed_out: Whether the runner killed it for exceeding the timeout.
        broken: Why there is no answer to interpret although the process did not time out
            or die by a signal: it broke the runner's protocol (a worker's answer line that
            is not one, or a worker that exited without answering).  ``None`` normally.
    """

    exit_status: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    broken: str | None = None


class Runner(Protocol):
    """Runs one ``mnem`` invocation; the seam for a future persistent worker."""

    def run(self, argv: Sequence[str], *, stdin: bytes | None, timeout: float | None) -> RunResult:
        """Run ``argv`` to completion.

        Args:
            argv: The program and its arguments.
            stdin: Bytes for standard input, or ``None`` for an empty one.
            timeout: Seconds before the process is killed, or ``None`` to wait forever.

        Returns:
            The exit status and captured output; ``timed_out`` or ``broken`` when
            there is no output to interpret.

        Raises:
            OSError: The program could not be started.
        """
        ...

    def close(self) -> None:
        """Release whatever the runner holds between calls."""
        ...


def child_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment: ours, forced to UTF-8 and no colour.

    Args:
        base: The environment to copy (default: ``os.environ`` at call time).

    Returns:
        A new mapping; ``base`` is not modified.
    """
    return {**(os.environ if base is None else base), "LC_ALL": "C.UTF-8", "NO_COLOR": "1"}


class SubprocessRunner:
    """One process per call via ``subprocess.Popen``; holds nothing between calls.

    Args:
        env: Variables added to every child's environment (a store URL's ``PGPASSWORD``).
    """

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.env = dict(env or {})

    def run(self, argv: Sequence[str], *, stdin: bytes | None, timeout: float | None) -> RunResult:
        """Run ``argv`` in a new session and wait for it, killing its group on timeout.

        Args:
            argv: The program and its arguments.
            stdin: Bytes for standard input, or ``None`` for an empty one.
            timeout: Seconds before the whole process group is killed.

        Returns:
            The exit status and captured output (``timed_out`` set if killed for time).

        Raises:
            OSError: The program could not be started.
        """
        with subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**child_env(), **self.env},
            start_new_session=True,
            close_fds=True,
        ) as proc:
            try:  # inside inline.run_inline the waiting is done on a thread the event loop awaits
                out, err = inline.blocking(partial(proc.communicate, stdin, timeout=timeout))
            except subprocess.TimeoutExpired:
                logger.debug("pid %d exceeded %ss; killing its process group", proc.pid, timeout)
                _kill_group(proc)
                out, err = inline.blocking(partial(_reap, proc))
                return RunResult(proc.returncode, out, err, timed_out=True)
            except BaseException:  # KeyboardInterrupt and friends: never leave the child behind
                _kill_group(proc)
                _reap(proc)
                raise
            return RunResult(proc.returncode, out, err)

    def close(self) -> None:
        """Nothing to release: every process has already been reaped."""


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's whole session (its pgid is its pid: ``start_new_session``)."""
    with contextlib.suppress(ProcessLookupError):  # the group is already gone
        os.killpg(proc.pid, signal.SIGKILL)


def _reap(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """Wait for a killed child and collect what it wrote, without hanging on stray pipe holders."""
    try:
        return proc.communicate(timeout=REAP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        proc.wait()
        return b"", b""
