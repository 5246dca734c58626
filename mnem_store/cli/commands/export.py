"""``mnem export [-o FILE]``: the whole store as upstream's JSON export."""

from __future__ import annotations

import argparse
import os
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
        _write_private(Path(args.output), text)
    except OSError as exc:
        raise CommandError(f"writing {args.output}", "store_io", cause=exc.strerror or str(exc)) from None
    count = len(document["objects"])
    return Outcome(
        {"path": str(Path(args.output).absolute()), "objects": count},
        stderr=f"Exported {count} object(s) to {args.output}\n",
    )


def _write_private(path: Path, text: str) -> None:
    """Write an export file that only its owner can read, as the store's own files are.

    The export is the whole memory.  ``Path.write_text`` would create it
    ``0666 & ~umask`` (world-readable under the usual 022), handing every
    local user what ``.mnem/`` (0700, files 0600) keeps private.  A new file
    is created 0600 whatever the umask; an existing file is truncated and
    keeps the mode its owner gave it.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
