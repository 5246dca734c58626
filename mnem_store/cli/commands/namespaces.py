"""``mnem namespaces [REV]`` (extension): LangGraph's ``list_namespaces``, answered from ids alone in one read.

A verb of its own rather than an ``ls`` flag: ``ls`` lists node ids and
knows nothing of how an adapter lays them out, while this reads them as
LangGraph's items (``mnem_ids.items``) and applies ``list_namespaces``'
match conditions: ``--prefix`` and ``--suffix`` (JSON arrays of labels, a
``"*"`` matching any one label), ``--max-depth``, ``--limit`` and
``--offset``.
"""

from __future__ import annotations

import argparse
import json

from ... import porcelain
from ...errors import UsageError
from ...search import Condition
from ..context import Context, Outcome, paging, wall_time
from .search import parse_labels


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``namespaces``' arguments: the revision, the match conditions and the page."""
    parser.add_argument("rev", nargs="?", help="a branch name or commit id (default: HEAD's commit)")
    parser.add_argument("--prefix", metavar="JSON", action="append", default=[],
                        help='only namespaces starting with these labels, a JSON array ("*": any one label; '
                             "repeatable)")
    parser.add_argument("--suffix", metavar="JSON", action="append", default=[],
                        help="only namespaces ending with these labels, as --prefix")
    parser.add_argument("--max-depth", type=paging(1, "--max-depth"), metavar="N",
                        help="cut each namespace to its first N labels (the same cut ones listed once)")
    parser.add_argument("--limit", type=paging(0, "--limit"), default=100, metavar="N", help="at most N (100)")
    parser.add_argument("--offset", type=paging(0, "--offset"), default=0, metavar="N", help="skip the first N")
    parser.add_argument("--live", action="store_true",
                        help="leave out items whose lease on HEAD's branch has run out; needs no REV")
    parser.add_argument("--valid-at", type=wall_time, metavar="TIME",
                        help="the items valid at TIME by their event times, along REV's history, stamped in that "
                             "valid time (see stamps --valid-at); not with --live")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print the namespaces in order, one a line as a JSON array (JSON: ``{"namespaces": [[label, ...], ...]}``)."""
    conditions = [*(Condition("prefix", parse_labels(text, "--prefix")) for text in args.prefix),
                  *(Condition("suffix", parse_labels(text, "--suffix")) for text in args.suffix)]
    if args.valid_at is not None and args.live:
        raise UsageError("--valid-at reads what was true at a time, and --live what is alive now: give one")
    found = porcelain.namespaces(ctx.repo(), conditions, args.rev, live=args.live, max_depth=args.max_depth,
                                 limit=args.limit, offset=args.offset, valid_at=args.valid_at)
    data = {"namespaces": [list(namespace) for namespace in found]}
    if not found:
        return Outcome(data, f"{ctx.paint('245', '(no namespaces)')}\n")
    return Outcome(data, lambda: "".join(f"{json.dumps(list(namespace), ensure_ascii=False)}\n"
                                         for namespace in found))
