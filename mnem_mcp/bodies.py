"""A limit on the body of every request the HTTP transport serves, enforced while the body streams in.

Without one, a client can make the server buffer whatever it sends: the MCP
SDK reads a whole JSON-RPC message before parsing it, and a push's pack is
read before the engine looks at it.  ``BodyLimits`` wraps the whole ASGI app
(``http.app``), so no route can forget it:

* A method that carries no body (``GET``, ``HEAD``, ``OPTIONS``,
  ``DELETE``) may send none: the metadata, ``sync/refs``, the SDK's event
  stream and session end take nothing.
* Any other request gets its route's ``limits.Limit``: ``--max-body`` for
  the MCP endpoint (and any other path), and what ``remote_sync.sync_limits``
  sets for the sync routes (``--max-pack`` for a push, a small fixed bound
  for ``sync/upload``'s list of ids).
* A ``Content-Length`` over the limit is answered ``413`` before a byte of
  the body is read.  A body without one (chunked) is counted as it is
  read, and refused once it passes the limit: the server never holds more
  than the limit of a body (uvicorn stops reading the socket while nobody
  asks for more), and the connection is then closed.
* A route whose app reads the whole body anyway (the MCP endpoint, the
  upload's JSON) gets it read here first, up to its limit, so an app never
  sees a body cut short.  A *streamed* route (a push, whose pack is
  spooled to a file as it arrives) reads it itself; once the body passes
  the limit, the route sees the client gone (``http.disconnect``), stops
  and cleans up (the spooled file is removed), and then the answer is
  ``413``.  So does any request without a token under ``--auth jwt``:
  this middleware runs after the authentication middleware, and a request
  that will be refused ``401`` has none of its body read for it.

A body must also arrive whole within ``--body-timeout`` seconds of the
request's start, however it trickles: a client sending a byte a minute
would otherwise hold a connection, and a spooled file, for ever (a timeout
between reads never fires on it).  Past the deadline the request is
answered ``408``, as a body over its limit is answered ``413``: an app
reading the body itself sees the client gone first.  Once the body is in,
the deadline no longer applies (a response may stream for as long as it
needs).

At most ``--max-requests`` requests with a body are served at once; one
more is answered ``503`` (code ``busy``, retry later) before any of its body
is read.  The MCP endpoint's body is held in memory while its call runs, so
without this bound the memory bodies take would grow with the number of
clients; with it, it stays under ``--max-requests`` times ``--max-body``.
(A pushed pack is spooled, never held.)

The ``413``, ``408`` and ``503`` are JSON, ``{"error": {"code": "usage", "message",
"limit", "option"}}``: the shape of every sync route's refusal (``mnem``'s
HTTP peer reads it as a typed error), naming the limit (bytes, seconds or
requests) and the option that raises it.  The limits themselves live in
``limits``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import anyio
import orjson

from .limits import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_REQUESTS, NO_BODY, Limit, shown

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimits"]

logger = logging.getLogger(__name__)

#: Methods that carry no body.
_BODILESS: Final = frozenset({"GET", "HEAD", "OPTIONS", "DELETE"})


class _LateBodyError(Exception):
    """A request's body did not arrive whole before its deadline."""


