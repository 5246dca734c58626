"""Serve ``mnem-mcp`` over Streamable HTTP, for remote agents and hosted clients.

The MCP SDK's Streamable HTTP app does the protocol: a request carrying a
2026-07-28 ``MCP-Protocol-Version`` header is served statelessly, and the
``initialize`` handshake of 2025-11-25 and earlier opens a session
(``Mcp-Session-Id``), so both eras work on one endpoint, with the same
cache hints as over stdio.  This module adds what a network listener needs:

* **DNS-rebinding protection, always on.**  A request whose ``Host`` (or
  ``Origin``, when a browser sends one) is not on the allow-list is
  refused.  The list holds the loopback names when the server listens on
  loopback, the authority of ``--audience`` (the name clients reach the
  server by, behind a proxy too), and any ``--allowed-host`` /
  ``--allowed-origin``.
* **Protected Resource Metadata (RFC 9728)** with both scopes, at
  ``/.well-known/oauth-protected-resource`` followed by the resource URI's
  path (RFC 9728's place, which the SDK's 401 names) and, for clients that
  only look there, at the bare well-known path.
* **Refusals that say why.**  A token that is not valid here is answered
  ``401`` with RFC 6750's ``WWW-Authenticate: Bearer error="invalid_token",
  error_description="..."`` naming the problem (the audience it carries and
  the one expected, its expiry, its issuer), and the same in the JSON body;
  when the issuer's keys cannot be fetched, no token can be checked and the
  answer is ``503`` with the reason (``auth.TokenRefusedError``).  The SDK builds
  the authentication middleware; ``explain_refusals`` gives it this error
  handler in place of Starlette's default ``400``.
* **Bounded bodies.**  Every route's request body is held to a limit while
  it streams in (``bodies.BodyLimits``, wrapped around the whole app):
  ``--max-body`` for the MCP endpoint, ``--max-pack`` for a push, a small
  fixed bound for the other sync routes, none at all for a ``GET``; over
  it, ``413`` naming the limit and the option.
* **Graceful shutdown.**  On SIGTERM (or Ctrl-C) uvicorn stops accepting
  connections and waits up to ``grace`` seconds for requests in flight;
  then the session tasks are cancelled.  A tool call already running on its
  worker thread is not interrupted (a thread cannot be), so its commit
  completes before the ``mnem`` worker is ended; an engine commit is one
  transaction anyway, so no commit is ever half-made.
"""

from __future__ import annotations

import logging
import math
import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

import uvicorn
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.authentication import AuthenticationBackend, AuthenticationError
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from .auth import TokenRefusedError
from .bodies import BodyLimits
from .errors import Redaction
from .identity import SCOPES
from .limits import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BODY, DEFAULT_MAX_PACK, DEFAULT_MAX_REQUESTS, Limit
from .loopback import is_loopback
from .remote_sync import sync_limits, sync_routes
from .server import MnemServer

__all__ = [
    "LOOPBACK_HOSTS", "LOOPBACK_ORIGINS", "Listen", "ListenError", "app", "bind", "explain_refusals", "metadata_routes",
    "security", "serve",
]

logger = logging.getLogger(__name__)

#: ``Host`` headers a loopback listener accepts (any port).
LOOPBACK_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")
#: ``Origin`` headers a loopback listener accepts (any port).
LOOPBACK_ORIGINS: Final = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
#: Where RFC 9728 metadata is looked for when a client does not insert the resource's path.
METADATA_ROOT: Final = "/.well-known/oauth-protected-resource"
#: What an RFC 6750 quoted-string parameter may not hold as it is: quotes, backslashes, controls, non-ASCII.
_UNQUOTABLE: Final = re.compile(r'[^\x20-\x7e]|["\\]')
#: How much of a description the header carries (the JSON body has it whole).
_HEADER_LIMIT: Final = 500


