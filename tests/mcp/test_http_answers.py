"""Over Streamable HTTP, every request body gets an answer too: a JSON-RPC error, never a hang or a 500.

The SDK's HTTP transport parses each body itself and answers what it cannot
read with ``400`` and a JSON-RPC error (``-32700`` for a body that is not
JSON, ``-32600`` for one that is not a single request), so the drops that
stdio had (tests/mcp/test_stdio_answers.py) never happened here.  This
holds it, for the same inputs, on a real ``mnem-mcp`` over HTTP in the
stateless (2026-07-28) era, and checks that the coded refusals
(``errors.coded_refusals``, ``errors.unknown_resource``) reach HTTP
clients as well.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx2
import pytest
from conftest import new_store
from http_support import HttpServer

VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    served = HttpServer(new_store(tmp_path_factory.mktemp("answers") / "store", "sqlite"), ("--auth", "none"))
    try:
        yield served
    finally:
        served.stop()
        assert "Traceback" not in served.stderr()


def request(ident: object, method: str, params: dict[str, object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": META}}).encode()


def post(server: HttpServer, body: bytes, method: str | None = None, name: str | None = None) -> httpx2.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": VERSION, **({"Mcp-Method": method} if method else {}),
               **({"Mcp-Name": name} if name else {})}
    return httpx2.post(server.url, content=body, headers=headers, timeout=60)


REMEMBER = request(1, "tools/call", {"name": "remember", "arguments": {"id": "x", "content": "PLACE"}})
BODIES = [
    (REMEMBER.replace(b'"PLACE"', b'"\\ud800"'), "tools/call", "remember", 200, None),  # a tool refuses it
    (REMEMBER.replace(b'"PLACE"', b'"caf\xe9"'), "tools/call", "remember", 400, -32700),
    (REMEMBER.replace(b'"PLACE"', b"9" * 5000), "tools/call", "remember", 400, -32700),
    (b"not json", None, None, 400, -32700),
    (b"[1, 2]", None, None, 400, -32600),
    (request(7.5, "ping", {}), "ping", None, 400, -32600),
    (request(2, "resources/read", {"uri": "mnem://nothing"}), "resources/read", "mnem://nothing", 400, -32602),
    (request(3, "no/such", {}), "no/such", None, 404, -32601),
]


@pytest.mark.parametrize(("body", "method", "name", "status", "code"), BODIES, ids=range(len(BODIES)))
def test_every_body_gets_a_json_rpc_answer(server: HttpServer, body: bytes, method: str | None, name: str | None,
                                           status: int, code: int | None) -> None:
    response = post(server, body, method, name)
    assert response.status_code == status, response.text
    answer = response.json()
    assert answer["jsonrpc"] == "2.0"
    if code is None:
        assert answer["result"]["isError"] and answer["result"]["content"][0]["text"].startswith("usage: ")
    else:
        assert answer["error"]["code"] == code, answer
    if code in (-32601, -32602):  # ours: coded
        assert answer["error"]["message"].startswith(("usage: ", "not_found: ")), answer
