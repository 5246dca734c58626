"""The persistent worker runner: many invocations over one ``mnem serve --stdio``.

A one-shot ``mnem`` costs a Python start-up per call (tens of milliseconds);
a worker pays it once.  ``WorkerRunner`` speaks the worker protocol of
docs/cli-json.md: one JSON request per line (the argv after the binary, and
the stdin text), one JSON answer per line (exit status, stdout, stderr), so
its ``RunResult`` is exactly what the one-shot command would have produced.

Lifecycle rules (GitPython's leaked ``cat-file`` processes are the lesson):
the worker starts on first use in its own session; requests are serialised
by a lock, so threads (and asyncio code, through ``inline.run_inline``) can share it; a
request that outlives its timeout kills the worker's whole process group
and reports a timeout, as a one-shot call would (also while the worker is
still writing, or not reading, so neither a stream without end nor a wedged
worker holds the caller past it); a worker found dead before
a request is sent is restarted transparently, while one that dies *during*
a request is reported as that request's failure (it may already have
written, so it is never silently retried).  An answer line that is not one
(garbage, or JSON of another shape) means the stream is out of step with
the requests, so the worker is ended and that request fails; so does a
worker that exits without answering, with its real exit status (only a
signal is reported as a signal).  ``close()`` ends it, and an ``atexit``
hook ends any still open; nothing relies on ``__del__``.

Both directions are linear in the size of what passes: a 100 MB value goes
out in pipe-sized writes and comes back as chunks that are searched once
and joined once (appending each chunk to one ``bytes`` and rescanning it
took ~89 s for a 120 MB answer).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import select
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping, Sequence

import orjson

from . import inline
from .process import REAP_GRACE_SECONDS, RunResult, child_env

__all__ = ["WorkerRunner"]

logger = logging.getLogger(__name__)

_live: weakref.WeakSet[WorkerRunner] = weakref.WeakSet()

#: Bytes asked of the answer pipe per read: what a pipe holds by default, so a read can rarely return more.
#: Not more: each read allocates what it asks for, and asking for 1 MiB made every read map and unmap a
#: buffer that size (8 us, where reading a short answer takes 0.5 us).
READ_SIZE = 1 << 16

class WorkerRunner:
    """Runs ``mnem`` invocations through one long-lived ``mnem serve --stdio`` process.

    Args:
        binary: Absolute path of the ``mnem`` binary (it must list ``serve`` in its features).
        env: Variables added to the worker's environment (a store URL's ``PGPASSWORD``).
        framed: Send stdin and read output as raw bytes beside the JSON lines (the binary
            lists ``serve-framed``), not escaped inside them.
    """

    def __init__(self, binary: str, env: Mapping[str, str] | None = None, *, framed: bool = False) -> None:
        self.binary = binary
        self.env = dict(env or {})
        self.framed = framed
        self._proc: subprocess.Popen[bytes] | None = None
        self._output: select.poll | None = None  # waits for the worker's output; made once per worker, not per read
        self._lock = threading.Lock()
        self._buffer = b""
        _live.add(self)

    def run(self, argv: Sequence[str], *, stdin: bytes | None, timeout: float | None) -> RunResult:
        """Send one request (``argv[0]`` is the binary) and wait for its answer.

        Returns:
            The answer as a ``RunResult``; ``timed_out`` when the worker was killed for time,
            a negative status when it died while answering.

        Raises:
            OSError: The worker could not be started.
        """
        if self.framed:
            header = {"argv": list(argv[1:]), "stdin_bytes": None if stdin is None else len(stdin), "framed": True}
            request = b"".join((orjson.dumps(header), b"\n", stdin or b""))
        else:
            text = None if stdin is None else stdin.decode("utf-8")
            request = orjson.dumps({"argv": list(argv[1:]), "stdin": text}) + b"\n"
        with self._lock:
            deadline = None if timeout is None else time.monotonic() + timeout
            proc = self._send(request, deadline)
            line = None if proc is None else self._read_line(proc, deadline)
            if proc is None or line is None:  # timed out: the worker may be wedged, so end it like a one-shot process
                self._stop(kill=True)
                return RunResult(-signal.SIGKILL, b"", b"", timed_out=True)
            if not line:  # its output ended: it died, or exited, while answering
                partial, self._buffer = self._buffer, b""
                status = self._ended(proc)
                if status < 0:
                    return RunResult(status, b"", b"")
                how = f"partway through an answer: {_shown(partial)!r}" if partial.strip() else "without answering"
                return RunResult(status, b"", b"", broken=f"mnem serve exited with status {status} {how}")
            answer = _answer(line)
            if isinstance(answer, tuple):  # a framed header: the output follows as raw bytes
                status, sizes = answer
                body = self._read_exact(proc, sum(sizes), deadline)
                if body is None:
                    self._stop(kill=True)
                    return RunResult(-signal.SIGKILL, b"", b"", timed_out=True)
                if len(body) < sum(sizes):
                    status = self._ended(proc)
                    return RunResult(status, b"", b"", broken=f"mnem serve exited with status {status} partway "
                                     f"through an answer ({len(body)} of {sum(sizes)} bytes)")
                return RunResult(status, body[: sizes[0]], body[sizes[0] :])
            if isinstance(answer, str):  # the stream is out of step with our requests: never reuse it
                self._stop(kill=True)
                return RunResult(proc.returncode, b"", b"", broken=f"{answer}; the worker was ended")
            return answer

    def _ended(self, proc: subprocess.Popen[bytes]) -> int:
        """The exit status of a worker whose output ended (killed if it lingers without output)."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=REAP_GRACE_SECONDS)
        self._stop(kill=True)
        return proc.returncode

    def _send(self, data: bytes, deadline: float | None) -> subprocess.Popen[bytes] | None:
        """Write a request, starting (or restarting) the worker if it is not running.

        Args:
            data: The request line.
            deadline: ``time.monotonic()`` by which the worker must have taken all of it, or ``None``.

        Returns:
            The worker that took the request, or ``None`` if it stopped reading before the
            deadline (a request larger than the pipe would otherwise block here forever).

        Raises:
            OSError: The worker could not be started, or died on every attempt.
        """
        for attempt in (1, 2):
            proc = self._proc if self._proc is not None else self._start()
            try:  # a worker that has exited no longer reads: writing to it fails, which is the check
                return proc if _write_all(proc, data, deadline) else None
            except BrokenPipeError:  # died between requests (or mid-line): nothing of this request ran
                logger.debug("mnem worker pid %d was gone; restarting (attempt %d)", proc.pid, attempt)
                self._stop(kill=True)
        raise OSError(f"the mnem worker ({self.binary} serve --stdio) exits as soon as it starts")

    def _start(self) -> subprocess.Popen[bytes]:
        self._stop(kill=True)
        self._proc = subprocess.Popen(
            [self.binary, "serve", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**child_env(), **self.env},
            start_new_session=True,
            close_fds=True,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        os.set_blocking(self._proc.stdin.fileno(), False)  # so _write_all can give up at the deadline
        self._output = select.poll()
        self._output.register(self._proc.stdout.fileno(), select.POLLIN)
        self._buffer = b""
        logger.debug("started mnem worker pid %d", self._proc.pid)
        return self._proc

    def _read_line(self, proc: subprocess.Popen[bytes], deadline: float | None) -> bytes | None:
        """One answer line, in time linear in its length however long it is.

        Each chunk is kept as it comes and only the new chunk is searched
        for the newline; the line is joined once at the end.  The deadline
        is checked before every read, not only while waiting, because a
        worker that keeps writing without ending the line never lets
        ``select`` time out.

        Args:
            proc: The worker the request went to.
            deadline: ``time.monotonic()`` by which the line must be complete, or ``None``.

        Returns:
            The line without its newline (bytes after it stay in ``_buffer`` for the next
            answer); ``b""`` when the output ended first (the worker died, and what it did
            write stays in ``_buffer`` for the message); ``None`` once the deadline has passed.
        """
        line, newline, rest = self._buffer.partition(b"\n")
        if newline:
            self._buffer = rest
            return line
        chunks = [line] if line else []
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        no_line: bytes | None = None  # what to return without a line: None (time is up) or b"" (output ended)
        while self._output_within(deadline):  # up even if output is still arriving
            chunk = os.read(fd, READ_SIZE)
            if not chunk:
                no_line = b""
                break
            end = chunk.find(b"\n")
            if end < 0:
                chunks.append(chunk)
                continue
            chunks.append(chunk[:end])
            self._buffer = chunk[end + 1 :]
            return b"".join(chunks)
        self._buffer = b"".join(chunks)
        return no_line

    def _read_exact(self, proc: subprocess.Popen[bytes], size: int, deadline: float | None) -> bytes | None:
        """The next ``size`` bytes of output (fewer when it ended first), or ``None`` once the deadline has passed."""
        chunks = [self._buffer[:size]]
        have = len(chunks[0])
        self._buffer = self._buffer[size:]
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        while have < size:
            if not self._output_within(deadline):
                return None
            chunk = os.read(fd, min(READ_SIZE, size - have))
            if not chunk:
                break
            chunks.append(chunk)
            have += len(chunk)
        data = b"".join(chunks)
        self._buffer = data[size:] + self._buffer
        return data[:size]

    def _output_within(self, deadline: float | None) -> bool:
        """Whether the worker's output has bytes to read, or has ended, before ``deadline``.

        Inside ``inline.run_inline`` a wait that has to sleep is handed to the event loop.
        """
        wait = _remaining(deadline)
        assert self._output is not None and self._proc is not None and self._proc.stdout is not None
        if wait == 0.0:
            return False
        loop = inline.current()
        if loop is None or self._output.poll(0):
            return bool(self._output.poll(None if wait is None else wait * 1000))
        return loop.ready(self._proc.stdout.fileno(), writable=False, timeout=wait)

    def _stop(self, *, kill: bool) -> None:
        proc, self._proc, self._output = self._proc, None, None
        if proc is None:
            return
        if not kill and proc.stdin is not None:
            try:
                proc.stdin.close()  # end of input: the worker exits 0 after closing its stores
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):  # the group is already gone
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    @property
    def pid(self) -> int | None:
        """The running worker's process id, if one is running."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def close(self) -> None:
        """End the worker (politely, then by force); the runner can start a new one later."""
        with self._lock:
            self._stop(kill=False)


def _answer(line: bytes) -> RunResult | tuple[int, tuple[int, int]] | str:
    """One answer line: a ``RunResult``, a framed header (status and the output's sizes), or what is wrong with it.

    A worker that prints anything else (a stray debug line, a different
    protocol) answers ``{"exit": int, "stdout": str, "stderr": str}`` (or,
    framed, ``{"exit": int, "stdout_bytes": int, "stderr_bytes": int}``) no more.
    """
    try:
        answer = orjson.loads(line)
    except orjson.JSONDecodeError:
        return f"mnem serve answered with output that is not JSON: {_shown(line)!r}"
    if not isinstance(answer, dict):
        answer = {}
    match (answer.get("exit"), answer.get("stdout"), answer.get("stderr")):
        case (int() as status, str() as out, str() as err) if not isinstance(status, bool):
            return RunResult(status, out.encode("utf-8"), err.encode("utf-8"))
    match (answer.get("exit"), answer.get("stdout_bytes"), answer.get("stderr_bytes")):
        case (int() as status, int() as out_size, int() as err_size) if (
                not any(isinstance(n, bool) for n in (status, out_size, err_size)) and min(out_size, err_size) >= 0):
            return status, (out_size, err_size)
    return f"mnem serve answered with JSON of the wrong shape for a worker answer: {_shown(line)!r}"


def _remaining(deadline: float | None) -> float | None:
    """Seconds left until ``deadline`` (never negative, ``0.0`` once passed); ``None`` for no deadline."""
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _write_all(proc: subprocess.Popen[bytes], data: bytes, deadline: float | None) -> bool:
    """Write ``data`` to the worker's (non-blocking) stdin, waiting for room only until ``deadline``.

    A blocking write of more than the pipe holds waits for the worker to
    read, so a wedged worker would hold the caller forever, past any timeout.

    Args:
        proc: The worker.
        data: The bytes to write.
        deadline: ``time.monotonic()`` by which all must be written, or ``None``.

    Returns:
        Whether everything was written in time.

    Raises:
        BrokenPipeError: The worker's end of the pipe is closed (it has exited).
    """
    assert proc.stdin is not None
    fd = proc.stdin.fileno()
    pending = memoryview(data)
    room: select.poll | None = None  # made only when the pipe is full: most requests fit at once
    while True:
        with contextlib.suppress(BlockingIOError):  # the pipe is full: the worker has not read the last write yet
            pending = pending[os.write(fd, pending) :]
        if not pending:
            return True
        wait = _remaining(deadline)
        if wait == 0.0:
            return False
        loop = inline.current()
        if loop is not None:  # inside inline.run_inline: the event loop waits for room
            if not loop.ready(fd, writable=True, timeout=wait):
                return False
            continue
        if room is None:
            room = select.poll()
            room.register(fd, select.POLLOUT)
        if not room.poll(None if wait is None else wait * 1000):
            return False


def _shown(data: bytes) -> str:
    """The start of some output, for a message."""
    return data[:200].decode("utf-8", "replace")


@atexit.register
def _close_all() -> None:
    for runner in list(_live):
        runner.close()
