"""``mnem branch``: list, create or delete branches.

``branch -d NAME --json`` answers ``{"name", "deleted": false}`` for a branch
that does not exist (exit 0), so a program learns the outcome from the
result; text mode keeps upstream's ``Error: no branch 'NAME'`` and exit 1.
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ...errors import CommandError, UsageError
from ..context import Context, Outcome, check_text
from ..render import first_line, short


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``branch``'s arguments; which ones are given picks list, create or delete."""
    parser.add_argument("name", nargs="?", help="the branch to create; omit to list branches")
    parser.add_argument("start", nargs="?", help="where the new branch starts (default HEAD)")
    parser.add_argument("-d", "--delete", metavar="NAME", help="delete this branch")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Delete the ``--delete`` branch, create ``NAME``, or list every branch."""
    repo = ctx.repo()
    paint = ctx.paint
    if args.delete is not None:
        if args.name is not None or args.start is not None:
            raise UsageError("the argument '--delete <NAME>' cannot be used with '[NAME]' or '[START]'")
        if not porcelain.branch_delete(repo, args.delete):
            if ctx.json:  # a result for programs: the bridge's delete_branch returns False, reading no error text
                return Outcome({"name": args.delete, "deleted": False})
            raise CommandError(f"no branch '{args.delete}'")  # upstream's text and exit status
        return Outcome({"name": args.delete, "deleted": True}, f"Deleted branch {paint('140', args.delete)}\n")
    if args.name is not None:
        name = check_text(args.name, "NAME")
        at = porcelain.branch_create(repo, name, args.start)
        return Outcome(
            {"name": name, "commit": at.hex()}, f"Created branch {paint('140', name)} at {paint('75', short(at))}\n"
        )
    rows = porcelain.branch_list(repo)
    data = [{"name": row.name, "commit": row.tip.hex(), "current": row.current} for row in rows]
    if not rows:
        return Outcome(data, "no branches yet\n")
    lines = []
    for row in rows:
        flag = paint("71", "*") if row.current else " "
        shown = paint("71", row.name) if row.current else paint("140", row.name)
        lines.append(f"{flag} {shown}  {paint('75', short(row.tip))}  {first_line(row.message)}\n")
    return Outcome(data, "".join(lines))
