"""``mnem write`` (extension): a batch of puts and deletions as exactly one commit.

The batch is applied to the branch tip inside one write transaction, so
concurrent writers never lose each other's work, and staging is left alone.
This is what the bridge's ``remember`` / ``remember_many`` / ``forget`` use.

Two keys of a put attach what is kept beside history, in the same
transaction: ``ttl`` (ms) gives the node a lease on the branch that runs
out that long after the commit (``mnem_store.expiry``; a put without one
ends any lease), and ``vectors`` stores embeddings of the node's value for
``mnem similar``: ``{"model": NAME, "fields": {PATH: base64 of
little-endian float32}}``.  ``"if_absent": true`` (feature
``write-if-absent``) makes a put apply only when the branch tip has no node
of that id, decided inside the write transaction: a LangGraph saver keeps
a retried task's stored writes without reading them first.

An id under ``CHECKPOINT_PREFIX`` (a LangGraph checkpoint's node,
whose value the saver deserializes) is refused unless ``--allow-reserved``
(feature ``write-reserved``) says the writer means it: every adapter writes
through this command, so none can plant a checkpoint by mistake or on an
agent's say-so.

Every put is held to ``limits`` (its id's length, its value's size), and
the payload to the size and number of puts and deletes one write may hold,
its size checked before it is parsed; the saver's ``--allow-reserved``
writes are held only where they put ordinary ids (``limits`` says why).
"""

from __future__ import annotations

import argparse
import base64
import binascii
from dataclasses import dataclass
from dataclasses import field as default
from typing import Any

from mnem_ids.checkpoints import CHECKPOINT_PREFIX

from ... import porcelain
from ...canonical import check_content, parse_json
from ...errors import UsageError
from ...limits import Limits, in_message
from ...objects import CONTENT_KINDS, PROVENANCE_KEYS, MemoryNode, Provenance
from ...repo import default_author
from ..context import Context, Outcome, check_node_id, check_text, commit_time, read_payload
from ..render import first_line, rust_debug, short

_PUT_KEYS = {"id", "content", "content_kind", "event_time", "ttl", "vectors", "if_absent", *PROVENANCE_KEYS}
#: The longest lease: a hundred years, so expiry times stay far inside a 64-bit integer.
_MAX_TTL_MS = 100 * 366 * 24 * 3600 * 1000


@dataclass
class Payload:
    """A parsed write payload: nodes to put, ids to delete, and what the puts attach beside history."""

    puts: list[MemoryNode] = default(default_factory=list)
    deletes: list[str] = default(default_factory=list)
    ttls: dict[str, int] = default(default_factory=dict)
    vectors: list[tuple[str, MemoryNode, str, bytes]] = default(default_factory=list)
    #: Ids whose (last) put applies only if the tip has no such node.
    if_absent: set[str] = default(default_factory=set)


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``write``'s arguments: the commit to record, and where the payload comes from."""
    parser.add_argument("-m", "--message", required=True, help="the commit message")
    parser.add_argument("--author", help='who made the commit; falls back to $MNEM_AUTHOR, then "unknown"')
    parser.add_argument("--time", type=commit_time, metavar="MS", help="commit time in Unix ms (default now)")
    parser.add_argument("--skip-missing", action="store_true", help="ignore deletions of ids not in memory")
    parser.add_argument("--file", metavar="FILE", help="read the JSON payload from FILE instead of stdin")
    parser.add_argument("--branch", metavar="NAME",
                        help="write on this branch (created, as a root, if absent) instead of HEAD's; HEAD stays")
    parser.add_argument("--orphan", action="store_true",
                        help="make the commit a root (no parent) holding the same state: the branch lets go of its "
                        "history, which `mnem gc` drops once nothing else reaches it")
    parser.add_argument("--allow-reserved", action="store_true",
                        help=f"allow ids starting {CHECKPOINT_PREFIX!r} (LangGraph checkpoints' nodes)")
    parser.add_argument("--erase-deleted", metavar="REASON",
                        help="in the same transaction, redact every version in history of each id the payload "
                        "deletes (as `mnem redact --node`), recorded as removed by --author for REASON")
    parser.add_argument("--erase-prefix", metavar="P",
                        help="with --erase-deleted: also redact every version of every node whose id starts with P")
    parser.add_argument("--plain-vacuum", action="store_true",
                        help="with --erase-deleted, on PostgreSQL: a plain VACUUM after the commit instead of "
                        "rewriting the tables (VACUUM FULL): their old row versions keep the bytes until later rows "
                        "overwrite them (to keep a store small, not for an erasure request); SQLite: no effect")


