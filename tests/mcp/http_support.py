"""Real parts for the HTTP tests: a local OAuth issuer, a ``mnem-mcp`` server process, and clients with tokens.

* ``Issuer``: the project's development issuer (``mnem_mcp.dev_issuer``, the
  one docs/mcp-http.md's recipe runs) on a thread, with a P-256 key made
  when it starts.  It publishes an OIDC discovery document and its JWKS,
  and mints access tokens the way any issuer would (``mint``), plus the
  bad ones the tests need (another key, another audience, expired).
* ``HttpServer``: ``mnem-mcp --transport streamable-http`` as a subprocess on
  a free port, ready when its endpoint answers; ``stop`` ends it (SIGTERM,
  then SIGKILL) and returns its exit status and standard error.
* ``connect``: the ``mcp`` ``Client`` over Streamable HTTP, with a bearer
  token, in either protocol era.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Literal

import httpx2
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_support import MNEM_MCP, server_env

from mnem_mcp.dev_issuer import KID, DevIssuer

READ_WRITE = "mnem:read mnem:write"


def free_port() -> int:
    """A TCP port nothing listens on right now (the kernel's pick)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Issuer(DevIssuer):
    """The project's development issuer (``mnem_mcp.dev_issuer``) on a free loopback port, serving on a thread.

    Args:
        audience: The resource URI tokens are minted for by default.
        port: The port (default: a free one).
    """

    def __init__(self, audience: str, port: int = 0) -> None:
        super().__init__(audience, port=port)
        self.start()

    def mint(self, sub: str | None = "alice@example.com", *, scope: str | None = READ_WRITE,
             audience: str | list[str] | None = None, expires_in: float = 300,
             key: ec.EllipticCurvePrivateKey | None = None, **claims: Any) -> str:
        """A signed access token; every argument can be made wrong for a test (``None``: leave the claim out)."""
        payload = {**self.claims(sub, scope=scope, audience=audience, expires_in=expires_in),
                   "client_id": "test-client", **claims}
        if key is None:
            return self.sign(payload)
        return jwt.encode(payload, key, algorithm="ES256", headers={"kid": KID})


class HttpServer:
    """``mnem-mcp --transport streamable-http`` over ``store`` on a free loopback port.

    Args:
        store: The store to serve.
        auth: The ``--auth`` arguments (e.g. ``["--auth", "none"]``).
        extra: Any further arguments.
        port: The port (default: a free one).
        transport: The ``--transport`` value (``http`` is the short name of ``streamable-http``).
        program: The command that is ``mnem-mcp`` (default: the installed console script).
        env: Variables for the server's environment besides ``PATH`` (``TMPDIR``, say).
    """

    def __init__(self, store: Path | str, auth: Sequence[str], *extra: str, port: int | None = None,
                 transport: str = "streamable-http", program: Sequence[str] = (MNEM_MCP,),
                 env: dict[str, str] | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - read back by stop()
        argv = [*program, "--store", str(store), "--transport", transport, "--port", str(self.port),
                *auth, *extra]
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=self._stderr, env=server_env(**(env or {})))
        self._wait_ready()

    def _wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until the endpoint answers; the bound only ends a wait for a server that never listens."""
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

    def accepts(self) -> bool:
        """Whether the server takes a new connection (it stops as soon as a SIGTERM's shutdown begins)."""
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", self.port)) == 0

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
async def connect(url: str, token: str | None = None, *, era: Literal["modern", "legacy"] = "modern",
                  headers: dict[str, str] | None = None) -> AsyncIterator[Client]:
    """A connected ``mcp`` client over Streamable HTTP, sending ``token`` as its bearer token.

    Args:
        url: The MCP endpoint.
        token: The access token (``None``: no Authorization header).
        era: ``modern`` (2026-07-28, stateless) or ``legacy`` (the initialize handshake and a session).
        headers: More headers for every request (the tenant tests' attempts to name another store).

    Yields:
        The client.
    """
    headers = {**(headers or {}), **({} if token is None else {"Authorization": f"Bearer {token}"})}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=120.0)) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="legacy" if era == "legacy" else "auto") as client:
            yield client


@contextmanager
def served_with_jwt(store: Path | str, *extra: str) -> Iterator[tuple[Issuer, HttpServer]]:
    """``store`` served with ``--auth jwt`` by tokens of a dev issuer of its own; both stopped after.

    Args:
        store: The store (a folder or a PostgreSQL URL).
        extra: Further ``mnem-mcp`` arguments (``--tools all``, say).

    Yields:
        The issuer, which signs tokens for the server's audience, and the server.
    """
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(audience)
    try:
        server = HttpServer(store, ["--auth", "jwt", "--issuer", issuer.url, "--audience", audience], *extra,
                            port=port)
        try:
            yield issuer, server
        finally:
            server.stop()
    finally:
        issuer.close()
