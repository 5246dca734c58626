"""Bridge calls on an event loop's own thread: the waits for ``mnem`` are awaited, not blocked on.

An async caller (mnem-mcp's tools) that hands each synchronous bridge call
to a worker thread pays two thread wake-ups per call: one to start the
thread, one to wake the loop for the result.  On a virtual machine each one
costs 50-60 us when the other CPU sleeps, and together they cost 150 us per
call. That is more than the worker takes to answer a read.  ``run_inline``
runs the call in a greenlet on the loop's own thread instead.  The call
runs as it would anywhere else until it has to wait:

* for a worker's pipe (``Loop.ready``; ``WorkerRunner`` asks ``current()``
  before it blocks in ``poll``): the greenlet switches back to the loop,
  which awaits the file descriptor, so other tasks run meanwhile;
* for anything else that blocks (``blocking``: a one-shot ``mnem`` process,
  a busy store's back-off): it runs on a thread of its own, and the loop
  awaits a pipe the thread writes to when it is done.  Every wait is thus a
  file descriptor's readiness, which can be awaited again after an
  interruption.

No thread is involved: the loop wakes once, when the worker's answer
arrives (a thread would cost a second wake-up).  This is SQLAlchemy's asyncio design
(``greenlet_spawn``/``await_only``) narrowed to the two waits the bridge has.

Two rules keep it safe:

* Calls on one event loop take turns.  A runner's lock held by a call that
  is waiting on the loop would otherwise block the loop's thread for good
  when a second call asks for it.  The worker serialises requests anyway.
* A call is not cancelled halfway.  A request abandoned before its answer
  is read would put the worker's stream out of step.  The call finishes
  (its own timeout bounds it), and the cancellation is delivered after it.
  That holds for asyncio's ``Task.cancel()`` too, which an anyio shield
  does not stop (LangGraph cancels a pending ``aget`` that way): the
  interrupted wait is taken up again for the rest of its time.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from math import inf
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

if TYPE_CHECKING:
    import anyio
    import anyio.lowlevel

__all__ = ["Loop", "blocking", "current", "run_inline"]

P = ParamSpec("P")
T = TypeVar("T")

_LOOP: contextvars.ContextVar[Loop | None] = contextvars.ContextVar("mnem_bridge.inline", default=None)
_turns: anyio.lowlevel.RunVar[anyio.Lock] | None = None  # one lock per event loop, made on first use


@dataclass(frozen=True, slots=True)
class _Wait:
    """What a call inside ``run_inline`` asks its loop to await: a file descriptor's readiness, within ``timeout``."""

    fd: int
    writable: bool
    timeout: float | None


class Loop:
    """The event loop a call inside ``run_inline`` hands its waits to (``current()`` returns it)."""

    __slots__ = ("_parent",)

    def __init__(self, parent: Any) -> None:
        self._parent = parent  # the greenlet running the loop's task

    def ready(self, fd: int, *, writable: bool, timeout: float | None) -> bool:
        """Wait on the loop until ``fd`` is readable (or writable): whether it became so within ``timeout`` seconds."""
        return bool(self._parent.switch(_Wait(fd, writable, timeout)))

    def call(self, function: Callable[[], T]) -> T:
        """Run ``function`` on a thread of its own while the loop awaits it, and return what it returns (or raise)."""
        outcome: list[tuple[bool, Any]] = []
        done, told = os.pipe()  # the thread writes a byte to ``told`` when it is over

        def run() -> None:
            try:
                outcome.append((True, function()))
            except BaseException as error:  # handed to the call, which raises it
                outcome.append((False, error))
            finally:
                with contextlib.suppress(OSError):  # the call is gone (its greenlet was collected): nobody waits
                    os.write(told, b"!")
                os.close(told)

        threading.Thread(target=run, name="mnem-bridge-blocking", daemon=True).start()
        try:
            self.ready(done, writable=False, timeout=None)
        finally:
            os.close(done)
        ok, value = outcome[0]
        if not ok:
            raise value
        result: T = value
        return result


def current() -> Loop | None:
    """The loop to hand waits to, inside ``run_inline``; ``None`` anywhere else (wait as usual)."""
    return _LOOP.get()


def blocking(function: Callable[[], T]) -> T:
    """Run ``function``, which may block for long: here, or inside ``run_inline`` on a thread its loop awaits."""
    loop = _LOOP.get()
    return function() if loop is None else loop.call(function)


async def run_inline(function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a synchronous bridge call on this event loop's thread, awaiting its waits (see the module's docstring).

    Args:
        function: The call (any bridge code; its waits go through ``current()`` and ``blocking``).
        *args: Its positional arguments.
        **kwargs: Its keyword arguments.

    Returns:
        What ``function`` returns; what it raises is raised here.
    """
    import anyio
    import anyio.lowlevel
    from greenlet import getcurrent, greenlet

    global _turns
    if _turns is None:
        _turns = anyio.lowlevel.RunVar("mnem_bridge.inline.turns")
    try:
        turn = _turns.get()
    except LookupError:
        turn = anyio.Lock(fast_acquire=True)  # taken without a trip through the loop when no call is waiting
        _turns.set(turn)

    def body() -> T:
        _LOOP.set(Loop(getcurrent().parent))
        return function(*args, **kwargs)

    async with turn:
        call = greenlet(body)
        call.gr_context = contextvars.copy_context()  # the task's context variables, and _LOOP set only in its copy
        message = call.switch()
        if call.dead:  # it never waited (its answer was already there): nothing to await
            result: T = message
            return result
        interrupted: BaseException | None = None
        with anyio.CancelScope(shield=True):
            deadline: float | None = None  # of the wait in ``message``, on the loop's clock
            while not call.dead:
                if deadline is None:
                    deadline = anyio.current_time() + (message.timeout if message.timeout is not None else inf)
                try:
                    answer = await _ready(message, deadline)
                except anyio.get_cancelled_exc_class() as cancel:  # Task.cancel() pierces the shield
                    interrupted = cancel  # delivered once the call is over; the same wait is taken up again
                    continue
                except BaseException as error:  # whatever else the wait raised is raised in the call
                    message = call.throw(error)
                else:
                    message = call.switch(answer)
                deadline = None
    if interrupted is not None:
        raise interrupted
    await anyio.lowlevel.checkpoint_if_cancelled()
    result = message
    return result


async def _ready(wait: _Wait, deadline: float) -> bool:
    """Await a file descriptor's readiness until ``deadline`` (on the loop's clock): whether it became ready."""
    import anyio

    with anyio.CancelScope(deadline=deadline):
        await (anyio.wait_writable if wait.writable else anyio.wait_readable)(wait.fd)
        return True
    return False

