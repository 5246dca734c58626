"""The branch verbs: list, create, delete and check out branches, and merge one into another."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import CommandError
from ..layout import Head
from ..objects import MemoryNode
from ..repo import Repo
from .reading import node_dict

if TYPE_CHECKING:
    from ..merge import Conflict, MergeResult, Resolution, Strategy

__all__ = ["BranchInfo", "MergeOutcome", "branch_create", "branch_delete", "branch_list", "checkout", "merge"]


class BranchInfo(NamedTuple):
    """A branch, its tip, the tip's message and whether HEAD is attached to it."""

    name: str
    tip: bytes
    message: str
    current: bool


class MergeOutcome(NamedTuple):
    """A merge's result, with the nodes its conflicts name and the new commit's message."""

    result: MergeResult
    nodes: dict[bytes, MemoryNode]
    message: str | None

    def conflict_dict(self, conflict: Conflict) -> dict[str, Any]:
        """SDK ``Conflict.to_dict()``."""
        sides = {"base": conflict.base, "ours": conflict.ours, "theirs": conflict.theirs}
        return {"id": conflict.id, "kind": conflict.kind,
                **{name: node_dict(self.nodes.get(raw) if raw is not None else None) for name, raw in sides.items()}}

    def to_dict(self) -> dict[str, Any]:
        """SDK ``MergeResult.to_dict()``."""
        result = self.result
        return {
            "status": result.status,
            "commit": result.commit.hex() if result.commit is not None else None,
            "conflicts": [self.conflict_dict(c) for c in result.conflicts],
        }


def checkout(repo: Repo, target: str | None, *, create: str | None = None, discard: bool = False) -> tuple[str, Head]:
    """Move HEAD (creating a branch first with ``create``): the branch and HEAD change in one transaction."""
    with repo.backend.write():
        return repo.checkout(target, create=create, discard=discard)


def branch_create(repo: Repo, name: str, start: str | None = None) -> bytes:
    """Create a branch at ``start`` or HEAD's commit; returns its tip."""
    with repo.backend.write():
        return repo.create_branch(name, start)


def branch_delete(repo: Repo, name: str) -> bool:
    """Delete a branch (not the current one); returns whether it existed."""
    with repo.backend.write():
        return repo.delete_branch(name)


def branch_list(repo: Repo) -> list[BranchInfo]:
    """Every branch by name, with its tip's message."""
    with repo.backend.read():
        current = repo.head().branch
        return [BranchInfo(name, tip, repo.commit_obj(tip).message, name == current) for name, tip in repo.branches()]


def merge(
    repo: Repo, theirs: str, *, resolutions: Mapping[str, Resolution] | None = None,
    strategy: Strategy | None = None, message: str | None = None, author: str, time_ms: int | None,
    dry_run: bool = False,
) -> MergeOutcome:
    """Merge ``theirs`` into the current branch (or, with ``dry_run``, say what merging would do)."""
    from ..merge import merge as merge_commit
    from ..merge import preview as merge_preview

    with repo.backend.read() if dry_run else repo.backend.write():
        if repo.head().branch is None:
            raise CommandError("cannot merge from a detached HEAD; check out a branch", "invalid_ref")
        if dry_run:
            return _outcome(repo, merge_preview(repo, theirs))
        return _outcome(repo, merge_commit(repo, theirs, resolutions=resolutions, strategy=strategy,
                                           message=message, author=author, time_ms=time_ms))


def _outcome(repo: Repo, result: MergeResult) -> MergeOutcome:
    named = {raw for c in result.conflicts for raw in (c.base, c.ours, c.theirs) if raw is not None}
    message = repo.commit_obj(result.commit).message if result.commit is not None else None
    return MergeOutcome(result, {raw: repo.node(raw) for raw in named}, message)
