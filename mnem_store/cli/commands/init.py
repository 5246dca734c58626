"""``mnem init [PATH]``: create an empty store."""

from __future__ import annotations

import argparse
import os

from ...repo import MNEM_DIR, Repo
from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", help="where to create the store")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    path = ctx.base(args.path)
    Repo.init(path).close()
    shown = os.path.join(args.path if args.path is not None else ".", MNEM_DIR)
    root = path.absolute()
    return Outcome(
        {"root": str(root), "store": str(root / MNEM_DIR)},
        f"Initialised an empty Mnemosyne store in {shown}\n",
    )
