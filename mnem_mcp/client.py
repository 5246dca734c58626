"""Connecting to a remote ``mnem-mcp``: the SDK's client, with an HTTP refusal said as the server said it.

The MCP SDK's Streamable HTTP transport answers a request refused with a
status of 400 or more, whose body is not a JSON-RPC error, with one fixed
error, ``Server returned an error response``
(``mcp.client.streamable_http``, ``StreamableHTTPTransport._handle_post_request``):
the status, the ``WWW-Authenticate`` header and the body, where the server
says why (a refused token's ``error_description``), are dropped.  Raised
while the client connects, that error then leaves the client session's
task group as an ``ExceptionGroup``: some sixty lines of traceback, with
no 401 and no reason in them.

``connect(url, http_client)`` is the SDK's ``Client`` over Streamable
HTTP, plus a response hook on the caller's ``httpx2`` client (httpx's
public event hooks; nothing of the SDK is patched).  A refusal of the
endpoint that says why raises ``RefusedError``, whose text is
``401 invalid_token: <the server's description>``, and it leaves
``connect`` as itself, taken out of the SDK's exception group, so it is
the one exception the caller catches.  What says why: OAuth's body
``{"error", "error_description"}`` (a refused or missing token, a missing
scope, an issuer the server cannot reach, a token mapping to no store),
``mnem-mcp``'s own ``{"error": {"code", "message"}}`` (a body too large
or too slow, too many requests), or, for a 401 or 403 without either, RFC
6750's ``WWW-Authenticate: Bearer error=..., error_description=...``.  A
JSON-RPC error is left to the SDK, which reports it itself.

The server is another party: a refusal's body is read only when it says
it is JSON of at most ``MAX_REFUSAL`` bytes, and its text is cut to
``MAX_TEXT`` characters, control characters replaced, before it reaches a
terminal.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

__all__ = ["MAX_REFUSAL", "MAX_TEXT", "RefusedError", "connect"]

#: The largest refusal body read (a refusal is a line or two; the SDK would read it whole).
MAX_REFUSAL: Final = 64 * 1024
#: The longest error code or description a ``RefusedError`` carries.
MAX_TEXT: Final = 2000
#: One ``name="value"`` (or ``name=token``) parameter of a ``WWW-Authenticate`` challenge.
_PARAMETER: Final = re.compile(r'([A-Za-z_]+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


class RefusedError(Exception):
    """The server refused the HTTP request itself: its status, its error code and why.

    Args:
        status: The HTTP status (401 for a refused token).
        error: The error code the server gave (``invalid_token``, ``insufficient_scope``, ``usage``...), or the
            status's reason phrase when it gave none.
        description: Why, in the server's words (``""`` when it said nothing more).
    """

    def __init__(self, status: int, error: str, description: str) -> None:
        self.status = status
        self.error = error
        self.description = description
        super().__init__(f"{status} {error}: {description}" if description else f"{status} {error}")


@asynccontextmanager
async def connect(url: str, http_client: httpx2.AsyncClient, **options: Any) -> AsyncIterator[Client]:
    """The SDK's ``Client`` over Streamable HTTP to ``url``; a refusal raises ``RefusedError`` (see the module).

    Args:
        url: The MCP endpoint, e.g. ``https://memory.example.com/mcp``.
        http_client: The client to send requests with: its headers carry the bearer token.  A response hook is
            added to it for as long as the connection lasts.
        **options: More arguments for ``mcp.Client`` (``mode``, ``cache``, ...).

    Yields:
        The connected client.

    Raises:
        RefusedError: The server refused a request to the endpoint, saying why.
    """

    async def check(response: httpx2.Response) -> None:
        request = response.request
        if response.status_code >= 400 and request.method == "POST" and request.url == url:
            refused = await _refusal(response)
            if refused is not None:
                raise refused

    hooks = http_client.event_hooks
    http_client.event_hooks = {**hooks, "response": [*hooks.get("response", []), check]}
    try:
        async with Client(streamable_http_client(url, http_client=http_client), **options) as client:
            yield client
    except BaseExceptionGroup as group:
        refused = _first_refusal(group)
        if refused is None:
            raise
        # the SDK's group only wraps it, beside its own stand-in error; the frames inside the transport say nothing
        raise refused.with_traceback(None) from None
    finally:
        http_client.event_hooks = hooks


async def _refusal(response: httpx2.Response) -> RefusedError | None:
    """Why the server refused, as it said it; ``None`` when it did not say (or said it as JSON-RPC)."""
    kind = response.headers.get("content-type", "").lower()
    length = response.headers.get("content-length", "")
    if kind.startswith("application/json") and length.isdigit() and int(length) <= MAX_REFUSAL:
        try:
            body = json.loads(await response.aread())
        except (ValueError, httpx2.HTTPError):
            body = None
        if isinstance(body, dict) and "jsonrpc" not in body:
            error = body.get("error")
            if isinstance(error, str):  # OAuth's (RFC 6750): {"error", "error_description"}
                return RefusedError(response.status_code, _shown(error), _shown(body.get("error_description")))
            if isinstance(error, dict) and isinstance(error.get("code"), str):  # mnem-mcp's own: {"error": {...}}
                return RefusedError(response.status_code, _shown(error["code"]), _shown(error.get("message")))
    if response.status_code in (401, 403):  # said in the challenge header alone, or not at all
        said = {name.lower(): quoted or token for name, quoted, token in
                _PARAMETER.findall(response.headers.get("www-authenticate", ""))}
        return RefusedError(response.status_code, _shown(said.get("error") or response.reason_phrase),
                            _shown(said.get("error_description")))
    return None


def _shown(text: object) -> str:
    """A text from the server, bounded, with nothing that could drive a terminal."""
    if not isinstance(text, str):
        return ""
    cut = text[:MAX_TEXT] + ("..." if len(text) > MAX_TEXT else "")
    return "".join(char if char.isprintable() else "?" for char in cut)


def _first_refusal(group: BaseExceptionGroup[BaseException]) -> RefusedError | None:
    """The first ``RefusedError`` in ``group``, however deeply the SDK's task groups nested it."""
    for exc in group.exceptions:
        if isinstance(exc, RefusedError):
            return exc
        if isinstance(exc, BaseExceptionGroup) and (found := _first_refusal(exc)) is not None:
            return found
    return None
