"""``mnem commit -m MSG``: record what is staged."""

from __future__ import annotations

import argparse

from ...errors import CommandError
from ...repo import default_author, now_ms
from ..context import Context, Outcome, check_text, commit_time
from ..render import first_line, short


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--message", required=True, help="the commit message")
    parser.add_argument("--author", help='who made the commit; falls back to $MNEM_AUTHOR, then "unknown"')
    parser.add_argument("--time", type=commit_time, metavar="MS", help="commit time in Unix ms (extension; default now)")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    repo = ctx.repo()
    message = check_text(args.message, "--message")
    author = check_text(default_author(args.author), "--author")
    if not repo.is_dirty():
        raise CommandError("nothing staged; use `mnem add` or `mnem rm` first")
    raw = repo.commit(message, author, args.time if args.time is not None else now_ms())
    commit = repo.commit_obj(raw)
    return Outcome(commit.to_dict(raw), f"{ctx.paint('71', f'[{short(raw)}]')} {first_line(message)}\n")
