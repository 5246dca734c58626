"""MCP over standard input and output, read and written on the event loop instead of on threads.

The SDK's ``stdio_server`` reads each request line and writes each answer
through ``anyio.wrap_file``: a readline, a write and a flush, each a hop to a
worker thread and a wake-up of the loop when it is done.  On this kind of
virtual machine that is about a quarter of a millisecond per call, more than
all of mnem-mcp's own code (BENCHMARKS.md, "What bounds each target").  When
both ends of the wire are pipes or sockets, the usual case for an MCP client
that spawns the server, they are awaited on the loop instead
(``wait_readable``/``wait_writable``, then ``os.read``/``os.write``), and the
SDK's ``stdio_server`` gets them as its streams: its message parsing and
serialising are kept, its threads are not.

The SDK's guarantees are kept too:

* While serving, fd 0 reads the null device and fd 1 writes to standard
  error, so a stray ``print`` or a child that inherits them cannot corrupt
  the wire; the wire is served from private duplicates, and both are put
  back on exit.  (The SDK diverts them only when it opens the streams
  itself, so this module does it for the streams it passes.)
* Writes are non-blocking, so a client slow to read stalls only the writer.
  The flag belongs to the pipe's open file description, which may be shared:
  it is set only on a description that standard error does not share
  (``2>&1``), and restored on exit.

And one is added: every line gets an answer.  The SDK drops a line it
cannot parse (not JSON, a lone surrogate, invalid UTF-8, which it would
replace with U+FFFD) without answering, so the client waits until its own
timeout; here each line is screened first (``wire.screen``), and such a
line is answered with a JSON-RPC error instead.

Anything else (a regular file, a terminal) cannot be awaited, or would have
its mode changed under the user's shell, so it is served by the SDK's
``stdio_server`` as it is, the SDK's dropping of unparseable lines included:
no client program waits on those.

``serve`` runs a server's session over these streams: the one place
mnem-mcp uses an SDK internal (its docstring says why).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import anyio
from mcp.server.stdio import stdio_server

from .wire import screen

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.message import SessionMessage

    Streams = tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]

__all__ = ["Wire", "claim", "serve", "serve_stdio"]

#: The most read from the wire at once: a request larger than this arrives in several reads.
READ_SIZE = 1 << 16


@dataclass(frozen=True, slots=True)
class Wire:
    """The two ends of the wire, moved off the standard descriptors while the server runs (``claim``)."""

    read_fd: int  # a private duplicate of the client's end of standard input
    write_fd: int  # a private duplicate of standard output, non-blocking
    std_in: int  # the descriptors they were moved from, pointed elsewhere meanwhile
    std_out: int
    write_flags: int  # ``write_fd``'s file status flags before, put back by ``release``

    def release(self) -> None:
        """Put the wire back on the standard descriptors, with its flags, and close the duplicates."""
        with contextlib.suppress(OSError):
            fcntl.fcntl(self.write_fd, fcntl.F_SETFL, self.write_flags)
        for private, standard in ((self.read_fd, self.std_in), (self.write_fd, self.std_out)):
            with contextlib.suppress(OSError):
                os.dup2(private, standard)
            with contextlib.suppress(OSError):
                os.close(private)


def _awaitable(fd: int) -> bool:
    """Whether ``fd`` is a pipe or a socket: something a loop can await, whose mode is the server's to set."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _shares_description(fd: int, other: int) -> bool:
    """Whether ``fd`` and ``other`` may be one open file description (``2>&1``): the same pipe or socket."""
    try:
        mine, theirs = os.fstat(fd), os.fstat(other)
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)