@dataclass(frozen=True, slots=True)
class Listen:
    """Where and for whom the HTTP transport listens.

    Attributes:
        host: The interface to bind (loopback unless the operator says otherwise).
        port: The TCP port.
        path: The MCP endpoint's path.
        allowed_hosts: ``Host`` values accepted besides the loopback names and the audience's authority.
        allowed_origins: ``Origin`` values accepted likewise.
        grace: Seconds a shutdown waits for requests in flight.
        max_body: The largest request body the MCP endpoint takes, in bytes (``--max-body``).
        max_pack: The largest pack a push sends, in bytes (``--max-pack``).
        body_timeout: Seconds a request's whole body may take to arrive (``--body-timeout``).
        max_requests: Requests with a body served at once (``--max-requests``).
    """

    host: str
    port: int
    path: str
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    grace: float = 10.0
    max_body: int = DEFAULT_MAX_BODY
    max_pack: int = DEFAULT_MAX_PACK
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_requests: int = DEFAULT_MAX_REQUESTS


def security(listen: Listen, audience: str | None) -> TransportSecuritySettings:
    """The ``Host``/``Origin`` allow-list for this listener (see the module's docstring).

    Args:
        listen: The listener.
        audience: The resource URI clients use (``--audience``), if any.

    Returns:
        Settings with DNS-rebinding protection enabled.
    """
    hosts = [*listen.allowed_hosts]
    origins = [*listen.allowed_origins]
    if is_loopback(listen.host):
        hosts += LOOPBACK_HOSTS
        origins += LOOPBACK_ORIGINS
    if audience is not None:
        parts = urlsplit(audience)
        hosts.append(parts.netloc)
        origins.append(f"{parts.scheme}://{parts.netloc}")
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)


def metadata_routes(auth: AuthSettings) -> list[Route]:
    """RFC 9728 metadata naming both scopes, at the resource's well-known path and at the bare one.

    The SDK's own metadata route lists only the scope every request needs;
    these come first in the app, so a client learns that writes need
    ``mnem:write`` before it asks for a token.

    Args:
        auth: The resource-server settings: the issuer and this server's resource URI (kept as given).

    Returns:
        The routes.
    """
    assert auth.resource_server_url is not None, "a resource server has a resource URI"
    routes = create_protected_resource_routes(
        resource_url=auth.resource_server_url, authorization_servers=[auth.issuer_url],
        scopes_supported=list(SCOPES), resource_name="Mnemosyne memory (mnem-mcp)",
    )
    if routes[0].path != METADATA_ROOT:
        routes.append(Route(METADATA_ROOT, endpoint=routes[0].endpoint, methods=["GET", "OPTIONS"]))
    return routes


def explain_refusals(app: Starlette, auth: AuthSettings) -> None:
    """Answer a refused bearer token with its reason instead of the SDK's bare 401 (see the module's docstring).

    Args:
        app: The SDK's Streamable HTTP app, before it has served a request (its middleware is built then).
        auth: The resource-server settings, for the metadata URL every 401 names.

    Raises:
        RuntimeError: The SDK's app has no authentication middleware (an SDK that changed how it builds one).
    """
    assert auth.resource_server_url is not None, "a resource server has a resource URI"
    metadata = str(build_resource_metadata_url(auth.resource_server_url))

    def refusal(conn: HTTPConnection, exc: AuthenticationError) -> Response:
        refused = exc if isinstance(exc, TokenRefusedError) else TokenRefusedError.invalid(str(exc))
        body = {"error": refused.error, "error_description": refused.description}
        if refused.status != 401:
            return JSONResponse(body, status_code=refused.status)
        described = _UNQUOTABLE.sub("?", refused.description)[:_HEADER_LIMIT]
        challenge = f'Bearer error="{refused.error}", error_description="{described}", resource_metadata="{metadata}"'
        return JSONResponse(body, status_code=401, headers={"WWW-Authenticate": challenge})

    i = _authentication(app)
    backend = None if i is None else app.user_middleware[i].kwargs.get("backend")
    if i is None or not isinstance(backend, AuthenticationBackend):
        raise RuntimeError("the MCP SDK's app has no AuthenticationMiddleware whose refusals could be explained")
    app.user_middleware[i] = Middleware(AuthenticationMiddleware, backend=backend, on_error=refusal)


