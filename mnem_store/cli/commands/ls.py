"""``mnem ls [REV] [--prefix TEXT]... [--objects]`` (extension): the node ids in memory, without reading a node.

A namespace listing (LangGraph's ``list_namespaces``) needs only which ids
exist; ``show`` or ``stamps`` would read and send every node for it.  With
``--objects``, each id comes with the object id of its value and the
commit read: a client that keeps values by object id (``MnemosyneStore``'s
search) reads only the values it has not seen.
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ...errors import UsageError
from ..context import Context, Outcome, full_id


def _commit_id(text: str) -> bytes:
    """``--unless``'s full commit id as bytes, or a usage error."""
    return full_id(text, "--unless takes a full commit id (64 hex digits)")


def _count(text: str) -> int:
    """``--last``'s count: a whole number, 0 or more."""
    if not (text.isascii() and text.isdigit()):
        raise UsageError(f"--last takes a count (0 or more), got {text!r}")
    return int(text)


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``ls``' arguments: the revision and, optionally, prefixes."""
    parser.add_argument("rev", nargs="?", help="a branch name or commit id (default: HEAD's commit)")
    parser.add_argument(
        "--live", action="store_true",
        help="leave out nodes whose lease (write's ttl) on HEAD's branch has run out; needs no REV",
    )
    parser.add_argument(
        "--prefix", metavar="TEXT", action="append", help="only ids that start with TEXT (repeatable)"
    )
    parser.add_argument(
        "--objects", action="store_true",
        help="each id with the object id of its value, and the commit read (JSON: {commit, nodes: {id: object}, "
             "expired: [id]}); with --live, expired nodes are listed apart rather than left out",
    )
    parser.add_argument(
        "--last", metavar="N", type=_count,
        help="only the last N ids in id order (the greatest; where ids sort by time, the newest)",
    )
    parser.add_argument(
        "--unless", metavar="COMMIT",
        help="with --objects: when the commit read is COMMIT (full id), nodes is null (the caller has them)",
    )


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print the ids in the committed memory at ``REV``, one per line (with ``--objects``, each after its object id)."""
    if args.objects:
        if args.last is not None:
            raise UsageError("--last lists ids alone: leave out --objects")
        unless = _commit_id(args.unless) if args.unless is not None else None
        commit, nodes, expired = porcelain.ls_objects(ctx.repo(), args.rev, args.prefix, live=args.live,
                                                      unless=unless)
        data = {"commit": commit.hex() if commit is not None else None,
                "nodes": None if nodes is None else {node_id: raw.hex() for node_id, raw in nodes.items()},
                "expired": expired}
        if nodes is None:
            return Outcome(data, f"{ctx.paint('245', '(unchanged)')}\n")
        gone, empty = set(expired), f"{ctx.paint('245', '(empty)')}\n"
        return Outcome(data, lambda: "".join(f"{raw.hex()}  {node_id}\n" for node_id, raw in nodes.items()
                                             if node_id not in gone) or empty)  # built only in text mode
    if args.unless is not None:
        raise UsageError("--unless goes with --objects")
    ids = porcelain.ls(ctx.repo(), args.rev, args.prefix, live=args.live, last=args.last)
    if not ids:
        return Outcome(ids, f"{ctx.paint('245', '(empty)')}\n")
    return Outcome(ids, "".join(f"{node_id}\n" for node_id in ids))
