"""The persistent worker: same answers as one-shot, shared safely, restarted, never leaked.

A worker that hangs, dies or answers garbage is a cell of tests/test_failing_parts.py.
"""

from __future__ import annotations

import json
import os
import signal
import textwrap
import threading
from pathlib import Path

import pytest
from conftest import MNEM

import mnem_bridge
from mnem_bridge import agents
from mnem_bridge.errors import CommandTimeoutError, InvalidRefError
from mnem_bridge.process import SubprocessRunner
from mnem_bridge.worker import WorkerRunner

from .support import ends, fake_mnem, gone, recorded, still_running

#: The bridge's timeout in the timeout tests, whose fakes never finish: short, so the tests are quick.
SHORT_TIMEOUT = 1.0
#: A value of ~64 MB once encoded: every character from U+0001 to U+07FF (controls, quotes,
#: backslashes, 2-byte UTF-8), repeated.  An expression, so a fake worker can build the same value.
BIG_VALUE = '"".join(map(chr, range(1, 0x800))) * 16_000'


def replay(store: mnem_bridge.Store) -> list:
    """A fixed run touching writes, reads, history and errors; returns everything observed."""
    seen: list = []
    seen.append(agents.remember(store, "plan", "enterprise", source="ticket-1", time_ms=1000))
    seen.append(agents.remember_many(store, [{"id": "seats", "content": 40}, {"id": "x", "content": None}],
                                     time_ms=2000))
    seen.append(agents.remember(store, "plan", "pro", observation="bill", step="s31", time_ms=3000))
    seen.append(agents.forget(store, "x", time_ms=4000))
    seen.append([c.to_dict() for c in store.log()])
    seen.append({k: v.to_dict() for k, v in store.working_memory().items()})
    seen.append(store.blame("plan").to_dict())
    seen.append(store.changed_by(store.head_commit()))
    try:
        store.blame("ghost")
    except InvalidRefError as exc:
        seen.append((exc.code, str(exc)))
    return seen


def test_worker_and_one_shot_answer_identically(tmp_path):
    with mnem_bridge.init(tmp_path / "w", client=mnem_bridge.Mnem(MNEM, mode="worker")) as worker_store, \
            mnem_bridge.init(tmp_path / "o", client=mnem_bridge.Mnem(MNEM, mode="oneshot")) as oneshot_store:
        assert isinstance(worker_store.client.runner, WorkerRunner)
        assert isinstance(oneshot_store.client.runner, SubprocessRunner)
        got = replay(worker_store)
        expected = replay(oneshot_store)
        assert json.dumps(got).replace(str(tmp_path / "w"), "") == json.dumps(expected).replace(str(tmp_path / "o"), "")


def test_worker_is_the_default_and_the_environment_forces_one_shot(tmp_path, monkeypatch):
    with mnem_bridge.init(tmp_path / "a") as store:  # the store owns (and closes) its client
        assert isinstance(store.client.runner, WorkerRunner)
        pid = store.client.runner.pid
        store.working_memory()
        assert store.client.runner.pid == pid  # one process for every call
    assert gone(pid)  # closing the store ended the worker
    monkeypatch.setenv("MNEM_BRIDGE_MODE", "oneshot")
    with mnem_bridge.init(tmp_path / "b", client=mnem_bridge.Mnem(MNEM)) as store:
        assert isinstance(store.client.runner, SubprocessRunner)
    with pytest.raises(ValueError):
        mnem_bridge.Mnem(MNEM, mode="fast")


def test_the_echoed_line_is_the_equivalent_one_shot_command(tmp_path):
    import subprocess

    with mnem_bridge.init(tmp_path / "s", client=mnem_bridge.Mnem(MNEM)) as store:
        agents.remember(store, "it's", "a $(value)\n`x`", time_ms=5, author="me")
        command = store.last_command
        expected_head = store.head_commit()
    (tmp_path / "s2").mkdir()
    subprocess.run(["bash", "-c", f"{MNEM} init {tmp_path / 's2'}"], check=True, capture_output=True)
    rerun = subprocess.run(["bash", "-c", command.replace(str(tmp_path / "s"), str(tmp_path / "s2"))],
                           capture_output=True, check=True)
    assert json.loads(rerun.stdout)["commit"]["id"] == expected_head


