"""What ``Store.redact`` and ``Store.redactions`` answer, as frozen results (docs/cli-json.md, ``mnem redact``).

Like ``models``, each ``from_dict`` reads the binary's document and
``to_dict`` writes the same keys back in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .models import Redaction

__all__ = ["Redacted", "RedactedVersion", "RedactionRecord", "read_records"]


@dataclass(frozen=True, slots=True)
class RedactionRecord:
    """One redaction kept by the store: which node version (object id, node id), who, when (Unix ms), why."""

    object: str
    id: str
    at: int
    by: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """``{"object", "id", "at", "by", "reason"}``."""
        return {"object": self.object, "id": self.id, "at": self.at, "by": self.by, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RedactionRecord:
        """Read one record.

        Args:
            data: The object as the binary printed it.

        Returns:
            The record.
        """
        return cls(data["object"], data["id"], data["at"], data["by"], data["reason"])


@dataclass(frozen=True, slots=True)
class RedactedVersion:
    """A node version a redaction named: its object id, node id, the commits that wrote it, its earlier record.

    ``redacted`` is None when this call redacts it (or, on a dry run, would).
    """

    object: str
    id: str
    commits: tuple[str, ...]
    redacted: Redaction | None

    def to_dict(self) -> dict[str, Any]:
        """``{"object", "id", "commits", "redacted"}``."""
        return {"object": self.object, "id": self.id, "commits": list(self.commits),
                "redacted": None if self.redacted is None else self.redacted.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RedactedVersion:
        """Read one ``versions`` entry.

        Args:
            data: The object as the binary printed it.

        Returns:
            The version.
        """
        earlier = data["redacted"]
        return cls(data["object"], data["id"], tuple(data["commits"]),
                   None if earlier is None else Redaction.from_dict(earlier))


@dataclass(frozen=True, slots=True)
class Redacted:
    """What a redaction chose and did.

    ``records`` are the records new to the store (none on a dry run);
    ``complete`` says whether no file of the store still holds the removed
    bytes, and ``residue`` (None when complete) what still does and the fix.
    """

    dry_run: bool
    versions: tuple[RedactedVersion, ...]
    records: tuple[RedactionRecord, ...]
    complete: bool
    residue: str | None

    def to_dict(self) -> dict[str, Any]:
        """``{"dry_run", "versions", "records", "complete", "residue"}``."""
        return {"dry_run": self.dry_run, "versions": [version.to_dict() for version in self.versions],
                "records": [record.to_dict() for record in self.records], "complete": self.complete,
                "residue": self.residue}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Redacted:
        """Read ``mnem redact``'s document.

        Args:
            data: The document as the binary printed it.

        Returns:
            The result.
        """
        return cls(data["dry_run"], tuple(RedactedVersion.from_dict(v) for v in data["versions"]),
                   tuple(RedactionRecord.from_dict(r) for r in data["records"]), data["complete"], data["residue"])


def read_records(doc: Mapping[str, Any]) -> list[RedactionRecord]:
    """``mnem redactions``' document: ``{"redactions": [record, ...]}``."""
    return [RedactionRecord.from_dict(record) for record in doc["redactions"]]
