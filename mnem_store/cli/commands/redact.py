"""``mnem redact`` (extension): remove the bytes of chosen node versions from the whole history.

Ids, states and commits stay as they are (every commit id is unchanged and
``verify`` passes); each version removed keeps a record of who removed it,
when and why, and reads answer that record in place of the value.  What to
remove is named by node ids (every version each ever had), a node-id
prefix, object ids, or a provenance match; ``--dry-run`` lists what would
go.  docs/cli-json.md has the JSON.
"""

from __future__ import annotations

import argparse
from typing import Any

from ... import porcelain
from ...redaction import Selection, Version
from ...repo import default_author
from ..context import Context, Outcome, check_node_id, check_text, full_id
from ..render import short


def _object_id(text: str) -> bytes:
    """``--object``'s full object id as bytes, or a usage error."""
    return full_id(text, "--object takes a node version's full object id (64 hex digits, as `mnem ls --objects` "
                         "shows them)")


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``redact``'s arguments: what to remove, why, and who removes it."""
    parser.add_argument("--node", metavar="ID", action="append", default=[],
                        help="every version this node id ever had (repeatable)")
    parser.add_argument("--prefix", metavar="P", help="every version of every node whose id starts with P")
    parser.add_argument("--object", metavar="HEX", action="append", default=[], type=_object_id,
                        help="one node version, by its object id (repeatable)")
    parser.add_argument("--source", help="only versions whose provenance source is this")
    parser.add_argument("--step", help="only versions whose provenance agent_step is this")
    parser.add_argument("--observation", help="only versions whose provenance observation is this")
    parser.add_argument("--author", help="only versions a commit of this author wrote (who redacts is --by)")
    parser.add_argument("--reason", required=True, help="why (kept with the record and shown on every read)")
    parser.add_argument("--by", help='who redacts; falls back to $MNEM_AUTHOR, then "unknown"')
    parser.add_argument("--dry-run", action="store_true", help="list what would be removed; change nothing")


def _version(version: Version) -> dict[str, Any]:
    return {"object": version.object.hex(), "id": version.node_id, "commits": [raw.hex() for raw in version.commits],
            "redacted": version.redacted.marker() if version.redacted is not None else None}


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print each version chosen and what became of it (JSON: docs/cli-json.md, ``redact``)."""
    selection = Selection(
        nodes=tuple(check_node_id(node_id, "--node") for node_id in args.node),
        objects=tuple(args.object),
        prefix=None if args.prefix is None else check_text(args.prefix, "--prefix"),
        source=None if args.source is None else check_text(args.source, "--source"),
        step=None if args.step is None else check_text(args.step, "--step"),
        observation=None if args.observation is None else check_text(args.observation, "--observation"),
        author=None if args.author is None else check_text(args.author, "--author"),
    )
    done = porcelain.redact(ctx.repo(), selection, reason=check_text(args.reason, "--reason"),
                            author=check_text(default_author(args.by), "--by"), dry_run=args.dry_run)
    data = {"dry_run": done.dry_run, "versions": [_version(version) for version in done.versions],
            "records": [record.to_dict() for record in done.records], "complete": done.complete,
            "residue": done.residue or None}

    def text() -> str:
        lines = []
        for version in done.versions:
            if version.redacted is not None:
                state = f"already {version.redacted.shown()}"
            else:
                state = "would be redacted" if done.dry_run else "redacted"
            lines.append(f"{ctx.paint('75', short(version.object))} {version.node_id}: {state}\n")
        if done.residue:
            lines.append(f"warning: {done.residue}\n")
        return "".join(lines)

    return Outcome(data, text)
