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
  the server's start-up): the loop awaits it on a thread, as before.

A read answered within the worker's polling budget never leaves the
greenlet: no thread, no wake-up.  This is SQLAlchemy's asyncio design
(``greenlet_spawn``/``await_only``) narrowed to the two waits the bridge has.

Two rules keep it safe:

* Calls on one event loop take turns.  A runner's lock held by a call that
  is waiting on the loop would otherwise block the loop's thread for good
  when a second call asks for it.  The worker serialises requests anyway.
* A call is not cancelled halfway, as with ``anyio.to_thread.run_sync``.
  A request abandoned before its answer is read would put the worker's
  stream out of step.  The call finishes (its own timeout bounds it), and
  the cancellation is delivered after it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
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
    """What a call inside ``run_inline`` asks its loop to await: a file descriptor, or a blocking function."""

    fd: int = -1
    writable: bool = False
    timeout: float | None = None
    function: Callable[[], Any] | None = None


class Loop:
    """The event loop a call inside ``run_inline`` hands its waits to (``current()`` returns it)."""

    __slots__ = ("_parent",)

    def __init__(self, parent: Any) -> None:
        self._parent = parent  # the greenlet running the loop's task

    def ready(self, fd: int, *, writable: bool, timeout: float | None) -> bool:
        """Wait on the loop until ``fd`` is readable (or writable): whether it became so within ``timeout`` seconds."""
        return bool(self._parent.switch(_Wait(fd, writable, timeout)))

    def call(self, function: Callable[[], T]) -> T:
        """Run ``function`` on a thread the loop awaits, and return what it returns (or raise what it raises)."""
        result: T = self._parent.switch(_Wait(function=function))
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
        if call.dead:  # it never waited (a read answered within the polling budget): nothing to await
            result: T = message
            return result
        with anyio.CancelScope(shield=True):
            while not call.dead:
                try:
                    answer = await _settle(message)
                except BaseException as error:  # whatever the wait raised is raised in the call
                    message = call.throw(error)
                else:
                    message = call.switch(answer)
    await anyio.lowlevel.checkpoint_if_cancelled()
    result = message
    return result


def _settle(wait: _Wait) -> Awaitable[Any]:
    """Await one wait of a call: the file descriptor's readiness (within its timeout), or a blocking function."""
    import anyio
    import anyio.to_thread

    if wait.function is not None:
        return anyio.to_thread.run_sync(wait.function)
    awaited = anyio.wait_writable if wait.writable else anyio.wait_readable

    async def ready() -> bool:
        with anyio.move_on_after(wait.timeout if wait.timeout is not None else float("inf")):
            await awaited(wait.fd)
            return True
        return False

    return ready()

