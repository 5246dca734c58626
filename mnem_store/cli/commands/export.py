"""``mnem export [-o FILE] [--seal]``: the whole store as upstream's JSON export."""

from __future__ import annotations

import argparse
from pathlib import Path

from ... import porcelain
from ...portable import dump_export
from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``export``'s options: the file to write instead of stdout, and the seal (an extension)."""
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout (replaced atomically)")
    parser.add_argument(
        "--seal", action="store_true",
        help="add a checksum of the refs, HEAD and header, so import refuses a damaged branch name "
        "(extension; upstream's importer ignores it)",
    )


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print the export, or write it to ``--output`` and report where and how many objects."""
    if args.output is None:
        document = porcelain.export(ctx.repo(), seal=args.seal)
        return Outcome(document, dump_export(document) + "\n")
    count = porcelain.export_to_file(ctx.repo(), Path(args.output), seal=args.seal)
    return Outcome(
        {"path": str(Path(args.output).absolute()), "objects": count},
        stderr=f"Exported {count} object(s) to {args.output}\n",
    )
