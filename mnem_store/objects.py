"""The three object kinds, their canonical encoding and their JSON shapes.

An object's id is the BLAKE3 hash of its canonical CBOR (see ``canonical``).
Each kind knows three forms: the CBOR map that is hashed, the *portable* form
of upstream's export file, and the SDK ``to_dict()`` form of the ``--json``
contract.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .canonical import (
    check_content,
    decode,
    encode,
    hex_id,
    object_id,
    parse_hex_id,
    sort_keys,
)
from .errors import CorruptStoreError, UsageError

__all__ = [
    "PROVENANCE_KEYS", "Commit", "MemoryNode", "Provenance", "Redaction", "State", "StoredObject", "check_arrived",
    "decode_object",
]

CONTENT_KINDS = ("note", "claim")
#: The name each provenance field is given by (``mnem add``'s flags, ``mnem write``'s keys, the labels of
#: upstream's text), in ADR-0016's order: all are the fields' own but ``step``, upstream's flag for ``agent_step``.
PROVENANCE_KEYS = {"source": "source", "step": "agent_step", "observation": "observation", "tool_call": "tool_call",
                   "note": "note"}
_KEY_OF = {field: key for key, field in PROVENANCE_KEYS.items()}


class Provenance(NamedTuple):
    """Where a belief came from, in upstream's field order (the export's); every field optional, empty is legal."""

    agent_step: str | None = None
    observation: str | None = None
    tool_call: str | None = None
    source: str | None = None
    note: str | None = None

    def present(self) -> dict[str, str]:
        """The set fields, in declaration order (what is hashed and exported)."""
        return {name: value for name, value in self._asdict().items() if value is not None}

    def labelled(self) -> dict[str, str]:
        """The set fields under the names they are given by (``PROVENANCE_KEYS``): upstream's text labels."""
        return {_KEY_OF[name]: value for name, value in self.present().items()}

    def to_dict(self) -> dict[str, str | None]:
        """SDK shape: all five keys, unset ones as null."""
        return self._asdict()

    @classmethod
    def from_map(cls, data: Any) -> Provenance:
        """Rebuild from a decoded CBOR or JSON map, rejecting non-string fields."""
        if not isinstance(data, dict):
            raise CorruptStoreError("bad object: provenance is not a map")
        values: dict[str, str] = {}
        for name in cls._fields:
            value = data.get(name)
            if value is not None and not isinstance(value, str):
                raise CorruptStoreError(f"bad object: provenance {name} is not text")
            if value is not None:
                values[name] = value
        return cls(**values)


class Redaction(NamedTuple):
    """The record of one node version whose bytes were removed (``mnem redact``): which, who, when (Unix ms), why.

    Kept beside history, never in an object: the node object's id stays in
    every state that names it, so ids, states and commits are unchanged.
    """

    object: bytes
    node_id: str
    at: int
    author: str
    reason: str

    def marker(self) -> dict[str, Any]:
        """What a read shows in place of the value: ``{"at", "by", "reason"}``."""
        return {"at": self.at, "by": self.author, "reason": self.reason}

    def to_dict(self) -> dict[str, Any]:
        """The record as ``mnem redactions`` lists it: ``{"object", "id", "at", "by", "reason"}``."""
        return {"object": hex_id(self.object), "id": self.node_id, **self.marker()}

    def shown(self) -> str:
        """The marker as text reads say it: "redacted at T by A: reason" (T in UTC, as ``log`` dates commits)."""
        from .times import iso

        return f"redacted at {iso(self.at)} by {self.author}: {self.reason}"


