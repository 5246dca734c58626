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
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from mnem_bridge import run_inline
from mnem_bridge.process import RunResult, SubprocessRunner
from mnem_bridge.worker import WorkerRunner

from .support import HANG, fake_mnem

#: A fake's wait for a file ``gate`` ("": none) to exist, given up after a hang's bound: then ``opened`` is False.
OPENED = f"""
def opened(gate):
    deadline = time.monotonic() + {HANG}
    while gate and not os.path.exists(gate):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
"""
#: What a fake answers when its gate never opened (the task that should open it never ran).
NEVER = "the gate never opened: "

#: A worker whose request argv is ``[gate, text]``: it answers ``text`` once the file ``gate`` exists, and reads its
#: first request only once the file ``$READ_GATE`` exists (so a large request fills the pipe meanwhile).
ECHO_WORKER = OPENED + f"""
late = not opened(os.environ.get("READ_GATE", ""))
for line in sys.stdin:
    gate, text = json.loads(line)["argv"]
    if late or not opened(gate):
        text, late = {NEVER!r} + text, False
    sys.stdout.write(json.dumps({{"exit": 0, "stdout": text, "stderr": ""}}) + "\\n")
    sys.stdout.flush()
"""

#: A one-shot ``mnem`` run as ``mnem GATE TEXT [MARKER]``: it prints ``TEXT`` once ``GATE`` exists, and then writes
#: ``TEXT`` to the file ``MARKER`` too, if given.
ONE_SHOT = OPENED + f"""
gate, text = sys.argv[1:3]
text = text if opened(gate) else {NEVER!r} + text
if len(sys.argv) > 3:
    open(sys.argv[3], "w").write(text)
print(text, end="")
"""


def _while_ticking(call: Callable[[], Awaitable[Any]], gate: Path) -> Any:
    """What ``call`` returns, awaited while a task sleeping 10 ms at a time opens ``gate`` on its fifth tick.

    The call's process answers only once the gate is open, so the call gets its answer only if the loop ran
    the ticker while the call waited; a call that blocked the loop's thread instead gets ``NEVER``'s answer.
    """

    async def main() -> Any:
        async def tick() -> None:
            for _ in range(5):
                await anyio.sleep(0.01)
            gate.touch()

        async with anyio.create_task_group() as group:
            group.start_soon(tick)
            await anyio.sleep(0)  # the ticker is running before the call starts
            return await call()

    return anyio.run(main)


@pytest.fixture
def echo(tmp_path: Path) -> Path:
    return fake_mnem(tmp_path, ECHO_WORKER, features=("serve",))


def _asked(runner: WorkerRunner | SubprocessRunner, binary: Path, gate: Path | str, *args: str,
           stdin: bytes | None = None, timeout: float = HANG) -> Callable[[], Awaitable[RunResult]]:
    return lambda: run_inline(runner.run, [str(binary), str(gate), *args], stdin=stdin, timeout=timeout)


def test_a_slow_answer_is_awaited_while_the_loop_runs(echo: Path, tmp_path: Path) -> None:
    runner = WorkerRunner(str(echo))
    try:
        result = _while_ticking(_asked(runner, echo, tmp_path / "gate", "slow"), tmp_path / "gate")
        assert (result.exit_status, result.stdout) == (0, b"slow")
    finally:
        runner.close()


