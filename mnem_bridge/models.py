"""Typed results: frozen mirrors of upstream's SDK dataclasses and their JSON shapes.

The binary prints upstream's ``to_dict()`` shapes (docs/cli-json.md), so
``from_dict`` reads a ``--json`` document and ``to_dict`` writes it back
with the same keys in the same order; a round trip is the identity.  That is
what lets the MCP server hand these to a client unchanged.  Sequences are
tuples so a result cannot be mutated after the fact; ``content`` is the
decoded JSON value, exactly as the binary printed it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

__all__ = [
    "PROVENANCE_KEYS",
    "Blame",
    "ChangeKind",
    "ChangedBy",
    "Commit",
    "Conflict",
    "ConflictKind",
    "ContentKind",
    "MemoryNode",
    "MemoryPage",
    "MergeResult",
    "MergeSide",
    "MergeStatus",
    "MergeStrategy",
    "NodeChange",
    "ProposedChange",
    "Provenance",
    "Pusher",
    "RedactedNode",
    "Redaction",
    "SearchHit",
    "TimedNode",
    "WholeMemory",
    "node_or_none",
    "nodes_by_id",
]

logger = logging.getLogger(__name__)

ContentKind = Literal["note", "claim"]
ChangeKind = Literal["added", "removed", "modified"]
ConflictKind = Literal["edit/edit", "delete/edit", "edit/delete", "add/add"]
MergeStatus = Literal["up-to-date", "fast-forwarded", "merged", "conflicts"]
#: How one merge conflict is settled by name (a new value is the other way), and the sides ``--strategy`` takes:
#: ``mnem merge``'s ``--resolve``/``--strategy`` values, named once for the bridge, mnem-mcp and LangGraph.
MergeSide = Literal["ours", "theirs", "base", "delete"]
MergeStrategy = Literal["ours", "theirs"]

#: The name each provenance field is given by (``remember``'s arguments, ``mnem write``'s keys, ``mnem add``'s flags)
#: in ADR-0016's order, all the fields' own but ``step`` (``agent_step``); tests/bridge/test_models.py asks ``mnem``.
PROVENANCE_KEYS = {"source": "source", "step": "agent_step", "observation": "observation", "tool_call": "tool_call",
                   "note": "note"}


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a belief came from; every field is optional (empty provenance is legal)."""

    agent_step: str | None = None
    observation: str | None = None
    tool_call: str | None = None
    source: str | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        """All five keys, unset ones ``None``, in upstream's order (the fields' own)."""
        return {name: getattr(self, name) for name in _PROVENANCE_FIELDS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Provenance:
        """Read the five-key shape.

        Args:
            data: A ``Provenance`` JSON object.

        Returns:
            The provenance.
        """
        return cls(*[data[name] for name in _PROVENANCE_FIELDS])


_PROVENANCE_FIELDS = tuple(each.name for each in fields(Provenance))  # for its methods: fields() is slow


@dataclass(frozen=True, slots=True)
class Redaction:
    """Who removed a node version's bytes from the store, when (Unix ms) and why (``mnem redact``)."""

    at: int
    by: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """``{"at", "by", "reason"}``."""
        return {"at": self.at, "by": self.by, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Redaction:
        """Read the ``redacted`` object of a node.

        Args:
            data: The object as the binary printed it.

        Returns:
            The redaction.
        """
        return cls(data["at"], data["by"], data["reason"])


@dataclass(frozen=True, slots=True)
class MemoryNode:
    """One belief: a stable id, JSON content, its kind, provenance and event time (ms)."""

    id: str
    content: Any
    content_kind: ContentKind = "note"
    provenance: Provenance = field(default_factory=Provenance)
    event_time: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "content", "content_kind", "provenance", "event_time"}``."""
        return {
            "id": self.id,
            "content": self.content,
            "content_kind": self.content_kind,
            "provenance": self.provenance.to_dict(),
            "event_time": self.event_time,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryNode:
        """Read a ``MemoryNode`` JSON object.

        Args:
            data: The object as the binary printed it.

        Returns:
            The node.
        """
        node = (
            data["id"],
            data["content"],
            data["content_kind"],
            Provenance.from_dict(data["provenance"]),
            data["event_time"],
        )
        redacted = data.get("redacted")
        if redacted is not None:
            return RedactedNode(*node, redacted=Redaction.from_dict(redacted))
        return cls(*node)


@dataclass(frozen=True, slots=True)
class RedactedNode(MemoryNode):
    """A node version whose bytes were redacted: its id, no content, and who removed it, when and why.

    A ``MemoryNode`` everywhere one is answered (``content`` is None, the
    rest empty), so code that reads nodes keeps working; ``redacted`` says
    why the value is gone, and ``to_dict`` adds it as ``"redacted"``, the
    binary's key.
    """

    redacted: Redaction = field(kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        """``MemoryNode``'s keys, then ``"redacted": {"at", "by", "reason"}``."""
        return {**MemoryNode.to_dict(self), "redacted": self.redacted.to_dict()}


def node_or_none(data: Mapping[str, Any] | None) -> MemoryNode | None:
    """``MemoryNode.from_dict`` for the shapes' nullable node slots.

    Args:
        data: A ``MemoryNode`` JSON object or ``None``.

    Returns:
        The node, or ``None``.
    """
    return None if data is None else MemoryNode.from_dict(data)


def _node_dict(node: MemoryNode | None) -> dict[str, Any] | None:
    return None if node is None else node.to_dict()


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit: parents (first parent first), the state it records, message, author, time (ms)."""

    id: str
    parents: tuple[str, ...]
    state: str
    message: str
    author: str
    time: int

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "parents", "state", "message", "author", "time"}``."""
        return {
            "id": self.id,
            "parents": list(self.parents),
            "state": self.state,
            "message": self.message,
            "author": self.author,
            "time": self.time,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Commit:
        """Read a ``Commit`` JSON object.

        Args:
            data: The object as the binary printed it.

        Returns:
            The commit.
        """
        return cls(data["id"], tuple(data["parents"]), data["state"], data["message"], data["author"], data["time"])


@dataclass(frozen=True, slots=True)
class Pusher:
    """Who pushed a commit into the store, and when (ms), where that was someone other than its author.

    An extension: a server that takes pushes (``mnem receive-pack``'s
    ``pusher``, a token's subject at ``mnem-mcp``) records who sent each
    commit; ``mnem log --json`` and ``mnem blame --json`` add it to a commit
    as ``pushed_by`` and ``pushed_at`` when it differs from the author.
    Kept beside a ``Commit`` (``Store.log_attributed``), not in it, so
    ``Commit`` and its ``to_dict()`` stay upstream's.
    """

    name: str
    at: int

    def to_dict(self) -> dict[str, Any]:
        """``{"pushed_by", "pushed_at"}``, as the binary adds them to a commit's document."""
        return {"pushed_by": self.name, "pushed_at": self.at}

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Pusher | None:
        """The pusher a commit's (or a blame's) document names, or ``None`` when it names none.

        Args:
            data: The document as the binary printed it.

        Returns:
            The pusher.

        Raises:
            TypeError: ``pushed_by`` is not a string or ``pushed_at`` not an integer (a broken contract).
        """
        if "pushed_by" not in data:
            return None
        name, at = data["pushed_by"], data.get("pushed_at")
        if not isinstance(name, str) or type(at) is not int:
            raise TypeError(f"pushed_by {name!r} / pushed_at {at!r} are not a name and a time")
        return cls(name, at)


@dataclass(frozen=True, slots=True)
class NodeChange:
    """How one node differs between two memories (``old``/``new`` are ``None`` when absent)."""

    id: str
    kind: ChangeKind
    old: MemoryNode | None
    new: MemoryNode | None

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "kind", "old", "new"}``."""
        return {"id": self.id, "kind": self.kind, "old": _node_dict(self.old), "new": _node_dict(self.new)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NodeChange:
        """Read a ``NodeChange`` JSON object.

        Args:
            data: The object as the binary printed it.

        Returns:
            The change.
        """
        return cls(data["id"], data["kind"], node_or_none(data["old"]), node_or_none(data["new"]))


@dataclass(frozen=True, slots=True)
class ChangedBy:
    """The commit that made a change a branch proposes: what a reviewer reads as "who, when and why"."""

    commit: str
    author: str
    message: str
    time: int

    def to_dict(self) -> dict[str, Any]:
        """``{"commit", "author", "message", "time"}``."""
        return {"commit": self.commit, "author": self.author, "message": self.message, "time": self.time}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChangedBy:
        """Read a ``by`` object of ``mnem diff A...B --json``.

        Args:
            data: The object as the binary printed it.

        Returns:
            The commit's provenance fields.
        """
        return cls(data["commit"], data["author"], data["message"], data["time"])


@dataclass(frozen=True, slots=True)
class ProposedChange(NodeChange):
    """A ``NodeChange`` a branch proposes (``mnem diff A...B``), with the commit on the branch that made it.

    A subclass, so code written for ``diff``'s changes reads these unchanged; ``by`` is ``None`` only when no
    commit after the merge base gave the fact its value.
    """

    by: ChangedBy | None

    def to_dict(self) -> dict[str, Any]:
        """``NodeChange``'s four keys, then ``"by"``."""
        return {**NodeChange.to_dict(self), "by": self.by.to_dict() if self.by is not None else None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProposedChange:
        """Read one change of ``mnem diff A...B --json``.

        Args:
            data: The object as the binary printed it.

        Returns:
            The change and the commit that made it.
        """
        change = NodeChange.from_dict(data)
        by = data["by"]
        return cls(change.id, change.kind, change.old, change.new, ChangedBy.from_dict(by) if by is not None else None)


@dataclass(frozen=True, slots=True)
class Conflict:
    """A node both sides of a merge changed differently; each side is ``None`` when absent."""

    id: str
    kind: ConflictKind
    base: MemoryNode | None
    ours: MemoryNode | None
    theirs: MemoryNode | None

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "kind", "base", "ours", "theirs"}``."""
        return {
            "id": self.id,
            "kind": self.kind,
            "base": _node_dict(self.base),
            "ours": _node_dict(self.ours),
            "theirs": _node_dict(self.theirs),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Conflict:
        """Read a ``Conflict`` JSON object.

        Args:
            data: The object as the binary printed it.

        Returns:
            The conflict.
        """
        return cls(
            data["id"],
            data["kind"],
            node_or_none(data["base"]),
            node_or_none(data["ours"]),
            node_or_none(data["theirs"]),
        )


@dataclass(frozen=True, slots=True)
class MergeResult:
    """What a merge did; with conflicts nothing was written and ``commit`` is ``None``."""

    status: MergeStatus
    commit: str | None
    conflicts: tuple[Conflict, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the merge went through (anything but ``conflicts``)."""
        return self.status != "conflicts"

    def to_dict(self) -> dict[str, Any]:
        """``{"status", "commit", "conflicts"}`` (no ``ok`` key, as upstream)."""
        return {"status": self.status, "commit": self.commit, "conflicts": [c.to_dict() for c in self.conflicts]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MergeResult:
        """Read a ``MergeResult`` JSON object.

        Args:
            data: The object as the binary printed it.

        Returns:
            The result.
        """
        return cls(data["status"], data["commit"], tuple(Conflict.from_dict(c) for c in data["conflicts"]))


@dataclass(frozen=True, slots=True)
class Blame:
    """The commit that introduced a node's current value; ``time`` is its event time if set."""

    commit: str
    node: MemoryNode
    time: int

    @property
    def provenance(self) -> Provenance:
        """The blamed node's provenance: the usual answer to "why do we believe this"."""
        return self.node.provenance

    def to_dict(self) -> dict[str, Any]:
        """``{"commit", "node", "time"}``."""
        return {"commit": self.commit, "node": self.node.to_dict(), "time": self.time}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Blame:
        """Read a ``Blame`` JSON object.

        Args:
            data: The object as the binary printed it.

        Returns:
            The blame.
        """
        return cls(data["commit"], MemoryNode.from_dict(data["node"]), data["time"])


@dataclass(frozen=True, slots=True)
class TimedNode:
    """A node with when it came to be and when its value was written (Unix ms; ``mnem stamps``).

    ``updated`` equals ``blame(node).time``; ``created`` is the same kind of
    time for the value that made the node exist after it last did not.
    """

    node: MemoryNode
    created: int
    updated: int
    #: When its TTL lease runs out (Unix ms), read with ``live``; None when it does not expire.
    expires: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"node", "created", "updated"}``, and ``"expires"`` when the node has a lease."""
        data = {"node": self.node.to_dict(), "created": self.created, "updated": self.updated}
        return data if self.expires is None else {**data, "expires": self.expires}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TimedNode:
        """Read one entry of ``mnem stamps``.

        Args:
            data: The object as the binary printed it.

        Returns:
            The timed node.
        """
        return cls(MemoryNode.from_dict(data["node"]), data["created"], data["updated"], data.get("expires"))


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One item of a ``mnem search`` page: a LangGraph item with its times, score and lease.

    ``namespace`` and ``key`` are where the node id ``id`` puts the item;
    ``value`` is its value (a node whose content is not an object reads as
    ``{"value": content}``); ``score`` is None when the search does not rank
    (no query, ``substring``, or an item ``vector`` mode found no vector for).
    """

    id: str
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created: int
    updated: int
    score: float | None
    #: When its TTL lease runs out (Unix ms), read with ``live``; None when it does not expire.
    expires: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The item as ``mnem search`` prints it."""
        return {"id": self.id, "namespace": list(self.namespace), "key": self.key, "value": self.value,
                "created": self.created, "updated": self.updated, "score": self.score, "expires": self.expires}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchHit:
        """Read one item of ``mnem search``'s ``items``.

        The value is the decoded answer's own object, checked rather than
        copied: nothing else holds it, and LangGraph's item takes it as it is.
        """
        score, value = data["score"], data["value"]
        if type(value) is not dict:
            raise TypeError(f"an item's value must be a JSON object, got {type(value).__name__}")
        return cls(str(data["id"]), tuple(map(str, data["namespace"])), str(data["key"]), value,
                   int(data["created"]), int(data["updated"]), None if score is None else float(score),
                   data.get("expires"))


@dataclass(frozen=True, slots=True)
class MemoryPage:
    """One page of memory in id order (``mnem show --limit``), kept as the binary printed it.

    A whole memory can be megabytes of JSON.  A caller that passes it on
    (the MCP server, to its client) uses ``json``, the binary's own bytes,
    and ``document``, their one decoding; ``memory`` builds the typed nodes
    only for a caller that asks.
    """

    #: ``{"memory": {id: node}, "next_cursor": id | null}`` as printed, compact JSON.
    json: bytes
    #: The same, decoded.
    document: Mapping[str, Any]

    @property
    def memory(self) -> dict[str, MemoryNode]:
        """The page's nodes by id, in id order."""
        return nodes_by_id(self.document["memory"])

    @property
    def next_cursor(self) -> str | None:
        """Pass it as ``cursor`` to read the next page; None on the last one."""
        cursor = self.document["next_cursor"]
        return None if cursor is None else str(cursor)


@dataclass(frozen=True, slots=True)
class WholeMemory:
    """The whole memory ``{id: node}`` in id order (``mnem show``), kept as the binary printed it.

    What ``MemoryPage`` is to a page, for the memory read whole: a caller
    that passes it on as JSON (the MCP server's ``recall`` and
    ``mnem://memory``) uses ``json``, the binary's own bytes, and
    ``document``, their one decoding, and builds no ``MemoryNode``: at 10k
    facts, building the nodes and writing them back as JSON took longer
    than the engine's whole read.  ``memory`` builds them for a caller that
    asks.
    """

    #: ``{id: node}`` as printed, compact JSON.
    json: bytes
    #: The same, decoded: each node as its JSON object.
    document: Mapping[str, Any]

    @property
    def memory(self) -> dict[str, MemoryNode]:
        """The nodes by id, in id order: what ``Store.working_memory`` answers."""
        return nodes_by_id(self.document)


def nodes_by_id(document: Mapping[str, Any]) -> dict[str, MemoryNode]:
    """``{id: node as JSON}`` (``mnem show``'s memory, whole or a page's) as ``{id: MemoryNode}``, in its order."""
    return {node_id: MemoryNode.from_dict(node) for node_id, node in document.items()}