def test_a_worker_killed_between_calls_is_restarted(bstore):
    agents.remember(bstore, "a", 1)
    first = bstore.client.runner.pid
    os.kill(first, signal.SIGKILL)
    assert still_running([first]) == []
    agents.remember(bstore, "b", 2)  # transparently on a new worker
    assert bstore.client.runner.pid not in (None, first)
    assert set(bstore.working_memory()) == {"a", "b"}


def test_threads_share_one_worker_safely(bstore):
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(10):
                agents.remember(bstore, f"t{n}-{i}", i)
                assert bstore.working_node(f"t{n}-{i}").content == i
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(bstore.log()) == 60
    assert len(bstore.working_memory()) == 60


def _recording_pid(pids: Path, body: str) -> str:
    """A fake's ``body`` that first appends its pid to ``pids``, so a test can check it was ended."""
    record = f"with open({str(pids)!r}, 'a') as record:\n    record.write(f'{{os.getpid()}} ')\n"
    return record + textwrap.dedent(body)


def test_a_worker_streaming_an_answer_without_end_is_timed_out(tmp_path: Path) -> None:
    """Output that never stops arriving must not hold the caller: the bridge's own timeout ends the call.

    ``select`` never times out on such a worker, so only a deadline checked
    on every read ends the call; without it the call would never end (``ends``
    fails it then).  The error is the timeout's, and the worker is gone.
    """
    pids = tmp_path / "pids"
    binary = fake_mnem(tmp_path, _recording_pid(pids, """
        sys.stdin.readline()
        while True:  # small writes back to back, never a newline: there is always output waiting
            os.write(1, b"x" * 64)
    """), features=("serve",))
    with mnem_bridge.Mnem(binary, timeout=SHORT_TIMEOUT) as client:
        error = ends(lambda: client.call(tmp_path, "status"), pids)
        assert isinstance(error, CommandTimeoutError) and error.timeout == SHORT_TIMEOUT, error
        assert client.runner.pid is None  # the worker was ended, not left streaming
    assert still_running(recorded(pids)) == []


def test_a_worker_that_stops_reading_a_large_request_is_timed_out(tmp_path: Path) -> None:
    """A request larger than the pipe, sent to a wedged worker, must not block the write: the timeout ends it."""
    pids = tmp_path / "pids"
    binary = fake_mnem(tmp_path, _recording_pid(pids, "time.sleep(300)"), features=("serve",))
    with mnem_bridge.Mnem(binary, timeout=SHORT_TIMEOUT) as client:
        error = ends(lambda: client.call(tmp_path, "status", payload="x" * (4 << 20)), pids)
        assert isinstance(error, CommandTimeoutError) and error.timeout == SHORT_TIMEOUT, error
    assert still_running(recorded(pids)) == []


def test_a_large_answer_is_read_whole_and_byte_exact_and_what_follows_it_is_kept(tmp_path: Path) -> None:
    """A ~64 MB answer line arrives in thousands of pipe reads; the next answer, sent in the same write, is kept."""
    binary = fake_mnem(tmp_path, f"""
        for number, request in enumerate(sys.stdin):
            if number == 0:
                stdout = json.dumps({{"blob": {BIG_VALUE}}}, ensure_ascii=False)
                answers = [{{"exit": 0, "stdout": stdout, "stderr": ""}},
                           {{"exit": 3, "stdout": "next", "stderr": "e"}}]
                sys.stdout.buffer.write(b"".join(json.dumps(a, ensure_ascii=False).encode() + b"\\n" for a in answers))
                sys.stdout.flush()
    """, features=("serve",))
    expected = json.dumps({"blob": eval(BIG_VALUE)}, ensure_ascii=False).encode("utf-8")
    assert len(expected) > 50_000_000
    runner = WorkerRunner(str(binary))
    try:
        big = runner.run([str(binary), "show"], stdin=None, timeout=120)
        assert (big.exit_status, big.stderr, big.timed_out, big.broken) == (0, b"", False, None)
        assert big.stdout == expected
        pid = runner.pid
        following = runner.run([str(binary), "status"], stdin=None, timeout=120)
        assert following == mnem_bridge.RunResult(3, b"next", b"e")
        assert runner.pid == pid  # the same worker: the second answer came from what was read with the first
    finally:
        runner.close()


