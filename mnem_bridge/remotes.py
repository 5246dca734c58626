"""What ``mnem remote``, ``fetch``, ``push``, ``pull`` and ``clone`` answer, typed (docs/remotes.md).

Upstream's SDK has no remotes; these mirror the binary's ``--json``
documents for them (docs/cli-json.md), with ``from_dict`` reading one and
``to_dict`` writing it back with the same keys.  ``remote_text`` turns a
caller's store address into the argument the binary keeps for a remote.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .address import StoreUrl, store_address
from .errors import UsageError
from .models import MergeResult

__all__ = ["Fetched", "MovedBranch", "Pulled", "PushStatus", "Pushed", "Remote", "remote_text"]

PushStatus = Literal["up-to-date", "created", "fast-forwarded", "forced"]


def remote_text(where: str | os.PathLike[str] | StoreUrl) -> str:
    """A store address as ``mnem remote add`` and ``mnem clone`` take it: an absolute folder, or a URL.

    A remote's address is kept in the store, so a URL must not carry a
    password (the binary would keep it); give it through ``PGPASSWORD`` or
    a pgpass file instead.  An ``http(s)://`` URL (a mnem-mcp server) goes
    as it is; the binary checks it.

    Raises:
        UsageError: A URL with a password.
    """
    if isinstance(where, str) and where.startswith(("http://", "https://")):
        return where
    address = store_address(where)
    if isinstance(address, StoreUrl):
        if address.password:
            raise UsageError("a remote's URL is kept in the store, so it must not hold a password: give the "
                             "password through PGPASSWORD or a pgpass file, and drop it from the URL")
        return address.url
    return str(Path(address).absolute())


@dataclass(frozen=True, slots=True)
class Remote:
    """A remote: its name, its address (a URL without its password) and its tracking branches."""

    name: str
    url: str
    #: ``NAME/BRANCH`` -> the commit that branch had when this store last fetched or pushed it.
    branches: Mapping[str, str]

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "url", "branches": [{"name", "commit"}]}``."""
        return {"name": self.name, "url": self.url,
                "branches": [{"name": name, "commit": commit} for name, commit in self.branches.items()]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Remote:
        """Read a remote as ``mnem remote ... --json`` prints it."""
        return cls(data["name"], data["url"], {row["name"]: row["commit"] for row in data["branches"]})


@dataclass(frozen=True, slots=True)
class MovedBranch:
    """A tracking branch a fetch moved: ``old`` is None for one it made."""

    name: str
    old: str | None
    new: str

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "old", "new"}``."""
        return {"name": self.name, "old": self.old, "new": self.new}


@dataclass(frozen=True, slots=True)
class Fetched:
    """What a fetch brought: commits and objects this store lacked, and the tracking branches that moved.

    ``redactions``: the remote's redaction records this store lacked and applied (their bytes are gone here);
    ``residue``: None, unless another process was reading the store so that a file of it may still hold those
    bytes (then it says so and names the fix).
    """

    remote: str
    commits: int
    objects: int
    branches: tuple[MovedBranch, ...]
    redactions: int = 0
    residue: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"remote", "commits", "objects", "redactions", "residue", "branches"}``."""
        return {"remote": self.remote, "commits": self.commits, "objects": self.objects,
                "redactions": self.redactions, "residue": self.residue,
                "branches": [branch.to_dict() for branch in self.branches]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fetched:
        """Read ``mnem fetch --json`` (a ``mnem`` older than redaction sends no ``redactions``: 0)."""
        return cls(data["remote"], data["commits"], data["objects"],
                   tuple(MovedBranch(row["name"], row["old"], row["new"]) for row in data["branches"]),
                   data.get("redactions", 0), data.get("residue"))


@dataclass(frozen=True, slots=True)
class Pushed:
    """What a push did to the remote's branch; ``redactions``: the records it brought that the remote applied."""

    remote: str
    branch: str
    status: PushStatus
    old: str | None
    new: str
    commits: int
    objects: int
    redactions: int = 0

    def to_dict(self) -> dict[str, Any]:
        """``mnem push --json``'s keys, in its order."""
        return {"remote": self.remote, "branch": self.branch, "status": self.status, "old": self.old,
                "new": self.new, "commits": self.commits, "objects": self.objects, "redactions": self.redactions}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Pushed:
        """Read ``mnem push --json`` (a ``mnem`` older than redaction sends no ``redactions``: 0)."""
        return cls(data["remote"], data["branch"], data["status"], data["old"], data["new"], data["commits"],
                   data["objects"], data.get("redactions", 0))


@dataclass(frozen=True, slots=True)
class Pulled:
    """A pull: its fetch, and the merge (``merge.ok`` is false when it stopped on conflicts)."""

    fetched: Fetched
    merge: MergeResult

    def to_dict(self) -> dict[str, Any]:
        """The fetch's keys plus ``merge``."""
        return {**self.fetched.to_dict(), "merge": self.merge.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Pulled:
        """Read ``mnem pull --json``."""
        return cls(Fetched.from_dict(data), MergeResult.from_dict(data["merge"]))
