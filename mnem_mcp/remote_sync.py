"""The HTTP side of ``mnem fetch`` / ``push`` / ``clone`` against a ``mnem-mcp`` server (docs/remotes.md).

A store served over Streamable HTTP is also a remote: ``mnem remote add hub
https://HOST/mcp``.  The engine's HTTP peer (``mnem_store.httppeer``) asks
three routes beneath the MCP endpoint, and each is answered by the serving
verbs of the store the request maps to, through the bridge like every tool
(``mnem upload-pack`` / ``mnem receive-pack``, as git's HTTP backend runs
git's), so a transfer is the engine's own, verified and one transaction:

* ``GET  PATH/sync/refs``: the store's format, HEAD and branch tips, and
  ``max_pack``, the largest pack a push may send (``--max-pack``), so that a
  client refuses a larger one before sending it; with
  ``?redactions=summary`` (a client that compares ranges of redaction
  records) the records are summed up instead of listed, when the store's
  ``mnem`` can (feature ``redaction-ranges``);
* ``POST PATH/sync/upload`` (JSON ``{"want", "have"}``, at most ``MAX_IDS``
  ids each, and optionally ``"redactions"``: at most ``MAX_REDACTIONS``
  object ids whose redaction records the pack is to carry, and ``"held"``,
  the summary whose records the client took in pages): a pack;
* ``POST PATH/sync/receive?branch&old&new&force[&redactions=1]`` (a pack):
  the push's result;
* ``POST PATH/sync/ranges`` (JSON ``{"prefixes"}``, at most 256): the
  summary or ids of each range of the store's redaction record ids;
* ``POST PATH/sync/records`` (a pack of redaction records alone): the
  records new to the store, ``{"redactions": N}``; it needs ``mnem:redact``.

A pack never sits in this process's memory: a push's body is spooled, as it
arrives, to a private temporary file (``tempfile.mkstemp``: mode 0600,
removed once answered) whose path ``mnem receive-pack --pack-file`` reads,
and an upload's pack is written by ``mnem upload-pack --pack-file`` to
another and streamed from there.  The paths are the server's own, never a
client's words.  How large a body each route takes is ``sync_limits``
(``bodies.BodyLimits`` enforces it for the whole app).

The same rules as the MCP endpoint hold: the ``Host``/``Origin`` allow-list,
and with ``--auth jwt`` a bearer token (``401`` naming the metadata without
one), ``mnem:read`` for every route and ``mnem:write`` to push (``403
insufficient_scope``), and ``mnem:redact`` besides for a push that brings
redaction records (``redactions=1``, which the engine's peer says for a
pack that carries any, and every ``records`` request): such a push removes bytes from the served store's
history, a right a token that may only add does not hold.  The engine is
told whether the pusher holds it, so a pack that carries records a push
did not declare is refused too (``usage``), and nothing moves either way;
the store is the one the token maps to
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
import os
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Final

import orjson
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

import mnem_bridge

from . import identity
from .errors import UNEXPECTED, Redaction, error_code, told
from .identity import READ_SCOPE, REDACT_SCOPE, WRITE_SCOPE
from .limits import Limit
from .server import MnemServer

__all__ = ["MAX_IDS", "STATUS", "sync_limits", "sync_routes"]

#: The HTTP status each error code is answered with (anything else: 500).
STATUS: Final = {"usage": 400, "invalid_ref": 400, "not_found": 404, "no_store": 404, "conflict": 409,
                 "corrupt_store": 422, "format_version": 422, "busy": 503, "store_io": 500}

logger = logging.getLogger(__name__)

Handler = Callable[[Request], Awaitable[Response]]

#: The most ids an upload request names in ``want``, and in ``have``.  The engine's HTTP peer asks in batches of
#: the same number (``mnem_store.peers.MAX_IDS``, which this package may not import), so no fetch is refused.
MAX_IDS: Final = 10_000
#: The most object ids an upload request names in ``redactions``: the most records one transfer carries (the
#: engine's ``mnem_store.redaction_travel.MAX_REDACTIONS``, the same number).
MAX_REDACTIONS: Final = 100_000
#: The most an upload request's body takes: ``MAX_IDS`` ids in each list and ``MAX_REDACTIONS`` object ids (67
#: bytes each, quoted), with room to spare.
UPLOAD_LIMIT: Final = 12 << 20
#: The most a ranges request's body takes: 256 prefixes of 64 hex digits, quoted, with room to spare.
RANGES_LIMIT: Final = 64 << 10
#: The query a client that compares ranges of redaction records asks the advertisement with.
SUMMED: Final = "summary"
#: Bytes read from a pack's file at a time, as it is streamed.
_CHUNK: Final = 1 << 16


def sync_limits(path: str, max_pack: int) -> dict[str, Limit]:
    """The body limit of each sync route beneath the MCP endpoint at ``path`` that takes a body."""
    base = _base(path)
    return {f"{base}/receive": Limit(max_pack, "a push's pack", "--max-pack", streamed=True),
            f"{base}/records": Limit(max_pack, "a page of redaction records", "--max-pack", streamed=True),
            f"{base}/upload": Limit(UPLOAD_LIMIT, f"an upload request (at most {MAX_IDS} wants and {MAX_IDS} haves, "
                                                  f"{MAX_REDACTIONS} redactions)"),
            f"{base}/ranges": Limit(RANGES_LIMIT, "a request for ranges of redaction records (at most 256)")}


def _base(path: str) -> str:
    return path.rstrip("/") + "/sync"


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


def sync_routes(server: MnemServer, path: str, security: TransportSecuritySettings, max_pack: int) -> list[Route]:
    """The sync routes beneath the MCP endpoint at ``path`` (see the module's docstring).

    Args:
        server: The built server: its store binding, and its auth settings (``--auth jwt``) when tokens are checked.
        path: The MCP endpoint's path (``Listen.path``).
        security: The listener's ``Host``/``Origin`` allow-list (``http.security``).
        max_pack: The largest pack a push may send (``--max-pack``), which the advertisement names.

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

    def guarded(handler: Handler, *, writes: bool = False, redacts: bool = False) -> Handler:
        """``handler`` behind the allow-list, and with ``--auth jwt`` behind a token with the scopes it needs.

        A push that says it brings redaction records (``redactions=1``), and every handler that ``redacts``,
        needs ``REDACT_SCOPE`` too.
        """

        async def checked(request: Request) -> Response:
            refusal = await guard.validate_request(request, is_post=False)
            if refusal is not None:
                return refusal
            if auth is not None:
                token = get_access_token()
                if token is None:
                    return refused(401, "invalid_token", "a bearer token is required")
                needed = [READ_SCOPE, WRITE_SCOPE] if writes else [READ_SCOPE]
                if redacts or (writes and request.query_params.get("redactions") == "1"):
                    needed.append(REDACT_SCOPE)
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
        if request.query_params.get("redactions") == SUMMED:
            try:
                advert = await store_call(mnem_bridge.Store.advertise, summed=True)
            except mnem_bridge.ContractError:  # a mnem that cannot: its list, which the client reads as before
                advert = await store_call(mnem_bridge.Store.advertise)
        else:
            advert = await store_call(mnem_bridge.Store.advertise)
        return JSONResponse({**advert, "max_pack": max_pack})

    async def ranges(request: Request) -> Response:
        try:
            prefixes = orjson.loads(await request.body())["prefixes"]
        except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
            raise mnem_bridge.UsageError(f'the ranges request must be JSON {{"prefixes": [...]}} ({exc})') from None
        return JSONResponse(await store_call(mnem_bridge.Store.redaction_ranges, prefixes))

    async def records(request: Request) -> Response:
        try:
            spooled = await _spool(request)
        except ClientDisconnect:  # gone, or refused by bodies.BodyLimits, which then answers 413
            return Response(status_code=400)
        try:
            return JSONResponse(await store_call(mnem_bridge.Store.receive_redactions, spooled))
        finally:
            spooled.unlink()

    async def upload(request: Request) -> Response:
        try:
            doc = orjson.loads(await request.body())
            want, have, asked, held = doc["want"], doc["have"], doc.get("redactions", []), doc.get("held")
            if not (isinstance(want, list) and isinstance(have, list) and isinstance(asked, list)):
                raise TypeError("want, have and redactions must be lists")
            if held is not None and not isinstance(held, dict):
                raise TypeError('held must be {"count", "digest"}')
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise mnem_bridge.UsageError(f'the upload request must be JSON {{"want": [...], "have": [...]}} ({exc})'
                                         ) from None
        if len(want) > MAX_IDS or len(have) > MAX_IDS or len(asked) > MAX_REDACTIONS:
            raise mnem_bridge.UsageError(f"an upload request names at most {MAX_IDS} wants, {MAX_IDS} haves and "
                                         f"{MAX_REDACTIONS} redactions; it named {len(want)}, {len(have)} and "
                                         f"{len(asked)}")
        fd, name = tempfile.mkstemp(prefix="mnem-mcp-upload-", suffix=".pack")
        os.close(fd)
        try:
            await store_call(mnem_bridge.Store.upload_pack_to, name, want, have, redactions=asked, held=held)
            pack = open(name, "rb")  # noqa: SIM115 - closed by _streamed, once sent
        finally:
            os.unlink(name)  # the open file keeps its bytes until it is closed
        size = os.fstat(pack.fileno()).st_size
        return StreamingResponse(_streamed(pack), media_type="application/cbor",
                                 headers={"Content-Length": str(size)})

    async def receive(request: Request) -> Response:
        query = request.query_params
        if "branch" not in query or "new" not in query:
            raise mnem_bridge.UsageError("a push names ?branch=B&old=ID&new=ID&force=0|1")
        force = query.get("force") == "1"
        if force and server.deny_non_fast_forwards:  # before a byte of the pack is read
            raise mnem_bridge.ConflictError("push refused: this server takes no forced push "
                                            "(mnem-mcp --deny-non-fast-forwards), so no push rewrites a branch's "
                                            "history; fetch, merge, and push again without --force-with-lease")
        try:
            spooled = await _spool(request)
        except ClientDisconnect:  # gone, or refused by bodies.BodyLimits, which then answers 413
            return Response(status_code=400)
        token = get_access_token() if auth is not None else None
        try:
            result = await store_call(mnem_bridge.Store.receive_pack, spooled, query["branch"],
                                      query.get("old") or None, query["new"], force=force,
                                      pusher=identity.author(server.author),
                                      own_commits_only=server.push_own_commits_only,
                                      redactions=auth is None or (token is not None and REDACT_SCOPE in token.scopes))
        finally:
            spooled.unlink()
        return JSONResponse(result)

    base = _base(path)
    return [Route(f"{base}/refs", guarded(refs), methods=["GET"]),
            Route(f"{base}/upload", guarded(upload), methods=["POST"]),
            Route(f"{base}/receive", guarded(receive, writes=True), methods=["POST"]),
            Route(f"{base}/ranges", guarded(ranges), methods=["POST"]),
            Route(f"{base}/records", guarded(records, writes=True, redacts=True), methods=["POST"])]


async def _spool(request: Request) -> Path:
    """The request's body, written to a private temporary file as it arrives (``bodies.BodyLimits`` bounds it)."""
    fd, name = tempfile.mkstemp(prefix="mnem-mcp-push-", suffix=".pack")
    try:
        with os.fdopen(fd, "wb") as out:
            async for chunk in request.stream():
                out.write(chunk)
    except BaseException:
        os.unlink(name)
        raise
    return Path(name)


def _streamed(pack: BinaryIO) -> Iterator[bytes]:
    """A pack's file in chunks, closed once sent or abandoned (Starlette iterates it on a worker thread)."""
    with pack:
        while chunk := pack.read(_CHUNK):
            yield chunk
