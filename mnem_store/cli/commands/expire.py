"""``mnem expire`` (extension): remove the nodes whose lease has run out, as one commit.

Expired nodes are already hidden from live reads (``stamps --live``);
this records their removal in history, so ``log`` and ``show`` say when
and why they went.  LangGraph's TTL sweeper runs it.
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ...repo import default_author
from ..context import Context, Outcome, check_text, commit_time
from ..render import first_line, short


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``expire``'s arguments: who records the removal, and when."""
    parser.add_argument("--author", help='who made the commit; falls back to $MNEM_AUTHOR, then "unknown"')
    parser.add_argument("--time", type=commit_time, metavar="MS", help="when to expire at, in Unix ms (default now)")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print the commit made and the nodes removed (JSON: ``{"commit": Commit | null, "removed": [ids]}``)."""
    done = porcelain.expire(ctx.repo(), check_text(default_author(args.author), "--author"), args.time)
    made = done.written.commit
    if made is None:
        return Outcome({"commit": None, "removed": []}, "nothing expired\n")
    raw, commit = made
    text = f"{ctx.paint('71', f'[{short(raw)}]')} {first_line(commit.message)}\n"
    return Outcome({"commit": commit.to_dict(raw), "removed": done.removed}, text)
