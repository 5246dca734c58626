"""A remote client is told why the server refused it: ``401 invalid_token: <why>``, one exception, no group.

docs/mcp-http.md's Python client connects with ``mnem_mcp.client.connect``:
the MCP SDK's own ``Client`` over Streamable HTTP, whose transport drops a
refusal's status and body (``Server returned an error response``, inside
an ``ExceptionGroup``).  Here a real ``mnem-mcp --auth jwt`` and the
development issuer refuse the real SDK client in each way the server can
refuse an HTTP request, and the exception the caller catches is a
``RefusedError`` carrying the status, the code and the server's own
description, the same text the server logged.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
import pytest
from http_support import READ_WRITE, HttpServer, Issuer, free_port
from mcp.shared.exceptions import MCPError
from mcp_support import call

from mnem_mcp.client import MAX_TEXT, RefusedError, connect

pytestmark = pytest.mark.anyio


class Served:
    def __init__(self, server: HttpServer, issuer: Issuer) -> None:
        self.server, self.issuer = server, issuer

    def http(self, token: str | None) -> httpx2.AsyncClient:
        """The caller's own HTTP client, its bearer token in its headers (as docs/mcp-http.md's client does)."""
        return httpx2.AsyncClient(headers={} if token is None else {"Authorization": f"Bearer {token}"},
                                  timeout=httpx2.Timeout(30.0, read=120.0))

    def logged_refusal(self) -> str:
        """The description of the last token the server's log says it refused."""
        return re.findall(r"refused a bearer token: (.+)", self.server.stderr())[-1]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(audience)
    try:
        store = tmp_path_factory.mktemp("refusals") / "memory"
        server = HttpServer(store, ["--auth", "jwt", "--issuer", issuer.url, "--audience", audience,
                                    "--max-body", "64K"], port=port)
        try:
            yield Served(server, issuer)
        finally:
            server.stop()
    finally:
        issuer.close()


async def refused_on_connect(served: Served, token: str | None, mode: str = "auto") -> RefusedError:
    async with served.http(token) as http:
        with pytest.raises(RefusedError) as caught:
            async with connect(served.server.url, http, mode=mode):
                pytest.fail("the server accepted the request")
    assert type(caught.value) is RefusedError  # itself, not an ExceptionGroup around it
    return caught.value


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # the 2026-07-28 probe first, or the initialize handshake
async def test_a_token_for_another_server_is_401_invalid_token_with_the_servers_reason(served: Served,
                                                                                      mode: str) -> None:
    refused = await refused_on_connect(served, served.issuer.mint(audience="https://other.example.com/mcp"), mode)
    assert (refused.status, refused.error) == (401, "invalid_token")
    assert refused.description == served.logged_refusal()  # what the server said, whole
    assert str(refused).startswith("401 invalid_token: the token's audience (aud) is 'https://other.example.com/mcp'")
    assert served.server.url in refused.description  # the fix: a token for this server


async def test_an_expired_token_and_no_token_are_each_told_why(served: Served) -> None:
    expired = await refused_on_connect(served, served.issuer.mint(expires_in=-60))
    assert (expired.status, expired.error) == (401, "invalid_token") and "expired" in expired.description
    none = await refused_on_connect(served, None)
    assert (none.status, none.error) == (401, "invalid_token") and none.description


async def test_a_token_without_the_read_scope_is_403_insufficient_scope(served: Served) -> None:
    refused = await refused_on_connect(served, served.issuer.mint(scope="profile"))
    assert (refused.status, refused.error) == (403, "insufficient_scope")
    assert "mnem:read" in refused.description


async def test_a_refusal_in_the_middle_of_a_session_raises_the_same(served: Served) -> None:
    async with served.http(served.issuer.mint(scope=READ_WRITE)) as http:
        with pytest.raises(RefusedError) as caught:
            async with connect(served.server.url, http) as client:
                await call(client, "remember", id="plan", content="pro")
                http.headers["Authorization"] = "Bearer not-a-token"  # say the token was revoked meanwhile
                await client.call_tool("recall", {})
    assert type(caught.value) is RefusedError
    assert (caught.value.status, caught.value.error) == (401, "invalid_token")
    assert caught.value.description == served.logged_refusal()


async def test_a_body_over_the_servers_limit_is_413_naming_the_limit(served: Served) -> None:
    async with served.http(served.issuer.mint(scope=READ_WRITE)) as http:
        with pytest.raises(RefusedError) as caught:
            async with connect(served.server.url, http) as client:
                await client.call_tool("remember", {"id": "doc", "content": "x" * 100_000})
    assert (caught.value.status, caught.value.error) == (413, "usage")
    assert "--max-body" in caught.value.description


async def test_an_error_the_server_answers_in_json_rpc_stays_the_sdks(served: Served) -> None:
    """Only HTTP refusals become ``RefusedError``: a tool's error and a protocol error reach the caller as before."""
    async with served.http(served.issuer.mint(scope=READ_WRITE)) as http, connect(served.server.url, http) as client:
        result = await client.call_tool("why", {"id": "ghost"})
        assert result.is_error and result.content[0].text.startswith("invalid_ref: ")
        with pytest.raises(MCPError):
            await client.read_resource("mnem://nothing-here")
        assert http.event_hooks["response"]  # the hook is there while connected...
    assert http.event_hooks["response"] == []  # ...and gone after


class Hostile(BaseHTTPRequestHandler):
    """A server that refuses every request with a long description holding terminal escapes."""

    def do_POST(self) -> None:
        body = json.dumps({"error": "invalid_token\x1b]0;owned\x07",
                           "error_description": "\x1b[2J" + "y" * (MAX_TEXT + 10)}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        return


async def test_a_hostile_servers_description_is_bounded_and_cannot_drive_a_terminal() -> None:
    listener = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    thread = threading.Thread(target=listener.serve_forever, daemon=True)
    thread.start()
    try:
        async with httpx2.AsyncClient() as http:
            with pytest.raises(RefusedError) as caught:
                async with connect(f"http://127.0.0.1:{listener.server_port}/mcp", http):
                    pytest.fail("the server accepted the request")
    finally:
        listener.shutdown()
        listener.server_close()
        thread.join()
    text = str(caught.value)
    assert "\x1b" not in text and "\x07" not in text
    assert caught.value.error == "invalid_token?]0;owned?"
    assert len(caught.value.description) == MAX_TEXT + len("...")
