"""``mnem-mcp``: serve one store's memory as MCP tools and resources, over stdio or Streamable HTTP.

Over stdio, standard output is the protocol, so everything this process says goes to
standard error through ``logging`` (over HTTP too): which store is served (and that it
was just created: a store that does not exist yet is created on first use,
see ``binding``), a store that cannot be used, and with
``--echo`` every ``mnem`` command line.  Start-up never fails on the store:
an unusable one is reported once here, and every tool call then answers
with the typed error until it is fixed.

``--transport streamable-http`` (or ``http``, its short name) serves the same
tools to remote clients (``http``); it needs ``--auth`` said out loud: ``jwt``
to check bearer tokens from an OAuth issuer (``auth``), or ``none``, which is
refused off loopback.  ``--author`` (else ``$MNEM_AUTHOR``) names who the
writes of unauthenticated clients are by; with ``--auth jwt`` each token's
subject is, so ``--author`` is refused there.  Every inconsistent
combination is a usage error naming the fix, found before anything starts.  The SDK and the HTTP modules are imported
only after the store's worker has started, as over stdio.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import logging
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import mnem_bridge
from mnem_bridge.install import pip_install

from .binding import StoreBinding, StoreLocation, locate_store
from .limits import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BODY, DEFAULT_MAX_PACK, DEFAULT_MAX_REQUESTS
from .loopback import is_loopback

if TYPE_CHECKING:
    from .server import MnemServer

__all__ = ["main", "parser"]

logger = logging.getLogger(__name__)

#: The HTTP listener's defaults: loopback only, unless --host says otherwise.
HOST = "127.0.0.1"
PORT = 8765
PATH = "/mcp"
GRACE = 10.0


def parser() -> argparse.ArgumentParser:
    """The command-line parser (also what ``--help`` prints)."""
    p = argparse.ArgumentParser(
        prog="mnem-mcp",
        description="Serve a Mnemosyne store (an agent's version-controlled memory) as MCP tools and resources "
        "over stdio (default) or Streamable HTTP.",
        epilog="Store resolution: --store, else $MNEM_STORE, else a per-user default store. A store that does not "
        "exist yet is created on first use: the default one always, an explicit one in a new or empty folder only "
        "(never in a folder holding other files, nor inside another store); a PostgreSQL one only with --create. "
        "Logs go to standard error; over stdio, standard output is the MCP protocol.",
    )
    p.add_argument(
        "--store", metavar="PATH|URL",
        help="the store to serve: its root (the folder holding .mnem), exactly, or a postgresql:// URL "
        "(?store=NAME picks the store in that database); a folder is created if new or empty",
    )
    p.add_argument("--create", action="store_true",
                   help="also create a PostgreSQL store that does not exist yet (without it, a typo in store= is "
                   "no_store, naming the stores there are)")
    p.add_argument(
        "--tools", choices=("core", "all"), default="core",
        help="core: the agent tools (default); all: also the harness tools branch, switch, merge and revert",
    )
    p.add_argument("--mnem", metavar="PATH", help="the mnem binary to run (default: $MNEM_BIN, then PATH)")
    p.add_argument(
        "--timeout", metavar="SECONDS", type=_seconds, default=mnem_bridge.DEFAULT_TIMEOUT,
        help=f"kill a mnem invocation that runs longer than this (default {mnem_bridge.DEFAULT_TIMEOUT:g})",
    )
    p.add_argument(
        "--author", type=_author, metavar="NAME",
        help="the commit author of every write, so blame says which agent wrote a fact (default: $MNEM_AUTHOR, "
        "else agent); over HTTP with --auth jwt each token's subject is the author instead",
    )
    p.add_argument("--echo", action="store_true", help="log every mnem command line to standard error")
    p.add_argument("-v", "--verbose", action="store_true", help="log debug detail to standard error")
    http = p.add_argument_group("Streamable HTTP", "serve remote clients (docs/mcp-http.md)")
    http.add_argument("--transport", choices=("stdio", "streamable-http", "http"), default="stdio",
                      help="stdio (default): one local client; streamable-http (or http, the same): an HTTP "
                      "endpoint")
    http.add_argument("--host", help=f"the interface to listen on (default {HOST}; anything but loopback needs "
                      "--auth jwt)")
    http.add_argument("--port", type=_port, help=f"the TCP port (default {PORT}); 0 picks a free one, and the "
                      "log line says which")
    http.add_argument("--path", help=f"the MCP endpoint's path (default {PATH})")
    http.add_argument("--allowed-host", action="append", default=[], metavar="HOST[:PORT]",
                      help="also accept this Host header (repeatable; the loopback names and --audience's are "
                      "accepted already)")
    http.add_argument("--allowed-origin", action="append", default=[], metavar="ORIGIN",
                      help="also accept this browser Origin (repeatable)")
    http.add_argument("--grace", type=_seconds, metavar="SECONDS",
                      help=f"on SIGTERM, seconds to let calls in flight finish (default {GRACE:g})")
    http.add_argument("--max-body", type=_size, metavar="BYTES",
                      help=f"the largest request body the MCP endpoint takes, e.g. 64M (default "
                      f"{DEFAULT_MAX_BODY >> 20}M); a larger one is answered 413 as it arrives")
    http.add_argument("--max-pack", type=_size, metavar="BYTES",
                      help=f"the largest pack a push may send, e.g. 4G (default {DEFAULT_MAX_PACK >> 30}G); spooled "
                      "to a temporary file, never held in memory; a larger one is answered 413 as it arrives")
    http.add_argument("--body-timeout", type=_seconds, metavar="SECONDS",
                      help=f"seconds a request's whole body may take to arrive (default {DEFAULT_BODY_TIMEOUT:g}); "
                      "a slower one is answered 408")
    http.add_argument("--max-requests", type=_count, metavar="N",
                      help=f"requests with a body served at once (default {DEFAULT_MAX_REQUESTS}); one more is "
                      "answered 503, so bodies in memory stay under N x --max-body")
    http.add_argument("--auth", choices=("jwt", "none"),
                      help="required with HTTP: jwt checks bearer tokens from --issuer; none serves without "
                      "authentication, loopback only")
    http.add_argument("--issuer", metavar="URL", help="the OAuth/OIDC issuer whose tokens are accepted (exact iss)")
    http.add_argument("--audience", metavar="URI", help="this server's resource URI, as clients reach it (e.g. "
                      "https://memory.example.com/mcp); tokens must carry it in aud")
    http.add_argument("--jwks-url", metavar="URL", help="the issuer's key set (default: jwks_uri from the "
                      "issuer's /.well-known/openid-configuration, else /.well-known/oauth-authorization-server)")
    http.add_argument("--store-per", metavar="CLAIM",
                      help="with --auth jwt: one store per value of this token claim (e.g. tenant, or sub for one "
                      "per identity); --store is then a template holding {tenant}, e.g. /srv/mnem/{tenant} or "
                      "postgresql://host/db?store={tenant}, and a value must be 1-58 of a-z 0-9 _ -")
    http.add_argument("--push-own-commits-only", action="store_true",
                      help="refuse a push (mnem push to this server) that brings a commit its pusher did not author: "
                      "with --auth jwt the pusher is the token's subject, else --author")
    http.add_argument("--deny-non-fast-forwards", action="store_true",
                      help="refuse a forced push (mnem push --force-with-lease), so no push rewrites a branch's "
                      "history")
    http.add_argument("--max-stores", type=_count, metavar="N",
                      help="with --store-per: keep at most N stores' mnem workers running, closing the least "
                      "recently used first (default 32)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until the client closes standard input (stdio) or a signal stops it (HTTP).

    Args:
        argv: Arguments without the program name (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 when the client disconnects, 130 on Ctrl-C; 2 for
        usage errors (argparse exits).  Over HTTP, SIGTERM ends the process
        with that signal's status once calls in flight are done (``http``).
    """
    # Start-up (the MCP SDK, pydantic, the tools' schemas) allocates a great deal and frees little, so the
    # cyclic garbage collector only slows it: it is off until the server is built, and what start-up
    # made, alive for the life of the process, is then frozen out of every later collection.
    gc.disable()
    try:
        server, args = _build(argv)
    finally:
        gc.freeze()
        gc.enable()
    try:
        if args.transport == "stdio":
            server.run("stdio")
        else:
            _serve_http(args, server)
    except KeyboardInterrupt:
        return 130
    return 0


