"""``mnem push [REMOTE] [BRANCH] [--force-with-lease[=EXPECTED]]``: send a branch to a remote (extension).

A push that is not a fast-forward is refused with ``conflict``; with
``--force-with-lease`` the remote branch is overwritten only while it is
still where this store last saw it (its tracking branch) or at EXPECTED.
"""

from __future__ import annotations

import argparse
import re

from ... import sync
from ...errors import UsageError
from ..context import Context, Outcome, check_text
from ..render import short
from .fetch import records_line


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``push``'s arguments: the remote, the branch and the lease."""
    parser.add_argument("remote", nargs="?", metavar="REMOTE", help="the remote (default origin)")
    parser.add_argument("branch", nargs="?", metavar="BRANCH", help="the branch to push (default the current one)")
    parser.add_argument("--force-with-lease", nargs="?", const="", default=None, metavar="EXPECTED",
                        help="overwrite a branch that is not a fast-forward, only while the remote's is still at "
                             "EXPECTED (default: where the last fetch saw it)")


#: What an EXPECTED commit looks like: a commit id or a prefix of one.
_COMMIT = re.compile(r"[0-9a-f]{4,64}")


def _operands(args: argparse.Namespace) -> tuple[str, str | None, str | None]:
    """REMOTE, BRANCH and the lease's EXPECTED, as git reads ``push --force-with-lease origin main``.

    argparse hands an option with an optional value the next word, so
    ``--force-with-lease origin`` would read ``origin`` as EXPECTED; a word
    that is not a commit id goes back to the operands.
    """
    operands = [value for value in (args.remote, args.branch) if value is not None]
    lease = args.force_with_lease
    if lease and not _COMMIT.fullmatch(lease):
        operands.insert(0, lease)
        lease = ""
    if len(operands) > 2:
        raise UsageError("usage: mnem push [REMOTE] [BRANCH] [--force-with-lease[=EXPECTED]]")
    remote = check_text(operands[0], "REMOTE") if operands else "origin"
    branch = check_text(operands[1], "BRANCH") if len(operands) > 1 else None
    return remote, branch, lease


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Push; the text says how the remote branch moved."""
    remote, branch, lease = _operands(args)
    pushed = sync.push(ctx.repo(), remote, branch, force_with_lease=lease is not None, expected=lease or None)
    if pushed.status == "up-to-date":
        text = f"{pushed.remote}/{pushed.branch} is already at {short(pushed.new)}; nothing to push\n"
    else:
        was = short(pushed.old) if pushed.old is not None else "(new)"
        text = (f"Pushed {pushed.sent.commits} commit(s), {pushed.sent.objects} object(s) to {pushed.remote}: "
                f"{was} -> {short(pushed.new)}  {pushed.branch} ({pushed.status})\n")
    return Outcome(pushed.to_dict(), text + records_line(pushed.sent.redactions, f"on {pushed.remote}"))
