"""What ``Store.revert`` answers: ``mnem revert --json`` as frozen results (docs/cli-json.md, ``mnem revert``).

Like ``models``, each ``from_dict`` reads the binary's document and
``to_dict`` writes the same keys back in the same order, so mnem-mcp hands
the answer to a client unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .models import ChangedBy, Commit, MemoryNode, node_or_none

__all__ = ["RevertAction", "Reverted", "RevertedFact", "SkippedFact"]

#: What a revert does to a fact: give it back its earlier value, or remove it (it had none before).
RevertAction = Literal["restore", "remove"]


def _node(node: MemoryNode | None) -> dict[str, Any] | None:
    return None if node is None else node.to_dict()


@dataclass(frozen=True, slots=True)
class RevertedFact:
    """A fact the revert changes: its value now, the one it gets back (None: removed), the versions undone.

    ``undone`` names the commits that wrote the matching versions, newest first; ``current`` is None when
    the version undone was the fact's removal.
    """

    id: str
    action: RevertAction
    current: MemoryNode | None
    restored: MemoryNode | None
    undone: tuple[ChangedBy, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "action", "current", "restored", "undone"}``."""
        return {"id": self.id, "action": self.action, "current": _node(self.current),
                "restored": _node(self.restored), "undone": [by.to_dict() for by in self.undone]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RevertedFact:
        """Read one ``reverted`` entry.

        Args:
            data: The object as the binary printed it.

        Returns:
            The fact.
        """
        return cls(data["id"], data["action"], node_or_none(data["current"]), node_or_none(data["restored"]),
                   tuple(ChangedBy.from_dict(by) for by in data["undone"]))


@dataclass(frozen=True, slots=True)
class SkippedFact:
    """A fact a matching version set and a later, other version changed: left as it is (``changed_by`` wrote it)."""

    id: str
    current: MemoryNode | None
    changed_by: ChangedBy
    undone: tuple[ChangedBy, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "current", "changed_by", "undone"}``."""
        return {"id": self.id, "current": _node(self.current), "changed_by": self.changed_by.to_dict(),
                "undone": [by.to_dict() for by in self.undone]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SkippedFact:
        """Read one ``skipped`` entry.

        Args:
            data: The object as the binary printed it.

        Returns:
            The fact.
        """
        return cls(data["id"], node_or_none(data["current"]), ChangedBy.from_dict(data["changed_by"]),
                   tuple(ChangedBy.from_dict(by) for by in data["undone"]))


@dataclass(frozen=True, slots=True)
class Reverted:
    """A revert: its commit (None on a dry run), the facts it changes and those it skipped, by node id."""

    commit: Commit | None
    reverted: tuple[RevertedFact, ...]
    skipped: tuple[SkippedFact, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"commit", "reverted", "skipped"}``."""
        return {"commit": self.commit.to_dict() if self.commit is not None else None,
                "reverted": [fact.to_dict() for fact in self.reverted],
                "skipped": [fact.to_dict() for fact in self.skipped]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reverted:
        """Read ``mnem revert --json``.

        Args:
            data: The document as the binary printed it.

        Returns:
            The revert.
        """
        commit = data["commit"]
        return cls(Commit.from_dict(commit) if commit is not None else None,
                   tuple(RevertedFact.from_dict(fact) for fact in data["reverted"]),
                   tuple(SkippedFact.from_dict(fact) for fact in data["skipped"]))