def _build(argv: Sequence[str] | None) -> tuple[MnemServer, argparse.Namespace]:
    """Parse ``argv``, start ``mnem`` and build the server while the SDK loads: the server and the options."""
    p = parser()
    args = p.parse_args(argv)
    if args.transport == "http":
        args.transport = "streamable-http"
    problem = _http_problem(args) or _tenant_problem(args) or _http_missing(args)
    if problem is not None:
        p.error(problem)
    _configure_logging(verbose=args.verbose, echo=args.echo)
    if args.store_per is not None:
        return _build_tenants(args), args
    location = locate_store(args.store)
    binding = StoreBinding(location.path, args.mnem, args.timeout, create=args.create, refused=location.refused,
                           origin=location.origin)
    sdk_loaded = threading.Event()
    binding.start(lambda started: _announce(location, started, sdk_loaded))  # mnem starts while the SDK loads
    from .server import build_server  # the MCP SDK: most of the start-up, now beside mnem's

    sdk_loaded.set()
    server = build_server(location.path, tools=args.tools, binding=binding, author=args.author,
                          push_own_commits_only=args.push_own_commits_only,
                          deny_non_fast_forwards=args.deny_non_fast_forwards, **_auth(args))
    return server, args


def _http_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the HTTP options, as a usage message naming the fix; ``None`` when nothing is."""
    jwt_only = {"--issuer": args.issuer, "--audience": args.audience, "--jwks-url": args.jwks_url}
    if args.transport == "stdio":
        given = {"--host": args.host, "--port": args.port is not None, "--path": args.path, "--grace": args.grace,
                 "--max-body": args.max_body, "--max-pack": args.max_pack, "--body-timeout": args.body_timeout,
                 "--max-requests": args.max_requests,
                 "--auth": args.auth, "--allowed-host": args.allowed_host, "--allowed-origin": args.allowed_origin,
                 **jwt_only, "--store-per": args.store_per, "--max-stores": args.max_stores,
                 "--push-own-commits-only": args.push_own_commits_only,
                 "--deny-non-fast-forwards": args.deny_non_fast_forwards}
        named = [name for name, value in given.items() if value]
        verb = "applies" if len(named) == 1 else "apply"
        return None if not named else f"{', '.join(named)} {verb} to HTTP only: add --transport streamable-http"
    host = args.host or HOST
    local = is_loopback(host)
    if args.auth is None:
        return ("--transport streamable-http needs --auth: --auth jwt --issuer URL --audience URI to accept bearer "
                "tokens from an OAuth issuer, or --auth none to serve without authentication (loopback only)")
    if args.auth == "none":
        named = [name for name, value in jwt_only.items() if value]
        if named:
            return f"{', '.join(named)} go with --auth jwt, not --auth none"
        if not local:
            return (f"--auth none would let anyone who reaches {host} read and write this memory: use --auth jwt "
                    f"--issuer URL --audience URI, or listen on loopback (--host {HOST}) behind a reverse proxy "
                    "that authenticates")
    else:
        if args.author is not None:
            return ("--author names who writes are by when nobody is authenticated; with --auth jwt each token's "
                    "subject is the author: drop --author")
        for name, value in jwt_only.items():
            if value is None and name != "--jwks-url":
                return f"--auth jwt needs {name} (see mnem-mcp --help)"
            if value is not None and (problem := _url_problem(name, value, local)):
                return problem
    path = args.path or PATH
    return None if path.startswith("/") else f"--path must start with '/', got {path!r}"


def _tenant_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with ``--store-per``/``--max-stores``, as a usage message naming the fix; ``None`` if nothing."""
    if args.store_per is None:
        if args.max_stores is not None:
            return "--max-stores goes with --store-per CLAIM"
        if args.store is not None and "{tenant}" in args.store:
            return ("--store holds {tenant}, a template: add --store-per CLAIM (with --auth jwt) to serve one store "
                    "per value of that token claim")
        return None
    if args.transport == "stdio" or args.auth != "jwt":
        return ("--store-per chooses each request's store by its bearer token: it needs --transport streamable-http "
                "--auth jwt")
    if args.store is None:
        return "--store-per needs --store TEMPLATE holding {tenant}, e.g. --store /srv/mnem/{tenant}"
    from .tenants import StoreRouter, StoreTemplate

    try:
        template = StoreTemplate.parse(args.store)
        StoreRouter(template, args.store_per, max_stores=args.max_stores or 1)
    except ValueError as exc:
        return str(exc)
    if template.base is not None and not template.base.is_dir():
        return f"--store {args.store}: the folder {template.base} does not exist; create it, and each tenant's store " \
               "is made in it on first use"
    return None


