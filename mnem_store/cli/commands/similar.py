"""``mnem similar [REV] --model NAME --vector BASE64`` (extension): nodes ranked by embedding similarity.

An adapter that embeds values (LangGraph's ``IndexConfig``) stores vectors
with its writes (``mnem write``'s ``vectors``) and asks here which nodes
are closest to its query's embedding; the arithmetic is done where the
vectors are, so only scores cross the process boundary.  ``--distance``
picks LangGraph's ``distance_type`` (cosine by default); the scoring is in
``mnem_store.similarity``.
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ...errors import UsageError
from ...similarity import DISTANCES
from ..context import Context, Outcome
from .write import decode_vector


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``similar``'s arguments: the revision, the model and query vector, and which nodes."""
    parser.add_argument("rev", nargs="?", help="a branch name or commit id (default: HEAD's commit)")
    parser.add_argument("--model", required=True, help="the name the vectors were stored under")
    parser.add_argument("--vector", required=True, metavar="BASE64", help="the query: base64 of little-endian float32")
    parser.add_argument("--node", metavar="ID", action="append", help="only this node (repeatable)")
    parser.add_argument("--prefix", metavar="TEXT", action="append", help="only nodes under TEXT (repeatable)")
    parser.add_argument("--live", action="store_true", help="leave out expired nodes (as stamps --live)")
    parser.add_argument("--limit", type=int, metavar="N", help="only the N best")
    parser.add_argument("--distance", choices=DISTANCES, default=DISTANCES[0],
                        help="how a vector is scored, higher being closer: cosine similarity (default), "
                             "minus the Euclidean distance (l2), or the dot product (inner_product)")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print node ids with their score under ``--distance``, best first (JSON: ``{id: score}``)."""
    query = decode_vector(args.vector, "--vector")
    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must not be negative")
    found = porcelain.similar(ctx.repo(), args.model, query, args.rev, args.node, args.prefix, live=args.live,
                              limit=args.limit, distance=args.distance)
    if not found:
        return Outcome(found, f"{ctx.paint('245', '(no vectors)')}\n")
    # The text grows with the candidates: built only in text mode (a search asks for ten thousand scores in JSON).
    return Outcome(found, lambda: "".join(f"{score:.4f}  {node_id}\n" for node_id, score in found.items()))
