"""``mnem stamps [REV]`` (extension): the memory at a commit, with when each node was created and updated.

One invocation answers for every node (or the ``--node`` ones, or those
under a ``--prefix``: a namespace, whose walk follows only its nodes), so a
key-value view of memory can report item times without blaming each node
in its own process.  The semantics are in ``mnem_store.stamps``.
"""

from __future__ import annotations

import argparse
from typing import Any

from ... import porcelain
from ...errors import UsageError
from ...stamps import Stamped
from ..context import Context, Outcome, wall_time
from ..documents import node_documents
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
    parser.add_argument(
        "--valid-at", type=wall_time, metavar="TIME",
        help="the nodes valid at TIME by their event times, stamped in that valid time (see show --valid-at); "
             "not with --live (extension)",
    )


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print each node at ``REV`` with the times it was created and last updated.

    The JSON document of each is ``{"node": MemoryNode, "created": ms, "updated": ms}``,
    with ``"expires": ms`` for a leased node (``--live``).  With ``--valid-at``, the nodes valid then,
    their two times in valid time (``mnem_store.validtime``).
    """
    repo = ctx.repo()
    if args.valid_at is not None and args.live:
        raise UsageError("--valid-at reads what was true at a time, and --live what is alive now: give one")
    stamped = (porcelain.stamps(repo, args.rev, args.node, args.prefix, live=args.live) if args.valid_at is None
               else porcelain.valid_at(repo, args.valid_at, args.rev, args.node, args.prefix))
    data = None
    if ctx.json:
        nodes = node_documents(repo, {node_id: entry.object for node_id, entry in stamped.items()})
        data = {node_id: _document(nodes[node_id], entry) for node_id, entry in stamped.items()}

    def text() -> str:
        paint = ctx.paint
        if not stamped:
            return f"{paint('245', '(empty)')}\n"
        return "".join(
            f"{paint('75', node_id)}\n  created {fmt_time(entry.created)}  updated {fmt_time(entry.updated)}\n"
            for node_id, entry in stamped.items()
        )

    return Outcome(data, text)


def _document(node: Any, entry: Stamped) -> dict[str, Any]:
    document = {"node": node, "created": entry.created, "updated": entry.updated}
    if entry.expires is not None:
        document["expires"] = entry.expires
    return document
