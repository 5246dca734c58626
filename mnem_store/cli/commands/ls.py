"""``mnem ls [REV] [--prefix TEXT]...`` (extension): the node ids in memory, without reading a node.

A namespace listing (LangGraph's ``list_namespaces``) needs only which ids
exist; ``show`` or ``stamps`` would read and send every node for it.
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``ls``' arguments: the revision and, optionally, prefixes."""
    parser.add_argument("rev", nargs="?", help="a branch name or commit id (default: HEAD's commit)")
    parser.add_argument(
        "--live", action="store_true",
        help="leave out nodes whose lease (write's ttl) on HEAD's branch has run out; needs no REV",
    )
    parser.add_argument(
        "--prefix", metavar="TEXT", action="append", help="only ids that start with TEXT (repeatable)"
    )


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print the ids in the committed memory at ``REV``, one per line."""
    ids = porcelain.ls(ctx.repo(), args.rev, args.prefix, live=args.live)
    if not ids:
        return Outcome(ids, f"{ctx.paint('245', '(empty)')}\n")
    return Outcome(ids, "".join(f"{node_id}\n" for node_id in ids))
