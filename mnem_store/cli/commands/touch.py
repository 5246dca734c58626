"""``mnem touch ID...`` (extension): restart the leases of nodes read, as LangGraph's ``refresh_ttl`` does.

A node written with a ``ttl`` (``mnem write``) expires that long after it
was written; a reader that wants it kept while it is in use touches it, and
its lease runs again from now.  Nodes without a lease, and those whose
lease has already run out, are left as they are: touching cannot revive
what has expired.
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ..context import Context, Outcome, check_node_id
from ..render import fmt_time


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``touch``'s arguments: the node ids."""
    parser.add_argument("ids", nargs="+", metavar="ID", help="a node id (repeatable)")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print each touched node with its new expiry (JSON: ``{id: expires ms}``)."""
    touched = porcelain.touch(ctx.repo(), [check_node_id(node_id) for node_id in args.ids])
    if not touched:
        return Outcome(touched, f"{ctx.paint('245', '(no lease to restart)')}\n")
    return Outcome(touched, "".join(f"{node_id}  expires {fmt_time(ms)}\n" for node_id, ms in touched.items()))
