"""``run_inline``: a bridge call on the event loop's thread that awaits its waits instead of blocking the loop.

Each wait is checked by a ticker task: the loop must keep running it while a
call waits for a worker's answer, for room in its pipe, or for a one-shot
process.  A call that blocked the thread instead would let it tick at most once.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import signal
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from mnem_bridge import run_inline
from mnem_bridge.process import RunResult, SubprocessRunner
from mnem_bridge.worker import WorkerRunner

from .support import fake_mnem

#: A worker whose request argv is ``[seconds, text]``: it answers ``text`` after ``seconds``, and
#: takes its first request only after ``READ_DELAY`` seconds (so a large request fills the pipe).
ECHO_WORKER = """
    time.sleep(float(os.environ.get("READ_DELAY", "0")))
    for line in sys.stdin:
        seconds, text = json.loads(line)["argv"]
        time.sleep(float(seconds))
        sys.stdout.write(json.dumps({"exit": 0, "stdout": text, "stderr": ""}) + "\\n")
        sys.stdout.flush()
"""


def _ticks_while(call: Callable[[], Awaitable[Any]]) -> tuple[Any, int]:
    """What ``call`` returns, and how often a task sleeping 10 ms at a time ran on the loop meanwhile."""

    async def main() -> tuple[Any, int]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await anyio.sleep(0.01)
                ticks += 1

        async with anyio.create_task_group() as group:
            group.start_soon(tick)
            await anyio.sleep(0)  # the ticker is running before the call starts
            result = await call()
            seen = ticks
            group.cancel_scope.cancel()
        return result, seen

    return anyio.run(main)


@pytest.fixture
def echo(tmp_path: Path) -> Path:
    return fake_mnem(tmp_path, ECHO_WORKER, features=("serve",))


def _asked(runner: WorkerRunner | SubprocessRunner, binary: Path, seconds: float, text: str, *,
           stdin: bytes | None = None, timeout: float = 30) -> Callable[[], Awaitable[RunResult]]:
    return lambda: run_inline(runner.run, [str(binary), str(seconds), text], stdin=stdin, timeout=timeout)


def test_a_slow_answer_is_awaited_while_the_loop_runs(echo: Path) -> None:
    runner = WorkerRunner(str(echo))
    try:
        result, ticks = _ticks_while(_asked(runner, echo, 0.3, "slow"))
        assert (result.exit_status, result.stdout) == (0, b"slow")
        assert ticks >= 5
    finally:
        runner.close()


def test_a_request_larger_than_the_pipe_waits_for_room_on_the_loop(tmp_path: Path, echo: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("READ_DELAY", "0.3")  # the worker reads nothing for 0.3 s: a 1 MiB request cannot go at once
    runner = WorkerRunner(str(echo))
    try:
        result, ticks = _ticks_while(_asked(runner, echo, 0, "taken", stdin=b"x" * (1 << 20)))
        assert (result.exit_status, result.stdout) == (0, b"taken")
        assert ticks >= 5
    finally:
        runner.close()


def test_a_one_shot_process_is_awaited_on_a_thread(tmp_path: Path) -> None:
    binary = fake_mnem(tmp_path, "time.sleep(float(sys.argv[1])); print(sys.argv[2], end='')")
    result, ticks = _ticks_while(_asked(SubprocessRunner(), binary, 0.3, "once"))
    assert (result.exit_status, result.stdout) == (0, b"once")
    assert ticks >= 5


def test_a_one_shot_timeout_raised_on_the_thread_is_handled_in_the_call(tmp_path: Path) -> None:
    """``communicate`` times out on the loop's thread; the runner still kills the process and says so."""
    binary = fake_mnem(tmp_path, "time.sleep(float(sys.argv[1])); print(sys.argv[2], end='')")
    result, _ = _ticks_while(_asked(SubprocessRunner(), binary, 30, "never", timeout=0.2))
    assert result.timed_out


