"""Real parts for the HTTP tests: a local OAuth issuer, a ``mnem-mcp`` server process, and clients with tokens.

* ``Issuer``: a tiny authorization server on loopback (the standard
  library's ``http.server`` on a thread) with a P-256 key generated in the
  test.  It publishes an OIDC discovery document and its JWKS, and mints
  access tokens the way any issuer would (``mint``), plus the bad ones
  the tests need (another key, another audience, expired).
* ``HttpServer``: ``mnem-mcp --transport streamable-http`` as a subprocess on
  a free port, ready when its endpoint answers; ``stop`` ends it (SIGTERM,
  then SIGKILL) and returns its exit status and standard error.
* ``connect``: the ``mcp`` ``Client`` over Streamable HTTP, with a bearer
  token, in either protocol era.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

import httpx2
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_support import MNEM_MCP, server_env

KID = "test-key-1"
READ_WRITE = "mnem:read mnem:write"


def free_port() -> int:
    """A TCP port nothing listens on right now (the kernel's pick)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Issuer:
    """An OAuth issuer on loopback: discovery document, JWKS, and a signing key made here.

    Args:
        audience: The resource URI tokens are minted for by default.
    """

    def __init__(self, audience: str) -> None:
        self.audience = audience
        self.key = ec.generate_private_key(ec.SECP256R1())
        jwk = {**ECAlgorithm.to_jwk(self.key.public_key(), as_dict=True), "kid": KID, "use": "sig", "alg": "ES256"}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._documents = {
            "/.well-known/openid-configuration": {"issuer": self.url, "jwks_uri": f"{self.url}/jwks.json"},
            "/jwks.json": {"keys": [jwk]},
        }
        self._thread = threading.Thread(target=self._server.serve_forever, name="test-issuer", daemon=True)
        self._thread.start()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                document = issuer._documents.get(self.path)
                body = json.dumps(document).encode()
                self.send_response(200 if document is not None else 404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the tests' output is theirs."""

        return Handler

    def mint(self, sub: str | None = "alice@example.com", *, scope: str | None = READ_WRITE,
             audience: str | list[str] | None = None, expires_in: float = 300,
             key: ec.EllipticCurvePrivateKey | None = None, **claims: Any) -> str:
        """A signed access token; every argument can be made wrong for a test (``None``: leave the claim out)."""
        now = int(time.time())
        payload = {"iss": self.url, "aud": audience or self.audience, "iat": now, "exp": now + int(expires_in),
                   "client_id": "test-client", **claims}
        if scope is not None:
            payload["scope"] = scope
        if sub is not None:
            payload["sub"] = sub
        return jwt.encode(payload, key or self.key, algorithm="ES256", headers={"kid": KID})

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()


class HttpServer:
    """``mnem-mcp --transport streamable-http`` over ``store`` on a free loopback port.

    Args:
        store: The store to serve.
        auth: The ``--auth`` arguments (e.g. ``["--auth", "none"]``).
        extra: Any further arguments.
        port: The port (default: a free one).
        transport: The ``--transport`` value (``http`` is the short name of ``streamable-http``).
    """

    def __init__(self, store: Path | str, auth: Sequence[str], *extra: str, port: int | None = None,
                 transport: str = "streamable-http") -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - read back by stop()
        argv = [MNEM_MCP, "--store", str(store), "--transport", transport, "--port", str(self.port),
                *auth, *extra]
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=self._stderr, env=server_env())
        self._wait_ready()

    def _wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"mnem-mcp exited with {self.process.returncode}:\n{self.stderr()}")
            try:
                httpx2.get(self.url, timeout=1.0)
                return
            except httpx2.TransportError:
                time.sleep(0.05)
        self.stop()
        raise AssertionError(f"mnem-mcp did not listen on {self.url} within {timeout} s:\n{self.stderr()}")

    def stderr(self) -> str:
        """What the server logged so far."""
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def signal(self, sig: int = signal.SIGTERM) -> None:
        """Send the server a signal (by its pid)."""
        os.kill(self.process.pid, sig)

    def stop(self, timeout: float = 20.0) -> int:
        """End the server (SIGTERM, SIGKILL after ``timeout``); its exit status."""
        if self.process.poll() is None:
            self.signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


@asynccontextmanager
async def connect(url: str, token: str | None = None, *,
                  era: Literal["modern", "legacy"] = "modern") -> AsyncIterator[Client]:
    """A connected ``mcp`` client over Streamable HTTP, sending ``token`` as its bearer token.

    Args:
        url: The MCP endpoint.
        token: The access token (``None``: no Authorization header).
        era: ``modern`` (2026-07-28, stateless) or ``legacy`` (the initialize handshake and a session).

    Yields:
        The client.
    """
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=120.0)) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="legacy" if era == "legacy" else "auto") as client:
            yield client
