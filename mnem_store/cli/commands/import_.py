"""``mnem import FILE [PATH]``: create a new store from an export."""

from __future__ import annotations

import argparse
import os

from ... import porcelain
from ...errors import CommandError
from ...portable import parse_export
from ...repo import MNEM_DIR
from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``import``'s arguments: the export file and where to create the store."""
    parser.add_argument("file", help="the exported JSON file ('-' for stdin)")
    parser.add_argument("path", nargs="?", help="where to create the store; refuses if one already exists there")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Read an export (a file or stdin) and create a new store from it."""
    try:
        if args.file == "-":
            text = ctx.stdin.read()
        else:
            with open(args.file, "rb") as handle:
                text = handle.read()
    except OSError as exc:
        raise CommandError(f"reading {args.file}", "store_io", cause=exc.strerror or str(exc)) from None
    document = parse_export(text, args.file)
    root, count = porcelain.import_(ctx.base(args.path), document)
    shown = os.path.join(args.path if args.path is not None else ".", MNEM_DIR)
    return Outcome(
        {"root": str(root), "store": str(root / MNEM_DIR), "objects": count},
        f"Imported {count} object(s) into {shown}\n",
    )
