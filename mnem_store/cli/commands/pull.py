"""``mnem pull [REMOTE] [BRANCH]``: fetch, then merge REMOTE/BRANCH into the current branch (extension).

The merge is ``mnem merge``'s, with its ``--resolve``/``--strategy``
surface and its per-fact conflict report: a pull that stops on conflicts
keeps what it fetched, prints them and exits 1 in text mode (with
``--json`` it is a result whose ``merge.status`` is ``conflicts``).
"""

from __future__ import annotations

import argparse

from ... import sync
from ...repo import default_author
from ..context import Context, Outcome, check_text, commit_time
from . import fetch, merge


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``pull``'s arguments: the remote and branch, then ``merge``'s resolution flags."""
    parser.add_argument("remote", nargs="?", default="origin", metavar="REMOTE", help="the remote (default origin)")
    parser.add_argument("branch", nargs="?", metavar="BRANCH",
                        help="the remote's branch to merge (default the current branch's name)")
    parser.add_argument("--resolve", dest="resolutions", action=merge._InOrder, default=[], metavar="ID=SIDE",
                        help="resolve one conflict: <id>=<ours|theirs|base|delete>; repeatable")
    parser.add_argument("--resolve-json", dest="resolutions", action=merge._InOrder, metavar="ID=JSON",
                        help="resolve one conflict to a new node with this JSON content; repeatable")
    parser.add_argument("--strategy", metavar="SIDE", help="resolve every other conflict one way: ours or theirs")
    parser.add_argument("-m", "--message", help="override the merge commit message")
    parser.add_argument("--author", help='who made the merge; falls back to $MNEM_AUTHOR, then "unknown"')
    parser.add_argument("--time", type=commit_time, metavar="MS", help="merge commit time in Unix ms")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Pull; the text is the fetch's, then the merge's report."""
    strategy = merge._strategy(args.strategy)
    resolutions = dict(merge._resolution(flag, spec) for flag, spec in args.resolutions)
    message = check_text(args.message, "--message") if args.message is not None else None
    author = check_text(default_author(args.author), "--author")
    pulled = sync.pull(ctx.repo(), check_text(args.remote, "REMOTE"),
                       check_text(args.branch, "BRANCH") if args.branch is not None else None,
                       resolutions=resolutions, strategy=strategy, message=message, author=author, time_ms=args.time)
    text, stderr, code = merge._report(pulled.merged, ctx.paint, False)
    if code:
        stderr = "Error: resolve with `--resolve <id>=<side>` (or `--strategy ours|theirs`) and pull again\n"
    return Outcome(pulled.to_dict(), fetch.render(pulled.fetched) + text, stderr, code)
