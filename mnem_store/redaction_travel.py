"""Redaction records as they travel between stores: their wire forms, their bounds, and the checks before one is kept.

A redaction (``redaction``) removes a node version's bytes and keeps a
record; so that a clone, a fetch or an export made afterwards cannot bring
the bytes back, the record goes wherever history goes.  A pack carries the
sender's records (``transfer``), an advertisement names the objects its
store has records for (``peers.Advert``), and an export lists them beside
its objects (``portable``), as ``mnem redactions --json`` does.  A record arriving from another party is
hostile like every other byte of a transfer, so this module bounds a
transfer's records in number and each one's fields in size, and checks each
against the receiver before anything is written: a record may name only a
node version (never a commit or a state, whose bytes every id needs), and
for a version the receiver holds, the node id its bytes carry.  The receiver
then applies them with ``redaction.apply``, in the transaction that takes
the rest, so a refusal writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

from .backend import KIND_CODES
from .canonical import hex_id, parse_hex_id
from .cborstream import MalformedError, Reader
from .errors import CommandError, CorruptStoreError, UsageError, printable
from .objects import MemoryNode, Redaction, decode_object
from .redaction import apply

if TYPE_CHECKING:
    from .repo import Repo

__all__ = [
    "MAX_AUTHOR_BYTES", "MAX_NODE_ID_BYTES", "MAX_REASON_BYTES", "MAX_REDACTIONS", "REDACT_SCOPE", "from_json",
    "read_entries", "read_entry", "take", "to_entry",
]

#: The most records one pack, list advertisement or export carries.  A receiver holds the records of a pack in
#: memory while it checks them (about 300 bytes each), and a list advertisement (the exchange older peers speak)
#: names each object (67 bytes of JSON): 100,000 records are 6.7 MB there, within the 16 MiB a remote's JSON
#: answer may be.  Between two peers that exchange ranges (``redaction_exchange``), records travel in pages, each
#: a pack within this bound, so a transfer may carry any number.
MAX_REDACTIONS: Final = 100_000
#: The longest node id a record may name, in UTF-8 bytes: any id a store holds, written elsewhere or before
#: ``MNEM_MAX_ID_BYTES`` bounded new ones, far past the 1024 a new write may use.
MAX_NODE_ID_BYTES: Final = 64 << 10
#: The longest author and reason a record may carry, in UTF-8 bytes.
MAX_AUTHOR_BYTES: Final = 4 << 10
MAX_REASON_BYTES: Final = 64 << 10
#: The token scope an HTTP push that brings records needs besides ``mnem:write`` (mnem-mcp checks it;
#: docs/mcp-http.md): redacting bytes on a server is a right of its own.
REDACT_SCOPE: Final = "mnem:redact"

_NODE: Final = KIND_CODES["memory_node"]


def to_entry(record: Redaction) -> list[Any]:
    """A record as a pack carries it: ``[object id, node id, at (Unix ms), author, reason]``."""
    return [record.object, record.node_id, record.at, record.author, record.reason]


def _text(value: str, limit: int, what: str) -> str:
    if len(value.encode()) > limit:
        raise MalformedError(f"a redaction record's {what} is longer than {limit} bytes")
    return value


def read_entry(reader: Reader) -> Redaction:
    """One record, read value by value (``to_entry``'s form), its fields within the bounds above.

    Raises:
        MalformedError: It is not a record, or a field is past its bound.
    """
    if reader.array() != 5:
        raise MalformedError("a redaction record is not [object, node id, at, author, reason]")
    raw = reader.bytes_()
    if len(raw) != 32:
        raise MalformedError("a redaction record names an object id that is not 32 bytes")
    node_id = _text(reader.text(), MAX_NODE_ID_BYTES, "node id")
    at = reader.uint()
    author = _text(reader.text(), MAX_AUTHOR_BYTES, "author")
    return Redaction(raw, node_id, at, author, _text(reader.text(), MAX_REASON_BYTES, "reason"))


def read_entries(reader: Reader, most: int = MAX_REDACTIONS) -> list[Redaction]:
    """A pack's records (``read_entry`` each), at most ``most`` of them (a page asked for fewer says how many).

    Raises:
        MalformedError: They are not records, there are more than ``most``, or a field is past its bound.
    """
    count = reader.array()
    if count > most:
        raise MalformedError(f"it carries {count} redaction records, more than the {most} "
                             + ("one transfer takes" if most == MAX_REDACTIONS else "that were asked for"))
    return [read_entry(reader) for _ in range(count)]


def from_json(doc: Any) -> Redaction:
    """A record an export lists, as ``mnem redactions --json`` does (``Redaction.to_dict``), within the bounds above.

    Raises:
        CorruptStoreError: It is not one.
    """
    try:
        if not isinstance(doc, dict) or set(doc) != {"object", "id", "at", "by", "reason"}:
            raise MalformedError('it is not {"object", "id", "at", "by", "reason"}')
        at, texts = doc["at"], (doc["id"], doc["by"], doc["reason"])
        if not isinstance(at, int) or isinstance(at, bool) or at < 0 or not all(isinstance(t, str) for t in texts):
            raise MalformedError('its "at" is not a time in Unix ms, or a text field is not a text')
        try:
            raw = parse_hex_id(doc["object"]) if isinstance(doc["object"], str) else None
        except UsageError:
            raw = None
        if raw is None:
            raise MalformedError('its "object" is not a 64-hex object id')
        return Redaction(raw, _text(texts[0], MAX_NODE_ID_BYTES, "node id"), at,
                         _text(texts[1], MAX_AUTHOR_BYTES, "author"), _text(texts[2], MAX_REASON_BYTES, "reason"))
    except MalformedError as exc:
        raise CorruptStoreError(f"the export's redactions hold a record that is not one ({exc}); the export is "
                                "corrupt or was hand-edited") from None


def take(dst: Repo, records: Iterable[Redaction], sender: str, *, new_allowed: bool = True) -> list[Redaction]:
    """Check records another party sent against ``dst``, then apply them (inside ``dst``'s write).

    Each record must name a node version: an object ``dst`` holds as a
    commit or a state is refused (its bytes are what every id rests on),
    and for a version ``dst`` holds with its bytes, the node id they carry
    must be the record's.  An object ``dst`` lacks is recorded as it is,
    so its bytes are refused whenever they arrive.  Returns the records new
    to ``dst``.

    Args:
        dst: The receiving store.
        records: What the other party sent.
        sender: Who sent them, for a refusal's message ("the pack from the sending store").
        new_allowed: False when the sender may not redact here (a push without the right): any record
            ``dst`` does not already keep is refused, and nothing is written.

    Raises:
        CorruptStoreError: A record names a commit or a state, or another node id than the version's.
        CommandError: ``usage``: a record is new and ``new_allowed`` is False.
    """
    wanted = {record.object: record for record in records}
    if not wanted:
        return []
    kept = dst.backend.redactions.of(wanted)
    new = [record for raw, record in wanted.items() if raw not in kept]
    if new and not new_allowed:
        raise CommandError(f"{sender} carries {len(new)} redaction record(s) this store lacks, and this push may "
                           f"not redact here; nothing was written; push with a token that has the scope "
                           f"{REDACT_SCOPE}", "usage")
    for record in new:
        row = dst.objects.row(record.object)
        if row is None:
            continue
        shown = hex_id(record.object)
        if row[1] != _NODE:
            raise CorruptStoreError(f"{sender} carries a redaction record for {shown}, a commit or a state, whose "
                                    "bytes no store may remove; nothing was written")
        node = None if row[2] is None else decode_object(row[2])
        if node is not None and (not isinstance(node, MemoryNode) or node.id != record.node_id):
            raise CorruptStoreError(f"{sender} carries a redaction record naming node {printable(record.node_id)!r} "
                                    f"for object {shown}, which is another node's version; nothing was written")
    return apply(dst, new)