def test_a_request_larger_than_the_pipe_waits_for_room_on_the_loop(tmp_path: Path, echo: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    gate = tmp_path / "gate"
    monkeypatch.setenv("READ_GATE", str(gate))  # the worker reads nothing until the ticker opens the gate
    runner = WorkerRunner(str(echo))
    try:
        result = _while_ticking(_asked(runner, echo, "", "taken", stdin=b"x" * (1 << 20)), gate)
        assert (result.exit_status, result.stdout) == (0, b"taken")
    finally:
        runner.close()


def test_a_one_shot_process_is_awaited_on_a_thread(tmp_path: Path) -> None:
    binary = fake_mnem(tmp_path, ONE_SHOT)
    result = _while_ticking(_asked(SubprocessRunner(), binary, tmp_path / "gate", "once"), tmp_path / "gate")
    assert (result.exit_status, result.stdout) == (0, b"once")


def test_a_one_shot_timeout_raised_on_the_thread_is_handled_in_the_call(tmp_path: Path) -> None:
    """``communicate`` times out on the loop's thread; the runner still kills the process and says so."""
    binary = fake_mnem(tmp_path, ONE_SHOT)  # its gate never opens: it runs until it is killed
    result = anyio.run(_asked(SubprocessRunner(), binary, tmp_path / "never", "never", timeout=0.2))
    assert result.timed_out


def test_calls_on_one_loop_take_turns_over_one_worker(echo: Path, tmp_path: Path) -> None:
    """Calls waiting at once must not meet at the runner's lock: that would block the loop's thread for good.

    All five are waiting (the first for its answer, behind a closed gate) before the gate opens.  The loop runs
    on a thread of its own so that a deadlock fails the test instead of hanging it.
    """
    runner = WorkerRunner(str(echo))
    gate = tmp_path / "gate"
    answers: dict[str, bytes] = {}

    async def main() -> None:
        async def one(text: str) -> None:
            answers[text] = (await _asked(runner, echo, gate, text)()).stdout

        async with anyio.create_task_group() as group:
            for n in range(5):
                group.start_soon(one, f"call-{n}")
            await anyio.wait_all_tasks_blocked()  # every call is waiting: for the answer, or for its turn
            gate.touch()

    thread = threading.Thread(target=anyio.run, args=(main,), daemon=True)
    thread.start()
    thread.join(HANG)
    if thread.is_alive():  # deadlocked: close() would wait for the lock forever, so end the worker by hand
        os.killpg(runner.pid or 0, signal.SIGKILL)
        pytest.fail("calls waiting at once on one loop deadlocked at the runner's lock")
    runner.close()
    assert answers == {f"call-{n}": f"call-{n}".encode() for n in range(5)}


def _cancelled_mid_wait(call: Callable[[], Awaitable[RunResult]], gate: Path, *, native: bool) -> tuple[bool, bool]:
    """Cancel ``call`` while it waits behind ``gate`` (by an anyio scope, or by asyncio's ``Task.cancel()``).

    Returns whether it was cancelled, and whether it was still waiting once the cancellation had been
    delivered and the loop had nothing else to run (the gate opens only then, so its process can answer).
    """

    async def by_scope() -> tuple[bool, bool]:
        scope, done = anyio.CancelScope(), anyio.Event()

        async def run() -> None:
            with scope:
                await call()
            done.set()

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await anyio.wait_all_tasks_blocked()  # the call waits for its answer
            scope.cancel()
            await anyio.wait_all_tasks_blocked()
            waiting = not done.is_set()
            gate.touch()
        return scope.cancelled_caught, waiting

    async def by_task_cancel() -> tuple[bool, bool]:
        task = asyncio.create_task(call())
        await anyio.wait_all_tasks_blocked()
        task.cancel()
        await anyio.wait_all_tasks_blocked()
        waiting = not task.done()
        gate.touch()
        try:
            await task
        except asyncio.CancelledError:
            return True, waiting
        return False, waiting

    return anyio.run(by_task_cancel if native else by_scope)


@pytest.mark.parametrize("native", [False, True], ids=["anyio-scope", "task-cancel"])
def test_a_cancelled_call_finishes_first_and_the_worker_stays_in_step(echo: Path, tmp_path: Path,
                                                                      native: bool) -> None:
    """Cancelling a call mid-wait must not leave its answer in the pipe for the next request to read.

    asyncio's ``Task.cancel()`` is not stopped by an anyio shield, and LangGraph's
    ``abatch`` callers cancel that way, so both kinds of cancellation are checked.
    """
    runner = WorkerRunner(str(echo))
    gate = tmp_path / "gate"
    try:
        cancelled, waiting = _cancelled_mid_wait(_asked(runner, echo, gate, "first"), gate, native=native)
        assert cancelled
        assert waiting  # the call ran on to its answer before the cancellation was delivered
        second = anyio.run(_asked(runner, echo, "", "second"))
        assert second.stdout == b"second"
    finally:
        runner.close()


@pytest.mark.parametrize("native", [False, True], ids=["anyio-scope", "task-cancel"])
def test_a_cancelled_one_shot_call_is_reaped_before_the_cancellation(tmp_path: Path, native: bool) -> None:
    """A one-shot process waited on a thread is not abandoned mid-run by either kind of cancellation."""
    marker, gate = tmp_path / "ran", tmp_path / "gate"
    binary = fake_mnem(tmp_path, ONE_SHOT)
    call = _asked(SubprocessRunner(), binary, gate, "done", str(marker))
    cancelled, waiting = _cancelled_mid_wait(call, gate, native=native)
    assert cancelled
    assert waiting
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
