"""``mnem unstage ID`` (extension): drop a staged add or deletion, as the SDK's ``unstage``."""

from __future__ import annotations

import argparse

from ... import porcelain
from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``unstage``'s one argument, the node to unstage."""
    parser.add_argument("id", help="the node id to unstage")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Drop the node's staged add or deletion; the result says whether there was one."""
    done = porcelain.unstage(ctx.repo(), args.id)
    text = f"Unstaged {args.id}\n" if done else f"Nothing staged for {args.id}\n"
    return Outcome({"id": args.id, "unstaged": done}, text)
