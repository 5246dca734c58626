"""What ``Store.gc`` answers: ``mnem gc --json`` as a frozen result (docs/cli-json.md, ``mnem gc``).

Like ``models``, ``from_dict`` reads the binary's document and ``to_dict``
writes the same keys back in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Collected"]


@dataclass(frozen=True, slots=True)
class Collected:
    """What a garbage collection dropped (on a dry run: would drop), and the store's size around it.

    Attributes:
        dry_run: Nothing was written; ``commits`` and ``objects`` are what a real run would drop.
        commits: Commits dropped: none of them is reached by a branch, HEAD or a tracking branch.
        objects: Objects dropped (those commits, their states, node values only they held).
        bytes_before: The store's size in bytes before (a folder: its database files; PostgreSQL: its tables).
        bytes_after: Its size after the space was given back (``bytes_before`` on a dry run).
        kept_commits: Commits kept: what the next collection walks again (``None`` from a ``mnem`` that does
            not say).
    """

    dry_run: bool
    commits: int
    objects: int
    bytes_before: int
    bytes_after: int
    kept_commits: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"dry_run", "commits", "objects", "kept_commits", "bytes_before", "bytes_after"}``."""
        return {"dry_run": self.dry_run, "commits": self.commits, "objects": self.objects,
                "kept_commits": self.kept_commits, "bytes_before": self.bytes_before, "bytes_after": self.bytes_after}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Collected:
        """Read ``mnem gc --json``."""
        kept = data.get("kept_commits")
        return cls(bool(data["dry_run"]), int(data["commits"]), int(data["objects"]), int(data["bytes_before"]),
                   int(data["bytes_after"]), None if kept is None else int(kept))
