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
from ...search import Condition
from ..context import Context, Outcome, paging
from .search import add_window, check_window, parse_labels


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
    add_window(parser, 100, "")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print the namespaces in order, one a line as a JSON array (JSON: ``{"namespaces": [[label, ...], ...]}``)."""
    conditions = [*(Condition("prefix", parse_labels(text, "--prefix")) for text in args.prefix),
                  *(Condition("suffix", parse_labels(text, "--suffix")) for text in args.suffix)]
    check_window(args)
    found = porcelain.namespaces(ctx.repo(), conditions, args.rev, live=args.live, max_depth=args.max_depth,
                                 limit=args.limit, offset=args.offset, valid_at=args.valid_at)
    data = {"namespaces": [list(namespace) for namespace in found]}
    if not found:
        return Outcome(data, f"{ctx.paint('245', '(no namespaces)')}\n")
    return Outcome(data, lambda: "".join(f"{json.dumps(list(namespace), ensure_ascii=False)}\n"
                                         for namespace in found))
