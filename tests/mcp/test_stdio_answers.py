"""Every line a client writes to ``mnem-mcp``'s standard input gets an answer, even one the SDK cannot parse.

The SDK drops a line it cannot parse (a lone surrogate anywhere, invalid
UTF-8, text that is not JSON, JSON that is not a JSON-RPC message) and a
request whose id is neither a string nor an integer, so the client waits
for an answer until its own timeout.  ``mnem_mcp.wire`` answers each with a
JSON-RPC error: ``-32700`` for text that is not strict JSON in UTF-8,
``-32600`` for JSON that is not a JSON-RPC 2.0 message, with the request's
id when it can be read, a message starting ``usage: ``, and nothing
written to the store.

A real ``mnem-mcp`` runs over pipes; the test writes raw bytes to its stdin
and reads its stdout.  Every read waits for the answer to arrive, bounded by
a generous deadline that fails the test (``mcp_support.AnswerReader``): nothing is timed.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from conftest import store_fingerprint
from fuzzing import tried
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp_support import MNEM_MCP, AnswerReader, server_env

from mnem_bridge.text import is_utf8

PARSE_ERROR, INVALID_REQUEST = -32700, -32600


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    answers: AnswerReader
    folder: Path
    stderr: Path
    ids: Iterator[int] = field(default_factory=lambda: iter(range(1000, 10**9)))

    def send(self, line: bytes) -> None:
        stdin: BinaryIO | None = self.process.stdin
        assert stdin is not None
        stdin.write(line + b"\n")
        stdin.flush()

    def request(self, method: str, **params: Any) -> dict[str, Any]:
        """A well-formed request and its answer (answers to other ids on the way are kept for ``until``)."""
        ident = next(self.ids)
        self.send(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode())
        return self.until(ident)[ident]

    def until(self, *idents: Any) -> dict[Any, dict[str, Any]]:
        """Read answers until each of ``idents`` has one; return every answer read, by id."""
        found: dict[Any, dict[str, Any]] = {}
        while not set(idents) <= set(found):
            message = self.answers.next()
            found[message.get("id")] = message
        return found


@pytest.fixture
def server(sqlite_store: Path, tmp_path: Path) -> Iterator[Server]:
    """``mnem-mcp`` over pipes, initialised, with ``plan`` remembered (the wire is the same on either backend)."""
    stderr = tmp_path / "stderr"
    with stderr.open("wb") as errors:
        process = subprocess.Popen([MNEM_MCP, "--store", str(sqlite_store)], env=server_env(),
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors)
    assert process.stdout is not None
    running = Server(process, AnswerReader(process.stdout.fileno()), sqlite_store, stderr)
    try:
        init = running.request("initialize", protocolVersion="2025-06-18", capabilities={},
                               clientInfo={"name": "raw", "version": "1"})
        assert "result" in init
        running.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        remembered = running.request("tools/call", name="remember", arguments={"id": "plan", "content": "pro"})
        assert not remembered["result"]["isError"]
        yield running
    finally:
        process.kill()
        process.wait()
    assert "Traceback" not in stderr.read_text(errors="replace")


def still_serving(server: Server) -> None:
    answer = server.request("tools/call", name="recall", arguments={"id": "plan"})
    assert answer["result"]["structuredContent"]["content"] == "pro"


#: Lines the SDK would drop, with the code and id of the answer each must get.
REFUSED = [
    (rb'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", '
     rb'"arguments": {"": "\ud800"}}}', PARSE_ERROR, 1),
    (rb'{"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "mnem://memory/\ud800"}}',
     PARSE_ERROR, 2),
    (rb'{"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": {"name": "remember", '
     rb'"arguments": {"id": "x", "content": "a\udcffb"}}}', PARSE_ERROR, "s"),
    (b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "remember", '
     b'"arguments": {"id": "x", "content": "caf\xe9"}}}', PARSE_ERROR, 3),  # Latin-1, not UTF-8
    (b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "remember", '
     b'"arguments": {"id": "x", "content": ' + b"9" * 5000 + b"}}}", PARSE_ERROR, 4),
    (b"not json", PARSE_ERROR, None),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "ping"', PARSE_ERROR, None),  # cut short: no id can be read
    (b"\xff\xfe\x00", PARSE_ERROR, None),
    (b"[1, 2]", INVALID_REQUEST, None),
    (b'[{"jsonrpc": "2.0", "id": 6, "method": "ping"}]', INVALID_REQUEST, None),  # a batch (MCP has none)
    (b'{"jsonrpc": "2.0", "id": 7, "method": 5}', INVALID_REQUEST, 7),
    (b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": 5}', INVALID_REQUEST, 8),
    (b'{"jsonrpc": "1.0", "id": 9, "method": "ping"}', INVALID_REQUEST, 9),
    (b'{"jsonrpc": "2.0", "id": 7.5, "method": "ping"}', INVALID_REQUEST, 7.5),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', INVALID_REQUEST, None),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', INVALID_REQUEST, None),
]


@pytest.mark.parametrize(("line", "code", "ident"), REFUSED, ids=range(len(REFUSED)))
def test_a_line_the_sdk_cannot_read_gets_a_json_rpc_error(server: Server, line: bytes, code: int, ident: Any) -> None:
    before = store_fingerprint(server.folder)
    server.send(line)
    answer = server.answers.next()
    assert answer["id"] == ident and answer["error"]["code"] == code, answer
    message = answer["error"]["message"]
    assert message.startswith("usage: the line was refused: ") and "JSON-RPC 2.0 message" in message, message
    assert len(message) < 1000  # the line is not echoed
    assert store_fingerprint(server.folder) == before
    still_serving(server)
    assert server.request("tools/call", name="recall", arguments={"id": "x"})["result"]["content"][0]["text"] == "null"


def test_a_blank_line_is_no_message_and_gets_no_answer(server: Server) -> None:
    server.send(b"   \r")
    server.send(b"")
    answer = server.request("ping")  # the next answer is the ping's: nothing was answered for the blank lines
    assert answer["result"] == {}


# ---------------------------------------------------------------------------------------------- fuzz

ANY_CHAR = st.characters(exclude_categories=())
#: Spoilers for one request line: each takes the line's text, its id and a drawn string, and returns the bytes.
SPOILERS = {
    "lone surrogate": lambda text, ident, drawn: text.replace('"pro"', json.dumps("\ud800" + drawn), 1).encode(),
    "latin-1": lambda text, ident, drawn: text.replace('"pro"', json.dumps(drawn + "é", ensure_ascii=False), 1)
    .encode("latin-1", "replace"),
    "cut": lambda text, ident, drawn: text[: (len(drawn) * 7 + 1) % len(text)].encode(),
    "bad byte": lambda text, ident, drawn: text.encode()[: len(drawn) * 5] + b"\x80" + text.encode()[len(drawn) * 5:],
    "raw": lambda text, ident, drawn: drawn.encode("utf-8", "surrogatepass").replace(b"\n", b" "),
    "huge number": lambda text, ident, drawn: text.replace('"pro"', "1" + "0" * (400 + len(drawn) * 600), 1).encode(),
    "fractional id": lambda text, ident, drawn: text.replace(f'"id": {ident}', f'"id": {ident}.5', 1).encode(),
    "string params": lambda text, ident, drawn: text.replace('"params": ', f'"params": {json.dumps(drawn)}, "p": ', 1)
    .encode(),
    "not an object": lambda text, ident, drawn: f"[{text}]".encode(),
    "as sent": lambda text, ident, drawn: text.encode(),
}


def a_request(line: bytes) -> bool:
    """Whether ``line`` is a well-formed JSON-RPC 2.0 request, in strict JSON and UTF-8: the SDK answers it."""
    try:
        message = json.loads(line.decode("utf-8"), parse_constant=_refuse)
    except (ValueError, RecursionError):
        return False
    return (isinstance(message, dict) and message.get("jsonrpc") == "2.0" and isinstance(message.get("method"), str)
            and type(message.get("id")) in (int, str) and isinstance(message.get("params", {}), dict)
            and _text(message))


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _text(value: Any) -> bool:
    """Whether every string in ``value`` is text (no lone surrogate from a ``\\ud800`` escape)."""
    if isinstance(value, dict):
        return all(_text(key) and _text(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_text(item) for item in value)
    return not isinstance(value, str) or is_utf8(value)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(spoiler=st.sampled_from(sorted(SPOILERS)), drawn=st.text(ANY_CHAR, max_size=8),
       method=st.sampled_from(["tools/call", "resources/read", "ping"]))
def test_every_line_gets_an_answer_and_a_refusal_changes_nothing(server: Server, spoiler: str, drawn: str,
                                                                 method: str) -> None:
    """A spoiled request, then a ping: the ping is answered, and so is the spoiled line, exactly once.

    A line that is still a well-formed request gets its own answer (a result
    or an error, from the SDK or the tool); any other line that is not blank
    gets one JSON-RPC error before the ping's answer, written as the line is
    read, and an error leaves the store as it was.
    """
    tried("stdio lines")
    ident = next(server.ids)
    params = {"tools/call": {"name": "remember", "arguments": {"id": "fuzz", "content": "pro"}},
              "resources/read": {"uri": "mnem://memory/plan", "x": "pro"}, "ping": {"x": "pro"}}[method]
    text = json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}, ensure_ascii=False)
    line = SPOILERS[spoiler](text, ident, drawn)
    before = store_fingerprint(server.folder)
    server.send(line)
    ping = next(server.ids)
    server.send(json.dumps({"jsonrpc": "2.0", "id": ping, "method": "ping"}).encode())
    if a_request(line):
        answer = server.until(ping, ident)[ident]
    else:
        found = server.until(ping)
        others = [message for key, message in found.items() if key != ping]
        if not line.strip():
            assert not others, found
            event(f"{spoiler}: blank, no answer")
            return
        assert len(others) == 1 and "error" in others[0], (line[:200], found)
        answer = others[0]
        assert answer["error"]["code"] in (PARSE_ERROR, INVALID_REQUEST), answer
        assert answer["error"]["message"].startswith("usage: the line was refused: "), answer
        assert answer["id"] in (None, ident, ident + 0.5), answer
    event(f"{spoiler}: {'error ' + str(answer['error']['code']) if 'error' in answer else 'result'}")
    if "error" in answer or answer["result"].get("isError"):
        assert store_fingerprint(server.folder) == before, line[:200]


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"[1, -1e400]"])
def test_a_number_no_json_model_holds_is_a_usage_error_over_the_wire(server: Server, literal: bytes) -> None:
    """The SDK's parser reads ``NaN`` and ``1e400`` (as inf); the tool refuses them, typed, writing nothing."""
    before = store_fingerprint(server.folder)
    server.send(b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "remember", '
                b'"arguments": {"id": "n", "content": ' + literal + b"}}}")
    answer = server.until(5)[5]
    assert answer["result"]["isError"], answer
    assert answer["result"]["content"][0]["text"].startswith("usage: content must be JSON-serialisable: "), answer
    assert store_fingerprint(server.folder) == before
