"""``mnem import FILE [PATH]``: create a new store from an export."""

from __future__ import annotations

import argparse

from ... import porcelain
from ...portable import parse_export
from ..context import Context, Outcome, read_payload
from .init import created


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``import``'s arguments: the export file and where to create the store."""
    parser.add_argument("file", help="the exported JSON file ('-' for stdin)")
    parser.add_argument("path", nargs="?", help="where to create the store; refuses if one already exists there")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Read an export (a file or stdin) and create a new store from it."""
    document = parse_export(read_payload(args.file, ctx), args.file)
    where, count = porcelain.import_(ctx.base(args.path), document)
    data, shown = created(where, args.path)
    return Outcome({**data, "objects": count}, f"Imported {count} object(s) into {shown}\n")
