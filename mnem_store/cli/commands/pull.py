"""``mnem pull [REMOTE] [BRANCH]``: fetch, then merge REMOTE/BRANCH into the current branch (extension).

The merge is ``mnem merge``'s, with its ``--resolve``/``--strategy``
surface and its per-fact conflict report: a pull that stops on conflicts
keeps what it fetched, prints them and exits 1 in text mode (with
``--json`` it is a result whose ``merge.status`` is ``conflicts``).
"""

from __future__ import annotations

import argparse

from ... import sync
from ..context import Context, Outcome, check_text
from . import fetch, merge


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``pull``'s arguments: the remote and branch, then ``merge``'s resolution flags."""
    parser.add_argument("remote", nargs="?", default="origin", metavar="REMOTE", help="the remote (default origin)")
    parser.add_argument("branch", nargs="?", metavar="BRANCH",
                        help="the remote's branch to merge (default the current branch's name)")
    merge.add_resolution_flags(parser)


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Pull; the text is the fetch's, then the merge's report."""
    settle = merge.settlement(args)
    pulled = sync.pull(ctx.repo(), check_text(args.remote, "REMOTE"),
                       check_text(args.branch, "BRANCH") if args.branch is not None else None,
                       resolutions=settle.resolutions, strategy=settle.strategy, message=settle.message,
                       author=settle.author, time_ms=args.time)
    text, stderr, code = merge.report(pulled.merged, ctx.paint, False)
    if code:
        stderr = "Error: resolve with `--resolve <id>=<side>` (or `--strategy ours|theirs`) and pull again\n"
    return Outcome(pulled.to_dict(), fetch.render(pulled.fetched) + text, stderr, code)