def parse_put(item: Any, index: int, into: Payload, limits: Limits, *, allow_reserved: bool = False) -> None:
    """Add one ``put`` entry of the payload to ``into``; ``index`` names the entry in error messages.

    Every key is checked here, so a bad batch is refused, naming the entry
    at fault, before anything is written.  The id and the value are held to
    ``limits``, unless ``allow_reserved`` and the id is reserved (a
    checkpoint's node), and the value's size is measured before its content
    is walked.
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
    held = not (allow_reserved and item["id"].startswith(CHECKPOINT_PREFIX))
    if held:
        limits.check_id(item["id"], f"{where}.id")
    kind = item.get("content_kind", "note")
    if kind not in CONTENT_KINDS:
        raise UsageError(f'{where}.content_kind must be "note" or "claim", got {kind!r}')
    event_time = item.get("event_time")
    if event_time is not None and (type(event_time) is not int or not -(2**63) <= event_time < 2**63):
        raise UsageError(f"{where}.event_time must be an integer (Unix ms)")
    prov: dict[str, str] = {}
    for key, field in PROVENANCE_KEYS.items():
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            raise UsageError(f"{where}.{key} must be a string or null")
        if value is not None:
            prov[field] = value
    if held:
        limits.check_value(item["content"], prov.values(), f"{where} (node {rust_debug(in_message(item['id']))})")
    content = check_content(item["content"], f"{where}.content")
    node = MemoryNode(item["id"], content, kind, Provenance(**prov), event_time)
    into.puts.append(node)
    ttl = item.get("ttl")
    if ttl is not None:
        if type(ttl) is not int or not 0 < ttl <= _MAX_TTL_MS:
            raise UsageError(f"{where}.ttl must be a positive integer of milliseconds (at most a hundred years)")
        into.ttls[node.id] = ttl
    else:
        into.ttls.pop(node.id, None)  # the last put of an id decides its lease
    if item.get("vectors") is not None:
        into.vectors += _vectors(item["vectors"], node, f"{where}.vectors")
    if_absent = item.get("if_absent")
    if if_absent is not None and type(if_absent) is not bool:
        raise UsageError(f"{where}.if_absent must be true, false or null")
    if if_absent:
        into.if_absent.add(node.id)
    else:
        into.if_absent.discard(node.id)  # the last put of an id decides, as for its lease


def _vectors(spec: Any, node: MemoryNode, where: str) -> list[tuple[str, MemoryNode, str, bytes]]:
    """A put's ``vectors`` entry as ``(model, node, field, float32 bytes)`` rows."""
    if not isinstance(spec, dict) or set(spec) != {"model", "fields"}:
        raise UsageError(f'{where} must be an object with "model" and "fields"')
    model, fields = spec["model"], spec["fields"]
    if not isinstance(model, str) or not model or not isinstance(fields, dict):
        raise UsageError(f"{where}.model must be a non-empty string and {where}.fields an object")
    return [(model, node, path, decode_vector(text, f"{where}.fields[{path!r}]")) for path, text in fields.items()]


def decode_vector(text: Any, where: str) -> bytes:
    """A vector as the payloads carry it, base64 of little-endian float32 values, checked."""
    try:
        vector = base64.b64decode(text, validate=True) if isinstance(text, str) else b""
    except (binascii.Error, ValueError):
        vector = b""
    if not vector or len(vector) % 4:
        raise UsageError(f"{where} must be base64 of little-endian float32 values")
    return vector


def parse_payload(raw: bytes, limits: Limits, *, allow_reserved: bool = False) -> Payload:
    """The payload ``{"put": [...], "delete": [...]}``: the nodes to write, the ids to delete, leases and vectors.

    Held to ``limits`` as ``parse_put`` says; ``allow_reserved`` (the saver's
    writes) lifts the bound on how many puts and deletes it holds.
    """
    payload = parse_json(raw, "the write payload", check=False)  # each put's content is checked by parse_put
    if not isinstance(payload, dict) or set(payload) - {"put", "delete"}:
        raise UsageError('the write payload must be an object with "put" and/or "delete"')
    puts, deletes = payload.get("put", []), payload.get("delete", [])
    if not isinstance(puts, list) or not isinstance(deletes, list):
        raise UsageError('"put" and "delete" must be arrays')
    if not all(isinstance(d, str) for d in deletes):
        raise UsageError('"delete" must be an array of node ids')
    if not allow_reserved:
        limits.check_nodes(len(puts) + len(deletes))
    parsed = Payload(deletes=deletes)
    for i, item in enumerate(puts):
        parse_put(item, i, parsed, limits, allow_reserved=allow_reserved)
    return parsed