class MemoryNode(NamedTuple):
    """One versioned belief: a caller-chosen id, JSON content and provenance.

    A *redacted* version (``redacted`` set) is what a read of a node
    object whose bytes were removed answers: its id from the record,
    ``content`` None and nothing else of the old value.  It is never
    encoded: its bytes are gone, so it has no id to compute.
    """

    id: str
    content: Any
    content_kind: str = "note"
    provenance: Provenance = Provenance()
    event_time: int | None = None
    redacted: Redaction | None = None

    @property
    def kind(self) -> str:
        """The object kind, as hashed and stored."""
        return "memory_node"

    def to_cbor_map(self) -> dict[str, Any]:
        """The map that is hashed: provenance only if a field is set, ``event_time`` only if set."""
        data: dict[str, Any] = {
            "kind": self.kind,
            "id": self.id,
            "content": self.content,
            "content_kind": self.content_kind,
        }
        prov = self.provenance.present()
        if prov:
            data["provenance"] = prov
        if self.event_time is not None:
            data["event_time"] = self.event_time
        return data

    def to_portable(self) -> dict[str, Any]:
        """The export form: the hashed map with the content's keys sorted."""
        data = self.to_cbor_map()
        data["content"] = sort_keys(self.content)
        return data

    def to_dict(self) -> dict[str, Any]:
        """SDK shape: every field, with content keys sorted and unset values as null.

        A redacted version adds ``redacted`` (``Redaction.marker``); no other key changes.
        """
        data = {
            "id": self.id,
            "content": sort_keys(self.content),
            "content_kind": self.content_kind,
            "provenance": self.provenance.to_dict(),
            "event_time": self.event_time,
        }
        if self.redacted is not None:
            data["redacted"] = self.redacted.marker()
        return data

    @classmethod
    def from_map(cls, data: dict[str, Any]) -> MemoryNode:
        """Rebuild from a decoded CBOR or JSON map, rejecting a malformed node as a corrupt store."""
        node_id = data.get("id")
        kind = data.get("content_kind")
        event_time = data.get("event_time")
        if not isinstance(node_id, str) or "content" not in data:
            raise CorruptStoreError("bad object: memory node needs a text id and content")
        if kind not in CONTENT_KINDS:
            raise CorruptStoreError(f"bad object: unknown content_kind {kind!r}")
        if event_time is not None and (not isinstance(event_time, int) or isinstance(event_time, bool)):
            raise CorruptStoreError("bad object: event_time is not an integer")
        prov = Provenance.from_map(data["provenance"]) if "provenance" in data else Provenance()
        return cls(node_id, data["content"], kind, prov, event_time)


class State(NamedTuple):
    """A snapshot: node id -> raw 32-byte id of that node's object."""

    nodes: dict[str, bytes]

    @property
    def kind(self) -> str:
        """The object kind, as hashed and stored."""
        return "state"

    def to_cbor_map(self) -> dict[str, Any]:
        """The map that is hashed: node id -> raw object id."""
        return {"kind": self.kind, "nodes": self.nodes}

    def to_portable(self) -> dict[str, Any]:
        """The export form: node ids in order, object ids as hex."""
        return {"kind": self.kind, "nodes": {key: hex_id(self.nodes[key]) for key in sorted(self.nodes)}}

    @classmethod
    def from_map(cls, data: dict[str, Any]) -> State:
        """Rebuild from a decoded CBOR map, requiring text node ids and 32-byte object ids."""
        nodes = data.get("nodes")
        if not isinstance(nodes, dict):
            raise CorruptStoreError("bad object: state nodes is not a map")
        for key, raw in nodes.items():
            if not isinstance(key, str) or not isinstance(raw, bytes) or len(raw) != 32:
                raise CorruptStoreError("bad object: state entry is not text -> 32-byte id")
        return cls(nodes)

    @classmethod
    def from_portable(cls, data: dict[str, Any]) -> State:
        """Rebuild from the export form, turning hex object ids back into raw ones."""
        nodes = data.get("nodes")
        if not isinstance(nodes, dict):
            raise CorruptStoreError("bad object: state nodes is not a map")
        return cls({key: parse_hex_id(value) if isinstance(value, str) else value for key, value in nodes.items()})


