"""``mnem-mcp``'s stdio wire: awaited on the event loop over pipes, the SDK's own transport for anything else.

The diversion is checked on pipes of the test's own (``claim`` takes the
descriptors to move), and the transport through a real ``mnem-mcp`` that a
raw JSON-RPC client drives: requests split across reads, a last request
with no newline, an answer larger than a pipe read late, and a wire that is
a regular file.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import json
import os
import subprocess
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from manual_clock import eventually
from mcp_support import MNEM_MCP, server_env

from mnem_mcp.stdio import _Answers, _Lines, claim


def unread(fd: int) -> int:
    """How many bytes the pipe that ``fd`` is an end of holds, written and not read yet (``FIONREAD``)."""
    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]


@pytest.fixture
def pipes() -> Iterator[dict[str, tuple[int, int]]]:
    """Three pipes standing for a client's stdin, stdout and stderr pipes: name -> (read end, write end)."""
    made = {name: os.pipe() for name in ("stdin", "stdout", "stderr")}
    yield made
    for read_end, write_end in made.values():
        for fd in (read_end, write_end):
            with contextlib.suppress(OSError):
                os.close(fd)


def _nonblocking(fd: int) -> bool:
    return bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK)


def test_the_wire_moves_to_private_descriptors_and_back(pipes: dict[str, tuple[int, int]]) -> None:
    """While claimed, stray output goes to stderr and stray reads see EOF; release puts everything back."""
    (in_r, in_w), (out_r, out_w), (err_r, err_w) = pipes["stdin"], pipes["stdout"], pipes["stderr"]
    wire = claim(in_r, out_w, err_w)
    assert wire is not None
    try:
        os.write(out_w, b"stray print\n")  # what a print() or an inheriting child would write to fd 1
        assert os.read(err_r, 100) == b"stray print\n"
        assert os.read(in_r, 100) == b""  # fd 0 reads the null device
        os.write(in_w, b"request\n")
        assert os.read(wire.read_fd, 100) == b"request\n"
        os.write(wire.write_fd, b"answer\n")
        assert os.read(out_r, 100) == b"answer\n"
        assert _nonblocking(wire.write_fd)
        assert not _nonblocking(err_w)
        assert fcntl.fcntl(wire.read_fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC  # children never inherit the wire
    finally:
        wire.release()
    assert not _nonblocking(out_w)
    os.write(out_w, b"after\n")
    assert os.read(out_r, 100) == b"after\n"
    os.write(in_w, b"again\n")
    assert os.read(in_r, 100) == b"again\n"
    with pytest.raises(OSError):
        os.fstat(wire.read_fd)


def test_a_wire_it_cannot_await_or_must_not_change_is_left_to_the_sdk(pipes: dict[str, tuple[int, int]],
                                                                      tmp_path: Path) -> None:
    (in_r, _), (_, out_w), (_, err_w) = pipes["stdin"], pipes["stdout"], pipes["stderr"]
    with (tmp_path / "requests").open("wb") as regular:
        assert claim(regular.fileno(), out_w, err_w) is None
        assert claim(in_r, regular.fileno(), err_w) is None
    assert claim(in_r, out_w, out_w) is None  # 2>&1: non-blocking writes would reach stderr's writers too
    assert not _nonblocking(out_w)


def _request(ident: int, method: str, **params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()


HANDSHAKE = (_request(0, "initialize", protocolVersion="2025-06-18", capabilities={},
                      clientInfo={"name": "raw", "version": "1"}) + b"\n"
             + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n")


def _call(ident: int, tool: str, **arguments: Any) -> bytes:
    return _request(ident, "tools/call", name=tool, arguments=arguments)


def _answers(stdout: bytes) -> dict[int, Any]:
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return {message["id"]: message for message in lines if "id" in message}


def _answers_to(server: subprocess.Popen[bytes], *idents: int) -> dict[int, Any]:
    """Read the server's output up to its answers to requests ``idents`` (in whatever order they come)."""
    assert server.stdout is not None
    found: dict[int, Any] = {}
    for line in server.stdout:
        message = json.loads(line)
        if message.get("id") in idents:
            found[message["id"]] = message
            if len(found) == len(idents):
                return found
    raise AssertionError(f"the server ended without answering requests {sorted(set(idents) - set(found))}")


def _recalled(answer: Any, ident: str) -> Any:
    node = answer["result"]["structuredContent"]
    assert node["id"] == ident
    return node["content"]


def _spawn(store: Path, **streams: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([MNEM_MCP, "--store", str(store)], env=server_env(), stderr=subprocess.DEVNULL,
                            **streams)


@pytest.fixture
def server(sqlite_store: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``mnem-mcp`` over pipes, initialised."""
    process = _spawn(sqlite_store, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None
    process.stdin.write(HANDSHAKE)
    process.stdin.flush()
    assert "result" in _answers_to(process, 0)[0]
    yield process
    process.kill()
    process.wait()


def test_a_request_split_across_reads_arrives_whole(server: subprocess.Popen[bytes]) -> None:
    assert server.stdin is not None
    content = "x" * 300_000  # several reads of the wire for one request
    request = _call(1, "remember", id="big", content=content)
    server.stdin.write(request[:1000])
    server.stdin.flush()
    eventually(lambda: unread(server.stdin.fileno()) == 0, "the server read the first part")  # and waits for the rest
    server.stdin.write(request[1000:] + b"\n")
    server.stdin.flush()
    assert not _answers_to(server, 1)[1]["result"]["isError"]
    server.stdin.write(_call(2, "recall", id="big") + b"\n")
    server.stdin.flush()
    assert _recalled(_answers_to(server, 2)[2], "big") == content


def test_lines_are_read_whole_and_a_line_the_sdk_cannot_read_is_answered() -> None:
    """Split anywhere, even inside a character; a last line needs no newline; bad bytes answered, not replaced.

    The SDK would read ``\\xff`` as U+FFFD and store that in its place; here
    the line is answered with a JSON-RPC parse error and not passed on
    (tests/mcp/test_stdio_answers.py has every kind of such line).

    (In process: at the end of input the SDK ends the session, so whether that
    last request is answered is a race in the SDK, not something to test here.)
    """
    read_end, write_end = os.pipe()
    answers_read, answers_write = os.pipe()
    first = '{"jsonrpc": "2.0", "method": "a", "params": {"t": "é"}}\n'
    bad = b'{"jsonrpc": "2.0", "id": 1, "method": "b", "params": {"t": "\xff"}}\n'
    sent = first.encode() + bad + b'{"jsonrpc": "2.0", "method": "c"}'
    split = first.encode().index("é".encode()) + 1

    def send() -> None:
        for piece in (sent[:split], sent[split:split + 1], sent[split + 1:]):  # the first split falls inside "é"
            os.write(write_end, piece)
            eventually(lambda: unread(write_end) == 0, "the reader took the piece")  # each piece its own read
        os.close(write_end)

    async def read_all() -> list[str]:
        return [line async for line in _Lines(read_end, _Answers(answers_write))]

    writer = threading.Thread(target=send)
    writer.start()
    try:
        assert anyio.run(read_all) == [first, '{"jsonrpc": "2.0", "method": "c"}\n']
        answer = json.loads(os.read(answers_read, 1 << 16))
        assert answer["id"] == 1 and answer["error"]["code"] == -32700, answer
    finally:
        writer.join()
        for fd in (read_end, answers_read, answers_write):
            os.close(fd)


def test_an_answer_larger_than_the_pipe_waits_for_a_slow_reader(server: subprocess.Popen[bytes]) -> None:
    """The answer fills the pipe; the server must wait for room, write it whole, and answer the next call."""
    assert server.stdin is not None and server.stdout is not None
    content = "y" * 1_000_000
    server.stdin.write(_call(1, "remember", id="big", content=content) + b"\n")
    server.stdin.flush()
    assert not _answers_to(server, 1)[1]["result"]["isError"]
    server.stdin.write(_call(2, "recall", id="big") + b"\n" + _call(3, "recall", id="none") + b"\n")
    server.stdin.flush()
    full = fcntl.fcntl(server.stdout.fileno(), fcntl.F_GETPIPE_SZ)
    eventually(lambda: unread(server.stdout.fileno()) == full, "the answer filling the pipe")  # nobody reads yet
    answers = _answers_to(server, 2, 3)
    assert _recalled(answers[2], "big") == content
    assert answers[3]["result"]["content"][0]["text"] == "null" and "structuredContent" not in answers[3]["result"]


def test_requests_from_a_file_are_served_by_the_sdks_transport(sqlite_store: Path, tmp_path: Path) -> None:
    """``mnem-mcp < requests``: a file cannot be awaited on the loop, so the SDK's threads read it.

    The input ends at once, and the SDK then ends the session: a call still in
    flight may go unanswered, so only the handshake's answer is certain.
    """
    requests, answers = tmp_path / "requests.jsonl", tmp_path / "answers.jsonl"
    requests.write_bytes(HANDSHAKE)
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        assert _spawn(sqlite_store, stdin=stdin, stdout=stdout).wait(60) == 0
    assert _answers(answers.read_bytes())[0]["result"]["serverInfo"]["name"] == "mnem"


def test_answers_to_a_file_are_written_by_the_sdks_transport(sqlite_store: Path, tmp_path: Path) -> None:
    """``mnem-mcp > answers``: a file is written by the SDK's threads, and every answer lands in it."""
    answers = tmp_path / "answers.jsonl"
    with answers.open("wb") as stdout:
        server = _spawn(sqlite_store, stdin=subprocess.PIPE, stdout=stdout)
        assert server.stdin is not None
        try:
            server.stdin.write(HANDSHAKE + _call(1, "remember", id="plan", content="pro") + b"\n")
            server.stdin.flush()
            deadline = time.monotonic() + 60
            while 1 not in _answers(answers.read_bytes()) and time.monotonic() < deadline:
                time.sleep(0.05)
            server.stdin.write(_call(2, "recall", id="plan") + b"\n")
            server.stdin.flush()
            while 2 not in _answers(answers.read_bytes()) and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            server.stdin.close()
            assert server.wait(60) == 0
    assert _recalled(_answers(answers.read_bytes())[2], "plan") == "pro"
