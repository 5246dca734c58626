"""``mnem embed [REV] --model NAME`` (extension): store vectors for values already in memory, without a commit.

``mnem write`` stores a put's vectors with the put; this is for building
an index after the fact, such as for a new embedding model.  The payload
(stdin or ``--file``) maps node ids to their fields' vectors, ``{ID:
{FIELD: base64 of little-endian float32}}``; each is stored for the value
the node holds at ``REV``, and ids not there are skipped.
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ...canonical import parse_json
from ...errors import UsageError
from ..context import Context, Outcome, read_payload
from .write import decode_vector


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``embed``'s arguments: the revision, the model, and where the payload comes from."""
    parser.add_argument("rev", nargs="?", help="a branch name or commit id (default: HEAD's commit)")
    parser.add_argument("--model", required=True, help="the name to store the vectors under")
    parser.add_argument("--file", metavar="FILE", help="read the JSON payload from FILE instead of stdin")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print how many nodes got vectors (JSON: ``{"embedded": N}``)."""
    payload = parse_json(read_payload(args.file, ctx), "the embed payload", check=False)
    if not isinstance(payload, dict) or not all(isinstance(fields, dict) for fields in payload.values()):
        raise UsageError("the embed payload must be an object of node id -> {field: base64 vector}")
    if not args.model:
        raise UsageError("--model must not be empty")
    vectors = {
        node_id: [(field, decode_vector(text, f"{node_id}.{field}")) for field, text in fields.items()]
        for node_id, fields in payload.items()
    }
    count = porcelain.embed(ctx.repo(), args.model, vectors, args.rev)
    return Outcome({"embedded": count}, f"embedded {count} node{'s' if count != 1 else ''}\n")
