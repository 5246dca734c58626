"""``mnem stamps [REV]`` (extension): the memory at a commit, with when each node was created and updated.

One invocation answers for every node (or the ``--node`` ones, or those
under a ``--prefix``: a namespace, whose walk follows only its nodes), so a
key-value view of memory can report item times without blaming each node
in its own process.  The semantics are in ``mnem_store.stamps``.
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ..context import Context, Outcome
from ..render import fmt_time


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``stamps``' arguments: the revision and, optionally, which nodes."""
    parser.add_argument("rev", nargs="?", help="a branch name or commit id (default: HEAD's commit)")
    parser.add_argument(
        "--node", metavar="ID", action="append", help="only this node (repeatable); absent nodes are left out"
    )
    parser.add_argument(
        "--live", action="store_true",
        help="leave out nodes whose lease (write's ttl) on HEAD's branch has run out; needs no REV",
    )
    parser.add_argument(
        "--prefix", metavar="TEXT", action="append",
        help="only nodes whose id starts with TEXT (repeatable; with --node, both sets)",
    )


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print each node at ``REV`` with the times it was created and last updated."""
    stamped = porcelain.stamps(ctx.repo(), args.rev, args.node, args.prefix, live=args.live)
    data = {node_id: entry.to_dict() for node_id, entry in stamped.items()}

    def text() -> str:
        paint = ctx.paint
        if not stamped:
            return f"{paint('245', '(empty)')}\n"
        return "".join(
            f"{paint('75', node_id)}\n  created {fmt_time(entry.created)}  updated {fmt_time(entry.updated)}\n"
            for node_id, entry in stamped.items()
        )

    return Outcome(data, text)
