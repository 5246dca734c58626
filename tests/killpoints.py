"""Kill points chosen from a ``mnem`` process's own progress, not from the clock.

A SIGKILL sent after a random sleep lands wherever the machine's load put
the process by then: on a busy machine most of them hit start-up, and a
test that needs kills during the write cannot count on them.  Here the
process itself says where it is.  ``argv(...)`` starts ``mnem`` under a
profile hook that counts the program's steps: each call to a function of
``mnem_store``, and each call those functions make into C (an SQL
statement, an ``os.write``, an ``os.replace``), the same steps whatever the
machine's speed.  At a stop point (the ``stop``-th step) it writes one
byte to a pipe and waits: to be killed, or, given a ``resume`` pipe, for a
byte there that lets it run on to its next stop point (a test that ends
the process's database sessions at chosen steps, say).  The test waits for
that byte, then acts: the point is the program's state, step ``stop``,
however slow the machine.

The hook also follows one function of the program, the ``marker``
(default ``Repo.write``, every commit's body, inside the write
transaction), and says in its byte whether the stop fell inside it
(``b"i"``) or not (``b"s"``).  So a test can check that its kills really
fell during the work it is about.  A process that ends before its last stop
point writes ``=STEPS,FIRST,LAST``: how many steps it made, and the first
and last steps inside the marker (0 if never), which is how a test learns
the range to draw stop points from (``measure``, ``aimed``).
"""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["HANG", "LAUNCH", "WRITE", "Run", "Stopped", "aimed", "argv", "kill", "measure", "said", "wait_stop"]

#: The launcher: ``python -c LAUNCH STOPS FD RESUME MARKER mnem-args...`` runs ``mnem`` as its console script does.
LAUNCH = r"""
import os, signal, sys
if sys.path[0] == "":
    del sys.path[0]  # what `mnem` imports, not what the working folder holds (python -c puts it first)
stops = [int(step) for step in sys.argv[1].split(",") if int(step) > 0]
fd, resume = int(sys.argv[2]), int(sys.argv[3])
where, _, name = sys.argv[4].rpartition(":")
sys.argv = ["mnem", *sys.argv[5:]]
count = first = last = inside = 0
def marked(code):
    return code.co_name == name and code.co_filename.endswith(where)
def hook(frame, event, arg):
    global count, first, last, inside
    code = frame.f_code
    if event == "return":
        if inside and marked(code):
            inside -= 1
        return
    if event not in ("call", "c_call") or "mnem_store" not in code.co_filename:
        return
    count += 1
    if event == "call" and marked(code):
        inside += 1
        first = first or count
    if inside:
        last = count
    if stops and count == stops[0]:
        stops.pop(0)
        os.write(fd, b"i" if inside else b"s")
        if resume < 0:
            sys.setprofile(None)
            while True:
                signal.pause()
        os.read(resume, 1)
sys.setprofile(hook)
from mnem_store.process import main
status = main()
sys.setprofile(None)
os.write(fd, b"=%d,%d,%d" % (count, first, last))
sys.exit(status)
"""

#: The default marker: ``Repo.write``, the body of every commit (``path/suffix.py:function``).
WRITE = "mnem_store/repo.py:write"

#: Seconds a test waits for a process to reach its stop point or end: a hang, not a kill point.
HANG = 120.0


def argv(stop: int | Sequence[int], fd: int, args: Sequence[str], *, resume: int = -1,
         marker: str = WRITE) -> list[str]:
    """The argv that runs ``mnem ARGS`` and stops at step ``stop`` (0: never; a sequence: at each, ascending).

    Args:
        stop: The step to stop at, or the steps (each reported on ``fd``; all but the last need ``resume``).
        fd: The pipe's write end the process reports on (pass it in ``pass_fds``).
        args: ``mnem``'s arguments.
        resume: A pipe's read end (in ``pass_fds`` too): a stopped process reads a byte there and runs on;
            -1: it waits to be killed.
        marker: The function the reports place each stop against, as ``path/suffix.py:function``.
    """
    stops = sorted({stop} if isinstance(stop, int) else set(stop))
    return [sys.executable, "-c", LAUNCH, ",".join(map(str, stops)) or "0", str(fd), str(resume), marker, *args]