class Commit(NamedTuple):
    """A point in history: parents, a state, and who recorded it when."""

    parents: tuple[bytes, ...]
    state: bytes
    message: str
    author: str
    time: int

    @property
    def kind(self) -> str:
        """The object kind, as hashed and stored."""
        return "commit"

    def to_cbor_map(self) -> dict[str, Any]:
        """The map that is hashed, ids raw."""
        return {
            "kind": self.kind,
            "parents": list(self.parents),
            "state": self.state,
            "message": self.message,
            "author": self.author,
            "time": self.time,
        }

    def to_portable(self) -> dict[str, Any]:
        """The export form: the same fields, ids as hex."""
        return {"kind": self.kind, "parents": [hex_id(p) for p in self.parents], "state": hex_id(self.state),
                "message": self.message, "author": self.author, "time": self.time}

    def to_dict(self, commit_id: bytes) -> dict[str, Any]:
        """SDK ``Commit.to_dict()``: the export form's fields after the id (not part of the object, so passed in)."""
        data = {"id": hex_id(commit_id), **self.to_portable()}
        del data["kind"]
        return data

    @classmethod
    def from_map(cls, data: dict[str, Any]) -> Commit:
        """Rebuild from a decoded CBOR map, rejecting a malformed commit as a corrupt store."""
        parents = data.get("parents")
        state = data.get("state")
        message, author, time = data.get("message"), data.get("author"), data.get("time")
        if not (
            isinstance(parents, list)
            and all(isinstance(p, bytes) and len(p) == 32 for p in parents)
            and isinstance(state, bytes)
            and len(state) == 32
            and isinstance(message, str)
            and isinstance(author, str)
            and isinstance(time, int)
            and not isinstance(time, bool)
        ):
            raise CorruptStoreError("bad object: malformed commit")
        return cls(tuple(parents), state, message, author, time)

    @classmethod
    def from_portable(cls, data: dict[str, Any]) -> Commit:
        """Rebuild from the export form: hex ids are parsed, then checked as ``from_map`` checks them."""
        parents = data.get("parents")
        state = data.get("state")
        if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents) or not isinstance(state, str):
            raise CorruptStoreError("bad object: malformed commit")
        converted = dict(data, parents=[parse_hex_id(p) for p in parents], state=parse_hex_id(state))
        return cls.from_map(converted)


StoredObject = MemoryNode | State | Commit

#: How much of a refused node's reason ``check_arrived`` quotes.
_SAID = 200


def check_arrived(obj: StoredObject) -> None:
    """Refuse an object another party sent whose content is not upstream's JSON data model.

    Canonical CBOR carries more than JSON does: tags (a bignum, a date),
    byte strings, integers past 64 bits.  A node holding one decodes and
    encodes back to its own bytes, so its id checks out, yet no writer of
    ours makes one and upstream cannot read it; a bignum would read back
    through the bridge as a float.  Objects that arrive from elsewhere (a
    pack, and every object ``verify`` reads) are held to what a write
    accepts (``check_content``); reads of the store's own objects are not,
    which keeps them cheap.

    Raises:
        CorruptStoreError: The node's content is not JSON a write would take.
    """
    if isinstance(obj, MemoryNode):
        try:
            check_content(obj.content, "its content")
        except UsageError as exc:  # the text may quote what was sent: bounded, and escaped by repr
            said = str(exc)
            said = said if len(said) <= _SAID else f"{said[:_SAID]}..."
            raise CorruptStoreError(f"bad object: a memory node whose content is not JSON ({said!r})") from None
_KINDS: dict[str, type[StoredObject]] = {"memory_node": MemoryNode, "state": State, "commit": Commit}


def encode_object(obj: StoredObject) -> tuple[bytes, bytes]:
    """Return ``(raw id, canonical bytes)`` for an object."""
    data = encode(obj.to_cbor_map())
    return object_id(data), data


def decode_object(data: bytes) -> StoredObject:
    """Decode stored canonical bytes back into an object, checking its shape."""
    value = decode(data)
    if not isinstance(value, dict):
        raise CorruptStoreError("bad object: not a map")
    kind = value.get("kind")
    cls = _KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise CorruptStoreError(f"bad object: unknown kind {kind!r}")
    return cls.from_map(value)


def from_portable(data: Any) -> StoredObject:
    """Rebuild an object from its export form (ids as hex strings)."""
    if not isinstance(data, dict):
        raise CorruptStoreError("bad object: not a map")
    kind = data.get("kind")
    if kind == "memory_node":
        node = MemoryNode.from_map(data)
        return MemoryNode(node.id, check_content(node.content), node.content_kind, node.provenance, node.event_time)
    if kind == "state":
        return State.from_portable(data)
    if kind == "commit":
        return Commit.from_portable(data)
    raise CorruptStoreError(f"bad object: unknown kind {kind!r}")
