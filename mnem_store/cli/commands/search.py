"""``mnem search [REV]`` (extension): a page of LangGraph items, filtered and ranked where the values are.

``MnemosyneStore.search`` asks this once per search: the candidates under a
namespace, LangGraph's filter, a query answered in one of four modes and
the page are all worked out in one read (``mnem_store.search``), and only
the page's items cross the process boundary, each with its value, its two
times, its score and its lease.  The query, the filter and the vector are
held to the value limit before they are parsed (``Limits.check_argument``).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ... import filters, porcelain
from ...errors import UsageError
from ...limits import Limits
from ...search import MODES, Query
from ...similarity import DISTANCES
from ..context import Context, Outcome, check_text, paging, parse_json_arg, wall_time
from .write import decode_vector


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``search``'s arguments: the revision, where, what, how, and which page."""
    parser.add_argument("rev", nargs="?", help="a branch name or commit id (default: HEAD's commit)")
    parser.add_argument("--namespace", metavar="JSON", default="[]",
                        help='only items under this namespace prefix, a JSON array of labels (default: [], all)')
    parser.add_argument("--query", metavar="TEXT", help="what to look for (none: the items in order)")
    parser.add_argument("--mode", choices=MODES, default=MODES[0],
                        help="how the query is answered: substring (default), bm25, vector or hybrid")
    parser.add_argument("--filter", metavar="JSON", help="LangGraph's filter, a JSON object ($eq, $ne, $gt, ...)")
    parser.add_argument("--model", help="vector and hybrid: the name the vectors were stored under")
    parser.add_argument("--vector", metavar="BASE64", help="vector and hybrid: the query's embedding "
                        "(base64 of little-endian float32)")
    parser.add_argument("--distance", choices=DISTANCES, default=DISTANCES[0],
                        help="vector and hybrid: how a vector is scored (as similar --distance)")
    parser.add_argument("--field", metavar="PATH", action="append",
                        help="hybrid: an index field whose words BM25 reads (repeatable; default $, the whole value)")
    add_window(parser, 10, "items ")


def add_window(parser: argparse.ArgumentParser, limit: int, counted: str) -> None:
    """The page and the moment of an item read (``search``, ``namespaces``).

    ``--limit`` and ``--offset``, and ``--live`` or ``--valid-at`` (not both: ``check_window``).
    """
    parser.add_argument("--limit", type=paging(0, "--limit"), default=limit, metavar="N",
                        help=f"at most N {counted}({limit})")
    parser.add_argument("--offset", type=paging(0, "--offset"), default=0, metavar="N", help="skip the first N")
    parser.add_argument("--live", action="store_true",
                        help="leave out items whose lease on HEAD's branch has run out; needs no REV")
    parser.add_argument("--valid-at", type=wall_time, metavar="TIME",
                        help="the items valid at TIME by their event times, along REV's history, stamped in that "
                             "valid time (see stamps --valid-at); not with --live")


def check_window(args: argparse.Namespace) -> None:
    """Refuse ``--live`` with ``--valid-at``: one reads what is alive now, the other what was true then."""
    if args.valid_at is not None and args.live:
        raise UsageError("--valid-at reads what was true at a time, and --live what is alive now: give one")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print the page, one item a line (JSON: ``{"items": [...]}``, docs/cli-json.md)."""
    query, ranker = _query(args)
    check_window(args)
    found = porcelain.search(ctx.repo(), query, args.rev, live=args.live, ranker=ranker, valid_at=args.valid_at)
    data = {"items": [{"id": item.hit.id, "namespace": list(item.hit.namespace), "key": item.hit.key,
                       "value": item.hit.value, "created": item.created, "updated": item.updated,
                       "score": item.hit.score, "expires": item.expires} for item in found]}
    if not found:
        return Outcome(data, f"{ctx.paint('245', '(no items)')}\n")
    return Outcome(data, lambda: "".join(
        f"{'-' if item.hit.score is None else f'{item.hit.score:.4f}'}  {item.hit.id}\n" for item in found))


def _query(args: argparse.Namespace) -> tuple[Query, porcelain.Ranker | None]:
    """The search the arguments ask for, every argument checked before anything is read."""
    limits = Limits.current()
    namespace = parse_labels(args.namespace, "--namespace", limits)
    text = None
    if args.query is not None:
        limits.check_argument(args.query, "--query")
        text = check_text(args.query, "--query")
    conditions = None
    if args.filter is not None:
        limits.check_argument(args.filter, "--filter")
        conditions = filters.check(parse_json_arg(args.filter, "--filter is not valid JSON"))
    ranked = args.mode in ("vector", "hybrid")
    if not ranked and (args.model is not None or args.vector is not None):
        raise UsageError(f"--model and --vector rank by embeddings: add --mode vector or --mode hybrid "
                         f"(--mode {args.mode} does not read them)")
    ranker = None
    if ranked and text:
        if args.model is None or args.vector is None:
            raise UsageError(f"--mode {args.mode} ranks by the query's embedding: give --model NAME and "
                             "--vector BASE64 (or choose --mode substring or bm25)")
        limits.check_argument(args.vector, "--vector")
        from ...similarity import require_numpy

        require_numpy()
        ranker = porcelain.Ranker(check_text(args.model, "--model"), decode_vector(args.vector, "--vector"),
                                  args.distance)
    if args.mode == "hybrid" and text:
        from ...lexical import require_stemmer

        require_stemmer()
    if args.field is not None and args.mode != "hybrid":
        raise UsageError("--field names what hybrid's BM25 reads: add --mode hybrid, or leave it out")
    fields = tuple(check_text(path, "--field") for path in args.field) if args.field else ("$",)
    return Query(namespace, text, args.mode, conditions, args.limit, args.offset, fields), ranker


def parse_labels(text: str, what: str, limits: Limits | None = None) -> tuple[str, ...]:
    """A namespace (or a path of one) given as a JSON array of labels, held to ``limits`` (default: the current ones).

    A caller that has read the limits passes them: reading them from the
    environment again costs a few microseconds of a worker's request.
    """
    (limits or Limits.current()).check_argument(text, what)
    labels: Any = parse_json_arg(text, f"{what} is not valid JSON")
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise UsageError(f'{what} must be a JSON array of labels, such as ["memories", "u1"], got '
                         f"{json.dumps(labels, ensure_ascii=False)[:80]}")
    return tuple(labels)
