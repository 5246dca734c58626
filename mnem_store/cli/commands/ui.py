"""``mnem ui`` (extension): a local, read-only web page of the store's memory, history and provenance.

The store is the one ``--store`` (or ``$MNEM_STORE``, or discovery) names,
a folder or a ``postgresql://`` URL.  Starlette and uvicorn are imported
only here, when the command runs, so no other command starts slower.
"""

from __future__ import annotations

import argparse

from ..context import Context, Outcome


def port(text: str) -> int:
    """A TCP port, 0 to 65535 (0: any free port)."""
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"invalid port '{text}': expected 0 to 65535")
    return int(text)


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``ui``'s options: the port, and whether to open a browser."""
    parser.add_argument("--port", type=port, default=8470, metavar="N",
                        help="port on 127.0.0.1 (default 8470; 0 picks a free one, printed on stderr)")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Serve the page until interrupted; the address is printed on stderr first."""
    from ...ui.server import serve

    serve(ctx.repo(), args.port, open_browser=args.open)
    return Outcome(None)
