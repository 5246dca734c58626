"""``mnem write`` (extension): a batch of puts and deletions as exactly one commit.

The batch is applied to the branch tip inside one write transaction, so
concurrent writers never lose each other's work, and staging is left alone.
This is what the bridge's ``remember`` / ``remember_many`` / ``forget`` use.
"""

from __future__ import annotations

import argparse
from typing import Any

from ... import porcelain
from ...canonical import check_content, parse_json
from ...errors import CommandError, UsageError
from ...objects import CONTENT_KINDS, MemoryNode, Provenance
from ...repo import default_author
from ..context import Context, Outcome, check_node_id, check_text, commit_time
from ..render import first_line, short

_PROVENANCE_KEYS = {"step": "agent_step", "source": "source", "observation": "observation",
                    "tool_call": "tool_call", "note": "note"}
_PUT_KEYS = {"id", "content", "content_kind", "event_time", *_PROVENANCE_KEYS}


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``write``'s arguments: the commit to record, and where the payload comes from."""
    parser.add_argument("-m", "--message", required=True, help="the commit message")
    parser.add_argument("--author", help='who made the commit; falls back to $MNEM_AUTHOR, then "unknown"')
    parser.add_argument("--time", type=commit_time, metavar="MS", help="commit time in Unix ms (default now)")
    parser.add_argument("--skip-missing", action="store_true", help="ignore deletions of ids not in memory")
    parser.add_argument("--file", metavar="FILE", help="read the JSON payload from FILE instead of stdin")


def parse_put(item: Any, index: int) -> MemoryNode:
    """One ``put`` entry of the payload as a node; ``index`` names the entry in error messages.

    Every key is checked here, so a bad batch is refused, naming the entry
    at fault, before anything is written.
    """
    where = f"put[{index}]"
    if not isinstance(item, dict) or "id" not in item or "content" not in item:
        raise UsageError(f"{where} must be an object with at least id and content")
    unknown = set(item) - _PUT_KEYS
    if unknown:
        raise UsageError(f"{where} has unknown keys: {', '.join(sorted(unknown))}")
    if not isinstance(item["id"], str):
        raise UsageError(f"{where}.id must be a string")
    check_node_id(item["id"], f"{where}.id")
    kind = item.get("content_kind", "note")
    if kind not in CONTENT_KINDS:
        raise UsageError(f'{where}.content_kind must be "note" or "claim", got {kind!r}')
    event_time = item.get("event_time")
    if event_time is not None and (type(event_time) is not int or not -(2**63) <= event_time < 2**63):
        raise UsageError(f"{where}.event_time must be an integer (Unix ms)")
    prov: dict[str, str] = {}
    for key, field in _PROVENANCE_KEYS.items():
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            raise UsageError(f"{where}.{key} must be a string or null")
        if value is not None:
            prov[field] = value
    content = check_content(item["content"], f"{where}.content")
    return MemoryNode(item["id"], content, kind, Provenance(**prov), event_time)


def parse_payload(raw: bytes) -> tuple[list[MemoryNode], list[str]]:
    """The payload ``{"put": [...], "delete": [...]}`` as the nodes to write and the ids to delete."""
    payload = parse_json(raw, "the write payload", check=False)  # each put's content is checked by parse_put
    if not isinstance(payload, dict) or set(payload) - {"put", "delete"}:
        raise UsageError('the write payload must be an object with "put" and/or "delete"')
    puts, deletes = payload.get("put", []), payload.get("delete", [])
    if not isinstance(puts, list) or not isinstance(deletes, list):
        raise UsageError('"put" and "delete" must be arrays')
    if not all(isinstance(d, str) for d in deletes):
        raise UsageError('"delete" must be an array of node ids')
    return [parse_put(item, i) for i, item in enumerate(puts)], deletes


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Apply the payload as one commit on the branch tip; a payload that changes nothing commits nothing."""
    try:
        if args.file is not None and args.file != "-":
            with open(args.file, "rb") as handle:
                raw = handle.read()
        else:
            raw = ctx.stdin.read()
    except OSError as exc:
        raise CommandError(f"reading {args.file}", "store_io", cause=exc.strerror or str(exc)) from None
    puts, deletes = parse_payload(raw)
    message = check_text(args.message, "--message")
    author = check_text(default_author(args.author), "--author")
    written = porcelain.write(ctx.repo(), puts, deletes, message, author, args.time, skip_missing=args.skip_missing)
    if written.commit is None:
        return Outcome({"commit": None, "changes": {}}, "nothing to write\n")
    commit_raw, commit = written.commit
    data = {"commit": commit.to_dict(commit_raw), "changes": {c.id: c.kind for c in written.changes}}
    return Outcome(data, f"{ctx.paint('71', f'[{short(commit_raw)}]')} {first_line(message)}\n")