def test_a_framed_answer_is_read_byte_exact_and_what_follows_it_is_kept(tmp_path: Path) -> None:
    """Framed: raw output after the header, read by count, with the next answer from the same write kept."""
    binary = fake_mnem(tmp_path, """
        request = json.loads(sys.stdin.buffer.readline())
        stdin = sys.stdin.buffer.read(request["stdin_bytes"] or 0)
        out, err = b"\\n".join([stdin, b"\\xff not utf-8"]) * 50_000, b"warn"
        next_header = {"exit": 3, "stdout_bytes": 4, "stderr_bytes": 0}
        sys.stdout.buffer.write(json.dumps({"exit": 0, "stdout_bytes": len(out), "stderr_bytes": len(err)}).encode()
                                + b"\\n" + out + err + json.dumps(next_header).encode() + b"\\nnext")
        sys.stdout.flush()
        sys.stdin.buffer.readline()
    """, features=("serve", "serve-framed"))
    runner = WorkerRunner(str(binary), framed=True)
    try:
        big = runner.run([str(binary), "write"], stdin=b'{"put": []}\n', timeout=60)
        assert big == mnem_bridge.RunResult(0, b"\n".join([b'{"put": []}\n', b"\xff not utf-8"]) * 50_000, b"warn")
        assert runner.run([str(binary), "status"], stdin=None, timeout=60) == mnem_bridge.RunResult(3, b"next", b"")
    finally:
        runner.close()


@pytest.mark.parametrize(("answer", "broken"), [
    ('{"exit": 0, "stdout_bytes": 100, "stderr_bytes": 0}\nshort', "partway through an answer (5 of 100 bytes)"),
    ('{"exit": 0, "stdout_bytes": -1, "stderr_bytes": 0}\n', "wrong shape for a worker answer"),
])
def test_a_framed_answer_cut_short_or_misshapen_is_a_broken_worker(tmp_path: Path, answer: str, broken: str) -> None:
    binary = fake_mnem(tmp_path, f"""
        sys.stdin.buffer.readline()
        sys.stdout.write({answer!r})
        sys.stdout.flush()
    """, features=("serve", "serve-framed"))
    runner = WorkerRunner(str(binary), framed=True)
    try:
        result = runner.run([str(binary), "show"], stdin=None, timeout=30)
        assert result.broken is not None and broken in result.broken and runner.pid is None
    finally:
        runner.close()


def test_a_framed_answer_that_stops_arriving_is_timed_out(tmp_path: Path) -> None:
    """A framed answer cut off midway, its worker alive and silent: the timeout ends the call and the worker."""
    pids = tmp_path / "pids"
    binary = fake_mnem(tmp_path, _recording_pid(pids, """
        sys.stdin.buffer.readline()
        sys.stdout.write('{"exit": 0, "stdout_bytes": 1000, "stderr_bytes": 0}\\nsome')
        sys.stdout.flush()
        time.sleep(300)
    """), features=("serve", "serve-framed"))
    runner = WorkerRunner(str(binary), framed=True)
    try:
        result = ends(lambda: runner.run([str(binary), "show"], stdin=None, timeout=SHORT_TIMEOUT), pids)
        assert result.timed_out and runner.pid is None, result
    finally:
        runner.close()
    assert still_running(recorded(pids)) == []


def test_the_bridge_frames_requests_when_the_binary_says_it_can(bstore) -> None:
    assert isinstance(bstore.client.runner, WorkerRunner) and bstore.client.runner.framed
