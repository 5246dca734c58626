"""``mnem-mcp``: serve one store's memory as MCP tools and resources over stdio.

Standard output is the protocol, so everything this process says goes to
standard error through ``logging``: which store is served (and that it
was just created: a store that does not exist yet is created on first use,
see ``binding``), a store that cannot be used, and with
``--echo`` every ``mnem`` command line.  Start-up never fails on the store:
an unusable one is reported once here, and every tool call then answers
with the typed error until it is fixed.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from collections.abc import Sequence

import mnem_bridge

from .binding import StoreBinding, StoreLocation, locate_store

__all__ = ["main", "parser"]

logger = logging.getLogger(__name__)


def parser() -> argparse.ArgumentParser:
    """The command-line parser (also what ``--help`` prints)."""
    p = argparse.ArgumentParser(
        prog="mnem-mcp",
        description="Serve a Mnemosyne store (an agent's version-controlled memory) as MCP tools and resources "
        "over stdio.",
        epilog="Store resolution: --store, else $MNEM_STORE, else a per-user default store. A store that does not "
        "exist yet is created on first use: the default one always, an explicit one in a new or empty folder only "
        "(never in a folder holding other files, nor inside another store). "
        "Logs go to standard error; standard output is the MCP protocol.",
    )
    p.add_argument(
        "--store", metavar="PATH|URL",
        help="the store to serve: its root (the folder holding .mnem), exactly, or a postgresql:// URL "
        "(?store=NAME picks the store in that database); created if new or empty",
    )
    p.add_argument(
        "--tools", choices=("core", "all"), default="core",
        help="core: the agent tools (default); all: also the harness tools branch, switch and merge",
    )
    p.add_argument("--mnem", metavar="PATH", help="the mnem binary to run (default: $MNEM_BIN, then PATH)")
    p.add_argument(
        "--timeout", metavar="SECONDS", type=_seconds, default=mnem_bridge.DEFAULT_TIMEOUT,
        help=f"kill a mnem invocation that runs longer than this (default {mnem_bridge.DEFAULT_TIMEOUT:g})",
    )
    p.add_argument("--echo", action="store_true", help="log every mnem command line to standard error")
    p.add_argument("-v", "--verbose", action="store_true", help="log debug detail to standard error")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until the client closes standard input.

    Args:
        argv: Arguments without the program name (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 when the client disconnects, 130 on Ctrl-C.
    """
    args = parser().parse_args(argv)
    _configure_logging(verbose=args.verbose, echo=args.echo)
    location = locate_store(args.store)
    binding = StoreBinding(location.path, args.mnem, args.timeout)
    sdk_loaded = threading.Event()
    binding.start(lambda started: _announce(location, started, sdk_loaded))  # mnem starts while the SDK loads
    from .server import build_server  # the MCP SDK: most of the start-up, now beside mnem's

    sdk_loaded.set()
    server = build_server(location.path, tools=args.tools, binding=binding)
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        return 130
    return 0


def _announce(location: StoreLocation, binding: StoreBinding, sdk_loaded: threading.Event) -> None:
    """Create the store on its first use, then log which store is served, or why it cannot be.

    It runs beside the main thread's import of the MCP SDK, so it imports
    nothing of it: two threads importing one package's modules can deadlock
    on Python's import locks.  The error text (``errors``, which uses the
    SDK's types) waits until the SDK has loaded.
    """
    try:
        try:
            head = _head(binding)
        except mnem_bridge.NoStoreError:
            if location.origin == "default":
                root = binding.create(parents=True)
                logger.info("created the default store at %s (use --store or MNEM_STORE for another)", root)
            else:
                root = binding.create()
                logger.info("created a new store at %s (from %s): nothing was there yet", root, location.origin)
            head = _head(binding)
    except mnem_bridge.MnemError as exc:
        sdk_loaded.wait()
        from .errors import error_text

        logger.error(
            "the store at %s (from %s) cannot be used; every tool call will answer with this error until it is "
            "fixed:\n%s", location.path, location.origin, error_text(exc),
        )
        return
    logger.info("serving the store at %s (from %s), HEAD %s", location.path, location.origin, head)


def _head(binding: StoreBinding) -> str:
    """HEAD of the bound store: one ``mnem`` call that also proves the binary and the store work."""
    with binding.open() as store:
        return store.head()


def _configure_logging(*, verbose: bool, echo: bool) -> None:
    """Log to standard error: this package at INFO (everything at DEBUG with ``-v``), ``mnem`` lines with ``--echo``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("mnem-mcp: %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, handlers=[handler])
    logging.getLogger("mnem_mcp").setLevel(logging.DEBUG if verbose else logging.INFO)
    if echo:
        logging.getLogger("mnem_bridge.echo").setLevel(logging.DEBUG)  # the bridge logs each command line there


def _seconds(text: str) -> float:
    """A positive number of seconds, for ``--timeout``."""
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value