class BodyLimits:
    """ASGI middleware: each request's body held to its route's ``Limit`` and to a deadline (module docstring).

    Args:
        app: The app to guard.
        default: The limit of a request with a body on any path not in ``routes``.
        routes: Limits by exact path.
        timeout: Seconds a request's whole body may take to arrive (``--body-timeout``).
        max_requests: Requests with a body served at once (``--max-requests``).
    """

    def __init__(self, app: ASGIApp, default: Limit, routes: Mapping[str, Limit],
                 timeout: float = DEFAULT_BODY_TIMEOUT, max_requests: int = DEFAULT_MAX_REQUESTS) -> None:
        self.app = app
        self.default = default
        self.routes = dict(routes)
        self.timeout = timeout
        self.max_requests = max_requests
        #: Requests with a body being served now (one event loop: no lock needed).
        self.serving = 0

    def limit_for(self, method: str, path: str) -> Limit:
        """The limit of a ``method`` request to ``path``."""
        return NO_BODY if method in _BODILESS else self.routes.get(path, self.default)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a body over its limit before or while it is read; pass everything else on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["method"], scope["path"])
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length", b"").decode("latin-1").strip()
        chunked = b"transfer-encoding" in headers
        if (declared.isdigit() and int(declared) > limit.size) or (limit.size == 0 and chunked):
            await _refuse(scope, send, limit)
            return
        user = scope.get("user")  # set by the authentication middleware (--auth jwt), which runs first
        anonymous = user is not None and not getattr(user, "is_authenticated", False)
        if limit.size == 0:
            await self.app(scope, receive, send)
            return
        if self.serving >= self.max_requests:
            await self._busy(scope, send)
            return
        self.serving += 1
        try:
            timed = self._timed(receive)
            if limit.streamed or anonymous:  # a request without a token is refused before its body is read
                await self._streamed(scope, timed, send, limit)
            else:
                await self._read_first(scope, timed, send, limit)
        finally:
            self.serving -= 1

    async def _busy(self, scope: Scope, send: Send) -> None:
        """Answer ``503``: ``--max-requests`` requests with a body are being served already."""
        logger.warning("refused a request: %d requests with a body are being served (--max-requests): %s %s",
                       self.serving, scope["method"], scope["path"][:200])
        message = (f"the server is serving {self.max_requests} requests with a body already, the most it takes at "
                   "once (--max-requests); retry shortly, or ask the server's operator to raise --max-requests")
        await _answer(send, 503, {"code": "busy", "message": message, "limit": self.max_requests,
                                  "option": "--max-requests"})

    def _timed(self, receive: Receive) -> Receive:
        """``receive``, raising ``_LateBodyError`` when the body is not whole by the deadline; unbounded once it is."""
        deadline = anyio.current_time() + self.timeout
        whole = False

        async def timed() -> Message:
            nonlocal whole
            if whole:
                return await receive()
            with anyio.move_on_after(deadline - anyio.current_time()):
                message = await receive()
                whole = message["type"] != "http.request" or not message.get("more_body", False)
                return message
            raise _LateBodyError

        return timed

    async def _read_first(self, scope: Scope, receive: Receive, send: Send, limit: Limit) -> None:
        """Read the body up to ``limit``, then hand it to the app as one message (or refuse it, unseen by the app)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                message = await receive()
            except _LateBodyError:
                await self._late(scope, send)
                return
            if message["type"] != "http.request":
                return  # the client left before its body ended: there is no one to answer
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit.size:
                await _refuse(scope, send, limit)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        whole: list[Message] = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

        async def replayed() -> Message:
            return whole.pop() if whole else await receive()  # then, as before: a disconnect, when it comes

        await self.app(scope, replayed, send)

    async def _streamed(self, scope: Scope, receive: Receive, send: Send, limit: Limit) -> None:
        """Count the body as the app reads it; past ``limit``, the app sees the client gone, then ``413``."""
        counted = 0
        state = {"started": False, "refused": False, "late": False}

        async def limited_receive() -> Message:
            nonlocal counted
            if state["refused"]:
                return {"type": "http.disconnect"}
            try:
                message = await receive()
            except _LateBodyError:
                state["refused"] = state["late"] = True
                return {"type": "http.disconnect"}
            if message["type"] == "http.request":
                counted += len(message.get("body", b""))
                if counted > limit.size:
                    state["refused"] = True
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            if state["refused"]:
                return  # the 413 is the answer: whatever the app says after seeing the client gone is dropped
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if not state["refused"]:
                raise
            logger.debug("after a refused body, the app failed as its client had gone", exc_info=True)
        if state["refused"] and not state["started"]:
            await (self._late(scope, send) if state["late"] else _refuse(scope, send, limit))

    async def _late(self, scope: Scope, send: Send) -> None:
        """Answer ``408``: the body did not arrive within ``--body-timeout``."""
        method, path = scope["method"], scope["path"][:200]
        logger.info("refused a request whose body took over %g s: %s %s", self.timeout, method, path)
        message = (f"the request's body did not arrive within {self.timeout:g} seconds (--body-timeout); send it "
                   "faster, or ask the server's operator to raise --body-timeout")
        await _answer(send, 408, {"code": "usage", "message": message, "limit": self.timeout,
                                  "option": "--body-timeout"})


async def _refuse(scope: Scope, send: Send, limit: Limit) -> None:
    """Answer ``413`` naming the limit and its option, and close the connection."""
    method, path = scope["method"], scope["path"]
    if limit.size == 0:
        message = f"{method} {path[:200]} takes no request body; send it without one"
    else:
        raise_it = f" ({limit.option}); send less, or ask the server's operator to raise {limit.option}" \
            if limit.option is not None else "; send less"
        message = f"the request's body is larger than {shown(limit.size)}, the most this server takes for " \
                  f"{limit.what}{raise_it}"
    logger.info("refused a request body over %d bytes: %s %s", limit.size, method, path[:200])
    await _answer(send, 413, {"code": "usage", "message": message, "limit": limit.size, "option": limit.option})


async def _answer(send: Send, status: int, error: dict[str, Any]) -> None:
    """Answer ``{"error": error}`` with ``status``, and close the connection (the rest of the body is not read)."""
    body = orjson.dumps({"error": error})
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
