"""JSON views that need the store: changes and nodes in SDK ``to_dict()`` shapes."""

from __future__ import annotations

from typing import Any

from ..merge import Conflict, MergeResult
from ..repo import Change, Nodes, Repo

__all__ = ["change_dict", "conflict_dict", "memory_dict", "merge_result_dict", "node_dict"]


def node_dict(repo: Repo, raw: bytes | None) -> dict[str, Any] | None:
    return repo.node(raw).to_dict() if raw is not None else None


def change_dict(repo: Repo, change: Change) -> dict[str, Any]:
    """SDK ``NodeChange.to_dict()``."""
    return {"id": change.id, "kind": change.kind, "old": node_dict(repo, change.old), "new": node_dict(repo, change.new)}


def memory_dict(repo: Repo, nodes: Nodes) -> dict[str, Any]:
    """``{node_id: MemoryNode}`` in node-id order."""
    return {node_id: node.to_dict() for node_id, node in repo.nodes_of(nodes).items()}


def conflict_dict(repo: Repo, conflict: Conflict) -> dict[str, Any]:
    """SDK ``Conflict.to_dict()``."""
    return {
        "id": conflict.id,
        "kind": conflict.kind,
        "base": node_dict(repo, conflict.base),
        "ours": node_dict(repo, conflict.ours),
        "theirs": node_dict(repo, conflict.theirs),
    }


def merge_result_dict(repo: Repo, result: MergeResult) -> dict[str, Any]:
    """SDK ``MergeResult.to_dict()``."""
    return {
        "status": result.status,
        "commit": result.commit.hex() if result.commit is not None else None,
        "conflicts": [conflict_dict(repo, c) for c in result.conflicts],
    }