def claim(std_in: int = 0, std_out: int = 1, std_err: int = 2) -> Wire | None:
    """Move the wire off ``std_in``/``std_out`` to private descriptors the loop awaits; ``None``: serve it as is.

    ``std_in`` then reads the null device and ``std_out`` writes to ``std_err``
    (the null device when that is closed).  ``Wire.release`` undoes it all.

    Args:
        std_in: The descriptor requests arrive on.
        std_out: The descriptor answers go to.
        std_err: Where stray output to ``std_out`` goes meanwhile.

    Returns:
        The wire; ``None`` when either end is not a pipe or socket, or when
        standard output shares its description with ``std_err``.
    """
    if not (_awaitable(std_in) and _awaitable(std_out)) or _shares_description(std_out, std_err):
        return None
    read_fd = fcntl.fcntl(std_in, fcntl.F_DUPFD_CLOEXEC, 3)
    write_fd = fcntl.fcntl(std_out, fcntl.F_DUPFD_CLOEXEC, 3)
    flags = fcntl.fcntl(write_fd, fcntl.F_GETFL)
    wire = Wire(read_fd, write_fd, std_in, std_out, flags)
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, std_in)
        finally:
            os.close(null)
        try:
            os.dup2(std_err, std_out)
        except OSError:  # standard error is closed: stray output goes nowhere rather than onto the wire
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, std_out)
            finally:
                os.close(null)
        fcntl.fcntl(write_fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    except OSError:
        wire.release()
        return None
    return wire


class _Lines:
    """The requests on the wire's read end, one line at a time, as the SDK's ``stdio_server`` iterates them.

    Each line is screened first (``wire.screen``): one the SDK could not
    parse, which it would drop without a word, is answered here with a
    JSON-RPC error on ``answers`` and not passed on.
    """

    def __init__(self, fd: int, answers: _Answers) -> None:
        self._fd = fd
        self._answers = answers
        self._buffer = b""

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n") + 1
            if end:
                line, self._buffer = self._buffer[:end], self._buffer[end:]
                screened = screen(line)
                if screened.answer is not None:
                    await self._answers.send(screened.answer)
                if screened.text is not None:
                    return screened.text
                continue
            await anyio.wait_readable(self._fd)
            try:
                chunk = os.read(self._fd, READ_SIZE)
            except BlockingIOError:  # readiness was spurious, or another reader took the bytes
                continue
            if not chunk:  # the client closed its end: a last line without a newline is still a request
                if not self._buffer:
                    raise StopAsyncIteration
                chunk = b"\n"
            self._buffer += chunk


class _Answers:
    """The wire's write end, with the ``write``/``flush`` the SDK's ``stdio_server`` calls for each answer.

    The SDK's writer and ``_Lines`` (answering a line it refused) both write
    here; a lock keeps each line whole while a full pipe makes one wait.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        """Write ``text`` whole, awaiting room in the pipe whenever it is full."""
        await self.send(text.encode("utf-8"))

    async def send(self, data: bytes) -> None:
        """Write ``data`` whole, after any line being written, awaiting room in the pipe whenever it is full."""
        async with self._lock:
            pending = memoryview(data)
            while pending:
                try:
                    pending = pending[os.write(self._fd, pending):]
                except BlockingIOError:
                    await anyio.wait_writable(self._fd)

    async def flush(self) -> None:
        """Nothing to flush: ``write`` returns once the kernel has every byte."""


@asynccontextmanager
async def serve_stdio() -> AsyncIterator[Streams]:
    """The SDK's ``stdio_server`` streams, over a wire the loop awaits when ``claim`` can take it."""
    wire = claim()
    if wire is None:
        async with stdio_server() as streams:
            yield streams
        return
    try:
        answers = _Answers(wire.write_fd)
        async with stdio_server(cast(Any, _Lines(wire.read_fd, answers)), cast(Any, answers)) as streams:
            yield streams
    finally:
        wire.release()


async def serve(server: MCPServer[Any]) -> None:
    """Serve ``server`` over standard input and output (``serve_stdio``) until the client closes them.

    ``MCPServer`` runs a session only over the streams it opens itself
    (``run_stdio_async``, on the SDK's threads); it has no public way to run
    one over streams its caller opened.  The SDK's own in-process ``Client``
    meets the same gap and reaches into the same attribute, with a TODO to
    make it public (``mcp/client/_memory.py``).  So this runs the low-level
    server that ``MCPServer`` wraps exactly as ``run_stdio_async`` does, on
    these streams: the only SDK internal mnem-mcp touches.
    """
    async with serve_stdio() as (read_stream, write_stream):
        session = server._lowlevel_server
        await session.run(read_stream, write_stream, session.create_initialization_options())
