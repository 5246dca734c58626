"""The SDK's own refusals carry a code too: an unknown resource, an unknown method, malformed params.

A tool's refusals start ``<code>: `` (``errors``); without these, a
``resources/read`` of a URI that names nothing answered the SDK's
``Unknown resource: URI`` (-32602), an unknown method ``Method not found``
(-32601) and malformed params ``Invalid request parameters`` (-32602, not
saying which), none with a code a model can branch on.  The JSON-RPC codes
are kept; the messages now start ``not_found: `` or ``usage: `` and say
what exists or what was wrong.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError
from mcp_support import MNEM_MCP, MODES, AnswerReader, Mode, connect, server_env

RESOURCES = "the resources are mnem://memory, mnem://log, mnem://memory/{node_id}, mnem://commit/{id}"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_an_unknown_resource_is_not_found_naming_the_resources(mode: Mode, sqlite_store: Path) -> None:
    async with connect(mode, str(sqlite_store)) as client:
        for uri in ("mnem://nothing", "mnem://memory/a/b", "file:///etc/passwd", "mnem://commit"):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            assert caught.value.error.code == -32602
            assert caught.value.error.message == f"not_found: no resource {uri}; {RESOURCES}"
        with pytest.raises(MCPError) as missing:  # a resource that exists, naming nothing: coded as before
            await client.read_resource("mnem://commit/no-such-branch")
        assert missing.value.error.message.startswith("invalid_ref: ")


@pytest.fixture
def wire(sqlite_store: Path) -> Iterator[tuple[subprocess.Popen[bytes], AnswerReader]]:
    """A real ``mnem-mcp`` over pipes, initialised, and a reader of its answers."""
    process = subprocess.Popen([MNEM_MCP, "--store", str(sqlite_store)], env=server_env(), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    answers = AnswerReader(process.stdout.fileno())
    try:
        send(process, 0, "initialize", protocolVersion="2025-06-18", capabilities={},
             clientInfo={"name": "raw", "version": "1"})
        assert "result" in answers.next()
        process.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        yield process, answers
    finally:
        process.kill()
        process.wait()


def send(process: subprocess.Popen[bytes], ident: int, method: str, **params: Any) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()
                        + b"\n")
    process.stdin.flush()


@pytest.mark.parametrize(("method", "params", "code", "message"), [
    ("no/such", {}, -32601, "usage: this server has no method no/such"),
    ("resources/read", {}, -32602, "usage: resources/read: params.uri: required"),
    ("resources/read", {"uri": 5}, -32602, "usage: resources/read: params.uri: Input should be a valid string"),
    ("tools/call", {"arguments": {}}, -32602, "usage: tools/call: params.name: required"),
    ("resources/read", {"uri": "mnem://nothing"}, -32602, f"not_found: no resource mnem://nothing; {RESOURCES}"),
])
def test_the_sdks_refusals_over_the_wire_are_coded(wire: tuple[subprocess.Popen[bytes], AnswerReader], method: str,
                                                   params: dict[str, Any], code: int, message: str) -> None:
    process, answers = wire
    send(process, 1, method, **params)
    answer = answers.next()
    assert answer["id"] == 1 and answer["error"]["code"] == code and answer["error"]["message"] == message, answer
    send(process, 2, "prompts/list")  # an empty list, as the SDK answers: not a refusal
    assert answers.next() == {"jsonrpc": "2.0", "id": 2, "result": {"prompts": []}}
