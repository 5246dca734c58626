"""``mnem clone SRC DEST``: a new store holding SRC's history, with remote ``origin`` = SRC (extension).

SRC and DEST are what ``mnem -C`` and ``mnem init`` take: a folder or a
``postgresql://`` store URL; DEST must not hold a store yet.
"""

from __future__ import annotations

import argparse
import shlex

from ... import sync
from ...errors import UsageError
from ..context import Context, Outcome, check_text
from .fetch import records_line


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``clone``'s arguments: where from, where to."""
    parser.add_argument("source", metavar="SRC", help="the store to copy: a folder, postgresql://...?store=NAME "
                        "or a mnem-mcp server's http(s):// URL")
    parser.add_argument("dest", metavar="DEST", help="where to create the new store (a folder or store URL)")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Clone; the text names the new store and how to use it."""
    if args.dest.startswith(("http://", "https://")):
        raise UsageError(f"a clone makes a new store on this machine or in PostgreSQL, not on a server; to put a "
                         f"store on a mnem-mcp server, push to it: `mnem remote add hub {args.dest}` then "
                         "`mnem push hub main`")
    cloned = sync.clone(check_text(args.source, "SRC"), ctx.base(check_text(args.dest, "DEST")))
    head = cloned.head.branch or cloned.head.text.strip()
    text = (f"Cloned {cloned.origin.shown} into {cloned.store}: {cloned.sent.commits} commit(s), "
            f"{cloned.sent.objects} object(s), on {head}\n"
            f"{records_line(cloned.sent.redactions, 'in the clone')}"
            f"  mnem -C {shlex.quote(cloned.store)} log\n")
    return Outcome(cloned.to_dict(), text)
