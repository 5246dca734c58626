"""``mnem resolve REV`` (extension): the commit a commit-ish names."""

from __future__ import annotations

import argparse

from ... import porcelain
from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``resolve``'s one argument, the branch name or id prefix."""
    parser.add_argument("rev", help="a branch name or a 4-64 character commit id prefix")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print the full id of the commit ``REV`` names."""
    raw = porcelain.resolve(ctx.repo(), args.rev)
    return Outcome({"commit": raw.hex()}, f"{raw.hex()}\n")
