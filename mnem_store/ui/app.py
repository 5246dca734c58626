"""The web app of ``mnem ui``: read-only JSON routes, the page's static files, and the Host guard.

Safety comes first because the page shows an agent's whole memory:

* Only requests whose ``Host`` names this server on the loopback
  (``127.0.0.1``, ``localhost`` or ``[::1]`` with its port) are answered;
  any other is refused with 421, which defeats DNS rebinding (a foreign
  page whose name resolves to 127.0.0.1 still sends its own name).
* Every route is a GET: a POST, PUT or DELETE is refused with 405 and
  nothing in the app can write.  No request may carry a body: a GET that
  announces one (a ``Content-Length`` above 0, or chunked) is refused with
  413; both refusals are made from the headers, before a byte of a body is
  read, so nothing can make the server buffer one (``OnlyGets``).
* Static files are read once from the package's ``static`` folder by a
  fixed list of names, so no URL reaches the file system; the store is the
  one opened at start-up, and URL parameters reach it only as query values.
  ``index.html`` is a template: the page is served with the store's summary
  written in (``firstpaint``), so its first paint has content.

Requests run one at a time on a worker thread (the store is one open
``Repo``, whose connection is not shared across concurrent transactions),
while the event loop stays free for static files.  Every failure is a JSON
``{"error": {"code", "message"}}`` with a status that matches its code;
no traceback reaches the browser.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial
from importlib import resources
from typing import Any

from anyio import CapacityLimiter, to_thread
from starlette.applications import Starlette
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import MnemError
from ..repo import Repo
from . import firstpaint, params, queries

__all__ = ["STATIC_FILES", "HostGuard", "OnlyGets", "create_app", "static_files"]

logger = logging.getLogger(__name__)

#: The files the page is made of, and their media types: nothing else is ever served from disk.
STATIC_FILES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}

#: HTTP status per error code; codes not listed are the server's fault (500).
STATUS = {"not_found": 404, "invalid_ref": 400, "usage": 400, "busy": 503}

#: The page loads only its own files, and nothing may frame it.
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


def static_files() -> dict[str, bytes]:
    """The page's files, read from the installed package (``importlib.resources``, so a wheel works too)."""
    folder = resources.files(__package__).joinpath("static")
    return {name: folder.joinpath(name).read_bytes() for name in STATIC_FILES}


def _error(code: str, message: str, status: int | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status or STATUS.get(code, 500),
                        headers=SECURITY_HEADERS)


class HostGuard:
    """ASGI middleware: answer only requests addressed to this server by a loopback name and its port."""

    def __init__(self, app: ASGIApp, port: int) -> None:
        self.app = app
        self.allowed = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
        self.port = port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse an HTTP request whose Host header is not one of ours (421); pass everything else on."""
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1").lower()
            if host not in self.allowed:
                response = _error("usage", f"refused Host {host[:100]!r}: this server answers only "
                                  f"http://127.0.0.1:{self.port}/ (or localhost, [::1]); open that address", 421)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class OnlyGets:
    """ASGI middleware: answer nothing but a GET or HEAD without a body, deciding from the headers alone.

    Any other method is refused with 405 (the app is read-only), and a GET
    that announces a body (a ``Content-Length`` above 0, or chunked) with
    413; neither reads a byte of a body, so nothing can make the server
    buffer one.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse another method, or a request announcing a body; pass everything else on."""
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            length = headers.get(b"content-length", b"0").strip()
            announced = length not in (b"", b"0") or b"transfer-encoding" in headers
            refusal = None
            if scope["method"] not in ("GET", "HEAD"):
                refusal = _error("usage", f"{scope['method']} is refused: mnem ui is read-only (GET only)", 405)
            elif announced:
                refusal = _error("usage", "mnem ui takes no request body: it is read-only, and every request is a "
                                 "GET without one", 413)
            if refusal is not None:
                if announced:  # the body is never read: the connection cannot carry another request
                    refusal.headers["connection"] = "close"
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(repo: Repo, port: int) -> ASGIApp:
    """The ASGI app over an open store, guarded for the port it is served on."""
    files = static_files()
    limiter = CapacityLimiter(1)

    def api(call: Callable[[Request, QueryParams], Callable[[], Any]]) -> Callable[[Request], Awaitable[Response]]:
        """A JSON route: ``call`` checks the request's parameters here and returns the query run on the thread."""

        async def route(request: Request) -> Response:
            compute = call(request, request.query_params)
            return JSONResponse(await to_thread.run_sync(compute, limiter=limiter), headers=SECURITY_HEADERS)

        return route

    def static(name: str) -> Response:
        return Response(files[name], media_type=STATIC_FILES[name], headers=SECURITY_HEADERS)

    page = files["index.html"].decode()

    async def index(request: Request) -> Response:
        found = await to_thread.run_sync(partial(queries.summary, repo), limiter=limiter)
        return Response(firstpaint.render(page, found), media_type=STATIC_FILES["index.html"],
                        headers=SECURITY_HEADERS)

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in files or name == "index.html":
            raise HTTPException(404, f"no file {name[:80]!r}: the page is served at /")
        return static(name)

    async def mnem_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, MnemError)
        return _error(exc.code, str(exc))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404 and exc.detail == "Not Found":  # no route matched: say where things are
            return _error("not_found", f"nothing at {request.url.path[:100]!r}: the page is at /, the API under "
                          "/api/ (docs/ui.md)", 404)
        return _error("not_found" if exc.status_code == 404 else "usage", exc.detail, exc.status_code)

    async def internal_error(request: Request, exc: Exception) -> Response:
        logger.error("mnem ui: %s on %s", type(exc).__name__, request.url.path, exc_info=exc)
        return _error("store_io", f"internal error: {type(exc).__name__}; see the mnem ui terminal", 500)

    routes = [
        Route("/", index),
        Route("/static/{name}", asset),
        Route("/api/head", api(lambda r, q: partial(queries.head, repo))),
        Route("/api/facts", api(lambda r, q: partial(queries.facts, repo, params.rev(q), q.get("q", "")[:200],
                                                     params.offset(q), params.page_size(q, 50)))),
        Route("/api/timeline", api(lambda r, q: partial(queries.timeline, repo, params.node_id(q), params.rev(q),
                                                        params.page_size(q, 20)))),
        Route("/api/blame", api(lambda r, q: partial(queries.blame, repo, params.node_id(q), params.rev(q)))),
        Route("/api/when", api(lambda r, q: partial(queries.when, repo, params.node_id(q), params.json_value(q),
                                                    params.rev(q)))),
        Route("/api/log", api(lambda r, q: partial(queries.history, repo, params.rev(q), params.offset(q),
                                                   params.page_size(q, 50), every=params.every_branch(q),
                                                   thread=params.thread(q)))),
        Route("/api/commit/{id}", api(lambda r, q: partial(queries.commit_changes, repo,
                                                           params.commit_id(r.path_params["id"]),
                                                           params.offset(q), params.page_size(q, 50)))),
    ]
    handlers = {MnemError: mnem_error, HTTPException: http_error, Exception: internal_error}
    return HostGuard(OnlyGets(Starlette(routes=routes, exception_handlers=handlers)), port)