def _build_tenants(args: argparse.Namespace) -> MnemServer:
    """The server of one store per token claim (``--store-per``): each store starts on its first use, not here."""
    from .server import build_server

    server = build_server(args.store, tools=args.tools, mnem=args.mnem, timeout=args.timeout, store_per=args.store_per,
                          max_stores=args.max_stores, create=args.create,
                          push_own_commits_only=args.push_own_commits_only,
                          deny_non_fast_forwards=args.deny_non_fast_forwards, **_auth(args))
    logger.info("serving %s", server.binding)  # tenants.StoreRouter: the claim, the template, the limit
    return server


def _http_missing(args: argparse.Namespace) -> str | None:
    """The ``http`` extra's modules that this transport needs and cannot find, as a usage message naming the install.

    Looked up, not imported, so a missing one is said before anything starts
    (rather than as an ImportError once the store's worker runs), and
    start-up's import order is kept.
    """
    if args.transport == "stdio":
        return None
    needed = ["starlette", "uvicorn", *(["jwt", "cryptography"] if args.auth == "jwt" else [])]
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return f"--transport streamable-http needs {', '.join(missing)}, not installed here: {pip_install('http')}"


def _url_problem(option: str, url: str, local: bool) -> str | None:
    """Why an ``--issuer``/``--audience``/``--jwks-url`` value is refused: not absolute, or plain HTTP off loopback."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"{option} must be an absolute http(s) URL, got {url!r}"
    if parts.scheme == "http" and not (local and is_loopback(parts.hostname or "")):
        return f"{option} must use https (plain http is accepted for a loopback server and URL only), got {url!r}"
    return None


def _auth(args: argparse.Namespace) -> dict[str, Any]:
    """``build_server``'s ``auth`` and ``token_verifier`` for ``--auth jwt`` (none for ``--auth none``)."""
    if args.auth != "jwt":
        return {}
    from .auth import JwtVerifier, auth_settings

    return {"auth": auth_settings(args.issuer, args.audience),
            "token_verifier": JwtVerifier(args.issuer, args.audience, args.jwks_url)}


