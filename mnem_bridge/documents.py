"""Reading ``mnem``'s result documents into the bridge's values.

Each function is a ``parse`` that ``Store`` hands the client with a call:
a document of the wrong shape raises inside it, and the client turns that
into a ``ProtocolError`` carrying the command (docs/cli-json.md fixes each
document's shape).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .models import Blame, Commit, MemoryNode, Pusher, TimedNode, nodes_by_id

__all__ = [
    "Memory", "read_blame", "read_deleted", "read_expired", "read_found", "read_memory", "read_timed", "read_written",
]

#: Memory as upstream's SDK returns it: ``{node id: MemoryNode}`` in node-id order.
Memory = dict[str, MemoryNode]


def read_deleted(doc: Mapping[str, Any]) -> bool:
    """``mnem branch --delete``'s document: whether the branch existed (``{"name", "deleted": bool}``)."""
    deleted = doc["deleted"]
    if not isinstance(deleted, bool):
        raise TypeError(f"deleted is {type(deleted).__name__}, not a bool")
    return deleted


def read_memory(doc: Mapping[str, Any]) -> Memory:
    """``mnem show``'s document: ``{node id: node}``."""
    return nodes_by_id(doc)


def read_blame(doc: Mapping[str, Any]) -> tuple[Blame, str | None, Pusher | None]:
    """``mnem blame``'s document: the blame, and the ``author`` and pusher our ``mnem`` adds beside it, if there."""
    author = doc.get("author")
    if not isinstance(author, str | None):
        raise TypeError(f"author is {type(author).__name__}, not a string")
    return Blame.from_dict(doc), author, Pusher.of(doc)


def read_found(doc: Mapping[str, Any]) -> tuple[str, Blame | None]:
    """``mnem bisect``'s document: the commit found and the blame there (``None`` when absent)."""
    return doc["commit"], None if doc["blame"] is None else Blame.from_dict(doc["blame"])


def read_expired(doc: Mapping[str, Any]) -> tuple[Commit | None, list[str]]:
    """``mnem expire``'s document: the commit (``None`` when nothing had expired) and the ids removed."""
    return None if doc["commit"] is None else Commit.from_dict(doc["commit"]), [str(i) for i in doc["removed"]]


def read_written(doc: Mapping[str, Any]) -> tuple[Commit | None, dict[str, str]]:
    """``mnem write``'s document: the commit (``None`` when nothing changed) and the changes."""
    return None if doc["commit"] is None else Commit.from_dict(doc["commit"]), dict(doc["changes"])



def read_timed(doc: Mapping[str, Any]) -> dict[str, TimedNode]:
    """``mnem stamps``'s document: ``{node id: node with its times}``."""
    return {node_id: TimedNode.from_dict(entry) for node_id, entry in doc.items()}