def test_calls_on_one_loop_take_turns_over_one_worker(echo: Path) -> None:
    """Two calls waiting at once must not meet at the runner's lock: that would block the loop's thread for good.

    The loop runs on a thread of its own so that a deadlock fails the test instead of hanging it.
    """
    runner = WorkerRunner(str(echo))
    answers: dict[str, bytes] = {}

    async def main() -> None:
        async def one(text: str) -> None:
            answers[text] = (await run_inline(runner.run, [str(echo), "0.05", text], stdin=None, timeout=30)).stdout

        async with anyio.create_task_group() as group:
            for n in range(5):
                group.start_soon(one, f"call-{n}")

    thread = threading.Thread(target=anyio.run, args=(main,), daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive():  # deadlocked: close() would wait for the lock forever, so end the worker by hand
        os.killpg(runner.pid or 0, signal.SIGKILL)
        pytest.fail("calls waiting at once on one loop deadlocked at the runner's lock")
    runner.close()
    assert answers == {f"call-{n}": f"call-{n}".encode() for n in range(5)}


def _cancelled_mid_wait(call: Callable[[], Awaitable[RunResult]], *, native: bool) -> tuple[bool, float]:
    """Cancel ``call`` 50 ms in (by an anyio scope, or by asyncio's ``Task.cancel()``): cancelled?, seconds it took."""

    async def by_scope() -> bool:
        with anyio.move_on_after(0.05) as scope:
            await call()
        return scope.cancelled_caught

    async def by_task_cancel() -> bool:
        task = asyncio.create_task(call())
        await asyncio.sleep(0.05)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return True
        return False

    async def main() -> tuple[bool, float]:
        start = time.monotonic()
        cancelled = await (by_task_cancel() if native else by_scope())
        return cancelled, time.monotonic() - start

    return anyio.run(main)


@pytest.mark.parametrize("native", [False, True], ids=["anyio-scope", "task-cancel"])
def test_a_cancelled_call_finishes_first_and_the_worker_stays_in_step(echo: Path, native: bool) -> None:
    """Cancelling a call mid-wait must not leave its answer in the pipe for the next request to read.

    asyncio's ``Task.cancel()`` is not stopped by an anyio shield, and LangGraph's
    ``abatch`` callers cancel that way, so both kinds of cancellation are checked.
    """
    runner = WorkerRunner(str(echo))
    try:
        cancelled, waited = _cancelled_mid_wait(_asked(runner, echo, 0.3, "first"), native=native)
        assert cancelled
        assert waited >= 0.3  # the call ran to its end before the cancellation was delivered
        second = anyio.run(_asked(runner, echo, 0, "second"))
        assert second.stdout == b"second"
    finally:
        runner.close()


@pytest.mark.parametrize("native", [False, True], ids=["anyio-scope", "task-cancel"])
def test_a_cancelled_one_shot_call_is_reaped_before_the_cancellation(tmp_path: Path, native: bool) -> None:
    """A one-shot process waited on a thread is not abandoned mid-run by either kind of cancellation."""
    marker = tmp_path / "ran"
    binary = fake_mnem(tmp_path, f"time.sleep(float(sys.argv[1])); open({str(marker)!r}, 'w').write(sys.argv[2])")
    cancelled, waited = _cancelled_mid_wait(_asked(SubprocessRunner(), binary, 0.3, "done"), native=native)
    assert cancelled
    assert waited >= 0.3
    assert marker.read_text() == "done"


def test_what_the_call_raises_is_raised_to_the_caller() -> None:
    def fails() -> None:
        raise LookupError("from inside the call")

    with pytest.raises(LookupError, match="from inside the call"):
        anyio.run(run_inline, fails)


def test_the_call_sees_the_tasks_context_variables() -> None:
    request: contextvars.ContextVar[str] = contextvars.ContextVar("request")

    async def main() -> str:
        request.set("req-7")
        return await run_inline(request.get)

    assert anyio.run(main) == "req-7"