def refuse_reserved(payload: Payload) -> None:
    """Refuse a payload that puts or deletes a reserved id, naming the entry and both ways out."""
    named = [(f"put[{i}].id", node.id) for i, node in enumerate(payload.puts)]
    named += [(f"delete[{i}]", node_id) for i, node_id in enumerate(payload.deletes)]
    for where, node_id in named:
        if node_id.startswith(CHECKPOINT_PREFIX):
            raise UsageError(f"{where} {rust_debug(in_message(node_id))} is reserved: ids starting "
                             f"{CHECKPOINT_PREFIX!r} hold LangGraph checkpoints, which only MnemosyneSaver "
                             "writes; choose another id, or pass --allow-reserved to write a checkpoint's node on "
                             "purpose")


def erasing(args: argparse.Namespace, author: str) -> porcelain.Erasing | None:
    """What ``--erase-deleted`` asks the write to redact beside it (``None`` without it), checked.

    A prefix that reaches reserved ids (a LangGraph checkpoint's nodes) needs
    ``--allow-reserved``, as deleting them does.
    """
    if args.erase_deleted is None:
        if args.erase_prefix is not None or args.plain_vacuum:
            raise UsageError("--erase-prefix and --plain-vacuum go with --erase-deleted REASON, which says why the "
                             "write removes bytes from history")
        return None
    reason = check_text(args.erase_deleted, "--erase-deleted")
    porcelain.check_reason(reason, "--erase-deleted")
    prefix = None if args.erase_prefix is None else check_text(args.erase_prefix, "--erase-prefix")
    if prefix and not args.allow_reserved and (  # "" names every node: ``redaction.erase`` refuses it
            prefix.startswith(CHECKPOINT_PREFIX) or CHECKPOINT_PREFIX.startswith(prefix)):
        raise UsageError(f"--erase-prefix {rust_debug(in_message(prefix))} reaches ids starting "
                         f"{CHECKPOINT_PREFIX!r}, which hold LangGraph checkpoints: choose a longer prefix, or pass "
                         "--allow-reserved to erase checkpoints' nodes on purpose")
    return porcelain.Erasing(reason, author, prefix, rewrite=not args.plain_vacuum)


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Apply the payload as one commit on the branch tip; a payload that changes nothing commits nothing.

    With ``--erase-deleted`` the same transaction redacts what the payload
    deletes (and what lies under ``--erase-prefix``), even when it commits
    nothing; the document then has an ``erased`` key (docs/cli-json.md).
    """
    limits = Limits.current()
    raw = read_payload(args.file, ctx, 'mnem write: reading the JSON payload ({"put": [...], "delete": [...]})',
                       limits=None if args.allow_reserved else limits)
    payload = parse_payload(raw, limits, allow_reserved=args.allow_reserved)
    if not args.allow_reserved:
        refuse_reserved(payload)
    message = check_text(args.message, "--message")
    author = check_text(default_author(args.author), "--author")
    erase = erasing(args, author)
    written = porcelain.write(
        ctx.repo(), payload.puts, payload.deletes, message, author, args.time, skip_missing=args.skip_missing,
        ttls=payload.ttls, vectors=payload.vectors, branch=args.branch, if_absent=payload.if_absent, erase=erase,
        orphan=args.orphan,
    )
    data: dict[str, Any] = {"commit": None, "changes": {}}
    text = "nothing to write\n"
    if written.commit is not None:
        commit_raw, commit = written.commit
        data = {"commit": commit.to_dict(commit_raw), "changes": {c.id: c.kind for c in written.changes}}
        text = f"{ctx.paint('71', f'[{short(commit_raw)}]')} {first_line(message)}\n"
    if erase is not None:
        data["erased"] = {"redacted": len(erase.records), "complete": erase.complete,
                          "residue": erase.residue or None}
        text += f"redacted {len(erase.records)} version(s) from history\n"
        if erase.residue:
            text += f"{'note' if args.plain_vacuum else 'warning'}: {erase.residue}\n"
    return Outcome(data, text)
