"""The verbs that take back what was written: ``revert`` (a new commit) and ``redact`` (bytes out of history)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..clock import now_ms
from ..errors import CommandError, rust_debug
from ..expiry import record_leases
from ..limits import in_message
from ..objects import Commit, MemoryNode
from ..repo import Repo
from .reading import load_node, node_dict

if TYPE_CHECKING:
    from ..redaction import Redaction, Selection, Version
    from ..revert import Match
    from ..review import ChangedBy

__all__ = ["REASON_CHARS", "Redacted", "Reverted", "RevertedFact", "SkippedFact", "check_reason", "redact",
           "redactions", "revert"]


class RevertedFact(NamedTuple):
    """A fact ``revert`` gives back its earlier value (``restored``; None: removes it), and the versions it undoes."""

    id: str
    current: MemoryNode | None
    restored: MemoryNode | None
    undone: list[ChangedBy]

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "action": "restore" | "remove", "current", "restored", "undone": [ChangedBy]}``."""
        return {"id": self.id, "action": "restore" if self.restored is not None else "remove",
                "current": node_dict(self.current), "restored": node_dict(self.restored),
                "undone": [by.to_dict() for by in self.undone]}


class SkippedFact(NamedTuple):
    """A fact a reverted version set that a later, other version changed: left as it is (``by`` wrote it)."""

    id: str
    current: MemoryNode | None
    by: ChangedBy
    undone: list[ChangedBy]

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "current", "changed_by": ChangedBy, "undone": [ChangedBy]}``."""
        return {"id": self.id, "current": node_dict(self.current), "changed_by": self.by.to_dict(),
                "undone": [by.to_dict() for by in self.undone]}


class Reverted(NamedTuple):
    """What ``revert`` did (or, with ``commit`` None on a dry run, would do), in node-id order."""

    commit: tuple[bytes, Commit] | None
    facts: list[RevertedFact]
    skipped: list[SkippedFact]

    def to_dict(self) -> dict[str, Any]:
        """``mnem revert --json``: ``{"commit": Commit | null, "reverted": [...], "skipped": [...]}``."""
        made = self.commit
        return {"commit": made[1].to_dict(made[0]) if made is not None else None,
                "reverted": [fact.to_dict() for fact in self.facts],
                "skipped": [fact.to_dict() for fact in self.skipped]}


def revert(repo: Repo, match: Match, *, author: str, time_ms: int | None = None, dry_run: bool = False) -> Reverted:
    """Undo every version ``match`` names that is still a fact's value, as one commit on HEAD's branch.

    ``mnem_store.revert`` decides, fact by fact, what goes back and what is skipped because another
    version changed it since.  The commit's message names what was reverted and the facts, so ``blame``
    of a restored fact names it.  ``dry_run`` reads the same plan in one snapshot and writes nothing.

    Raises:
        CommandError: ``not_found`` when no version matches; ``invalid_ref`` when HEAD is detached or
            unborn, or when every matching fact is already restored or was changed later (nothing to
            revert: the message names the skipped facts).
    """
    from ..revert import plan

    with repo.backend.read() if dry_run else repo.backend.write():
        branch = repo.attached_branch("revert")
        tip = repo.branch_tip(branch)
        if tip is None:
            raise CommandError(f"nothing to revert: branch {branch} has no commit yet")
        planned = plan(repo, tip, match)
        facts = [RevertedFact(step.id, load_node(repo, step.current), load_node(repo, step.restored),
                              [_changed_by(repo, raw) for raw in step.undone]) for step in planned.steps]
        skipped = [SkippedFact(skip.id, load_node(repo, skip.current), _changed_by(repo, skip.by),
                               [_changed_by(repo, raw) for raw in skip.undone]) for skip in planned.skipped]
        if dry_run:
            return Reverted(None, facts, skipped)
        if not facts:
            raise CommandError(_nothing_to_revert(match, skipped))

        made = repo.restore({step.id: step.restored for step in planned.steps}, _revert_message(match, facts),
                            author, time_ms)
        record_leases(repo, [fact.restored for fact in facts if fact.restored is not None],
                      [fact.id for fact in facts if fact.restored is None], {}, made[1].time, branch=branch)
        return Reverted(made, facts, skipped)


def _changed_by(repo: Repo, raw: bytes) -> ChangedBy:
    from ..review import ChangedBy

    commit = repo.commit_obj(raw)
    return ChangedBy(raw, commit.author, commit.message, commit.time)


def _named(ids: Sequence[str]) -> str:
    """The first three of ``ids`` as a generated message names them (``limits.in_message``), then how many more."""
    return ", ".join(map(in_message, ids[:3])) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")


def _searched(match: Match) -> str:
    return " ".join(f"--{name} {rust_debug(in_message(value))}" for name, value in match.given().items())


def _revert_message(match: Match, facts: Sequence[RevertedFact]) -> str:
    """``revert --source S: restore A, B; remove C``: what was reverted and what it changed, for ``log`` and ``why``."""
    restored = [fact.id for fact in facts if fact.restored is not None]
    removed = [fact.id for fact in facts if fact.restored is None]
    parts = ([f"restore {_named(restored)}"] if restored else []) + ([f"remove {_named(removed)}"] if removed else [])
    return f"revert {_searched(match)}: {'; '.join(parts)}"


def _nothing_to_revert(match: Match, skipped: Sequence[SkippedFact]) -> str:
    if not skipped:
        return (f"nothing to revert: every fact a version matching {_searched(match)} set already has the value "
                "it had before (reverted already, or set so since)")
    later = ", ".join(f"{in_message(skip.id)} (by {skip.by.commit.hex()[:12]}, {skip.by.author})"
                      for skip in skipped[:3])
    more = f" and {len(skipped) - 3} more" if len(skipped) > 3 else ""
    return (f"nothing to revert: every fact a version matching {_searched(match)} set was changed later by "
            f"another version: {later}{more}; revise those by hand (`mnem write`), or revert the later version "
            "too (`mnem revert --commit C`)")


#: The most characters a redaction's reason may have: it is kept for ever and shown on every read of the version.
REASON_CHARS = 1000


class Redacted(NamedTuple):
    """What ``mnem redact`` chose and did.

    ``versions`` are every node version the selection named (those redacted
    before included, with their records); ``records`` the records new to the
    store (none on a dry run).  ``complete`` says whether no file of the
    store still holds the removed bytes; where not, ``residue`` says what
    still does and the fix (``Backend.erasing``).
    """

    versions: list[Version]
    records: list[Redaction]
    dry_run: bool
    complete: bool
    residue: str


def check_reason(reason: str, flag: str) -> None:
    """Refuse an empty or too long reason for a redaction, naming ``flag`` (the option that gave it)."""
    from ..errors import UsageError

    if not reason.strip():
        raise UsageError(f"say why with {flag} TEXT: every redaction is recorded with who, when and why")
    if len(reason) > REASON_CHARS:
        raise UsageError(f"{flag} has {len(reason)} characters, more than {REASON_CHARS}: say it shorter")


def redact(repo: Repo, selection: Selection, *, reason: str, author: str, dry_run: bool = False) -> Redacted:
    """Remove the bytes of the node versions ``selection`` names from the whole history, in one transaction.

    Ids, states and commits stay as they are; each version keeps a record
    (``author``, now, ``reason``).  The transaction is an erasing one: after
    it commits, the removed bytes are in no file of the store (SQLite: the
    database, its free pages, its WAL; PostgreSQL: the tables' files).  A
    dry run reads what would go in one snapshot and changes nothing.

    Raises:
        UsageError: The reason is empty or too long, or the selection names nothing or a non-node object.
        NotFoundError: A named node or object is not in the store, or nothing matches.
    """
    from ..redaction import Redaction, apply, select

    check_reason(reason, "--reason")
    if dry_run:
        with repo.backend.read():
            return Redacted(select(repo, selection), [], True, True, "")
    with repo.backend.erasing() as erasure:
        versions = select(repo, selection)
        at = now_ms()
        records = apply(repo, [version.redacted or Redaction(version.object, version.node_id, at, author, reason)
                               for version in versions])
    return Redacted(versions, records, False, erasure.complete, erasure.residue)


def redactions(repo: Repo) -> list[Redaction]:
    """Every redaction record of the store, oldest first."""
    with repo.backend.read():
        return repo.backend.redactions.every()
