"""Process failures, with fake ``mnem`` binaries: every one a typed error, no process left behind.

The failures every consumer must survive (missing, killed, hung, garbage) are the matrix of
tests/test_failing_parts.py; this module pins the process layer's own facts.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from manual_clock import eventually

from mnem_bridge import (
    BinaryNotFoundError,
    CommandTimeoutError,
    ContractError,
    Mnem,
    MnemError,
    ProtocolError,
    SignalError,
    Store,
    StoreIoError,
    SubprocessRunner,
)

from .support import HANG, fake_mnem, gone


def _status(binary: Path, tmp_path: Path, **options: Any) -> Any:
    """One ``status`` call through a fresh client on ``binary``."""
    return Mnem(binary, **options).call(tmp_path, "status")


def test_death_by_signal(tmp_path: Path) -> None:
    binary = fake_mnem(tmp_path, "sys.stderr.write('about to crash'); sys.stderr.flush(); os.abort()")
    with pytest.raises(SignalError) as caught:
        _status(binary, tmp_path)
    error = caught.value
    assert isinstance(error, StoreIoError) and error.code == "store_io"
    assert error.exit_status == -signal.SIGABRT and "SIGABRT" in str(error)
    assert error.stderr == b"about to crash"
    assert error.command == f"{binary} -C {tmp_path} --json status"


def test_a_timed_out_call_keeps_what_the_child_wrote(tmp_path: Path) -> None:
    """What the child wrote before its timeout is in the error; the group kill and recovery are
    tests/test_failing_parts.py's hang cells.

    The child says (a file) when it has written; a machine so busy that the timeout came first only makes the
    test try again with a longer one, so the check is always made on a child that wrote, whatever the load.
    """
    wrote = tmp_path / "wrote"
    binary = fake_mnem(tmp_path, f"""
        sys.stderr.write("waiting forever"); sys.stderr.flush()
        open({str(wrote)!r}, "w").close()
        time.sleep(300)
    """)
    timeout = 1.0
    while True:
        with pytest.raises(CommandTimeoutError) as caught:
            _status(binary, tmp_path, timeout=timeout)
        if wrote.exists():
            break
        timeout *= 2
        assert timeout < HANG, "the child never wrote before its timeout"
    error = caught.value
    assert (error.timeout, error.stderr) == (timeout, b"waiting forever")
    assert error.command == f"{binary} -C {tmp_path} --json status"


def test_an_interrupted_call_kills_the_child(tmp_path: Path, mocker: Any) -> None:
    pids = tmp_path / "pids"
    binary = fake_mnem(tmp_path, f"""
        with open({str(pids)!r} + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace({str(pids)!r} + ".tmp", {str(pids)!r})  # appears complete, or not at all
        time.sleep(300)
    """)
    real_communicate = __import__("subprocess").Popen.communicate

    def interrupted(self: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("timeout") == 60.0:  # the call itself, not the reaping afterwards
            eventually(pids.exists, "the child started", within=HANG)
            raise KeyboardInterrupt
        return real_communicate(self, *args, **kwargs)

    mocker.patch("subprocess.Popen.communicate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _status(binary, tmp_path, timeout=60.0)
    assert gone(int(pids.read_text()))


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("sys.exit(0)", "status 0 and no output"),
        ("print('[1, 2]'); sys.exit(1)", "without an error document"),
    ],
    ids=["nothing", "not-an-error-document"],
)
def test_output_that_breaks_the_contract(tmp_path: Path, body: str, expected: str) -> None:
    with pytest.raises(ProtocolError, match=expected) as caught:
        _status(fake_mnem(tmp_path, body), tmp_path)
    assert caught.value.code == "store_io"


@pytest.mark.parametrize(
    ("subcommand", "call"),
    [
        ("status", lambda store: store.head()),
        ("status", lambda store: store.staged()),
        ("add", lambda store: store.add("n", 1)),
        ("commit", lambda store: store.commit("m")),
        ("log", lambda store: store.log()),
        ("resolve", lambda store: store.resolve("main")),
        ("branch", lambda store: store.branches()),
        ("show", lambda store: store.working_memory()),
        ("show", lambda store: store.working_node("n")),
        ("show", lambda store: store.changed_by("main")),
        ("stamps", lambda store: store.node_times()),
        ("diff", lambda store: store.diff()),
        ("merge", lambda store: store.merge("other")),
        ("blame", lambda store: store.blame("n")),
        ("bisect", lambda store: store.bisect(node="n", present=True)),
        ("write", lambda store: store.write([{"id": "n", "content": 1}], message="m")),
        ("export", lambda store: store.export()),
    ],
)
def test_a_result_of_the_wrong_shape_is_a_protocol_error(tmp_path: Path, subcommand: str, call: Any) -> None:
    """The facade reads documents by key; a binary that answers ``[1, 2]`` must not surface as a KeyError."""
    store = Store(tmp_path, client=Mnem(fake_mnem(tmp_path, "print('[1, 2]')")))
    with pytest.raises(ProtocolError) as caught:
        call(store)
    assert caught.value.code == "store_io"
    assert str(caught.value).startswith(f"mnem {subcommand} answered with JSON of the wrong shape: [1, 2] (")
    assert caught.value.command == store.last_command and f" --json {subcommand}" in caught.value.command


def test_a_blame_whose_author_is_not_text_is_a_protocol_error(tmp_path: Path) -> None:
    blame = {"commit": "a" * 64, "time": 1, "author": 7, "node": {
        "id": "n", "content": 1, "content_kind": "note", "event_time": None, "provenance": {
            "agent_step": None, "observation": None, "tool_call": None, "source": None, "note": None}}}
    store = Store(tmp_path, client=Mnem(fake_mnem(tmp_path, f"print({json.dumps(blame)!r})")))
    with pytest.raises(ProtocolError, match="author is int, not a string") as caught:
        store.blame_with_author("n")
    assert caught.value.code == "store_io"


def test_an_unknown_error_code_keeps_its_code(tmp_path: Path) -> None:
    body = "print(json.dumps({'error': {'code': 'teapot', 'message': 'short and stout'}})); sys.exit(1)"
    with pytest.raises(MnemError) as caught:
        _status(fake_mnem(tmp_path, body), tmp_path)
    assert type(caught.value) is MnemError
    assert (caught.value.code, str(caught.value), caught.value.exit_status) == ("teapot", "short and stout", 1)


def test_environment_and_stdin_reach_the_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEEP_ME", "yes")
    monkeypatch.setenv("LC_ALL", "fr_FR.ISO-8859-1")
    body = ("print(json.dumps({'env': [os.environ.get(k) for k in ('LC_ALL', 'NO_COLOR', 'KEEP_ME')],"
            " 'stdin': sys.stdin.read(), 'session': os.getsid(0) == os.getpid()}))")
    doc = Mnem(fake_mnem(tmp_path, body)).call(tmp_path, "write", payload='{"ü": "$(x)"}')
    assert doc == {"env": ["C.UTF-8", "1", "yes"], "stdin": '{"ü": "$(x)"}\n', "session": True}


def test_a_missing_binary(tmp_path: Path) -> None:
    with pytest.raises(BinaryNotFoundError) as caught:
        Mnem(tmp_path / "no-such-mnem")
    message = str(caught.value)
    assert str(tmp_path / "no-such-mnem") in message and "MNEM_BIN" in message and "install this project" in message
    assert caught.value.code == "store_io"


def test_a_binary_that_vanishes_after_the_check(tmp_path: Path) -> None:
    binary = fake_mnem(tmp_path, "print('{}')")
    client = Mnem(binary)
    assert client.call(tmp_path, "status") == {}
    binary.unlink()
    with pytest.raises(BinaryNotFoundError) as caught:
        client.call(tmp_path, "status")
    assert caught.value.command == f"{binary} -C {tmp_path} --json status"


@pytest.mark.parametrize(
    "body",
    [
        "print('mnem 0.0.8')",  # --json ignored
        "if '--json' in sys.argv: sys.stderr.write(\"error: unexpected argument '--json' found\\n\"); sys.exit(2)",
    ],
    ids=["ignores-json", "rejects-json"],
)
def test_upstreams_rust_mnem_is_refused_clearly(tmp_path: Path, body: str) -> None:
    binary = fake_mnem(tmp_path, body, describe=False)
    client = Mnem(binary)  # finding it is fine; the first call checks the contract
    with pytest.raises(ContractError) as caught:
        client.call(tmp_path, "status")
    message = str(caught.value)
    assert f"the `mnem` at {binary} has no JSON contract" in message
    assert "MNEM_BIN" in message and "install this project" in message
    assert caught.value.command == f"{binary} --version --json"


def test_the_contract_is_checked_once_per_binary(tmp_path: Path, mocker: Any) -> None:
    binary = fake_mnem(tmp_path, "print('{}')")
    run = mocker.spy(SubprocessRunner, "run")
    Mnem(binary).call(tmp_path, "status")
    Mnem(binary).call(tmp_path, "log")
    argvs = [call.args[1][1:] for call in run.call_args_list]
    assert argvs == [["--version", "--json"], ["-C", str(tmp_path), "--json", "status"],
                     ["-C", str(tmp_path), "--json", "log"]]


def test_the_runner_reports_exit_status_and_output(tmp_path: Path) -> None:
    script = fake_mnem(tmp_path, "sys.stdout.write(sys.stdin.read().upper()); sys.stderr.write('e'); sys.exit(3)",
                       describe=False, name="echoer")
    result = SubprocessRunner().run([str(script)], stdin=b"abc", timeout=30)
    assert (result.exit_status, result.stdout, result.stderr, result.timed_out) == (3, b"ABC", b"e", False)
    assert os.environ.get("NO_COLOR") is None  # the parent's environment is not modified


def test_the_child_gets_utf8_no_colour_and_its_own_session(tmp_path: Path) -> None:
    script = fake_mnem(tmp_path, "print(os.environ['LC_ALL'], os.environ['NO_COLOR'], os.getsid(0) == os.getpid())",
                       describe=False, name="env")
    result = SubprocessRunner().run([str(script)], stdin=None, timeout=30)
    assert result.stdout == b"C.UTF-8 1 True\n"
