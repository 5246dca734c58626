"""Kill points chosen from a ``mnem`` process's own progress, not from the clock.

A SIGKILL sent after a random sleep lands wherever the machine's load put
the process by then: on a busy machine most of them hit start-up, and a
test that needs kills during the write cannot count on them.  Here the
process itself says where it is.  ``argv(...)`` starts ``mnem`` under a
profile hook that counts the calls made to functions of ``mnem_store``
(each one a step of the program, the same steps whatever the machine's
speed) and, at the ``stop``-th, writes one byte to a pipe and waits to be
killed.  The test waits for that byte, then kills: the kill point is the
program's state, call number ``stop``, however slow the machine.

The hook also notes when ``Repo.write`` (every commit's body, inside the
write transaction) has been entered, and says so in the byte it writes
(``b"w"`` after it, ``b"s"`` before), so a test can check that its kills
really fell during writes.  A process that ends before its stop point
writes how many calls it made (``calls``), which is how a test learns the
range to draw stop points from.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["LAUNCH", "Stopped", "argv", "calls", "wait_stop"]

#: The launcher: ``python -c LAUNCH STOP FD mnem-args...`` runs ``mnem`` as its console script does.
LAUNCH = r"""
import os, signal, sys
stop, fd = int(sys.argv[1]), int(sys.argv[2])
sys.argv = ["mnem", *sys.argv[3:]]
count, writing = 0, False
def hook(frame, event, arg):
    global count, writing
    if event != "call" or "mnem_store" not in frame.f_code.co_filename:
        return
    count += 1
    if frame.f_code.co_name == "write" and frame.f_code.co_filename.endswith("repo.py"):
        writing = True
    if count == stop:
        sys.setprofile(None)
        os.write(fd, b"w" if writing else b"s")
        while True:
            signal.pause()
sys.setprofile(hook)
from mnem_store.process import main
status = main()
sys.setprofile(None)
os.write(fd, b"=%d" % count)
sys.exit(status)
"""

#: Seconds a test waits for a process to reach its stop point or end: a hang, not a kill point.
HANG = 120.0


def argv(stop: int, fd: int, args: Sequence[str]) -> list[str]:
    """The argv that runs ``mnem ARGS`` and stops at call ``stop`` (0: never), reporting on ``fd``."""
    return [sys.executable, "-c", LAUNCH, str(stop), str(fd), *args]


@dataclass(frozen=True)
class Stopped:
    """What the process said on its pipe: it stopped (``during_write``), or ended after ``calls`` calls."""

    stopped: bool
    during_write: bool = False
    calls: int = 0


def wait_stop(proc: subprocess.Popen[bytes], fd: int) -> Stopped:
    """Wait until the process reaches its stop point (then SIGKILL it) or ends, and say which.

    Raises:
        AssertionError: Neither happened within ``HANG`` seconds (the process hangs).
    """
    ready, _, _ = select.select([fd], [], [], HANG)
    assert ready, f"mnem neither reached its stop point nor ended within {HANG} s"
    said = os.read(fd, 64)
    if said in (b"w", b"s"):
        proc.send_signal(signal.SIGKILL)
        return Stopped(True, during_write=said == b"w")
    return Stopped(False, calls=int(said.lstrip(b"=")) if said.startswith(b"=") else 0)


def calls(args: Sequence[str], payload: bytes, env: dict[str, str] | None = None) -> int:
    """How many ``mnem_store`` calls one whole run of ``mnem ARGS`` makes (the range for stop points)."""
    read, write = os.pipe()
    try:
        proc = subprocess.Popen(argv(0, write, args), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, pass_fds=(write,), env=env)
        os.close(write)
        write = -1
        proc.communicate(payload, timeout=HANG)
        assert proc.returncode == 0, f"mnem {' '.join(args)} failed while counting its calls"
        said = os.read(read, 64)
        return int(said.lstrip(b"="))
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)
