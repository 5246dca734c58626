"""``mnem checkout``: move HEAD to a branch (attached) or a commit (detached)."""

from __future__ import annotations

import argparse

from ... import porcelain
from ..context import Context, Outcome, check_text
from ..render import short


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``checkout``'s arguments: the target, ``-b`` to create a branch there, and ``--discard``."""
    parser.add_argument("rev", nargs="?", help="a branch or commit; with -b, the new branch's start point")
    parser.add_argument("-b", "--create", metavar="NAME", help="create a branch and switch to it")
    parser.add_argument("--discard", action="store_true", help="drop uncommitted staged changes instead of refusing")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Move HEAD; the result says whether it is on a branch, detached, or was there already."""
    repo = ctx.repo()
    paint = ctx.paint
    create = check_text(args.create, "NAME") if args.create is not None else None
    target = create if create is not None else args.rev
    result, head = porcelain.checkout(repo, args.rev, create=create, discard=args.discard)
    data = {"result": result, "head": head.text}
    if result == "branch":
        return Outcome(data, f"Switched to branch {paint('140', head.branch or '')}\n")
    if result == "detached":
        return Outcome(data, f"HEAD is now at {paint('75', short(head.commit or b''))} (detached)\n")
    return Outcome(data, f"Already on {paint('140', target)}\n")