@dataclass(frozen=True)
class Stopped:
    """What the process said on its pipe: it stopped (where), or it ended (``steps``, and the marker's span).

    Attributes:
        stopped: It reached a stop point (and, unless it was given ``resume``, was killed there).
        inside: The stop fell inside the marker.
        steps: A process that ended: how many steps it made.
        first: A process that ended: the first step inside the marker (0: never entered).
        last: A process that ended: the last step inside the marker.
    """

    stopped: bool
    inside: bool = False
    steps: int = 0
    first: int = 0
    last: int = 0


def said(fd: int) -> Stopped:
    """Wait for the process's next report on ``fd``: a stop point (it is waiting there), or its end.

    Raises:
        AssertionError: Neither came within ``HANG`` seconds (the process hangs).
    """
    ready, _, _ = select.select([fd], [], [], HANG)
    assert ready, f"mnem neither reached its stop point nor ended within {HANG} s"
    report = os.read(fd, 64)
    if report in (b"i", b"s"):
        return Stopped(True, inside=report == b"i")
    if not report.startswith(b"="):
        return Stopped(False)  # it died without a word: a failure the caller reports with its exit status
    steps, first, last = (int(number) for number in report[1:].split(b","))
    return Stopped(False, steps=steps, first=first, last=last)


def wait_stop(proc: subprocess.Popen[bytes], fd: int) -> Stopped:
    """Wait until the process reaches its stop point (then SIGKILL it) or ends, and say which.

    Raises:
        AssertionError: Neither happened within ``HANG`` seconds (the process hangs).
    """
    stopped = said(fd)
    if stopped.stopped:
        proc.send_signal(signal.SIGKILL)
    return stopped


@dataclass(frozen=True)
class Run:
    """One whole run of a command, stopped nowhere: how many steps it made, and where its marker ran."""

    steps: int
    first: int
    last: int


def measure(args: Sequence[str], payload: bytes | None = None, env: dict[str, str] | None = None, *,
            marker: str = WRITE) -> Run:
    """One whole run of ``mnem ARGS`` (``payload`` on stdin): its steps, the range to draw stop points from.

    Raises:
        AssertionError: The command failed or hung (a stop point drawn from a failed run means nothing).
    """
    read, write = os.pipe()
    try:
        proc = subprocess.Popen(argv(0, write, args, marker=marker), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(write,), env=env)
        os.close(write)
        write = -1
        out, err = proc.communicate(payload, timeout=HANG)
        assert proc.returncode == 0, f"mnem {' '.join(args)} failed while counting its steps: {(out + err).decode()}"
        ended = said(read)
        assert not ended.stopped and ended.steps, f"mnem {' '.join(args)} did not report its steps"
        return Run(ended.steps, ended.first, ended.last)
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)


def aimed(run: Run, kills: int, rng: random.Random) -> list[int]:
    """Where to stop ``kills`` runs of a command whose whole run is ``run``, in a seeded random order.

    Three quarters at the steps of the command's work (its marker's, from the first to one past the last):
    drawn from them, or each of them in turn when they are fewer, so every state a short piece of work passes
    through is stopped in.  The rest are drawn from start-up to a quarter past the run's end (some runs
    finish, and are checked as finished).
    """
    assert run.first, "the command never ran its marker: no stop point could land in its work"
    work, count = list(range(run.first, run.last + 2)), kills * 3 // 4
    chosen = rng.sample(work, count) if len(work) >= count else [work[n % len(work)] for n in range(count)]
    points = chosen + [rng.randint(1, run.steps * 5 // 4) for _ in range(kills - count)]
    rng.shuffle(points)
    return points


def kill(args: Sequence[str], stop: int, marker: str = WRITE, env: dict[str, str] | None = None) -> Stopped:
    """Run ``mnem ARGS`` and SIGKILL it at step ``stop``; where it stopped (not stopped: it finished, exit 0).

    Raises:
        AssertionError: The command failed by itself, or hung.
    """
    read, write = os.pipe()
    proc = subprocess.Popen(argv(stop, write, args, marker=marker), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(write,), env=env)
    os.close(write)
    out = err = b""
    try:
        stopped = wait_stop(proc, read)
        out, err = proc.communicate(timeout=HANG)
    finally:
        os.close(read)
        if proc.returncode is None:
            proc.kill()
            proc.communicate()
    expected = -signal.SIGKILL if stopped.stopped else 0
    assert proc.returncode == expected, f"mnem {' '.join(args)} failed by itself (exit {proc.returncode}): " \
        f"{(out + err).decode()}"
    return stopped
