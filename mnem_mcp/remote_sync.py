"""The HTTP side of ``mnem fetch`` / ``push`` / ``clone`` against a ``mnem-mcp`` server (docs/remotes.md).

A store served over Streamable HTTP is also a remote: ``mnem remote add hub
https://HOST/mcp``.  The engine's HTTP peer (``mnem_store.httppeer``) asks
three routes beneath the MCP endpoint, and each is answered by the serving
verbs of the store the request maps to, through the bridge like every tool
(``mnem upload-pack`` / ``mnem receive-pack``, as git's HTTP backend runs
git's), so a transfer is the engine's own, verified and one transaction:

* ``GET  PATH/sync/refs``: the store's format, HEAD and branch tips;
* ``POST PATH/sync/upload`` (JSON ``{"want", "have"}``): a pack;
* ``POST PATH/sync/receive?branch&old&new&force`` (a pack): the push's result.

The same rules as the MCP endpoint hold: the ``Host``/``Origin`` allow-list,
and with ``--auth jwt`` a bearer token (``401`` naming the metadata without
one), ``mnem:read`` for every route and ``mnem:write`` to push (``403
insufficient_scope``); the store is the one the token maps to
(``binding_for_request``: with ``--store-per``, the token's tenant), never
one the request names.  A push the store takes records who sent it, the
token's subject (else the server's ``--author``, which every unauthenticated
write records), with the time and the commits it brought (``mnem
receive-pack``'s ``pusher``), so ``why`` and ``history`` name the pusher
beside an author the commits merely claim; with ``--push-own-commits-only``
a push that brings a commit its pusher did not author is refused.  A
failure is answered as JSON ``{"error": {"code",
"message"}}`` with the engine's code, which the engine's peer raises as the
same typed error; the message is told as to any remote client
(``errors.Redaction``: no path, URL, binary or rerun line of the server's),
and the server's log has the whole text.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

import orjson
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import mnem_bridge

from . import identity
from .errors import UNEXPECTED, Redaction, error_code, told
from .identity import READ_SCOPE, WRITE_SCOPE
from .server import MnemServer

__all__ = ["STATUS", "sync_routes"]

#: The HTTP status each error code is answered with (anything else: 500).
STATUS: Final = {"usage": 400, "invalid_ref": 400, "not_found": 404, "no_store": 404, "conflict": 409,
                 "corrupt_store": 422, "format_version": 422, "busy": 503, "store_io": 500}

logger = logging.getLogger(__name__)

Handler = Callable[[Request], Awaitable[Response]]


def _failure(exc: BaseException, redaction: Redaction, route: str) -> JSONResponse:
    """A failure as the engine's peer reads it: the code, and the message with its fix, told as to any remote client.

    The server's log has the whole text (``errors.told``), rerun line and all; the client is told no path, URL
    or binary of the server's.
    """
    if isinstance(exc, PermissionError):  # a token that maps to no store (tenants.TenantRefusedError)
        return JSONResponse({"error": {"code": "usage", "message": str(exc)}}, status_code=403)
    code = error_code(exc)
    text, logged = told(exc, redaction)
    if code == UNEXPECTED:
        logger.error("sync %s failed unexpectedly: %s", route, logged, exc_info=exc)
    else:
        logger.info("sync %s: %s", route, logged)
    message = text.removeprefix(f"{code}: ")  # the peer reads the code from its own field
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=STATUS.get(code, 500))


def sync_routes(server: MnemServer, path: str, security: TransportSecuritySettings) -> list[Route]:
    """The three sync routes beneath the MCP endpoint at ``path`` (see the module's docstring).

    Args:
        server: The built server: its store binding, and its auth settings (``--auth jwt``) when tokens are checked.
        path: The MCP endpoint's path (``Listen.path``).
        security: The listener's ``Host``/``Origin`` allow-list (``http.security``).

    Returns:
        The routes, for ``http.serve(routes=...)``.
    """
    auth = server.settings.auth
    redaction = server.redaction or Redaction(server.binding.internals)
    guard = TransportSecurityMiddleware(security)
    metadata = None if auth is None or auth.resource_server_url is None else str(
        build_resource_metadata_url(auth.resource_server_url))

    def refused(status: int, error: str, description: str) -> JSONResponse:
        headers = {}
        if status == 401 and metadata is not None:
            headers["WWW-Authenticate"] = f'Bearer error="{error}", resource_metadata="{metadata}"'
        return JSONResponse({"error": error, "error_description": description}, status_code=status, headers=headers)

    def guarded(handler: Handler, *, writes: bool = False) -> Handler:
        """``handler`` behind the allow-list, and with ``--auth jwt`` behind a token with the scopes it needs."""

        async def checked(request: Request) -> Response:
            refusal = await guard.validate_request(request, is_post=False)
            if refusal is not None:
                return refusal
            if auth is not None:
                token = get_access_token()
                if token is None:
                    return refused(401, "invalid_token", "a bearer token is required")
                needed = [READ_SCOPE, WRITE_SCOPE] if writes else [READ_SCOPE]
                lacking = [scope for scope in needed if scope not in token.scopes]
                if lacking:
                    return refused(403, "insufficient_scope", f"this needs the scope {' '.join(needed)}; the token "
                                   f"has {' '.join(token.scopes) or 'no scopes'}")
            try:
                return await handler(request)
            except Exception as exc:  # every failure is answered with its code, never a traceback
                return _failure(exc, redaction, request.url.path.rsplit("/", 1)[-1])

        return checked

    async def store_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await server.binding.binding_for_request().call(fn, *args, **kwargs)

    async def refs(request: Request) -> Response:
        return JSONResponse(await store_call(mnem_bridge.Store.advertise))

    async def upload(request: Request) -> Response:
        try:
            doc = orjson.loads(await request.body())
            want, have = doc["want"], doc["have"]
            if not (isinstance(want, list) and isinstance(have, list)):
                raise TypeError("want and have must be lists")
        except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
            raise mnem_bridge.UsageError(f'the upload request must be JSON {{"want": [...], "have": [...]}} ({exc})'
                                         ) from None
        pack = await store_call(mnem_bridge.Store.upload_pack, want, have)
        return Response(pack, media_type="application/cbor")

    async def receive(request: Request) -> Response:
        query = request.query_params
        if "branch" not in query or "new" not in query:
            raise mnem_bridge.UsageError("a push names ?branch=B&old=ID&new=ID&force=0|1")
        result = await store_call(mnem_bridge.Store.receive_pack, await request.body(), query["branch"],
                                  query.get("old") or None, query["new"], force=query.get("force") == "1",
                                  pusher=identity.author(server.author),
                                  own_commits_only=server.push_own_commits_only)
        return JSONResponse(result)

    base = path.rstrip("/") + "/sync"
    return [Route(f"{base}/refs", guarded(refs), methods=["GET"]),
            Route(f"{base}/upload", guarded(upload), methods=["POST"]),
            Route(f"{base}/receive", guarded(receive, writes=True), methods=["POST"])]
