"""``mnem init [PATH]``: create an empty store."""

from __future__ import annotations

import argparse
import os

from ... import porcelain
from ...repo import MNEM_DIR
from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``init``'s one argument, where to create the store."""
    parser.add_argument("path", nargs="?", help="where to create the store")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Create an empty store; the result names its root and its ``.mnem`` folder."""
    root = porcelain.init(ctx.base(args.path))
    shown = os.path.join(args.path if args.path is not None else ".", MNEM_DIR)
    return Outcome(
        {"root": str(root), "store": str(root / MNEM_DIR)},
        f"Initialised an empty Mnemosyne store in {shown}\n",
    )
