"""``mnem init [PATH]``: create an empty store."""

from __future__ import annotations

import argparse
import os

from ... import porcelain
from ...layout import StoreUrl
from ...location import Address
from ...repo import MNEM_DIR
from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``init``'s one argument, where to create the store."""
    parser.add_argument("path", nargs="?", help="where to create the store")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Create an empty store; the result names its root and its ``.mnem`` folder."""
    where = porcelain.init(ctx.base(args.path))
    data, shown = created(where, args.path)
    return Outcome(data, f"Initialised an empty Mnemosyne store in {shown}\n")


def created(where: Address, typed: str | None) -> tuple[dict[str, str], str]:
    """A new store's ``root`` and ``store`` (its ``.mnem`` folder, or the URL for both), and how text names it.

    Text mode names a folder as the user typed it, as upstream does, and a
    URL without its password.
    """
    if isinstance(where, StoreUrl):
        return {"root": where.shown, "store": where.shown}, where.shown
    shown = os.path.join(typed if typed is not None else ".", MNEM_DIR)
    return {"root": str(where), "store": str(where / MNEM_DIR)}, shown
