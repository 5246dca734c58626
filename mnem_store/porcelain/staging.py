"""The staging verbs: stage and unstage nodes, see what is staged, and commit it."""

from __future__ import annotations

from typing import NamedTuple

from ..errors import CommandError
from ..layout import Head
from ..objects import Commit, MemoryNode
from ..repo import Repo
from .history import NodeChange, node_changes

__all__ = ["Status", "add", "commit", "rm", "status", "unstage"]


class Status(NamedTuple):
    """HEAD, its tip, and what is staged against it."""

    head: Head
    tip: bytes | None
    tip_subject: str
    staged: list[tuple[str, bytes]]
    deletions: list[str]
    changes: list[NodeChange]
    format_version: int


def add(repo: Repo, node: MemoryNode) -> bytes:
    """Stage a node; returns its object id."""
    with repo.backend.write():
        return repo.stage(node)


def rm(repo: Repo, node_id: str) -> None:
    """Stage a node's deletion (or drop its pending add)."""
    with repo.backend.write():
        repo.remove(node_id)


def unstage(repo: Repo, node_id: str) -> bool:
    """Drop a staged add or deletion; returns whether there was one."""
    with repo.backend.write():
        return repo.unstage(node_id)


def commit(repo: Repo, message: str, author: str, time_ms: int | None) -> tuple[bytes, Commit]:
    """Commit what is staged; ``time_ms`` None dates it now, never before its parent."""
    with repo.backend.write():
        if not repo.is_dirty():
            raise CommandError("nothing staged; use `mnem add` or `mnem rm` first")
        raw = repo.commit(message, author, time_ms)
        return raw, repo.commit_obj(raw)


def status(repo: Repo) -> Status:
    """HEAD, its tip and what is staged."""
    with repo.backend.read():
        head = repo.head()
        tip = repo.head_commit()
        changes = node_changes(repo, repo.commit_nodes(tip), repo.working_nodes())
        subject = repo.commit_obj(tip).message if tip else ""
        version = int(repo.config["format_version"])
        return Status(head, tip, subject, repo.staged(), repo.staged_deletions(), changes, version)