def _authentication(app: Starlette) -> int | None:
    """Where the SDK's app has its authentication middleware (``--auth jwt``), if it has one."""
    for i, middleware in enumerate(app.user_middleware):
        factory: object = middleware.cls  # typed as a generic factory, compared here as the class it is
        if factory is AuthenticationMiddleware:
            return i
    return None


def app(server: MnemServer, listen: Listen, routes: Sequence[BaseRoute] = ()) -> Starlette:
    """The ASGI app ``serve`` runs: the SDK's Streamable HTTP app, with ``routes`` and the metadata before its own.

    Every request's body is held to its route's limit (``bodies.BodyLimits``,
    the first of the app's middleware after the authentication, so that it
    knows a request without a token, whose body it then reads none of).

    Args:
        server: The built server; its ``settings.auth`` (``--auth jwt``) turns bearer checks on.
        listen: Where it will listen (the endpoint's path, the ``Host`` allow-list).
        routes: Extra Starlette routes, matched before the MCP endpoint (see ``serve``).

    Returns:
        The app.
    """
    auth = server.settings.auth
    audience = None if auth is None or auth.resource_server_url is None else str(auth.resource_server_url)
    allowed = security(listen, audience)
    server.redaction = Redaction(server.binding.internals)  # its clients are remote: never told its internals
    made = server.streamable_http_app(streamable_http_path=listen.path, transport_security=allowed,
                                      host=listen.host)
    made.router.routes[0:0] = [*routes, *sync_routes(server, listen.path, allowed, listen.max_pack),
                               *(metadata_routes(auth) if auth is not None else ())]
    if auth is not None:
        explain_refusals(made, auth)
    limits = Middleware(BodyLimits, default=Limit(listen.max_body, "one MCP message", "--max-body"),
                        routes=sync_limits(listen.path, listen.max_pack), timeout=listen.body_timeout,
                        max_requests=listen.max_requests)
    found = _authentication(made)
    made.user_middleware.insert(0 if found is None else found + 1, limits)
    return made


class ListenError(Exception):
    """The listener's address cannot be bound (a port taken, an address not this machine's): the message says so."""


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket listening on ``host``:``port`` (0: a free port, which ``getsockname`` then names).

    Bound here rather than by uvicorn, so the log line can name the port
    ``--port 0`` got, and a taken port is refused before anything claims
    to listen.  It listens at once: a connection made as soon as the log
    line says so waits in the backlog until uvicorn accepts it.

    Raises:
        ListenError: the address cannot be bound.
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ListenError(f"cannot listen on {host}:{port} ({exc.strerror}); pick another with --port N, or "
                          "--port 0 for any free port") from None
    sock.listen(128)  # uvicorn listens again with its own backlog
    return sock


def serve(server: MnemServer, listen: Listen, routes: Sequence[BaseRoute] = ()) -> None:
    """Serve until SIGTERM or Ctrl-C, then drain (see the module's docstring).

    ``routes`` is how more HTTP endpoints join the MCP one on the same
    listener (store sync for ``mnem fetch``/``push``, say).  With ``--auth
    jwt`` the authentication middleware runs for them too: a request's
    verified token is ``get_access_token()``, and its store is
    ``server.binding.binding_for_request()``, resolved as the tools resolve
    it (with ``--store-per``, a request without a token that maps to a store
    is refused there).  Requiring a token and a scope is the route's own
    business: the SDK guards only its MCP endpoint.

    Args:
        server: The built server; its ``settings.auth`` (``--auth jwt``) turns bearer checks on.
        listen: Where to listen (port 0: a free one, named by the log line).
        routes: Extra Starlette routes, matched before the MCP endpoint and the metadata.

    Raises:
        ListenError: ``listen``'s address cannot be bound.
    """
    auth = server.settings.auth
    sock = bind(listen.host, listen.port)
    try:
        served = app(server, listen, routes)
        config = uvicorn.Config(served, host=listen.host, port=listen.port, log_config=None, access_log=False,
                                timeout_graceful_shutdown=math.ceil(listen.grace), lifespan="on")
        host = f"[{listen.host}]" if ":" in listen.host else listen.host
        logger.info("listening on http://%s:%d%s (%s)", host, sock.getsockname()[1], listen.path,
                    "bearer tokens required" if auth is not None else "no authentication")
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
