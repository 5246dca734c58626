"""``mnem export [-o FILE]``: the whole store as upstream's JSON export."""

from __future__ import annotations

import argparse
from pathlib import Path

from ...errors import CommandError
from ...portable import dump_export, export_document
from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    document = export_document(ctx.repo())
    if args.output is None:
        return Outcome(document, dump_export(document) + "\n")
    text = dump_export(document)
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"writing {args.output}", "store_io", cause=exc.strerror or str(exc)) from None
    count = len(document["objects"])
    return Outcome(
        {"path": str(Path(args.output).absolute()), "objects": count},
        stderr=f"Exported {count} object(s) to {args.output}\n",
    )
