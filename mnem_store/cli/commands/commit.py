"""``mnem commit -m MSG``: record what is staged."""

from __future__ import annotations

import argparse

from ... import porcelain
from ...repo import default_author
from ..context import Context, Outcome, check_text, commit_time
from ..render import first_line, short


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``commit``'s arguments: the message, and the author and time to record."""
    parser.add_argument("-m", "--message", required=True, help="the commit message")
    parser.add_argument("--author", help='who made the commit; falls back to $MNEM_AUTHOR, then "unknown"')
    parser.add_argument(
        "--time", type=commit_time, metavar="MS", help="commit time in Unix ms (extension; default now)"
    )


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Commit what is staged; the result is the new commit."""
    message = check_text(args.message, "--message")
    author = check_text(default_author(args.author), "--author")
    raw, commit = porcelain.commit(ctx.repo(), message, author, args.time)
    return Outcome(commit.to_dict(raw), f"{ctx.paint('71', f'[{short(raw)}]')} {first_line(message)}\n")
