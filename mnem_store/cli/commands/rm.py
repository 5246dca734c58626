"""``mnem rm ID``: stage a deletion."""

from __future__ import annotations

import argparse

from ... import porcelain
from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``rm``'s one argument, the node to delete."""
    parser.add_argument("id", help="the node id to remove")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Stage the node's deletion for the next commit."""
    porcelain.rm(ctx.repo(), args.id)
    return Outcome({"id": args.id}, f"Staged deletion of {ctx.paint('75', args.id)}\n")