def _serve_http(args: argparse.Namespace, server: MnemServer) -> None:
    """Serve ``server`` over Streamable HTTP with the listener the options describe."""
    from .http import Listen, ListenError, serve

    try:
        serve(server, Listen(host=args.host or HOST, port=PORT if args.port is None else args.port,
                             path=args.path or PATH, allowed_hosts=tuple(args.allowed_host),
                             allowed_origins=tuple(args.allowed_origin),
                             grace=GRACE if args.grace is None else args.grace,
                             max_body=args.max_body or DEFAULT_MAX_BODY, max_pack=args.max_pack or DEFAULT_MAX_PACK,
                             body_timeout=args.body_timeout or DEFAULT_BODY_TIMEOUT,
                             max_requests=args.max_requests or DEFAULT_MAX_REQUESTS))
    except ListenError as refused:  # a usage error found only now: exit as argparse's do
        logger.error("%s", refused)
        raise SystemExit(2) from None


def _announce(location: StoreLocation, binding: StoreBinding, sdk_loaded: threading.Event) -> None:
    """Create the store on its first use, then log which store is served, or why it cannot be.

    Why is logged once, here; every call answers the same error until the fix
    is made, as ``StoreBinding.settle``, which this runs, runs again on each.

    It runs beside the main thread's import of the MCP SDK, so it imports
    nothing of it: two threads importing one package's modules can deadlock
    on Python's import locks.  The error text (``errors``, which uses the
    SDK's types) waits until the SDK has loaded.
    """
    try:
        head = binding.settle()
    except mnem_bridge.MnemError as exc:
        sdk_loaded.wait()
        from .errors import error_text

        logger.error(
            "the store at %s (from %s) cannot be used; every tool call will answer with this error until it is "
            "fixed:\n%s", location.path, location.origin, error_text(exc),
        )
        return
    logger.info("serving the store at %s (from %s), HEAD %s", location.path, location.origin, head)


def _configure_logging(*, verbose: bool, echo: bool) -> None:
    """Log to standard error: this package at INFO (everything at DEBUG with ``-v``), ``mnem`` lines with ``--echo``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("mnem-mcp: %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, handlers=[handler])
    logging.getLogger("mnem_mcp").setLevel(logging.DEBUG if verbose else logging.INFO)
    if echo:
        logging.getLogger("mnem_bridge.echo").setLevel(logging.DEBUG)  # the bridge logs each command line there


def _port(text: str) -> int:
    """A TCP port number, for ``--port``: 0 asks for a free one, as ``mnem ui --port 0`` does."""
    value = int(text)
    if not 0 <= value < 65536:
        raise argparse.ArgumentTypeError(f"must be 0 to 65535 (0: any free port), got {text}")
    return value


def _author(text: str) -> str:
    """A commit author, for ``--author``: any text but blank, which would name no one."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name someone, got an empty name")
    return text


def _count(text: str) -> int:
    """A positive whole number, for ``--max-stores`` and ``--max-requests``."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def _size(text: str) -> int:
    """A number of bytes, for ``--max-body``/``--max-pack``: digits, optionally followed by K, M or G (x 1024)."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    if not digits.isdigit() or int(digits) == 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of bytes, optionally with K, M or G, got {text}")
    return int(digits) * scale


def _seconds(text: str) -> float:
    """A positive number of seconds, for ``--timeout``."""
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value
