"""The verbs of ``mnem``: each one function that owns its transaction and returns a typed result.

As in dulwich's porcelain, a verb takes an open ``Repo`` (or, for ``init``
and ``import_``, a path), runs in exactly one read snapshot or one write
transaction of the store's backend, and returns objects, never text.  The
CLI parses arguments, calls one verb and renders what it returns; it never
opens a transaction itself, so no command can forget its snapshot and a
write either happens whole or not at all.  Results that the CLI shows carry
everything rendering needs (nodes loaded, commit subjects), so rendering
reads nothing from the store.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .clock import now_ms
from .errors import CommandError, rust_debug
from .expiry import expired_present, live_leases, record_leases, refuse_rev
from .layout import Head
from .limits import in_message
from .location import Address
from .objects import Commit, MemoryNode, encode_object
from .repo import Nodes, Repo, Written, diff_nodes

if TYPE_CHECKING:  # the algorithms are imported by the verbs that run them: a one-shot `show` skips merge's import
    from .backend import Push
    from .bisect import Predicate
    from .blame import Blame
    from .merge import Conflict, MergeResult, Resolution, Strategy
    from .redaction import Redaction, Selection, Version
    from .revert import Match
    from .review import ChangedBy
    from .search import Condition, Hit, Query
    from .stamps import Stamped
    from .timeline import Step
    from .verify import Report

__all__ = [
    "Bisected",
    "BranchInfo",
    "ChangePage",
    "Collected",
    "Erasing",
    "Expired",
    "Found",
    "MergeOutcome",
    "NodeChange",
    "Page",
    "Proposal",
    "ProposedChange",
    "Ranker",
    "Redacted",
    "Reverted",
    "RevertedFact",
    "SkippedFact",
    "Status",
    "Timeline",
    "TimelineEntry",
    "Written",
    "add",
    "bisect",
    "blame",
    "blame_many",
    "branch_create",
    "branch_delete",
    "branch_list",
    "changes",
    "check_reason",
    "checkout",
    "commit",
    "count",
    "diff",
    "diff_proposed",
    "embed",
    "expire",
    "export",
    "export_to_file",
    "gc",
    "head",
    "import_",
    "init",
    "load_nodes",
    "log",
    "ls_objects",
    "merge",
    "namespaces",
    "page",
    "pushes_of",
    "redact",
    "redactions",
    "reindex",
    "resolve",
    "revert",
    "rm",
    "search",
    "show",
    "show_node",
    "show_stat",
    "similar",
    "stamps",
    "status",
    "threads_of",
    "timeline",
    "touch",
    "unstage",
    "verify",
    "write",
]


class NodeChange(NamedTuple):
    """One node's difference between two memories, with both values loaded."""

    id: str
    kind: str
    old: MemoryNode | None
    new: MemoryNode | None

    def to_dict(self) -> dict[str, Any]:
        """SDK ``NodeChange.to_dict()``."""
        return {"id": self.id, "kind": self.kind, "old": _node_dict(self.old), "new": _node_dict(self.new)}


class ProposedChange(NamedTuple):
    """One change a branch proposes (``mnem diff A...B``) and the commit on that branch that made it."""

    change: NodeChange
    by: ChangedBy | None

    def to_dict(self) -> dict[str, Any]:
        """``NodeChange``'s shape plus ``"by"``: that commit's ``{commit, author, message, time}`` (or null)."""
        return {**self.change.to_dict(), "by": self.by.to_dict() if self.by is not None else None}


class Proposal(NamedTuple):
    """What merging ``tip`` would propose: its changes since ``base``, the merge base, in node-id order."""

    tip: bytes
    base: bytes
    changes: list[ProposedChange]


class Status(NamedTuple):
    """HEAD, its tip, and what is staged against it."""

    head: Head
    tip: bytes | None
    tip_subject: str
    staged: list[tuple[str, bytes]]
    deletions: list[str]
    changes: list[NodeChange]
    format_version: int


class BranchInfo(NamedTuple):
    """A branch, its tip, the tip's message and whether HEAD is attached to it."""

    name: str
    tip: bytes
    message: str
    current: bool


class Expired(NamedTuple):
    """What ``expire`` did: the commit removing expired nodes (``written.commit`` None when none) and their ids."""

    written: Written
    removed: list[str]


class MergeOutcome(NamedTuple):
    """A merge's result, with the nodes its conflicts name and the new commit's message."""

    result: MergeResult
    nodes: dict[bytes, MemoryNode]
    message: str | None

    def conflict_dict(self, conflict: Conflict) -> dict[str, Any]:
        """SDK ``Conflict.to_dict()``."""
        sides = {"base": conflict.base, "ours": conflict.ours, "theirs": conflict.theirs}
        return {"id": conflict.id, "kind": conflict.kind,
                **{name: _node_dict(self.nodes.get(raw) if raw is not None else None) for name, raw in sides.items()}}

    def to_dict(self) -> dict[str, Any]:
        """SDK ``MergeResult.to_dict()``."""
        result = self.result
        return {
            "status": result.status,
            "commit": result.commit.hex() if result.commit is not None else None,
            "conflicts": [self.conflict_dict(c) for c in result.conflicts],
        }


class Bisected(NamedTuple):
    """The first commit where a predicate holds, its message, and the blame of the node there."""

    commit: bytes
    message: str
    blame: Blame | None


class TimelineEntry(NamedTuple):
    """One change of a node: the chain's commit, the commit that wrote the value, and the values on each side."""

    commit: bytes
    commit_obj: Commit
    origin: bytes
    origin_obj: Commit
    kind: str
    value: MemoryNode | None
    previous: MemoryNode | None


class Timeline(NamedTuple):
    """A page of a node's history, newest first, and the commit the next page starts at (None: no more)."""

    entries: list[TimelineEntry]
    next: bytes | None


class ChangePage(NamedTuple):
    """A page of what one commit changed against its first parent, with both values of each node loaded."""

    commit: bytes
    commit_obj: Commit
    total: int
    changes: list[NodeChange]


def _node_dict(node: MemoryNode | None) -> dict[str, Any] | None:
    return node.to_dict() if node is not None else None


def _load(repo: Repo, raw: bytes | None) -> MemoryNode | None:
    return repo.node(raw) if raw is not None else None


def _changes(repo: Repo, old: Nodes, new: Nodes) -> list[NodeChange]:
    return [NodeChange(c.id, c.kind, _load(repo, c.old), _load(repo, c.new)) for c in diff_nodes(old, new)]


# ---------------------------------------------------------------- creating stores
def init(where: Address) -> Address:
    """Create an empty store at ``where`` (a folder or URL) atomically; returns its root folder or URL."""
    Repo.init(where).close()
    return where.absolute() if isinstance(where, Path) else where


def import_(where: Address, document: Any) -> tuple[Address, int]:
    """Create a store at ``where`` from an export document, atomically; returns its root (or URL) and object count.

    The whole document is checked (hashes, links and meaning) before
    anything is created, and the store is built in one transaction and
    published whole, so a refused or interrupted import leaves nothing.
    """
    from .portable import restore

    checked = restore(document)
    Repo.init(where, populate=checked.populate).close()
    return where.absolute() if isinstance(where, Path) else where, checked.count


# ----------------------------------------------------------------------- staging
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


# ----------------------------------------------------------------------- writing
class Erasing:
    """What a ``write`` also redacts from history (``mnem write --erase-deleted``), and, once it ran, what it did.

    Asked: every version of each id the write deletes, and of each node
    under ``prefix``, recorded as removed by ``author`` for ``reason``;
    ``rewrite`` False has PostgreSQL run a plain VACUUM instead of
    rewriting the tables after the commit (``Backend.erasing``).
    Done: ``records`` new to the store, and whether no file still holds the
    bytes (``complete``; if not, ``residue`` says what does, and the fix).
    A plain class, not a dataclass: ``dataclasses`` costs a one-shot read's
    start-up an import it never uses.
    """

    __slots__ = ("author", "complete", "prefix", "reason", "records", "residue", "rewrite")

    def __init__(self, reason: str, author: str, prefix: str | None = None, *, rewrite: bool = True) -> None:
        self.reason, self.author, self.prefix, self.rewrite = reason, author, prefix, rewrite
        self.records: list[Redaction] = []
        self.complete = False
        self.residue = "the write did not commit"


def commit(repo: Repo, message: str, author: str, time_ms: int | None) -> tuple[bytes, Commit]:
    """Commit what is staged; ``time_ms`` None dates it now, never before its parent."""
    with repo.backend.write():
        if not repo.is_dirty():
            raise CommandError("nothing staged; use `mnem add` or `mnem rm` first")
        raw = repo.commit(message, author, time_ms)
        return raw, repo.commit_obj(raw)


def write(
    repo: Repo, puts: list[MemoryNode], deletes: list[str], message: str, author: str, time_ms: int | None,
    *, skip_missing: bool = False, ttls: Mapping[str, int] | None = None,
    vectors: Sequence[tuple[str, MemoryNode, str, bytes]] = (), branch: str | None = None,
    if_absent: Collection[str] = (), erase: Erasing | None = None, orphan: bool = False,
) -> Written:
    """Apply puts and deletes to the branch tip as one commit, bypassing staging.

    In the same transaction, a put in ``ttls`` (node id -> ms) gets a lease
    expiring that long after the commit time, every other put and delete
    ends its lease (``mnem_store.expiry``), and ``vectors`` ``(model, node,
    field, float32 bytes)`` are stored for the nodes' objects.  ``branch``
    (default HEAD's) is the branch written, and the one whose leases change.
    A put whose id is in ``if_absent`` and is at the tip already is left out
    (``Repo.write``), its lease and vectors with it.  With ``erase``, the
    same transaction also redacts every version in history of each id of
    ``deletes`` (and under ``erase.prefix``), and is an erasing one
    (``Backend.erasing``): a crash leaves the write and its erasure both, or
    neither; ``erase`` then holds what was erased.  With ``orphan`` the
    commit has no parent (``Repo.write``).
    """
    if erase is None:
        with repo.backend.write():
            return _write(repo, puts, deletes, message, author, time_ms, skip_missing=skip_missing, ttls=ttls,
                          vectors=vectors, branch=branch, if_absent=if_absent, orphan=orphan)
    from .redaction import erase as erase_versions

    with repo.backend.erasing(rewrite=erase.rewrite) as erasure:
        written = _write(repo, puts, deletes, message, author, time_ms, skip_missing=skip_missing, ttls=ttls,
                         vectors=vectors, branch=branch, if_absent=if_absent, orphan=orphan)
        erase.records = erase_versions(repo, deletes, erase.prefix, at=now_ms(), author=erase.author,
                                       reason=erase.reason)
    erase.complete, erase.residue = erasure.complete, erasure.residue
    return written


def _write(
    repo: Repo, puts: list[MemoryNode], deletes: list[str], message: str, author: str, time_ms: int | None,
    *, skip_missing: bool, ttls: Mapping[str, int] | None, vectors: Sequence[tuple[str, MemoryNode, str, bytes]],
    branch: str | None, if_absent: Collection[str], orphan: bool,
) -> Written:
    """``write``'s changes, inside the caller's write transaction."""
    written = repo.write(puts, deletes, message, author, time_ms, skip_missing=skip_missing, branch=branch,
                         if_absent=if_absent, orphan=orphan)
    if written.commit is not None:
        if if_absent:  # a put left out (its id was at the tip) starts, ends and stores nothing
            skipped = set(if_absent) - {change.id for change in written.changes}
            puts = [node for node in puts if node.id not in skipped]
            ttls = {node_id: ttl for node_id, ttl in (ttls or {}).items() if node_id not in skipped}
            vectors = [row for row in vectors if row[1].id not in skipped]
        record_leases(repo, puts, deletes, ttls or {}, written.commit[1].time, branch=branch)
        for model in {model for model, *_ in vectors}:
            repo.backend.vectors.add(model, [
                (encode_object(node)[0], path, vector) for name, node, path, vector in vectors if name == model
            ])
    return written


def merge(
    repo: Repo, theirs: str, *, resolutions: Mapping[str, Resolution] | None = None,
    strategy: Strategy | None = None, message: str | None = None, author: str, time_ms: int | None,
    dry_run: bool = False,
) -> MergeOutcome:
    """Merge ``theirs`` into the current branch (or, with ``dry_run``, say what merging would do)."""
    from .merge import merge as merge_commit
    from .merge import preview as merge_preview

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


class RevertedFact(NamedTuple):
    """A fact ``revert`` gives back its earlier value (``restored``; None: removes it), and the versions it undoes."""

    id: str
    current: MemoryNode | None
    restored: MemoryNode | None
    undone: list[ChangedBy]

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "action": "restore" | "remove", "current", "restored", "undone": [ChangedBy]}``."""
        return {"id": self.id, "action": "restore" if self.restored is not None else "remove",
                "current": _node_dict(self.current), "restored": _node_dict(self.restored),
                "undone": [by.to_dict() for by in self.undone]}


class SkippedFact(NamedTuple):
    """A fact a reverted version set that a later, other version changed: left as it is (``by`` wrote it)."""

    id: str
    current: MemoryNode | None
    by: ChangedBy
    undone: list[ChangedBy]

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "current", "changed_by": ChangedBy, "undone": [ChangedBy]}``."""
        return {"id": self.id, "current": _node_dict(self.current), "changed_by": self.by.to_dict(),
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
    from .revert import plan

    with repo.backend.read() if dry_run else repo.backend.write():
        branch = repo.attached_branch("revert")
        tip = repo.branch_tip(branch)
        if tip is None:
            raise CommandError(f"nothing to revert: branch {branch} has no commit yet")
        planned = plan(repo, tip, match)
        facts = [RevertedFact(step.id, _load(repo, step.current), _load(repo, step.restored),
                              [_changed_by(repo, raw) for raw in step.undone]) for step in planned.steps]
        skipped = [SkippedFact(skip.id, _load(repo, skip.current), _changed_by(repo, skip.by),
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
    from .review import ChangedBy

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


# ------------------------------------------------------------------ refs and HEAD
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


def resolve(repo: Repo, rev: str) -> bytes:
    """The commit a branch name or id prefix names."""
    with repo.backend.read():
        return repo.resolve(rev)


# ----------------------------------------------------------------------- reading
def holds_checkpoints(repo: Repo) -> bool:
    """Whether any commit of this store ever wrote a LangGraph checkpoint's node, on any branch (one index probe)."""
    from mnem_ids.checkpoints import CHECKPOINT_PREFIX

    with repo.backend.read():
        return repo.ever_named_under(CHECKPOINT_PREFIX)


def log(
    repo: Repo, *, first_parent: bool = False, limit: int | None = None, rev: str | None = None,
    touching: Sequence[str] = (), threads: Sequence[str] = (), since: int | None = None, until: int | None = None,
    every: bool = False,
) -> list[tuple[bytes, Commit]]:
    """History from ``rev`` (default HEAD), or with ``every`` from every branch and HEAD, newest first, in one read.

    The order is ``Repo.log``'s graph order.  With ``touching`` or
    ``threads`` only some commits are listed, decided from each commit's
    change rows (its change set against its first parent), so no state is
    loaded: a commit is listed when it changed a node under one of the
    ``touching`` prefixes (``git log -- PATH``), or, for each of
    ``threads``, when it changed one of that thread's checkpoint nodes or
    no checkpoint node at all (a memory commit).  The filters add up: a
    commit that passes one is listed.  ``since`` / ``until`` (Unix ms,
    inclusive) narrow that to the commits dated in the range.

    ``every`` (``mnem ui``'s history of all branches) lists each commit
    reachable from a branch or from HEAD once.  ``Repo.log`` orders every
    commit by one key (corrected time, then id, descending), whatever the
    walk's start, so the first ``limit`` of the union are among the first
    ``limit`` of each tip's own walk: merging those walks by that key is
    the walk from every tip at once, and the filters drop commits from every
    walk alike.
    """
    keep = None
    if touching or threads:
        from mnem_ids.checkpoints import CHECKPOINT_PREFIX, thread_prefix

        prefixes = tuple(touching) + tuple(thread_prefix(thread) for thread in threads)

        def keep(raw: bytes) -> bool:
            changed = repo.changes_of(raw)
            if any(node_id.startswith(prefixes) for node_id in changed):
                return True
            return bool(threads) and not any(node_id.startswith(CHECKPOINT_PREFIX) for node_id in changed)

    with repo.backend.read():
        head = repo.head_commit()
        if not every:
            return repo.log(repo.resolve(rev) if rev is not None else head,
                            first_parent=first_parent, limit=limit, keep=keep, since=since, until=until)
        tips = {tip for _, tip in repo.branches()} | ({head} if head is not None else set())
        found = {raw: commit for tip in tips
                 for raw, commit in repo.log(tip, first_parent=first_parent, limit=limit, keep=keep, since=since,
                                             until=until)}
        order = sorted(found, key=lambda raw: (repo.corrected_time(found[raw]), raw), reverse=True)
        return [(raw, found[raw]) for raw in order[:limit]]


def threads_of(repo: Repo, commits: Sequence[bytes]) -> dict[bytes, list[str]]:
    """The LangGraph threads whose checkpoint nodes each commit changed, in order of first appearance, in one read.

    Read from the commits' change rows, so no state is loaded; a memory
    commit has ``[]``.  ``mnem ui``'s history tells by it what the graph did
    from what the agent learnt.
    """
    from mnem_ids.checkpoints import thread_of

    with repo.backend.read():
        return {raw: list(dict.fromkeys(thread for node_id in repo.changes_of(raw)
                                        if (thread := thread_of(node_id)) is not None))
                for raw in commits}


def pushes_of(repo: Repo, commits: Collection[bytes]) -> dict[bytes, Push]:
    """Who pushed each of ``commits`` into this store and when, for those a push brought (one read).

    A read of its own, after the one that listed the commits: a push record
    is written in the transaction that writes its commits and never changes,
    so every commit that read saw has its record in this one.
    """
    if not commits:
        return {}
    with repo.backend.read():
        return repo.backend.pushes.of(commits)


def head(repo: Repo) -> tuple[Head, bytes | None]:
    """HEAD and the commit it names (None on an unborn branch), without reading any memory."""
    with repo.backend.read():
        return repo.head(), repo.head_commit()


def status(repo: Repo) -> Status:
    """HEAD, its tip and what is staged."""
    with repo.backend.read():
        head = repo.head()
        tip = repo.head_commit()
        changes = _changes(repo, repo.commit_nodes(tip), repo.working_nodes())
        subject = repo.commit_obj(tip).message if tip else ""
        version = int(repo.config["format_version"])
        return Status(head, tip, subject, repo.staged(), repo.staged_deletions(), changes, version)


def count(repo: Repo, rev: str) -> int:
    """How many nodes the memory at ``rev`` holds: its state map, counted without loading a node."""
    with repo.backend.read():
        return len(repo.commit_nodes(repo.resolve(rev)))


def show(repo: Repo, rev: str | None = None) -> dict[str, MemoryNode]:
    """The memory at ``rev``, or working memory, in node-id order."""
    with repo.backend.read():
        nodes = repo.working_nodes() if rev is None else repo.commit_nodes(repo.resolve(rev))
        return repo.nodes_of(nodes)


class Page(NamedTuple):
    """One page of a memory in id order: the object id of each node on it, and where the next page starts.

    Attributes:
        nodes: Node id -> object id, in id order (at most the page's limit).
        next_cursor: The last id of this page when more follow (pass it as ``cursor`` for the next
            page), else None.
    """

    nodes: dict[str, bytes]
    next_cursor: str | None


def page(
    repo: Repo, rev: str | None = None, *, prefixes: Sequence[str] | None = None, cursor: str | None = None,
    limit: int | None = None,
) -> Page:
    """Up to ``limit`` (None: all) nodes of working memory or of ``rev``, in id order, after ``cursor``.

    Only the ids are read whole (sorted once per state image with
    prefixes, else per call); no node object is read here, so the caller
    decodes just the page.  A cursor is an id, not a position: a page
    read after a write still starts where the last one ended.
    """
    with repo.backend.read():
        if rev is None:
            nodes = repo.working_nodes(prefixes)
        else:
            commit = repo.resolve(rev)
            nodes = repo.commit_nodes(commit) if prefixes is None else repo.commit_nodes_under(commit, prefixes)
    ordered = sorted(nodes)
    start = 0 if cursor is None else bisect_right(ordered, cursor)
    end = len(ordered) if limit is None else start + limit
    picked = ordered[start:end]
    more = end < len(ordered)
    return Page({node_id: nodes[node_id] for node_id in picked}, picked[-1] if more and picked else None)


def load_nodes(repo: Repo, raws: Sequence[bytes]) -> dict[bytes, MemoryNode]:
    """Node objects by object id, read in one snapshot and in chunks (not one statement per node)."""
    with repo.backend.read():
        repo.objects.prefetch(raws)
        return {raw: repo.node(raw) for raw in raws}


def show_node(repo: Repo, node_id: str, rev: str | None = None) -> MemoryNode | None:
    """One node of working memory or of ``rev``, looked up alone (never loading the whole state)."""
    with repo.backend.read():
        return _load(repo, repo.working_node(node_id) if rev is None else repo.node_at(repo.resolve(rev), node_id))


def show_stat(repo: Repo, rev: str | None = None) -> dict[str, str]:
    """What a commit (default HEAD's) changed against its first parent, in node-id order."""
    with repo.backend.read():
        commit_raw = repo.resolve(rev) if rev is not None else repo.head_commit()
        if commit_raw is None:
            raise CommandError("nothing to show: HEAD has no commit")
        changed = repo.changes_of(commit_raw)
        return {node_id: changed[node_id] for node_id in sorted(changed)}


def changes(repo: Repo, rev: str, offset: int = 0, limit: int | None = None) -> ChangePage:
    """What commit ``rev`` changed against its first parent, ``limit`` nodes from ``offset`` in node-id order.

    Each node's value before and after is looked up alone, so a page costs
    its own nodes even when the commit changed thousands (an import).
    """
    with repo.backend.read():
        raw = repo.resolve(rev)
        commit_obj = repo.commit_obj(raw)
        changed = repo.changes_of(raw)
        picked = sorted(changed)[offset:None if limit is None else offset + limit]
        parent = commit_obj.parents[0] if commit_obj.parents else None
        found = []
        for node_id in picked:
            old, new = repo.node_at(parent, node_id), repo.node_at(raw, node_id)
            found.append(NodeChange(node_id, changed[node_id], _load(repo, old), _load(repo, new)))
        return ChangePage(raw, commit_obj, len(changed), found)


def timeline(repo: Repo, node_id: str, at: str | None = None, *, limit: int) -> Timeline:
    """Up to ``limit`` changes of a node on the first-parent history of ``at`` (default HEAD's commit), newest first.

    See ``mnem_store.timeline``: the cost follows the node's changes, not the history's length.
    """
    from .timeline import steps

    with repo.backend.read():
        start = repo.resolve(at) if at is not None else repo.head_commit()
        if start is None:
            return Timeline([], None)
        found, onward = steps(repo, node_id, start, limit)
        return Timeline([_entry(repo, step) for step in found], onward)


def _entry(repo: Repo, step: Step) -> TimelineEntry:
    return TimelineEntry(step.commit, repo.commit_obj(step.commit), step.origin, repo.commit_obj(step.origin),
                         step.kind, _load(repo, step.value), _load(repo, step.previous))


def diff(repo: Repo, old: str | None = None, new: str | None = None) -> list[NodeChange]:
    """From ``old`` (default HEAD's commit) to ``new`` (default working memory)."""
    with repo.backend.read():
        before = repo.commit_nodes(repo.resolve(old) if old is not None else repo.head_commit())
        after = repo.commit_nodes(repo.resolve(new)) if new is not None else repo.working_nodes()
        return _changes(repo, before, after)


def diff_proposed(repo: Repo, into: str, branch: str) -> Proposal:
    """``mnem diff INTO...BRANCH``: what merging ``branch`` into ``into`` would propose, and who proposed it.

    ``branch``'s memory against its merge base with ``into`` (``into``'s own changes since are left out),
    each change with the commit on ``branch``'s side that made it (``mnem_store.review``), read in one
    snapshot so the base, the states and the commits agree.

    Raises:
        InvalidRefError: A revision names no commit, or the two have no single merge base.
    """
    from .graph import Graph
    from .review import changed_by, review_base

    with repo.backend.read():
        ours, theirs = repo.resolve(into), repo.resolve(branch)
        graph = Graph(repo)
        base = review_base(graph, ours, theirs, (into, branch))
        after = repo.commit_nodes(theirs)
        changes = _changes(repo, repo.commit_nodes(base), after)
        by = changed_by(repo, graph, theirs, base, {change.id: after.get(change.id) for change in changes})
        return Proposal(theirs, base, [ProposedChange(change, by[change.id]) for change in changes])


def blame(repo: Repo, node_id: str, at: str | None = None) -> tuple[Blame, Commit]:
    """The commit and provenance behind a node's value, and that commit (its message, its author)."""
    from .blame import blame as blame_node

    with repo.backend.read():
        found = blame_node(repo, node_id, at)
        return found, repo.commit_obj(found.commit)


def blame_many(repo: Repo, node_ids: Sequence[str], at: str | None = None) -> dict[str, tuple[Blame, Commit]]:
    """Blame each of ``node_ids`` as of ``at`` (default HEAD's commit) in one snapshot, with the commits found.

    Ids absent there are left out.  Each blame is blame's own probes (one
    shared ``Graph``), so a page of facts costs the page, not the history.
    """
    from .blame import find_blame
    from .graph import Graph

    with repo.backend.read():
        start = repo.resolve(at) if at is not None else repo.head_commit()
        if start is None:
            return {}
        graph = Graph(repo)
        found = {}
        for node_id in node_ids:
            blamed = find_blame(repo, node_id, start, graph)
            if blamed is not None:
                found[node_id] = (blamed, graph.commit(blamed.commit))
        return found


def bisect(repo: Repo, node_id: str, predicate: Predicate, *, bad: str | None = None,
           good: str | None = None, include_root: bool = False) -> Bisected:
    """The first commit on ``bad``'s first-parent chain where ``predicate`` holds, explained by a blame.

    ``include_root`` (with no ``good``) lets the chain's root be the answer (``mnem bisect --include-root``).
    """
    from .bisect import bisect as bisect_commit
    from .blame import find_blame

    with repo.backend.read():
        boundary = bisect_commit(repo, predicate, bad=bad, good=good, include_root=include_root)
        return Bisected(boundary, repo.commit_obj(boundary).message, find_blame(repo, node_id, boundary))


def _read_start(repo: Repo, rev: str | None) -> tuple[bytes | None, str | None]:
    """Where a read starts: ``rev``'s commit, else HEAD's, with HEAD's branch when it reads HEAD (None otherwise).

    A lease applies only to a read of HEAD's branch; the branch comes from the same read of HEAD.
    """
    if rev is not None:
        return repo.resolve(rev), None
    head, commit = repo.head_and_commit()
    return commit, head.branch


def stamps(
    repo: Repo, rev: str | None = None, ids: list[str] | None = None, prefixes: list[str] | None = None,
    *, live: bool = False,
) -> dict[str, Stamped]:
    """The memory at ``rev`` (default HEAD's commit) with each node's created and updated times.

    ``ids`` and ``prefixes`` narrow it to those nodes (their union); neither means every node.
    ``live`` (HEAD's branch only) leaves out nodes whose lease has run out
    and stamps the others' expiry (``mnem_store.expiry``).
    """
    from .stamps import node_stamps

    if live:
        refuse_rev(rev, "stamps")
    with repo.backend.read():
        start, branch = _read_start(repo, rev)
        stamped = node_stamps(repo, start, ids, prefixes)
        if not live:
            return stamped
        leases = live_leases(repo, branch, list(stamped))
        if not leases:  # nothing leased: every node is live, with no expiry
            return stamped
        return {
            node_id: entry._replace(expires=leases.get(node_id))
            for node_id, entry in stamped.items()
            if node_id not in leases or leases[node_id] is not None  # an expired lease hides its node
        }


def valid_at(
    repo: Repo, when: int, rev: str | None = None, ids: list[str] | None = None, prefixes: list[str] | None = None,
) -> dict[str, Stamped]:
    """The nodes valid at ``when`` (Unix ms) along the first-parent line of ``rev`` (default HEAD's commit).

    What was true then by the facts' own ``event_time`` (else their commit's time), not what was known then
    (``mnem_store.validtime``).  ``ids`` and ``prefixes`` narrow it as for ``stamps``.
    """
    from .validtime import valid_at as valid

    with repo.backend.read():
        return valid(repo, repo.resolve(rev) if rev is not None else repo.head_commit(), when, ids, prefixes)


def ls(repo: Repo, rev: str | None = None, prefixes: list[str] | None = None, *, live: bool = False,
       last: int | None = None) -> list[str]:
    """The node ids in the memory at ``rev`` (default HEAD's commit), in id order; only those under ``prefixes``.

    ``live`` leaves out nodes whose lease on HEAD's branch has run out;
    ``last`` keeps only the last that many (the greatest ids): where ids
    sort by time, as LangGraph's checkpoint ids do, the newest, without
    sending a whole thread's ids to find one.

    Reads the state's map alone, never a node: what a namespace listing needs.
    """
    if live:
        refuse_rev(rev, "ls")
    with repo.backend.read():
        start, branch = _read_start(repo, rev)
        found = sorted(repo.commit_nodes(start) if prefixes is None else repo.commit_nodes_under(start, prefixes))
        if live:
            leases = live_leases(repo, branch, None)
            found = [node_id for node_id in found if node_id not in leases or leases[node_id] is not None]
        return found if last is None else found[len(found) - last:] if last else []


def ls_objects(
    repo: Repo, rev: str | None = None, prefixes: list[str] | None = None, *, live: bool = False,
    unless: bytes | None = None,
) -> tuple[bytes | None, Nodes | None, list[str]]:
    """The commit read (None: unborn), its node ids under ``prefixes`` with their object ids, and the expired ones.

    What a client that keeps values by object id needs to answer a search
    (``mnem ls --objects``): which values the candidates hold, without
    reading a node.  The nodes are the commit's, in id order, whatever
    their leases; with ``live``, the third item lists those whose lease on
    HEAD's branch has run out (else it is empty).  A commit's nodes never
    change: when the commit read is ``unless`` (the one the client already
    listed), the nodes are left out (None) and only what has expired is new.
    """
    if live:
        refuse_rev(rev, "ls")
    with repo.backend.read():
        start, branch = _read_start(repo, rev)
        nodes = _nodes_at(repo, start, prefixes)
        expired = sorted(nid for nid, expires in live_leases(repo, branch, None).items()
                         if expires is None and nid in nodes) if live else []
        if start is not None and start == unless:
            return start, None, expired
        return start, dict(sorted(nodes.items())) if prefixes is None else nodes, expired


#: Node maps (a commit's, under some prefixes or ids) a store keeps for ``ls --objects`` and ``similar``.
CACHE_LISTINGS = 8


def _nodes_at(repo: Repo, start: bytes | None, prefixes: list[str] | None, ids: list[str] | None = None) -> Nodes:
    """The nodes of commit ``start`` among ``ids`` and under ``prefixes`` (neither: all), not to be changed.

    A commit's nodes never change, so the map is kept by the commit and
    what was asked (``mnem_store.cache``'s shelves): a search of the same
    namespace at the same commit costs a lookup, not a walk of its ids.
    """
    if start is None:
        return {}
    key = (start, None if prefixes is None else tuple(sorted(set(prefixes))), None if ids is None else tuple(ids))
    shelf = repo.backend.kept.shelf("listings", CACHE_LISTINGS)
    found: Nodes | None = shelf.find(key)
    if found is None:
        if ids is None and prefixes is None:
            found = repo.commit_nodes(start)
        else:  # only the nodes asked for: a namespace's search does not copy the whole state
            found = {**repo.commit_nodes_under(start, prefixes or ()), **repo.commit_nodes_named(start, ids or ())}
        shelf.keep(key, found)
    return found


def touch(repo: Repo, ids: list[str]) -> dict[str, int]:
    """Restart the unexpired leases of ``ids`` on HEAD's branch now; returns their new expiry (``expiry``)."""
    with repo.backend.write():
        return repo.backend.leases.touch(repo.attached_branch("touch"), ids, now_ms())


def expire(repo: Repo, author: str, time_ms: int | None = None) -> Expired:
    """Remove the nodes whose lease on the branch has run out, as one commit, and forget every expired lease.

    No node to remove makes no commit.  The message names the nodes (the
    first three, each cut as ``limits.in_message`` cuts a long id, then how
    many more) so ``log`` says why they went.
    """
    with repo.backend.write():
        branch = repo.attached_branch("expire")
        now = time_ms if time_ms is not None else now_ms()
        gone, expired = expired_present(repo, branch, now)
        written = Written(None, [])
        if gone:
            shown = ", ".join(map(in_message, gone[:3])) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
            message = f"expire {shown} (TTL ran out)"
            written = repo.write([], gone, message, author, now)
        repo.backend.leases.drop(branch, expired)
        return Expired(written, gone)


def embed(repo: Repo, model: str, vectors: Mapping[str, Sequence[tuple[str, bytes]]], rev: str | None = None) -> int:
    """Store vectors for the values nodes hold at ``rev`` (default HEAD's commit), without a commit.

    What an adapter runs to (re)build its index, e.g. for a new embedding
    model: ``vectors`` maps node ids to ``(field, float32 bytes)`` pairs;
    ids absent at ``rev`` are skipped.  Returns how many nodes got vectors.
    """
    with repo.backend.write():
        start = repo.resolve(rev) if rev is not None else repo.head_commit()
        held = repo.commit_nodes(start)
        rows = [(held[node_id], field, vector) for node_id, pairs in vectors.items() if node_id in held
                for field, vector in pairs]
        repo.backend.vectors.add(model, rows)
        return len({node_id for node_id in vectors if node_id in held})


def similar(
    repo: Repo, model: str, query: bytes, rev: str | None = None, ids: list[str] | None = None,
    prefixes: list[str] | None = None, *, live: bool = False, limit: int | None = None, distance: str = "cosine",
) -> dict[str, float]:
    """The score of ``query`` against each node's closest embedded field under ``model`` (``similarity``).

    Candidates are the nodes at ``rev`` (default HEAD's commit) among
    ``ids`` and under ``prefixes`` (their union; neither: every node), less
    expired ones with ``live``; nodes with no vector for the model are left
    out.  Scored by ``distance`` (``similarity.DISTANCES``), best first, at most ``limit``.
    """
    from .similarity import require_numpy

    require_numpy()
    if live:
        refuse_rev(rev, "similar")
    with repo.backend.read():
        start, branch = _read_start(repo, rev)
        if start is None:
            return {}
        expired = [nid for nid, expires in live_leases(repo, branch, None).items() if expires is None] if live else []
        return _scored(repo, start, model, query, prefixes, ids, expired, limit, distance)


def _scored(
    repo: Repo, start: bytes, model: str, query: bytes, prefixes: list[str] | None, ids: list[str] | None,
    expired: Collection[str], limit: int | None, distance: str,
) -> dict[str, float]:
    """``similar``'s scores at commit ``start``, inside the caller's read (``mnem similar``, ``mnem search``)."""
    from .similarity import CACHE_OBJECTS, CACHE_STACKS, scores

    # A commit's nodes under given prefixes or ids never change: their stacked vectors are kept under that.
    key = (start, None if prefixes is None else tuple(sorted(set(prefixes))), None if ids is None else tuple(ids))
    return scores(query, lambda: _nodes_at(repo, start, prefixes, ids), model,
                  lambda raws: repo.backend.vectors.of(model, raws),
                  repo.backend.kept.shelf("vectors", CACHE_OBJECTS), limit, distance,
                  stacks=repo.backend.kept.shelf("vector stacks", CACHE_STACKS), key=key, excluded=expired)


class Found(NamedTuple):
    """One item of a search's page (``mnem search``): the hit, its two stamps, and its lease's expiry (None: none)."""

    hit: Hit
    created: int
    updated: int
    expires: int | None


class Ranker(NamedTuple):
    """What a ``vector`` or ``hybrid`` search ranks by: the query's vector, the model, the distance."""

    model: str
    vector: bytes
    distance: str = "cosine"


def search(
    repo: Repo, query: Query, rev: str | None = None, *, live: bool = False, ranker: Ranker | None = None,
    valid_at: int | None = None,
) -> list[Found]:
    """A page of LangGraph items (``mnem_store.search``) at ``rev`` (default HEAD's commit), in one read.

    ``live`` (HEAD's branch only) leaves out items whose lease has run out.
    ``ranker`` is needed by a query in ``vector`` or ``hybrid`` mode.  Only
    the page's items are stamped (created, updated) and returned.
    ``valid_at`` (Unix ms) searches the items valid then along ``rev``'s
    history instead (``valid_at``), stamped in valid time; vectors still
    score the values ``rev`` holds.
    """
    from mnem_ids.items import id_prefix

    from .search import rank
    from .stamps import node_stamps

    if live:
        refuse_rev(rev, "search")
    with repo.backend.read():
        start, branch = _read_start(repo, rev)
        prefix = id_prefix(query.namespace)
        prefixes = [prefix] if prefix else None
        valid = _valid(repo, start, valid_at, prefixes)
        nodes = _nodes_at(repo, start, prefixes) if valid is None else {n: s.object for n, s in valid.items()}
        leases = live_leases(repo, branch, None) if live else {}
        expired = {nid for nid, expires in leases.items() if expires is None and nid in nodes}
        vectors = None
        if ranker is not None and start is not None and query.query and query.mode in ("vector", "hybrid"):
            vectors = _scored(repo, start, ranker.model, ranker.vector, prefixes, None, expired, None, ranker.distance)
        page = rank(repo, start, prefix, nodes, expired, query, vectors, valid_at)
        stamped = valid if valid is not None else node_stamps(repo, start, [hit.id for hit in page])
        return [Found(hit, stamped[hit.id].created, stamped[hit.id].updated, leases.get(hit.id)) for hit in page]


def _valid(
    repo: Repo, start: bytes | None, when: int | None, prefixes: list[str] | None,
) -> dict[str, Stamped] | None:
    """The nodes under ``prefixes`` valid at ``when`` along ``start``'s history (``validtime``); None without it."""
    if when is None:
        return None
    from .validtime import valid_at as valid

    return valid(repo, start, when, None, prefixes)


def namespaces(
    repo: Repo, conditions: Sequence[Condition] = (), rev: str | None = None, *, live: bool = False,
    max_depth: int | None = None, limit: int = 100, offset: int = 0, valid_at: int | None = None,
) -> list[tuple[str, ...]]:
    """LangGraph's ``list_namespaces`` at ``rev`` (default HEAD's commit), in one read of ids alone.

    Only the ids under the first prefix condition's labels (up to its first
    ``"*"``) are read; ``live`` (HEAD's branch only) leaves out expired ones.
    ``valid_at`` (Unix ms) lists the namespaces of the items valid then along ``rev``'s history.
    """
    from mnem_ids.items import id_prefix

    from .search import list_namespaces, namespace_sizes

    if live:
        refuse_rev(rev, "namespaces")
    labels = next((condition.id_prefix_labels() for condition in conditions if condition.kind == "prefix"), ())
    prefix = id_prefix(labels)
    with repo.backend.read():
        start, branch = _read_start(repo, rev)
        if start is None:
            return []
        valid = _valid(repo, start, valid_at, [prefix] if prefix else None)
        nodes = _nodes_at(repo, start, [prefix] if prefix else None) if valid is None else {
            n: s.object for n, s in valid.items()}
        leases = live_leases(repo, branch, None) if live else {}
        expired = [nid for nid, expires in leases.items() if expires is None and nid in nodes]
        return list_namespaces(namespace_sizes(repo, start, prefix, nodes, valid_at), expired, conditions, max_depth,
                               limit, offset)


# --------------------------------------------------------------- whole-store verbs
def export(repo: Repo, *, seal: bool = False) -> dict[str, Any]:
    """The whole store as upstream's export document; with ``seal``, plus the seal that import checks."""
    from .portable import export_document

    with repo.backend.read():
        return export_document(repo, seal=seal)


def export_to_file(repo: Repo, path: Path, *, seal: bool = False) -> int:
    """Write the export to ``path`` atomically (an old file stays whole on failure); returns the object count."""
    from .portable import replace_file

    document = export(repo, seal=seal)
    replace_file(path, document)
    return len(document["objects"])


def verify(repo: Repo) -> Report:
    """Re-hash and cross-check the whole store in one snapshot."""
    from .verify import verify as verify_store

    with repo.backend.read():
        return verify_store(repo)


def reindex(repo: Repo) -> int:
    """Re-derive the change index from the commits; returns how many were checked.

    The rebuild starts a new epoch (``mnem_store.cache``): what any process
    learnt from the old index is no longer trusted.
    """
    with repo.backend.write():
        return repo.rebuild_index()


class Collected(NamedTuple):
    """What ``gc`` dropped (or, on a dry run, would drop), the commits it kept, and the store's size in bytes."""

    commits: int
    objects: int
    before: int
    after: int
    dry_run: bool
    kept: int

    def to_dict(self) -> dict[str, Any]:
        """``{"dry_run", "commits", "objects", "kept_commits", "bytes_before", "bytes_after"}`` (docs/cli-json.md)."""
        return {"dry_run": self.dry_run, "commits": self.commits, "objects": self.objects,
                "kept_commits": self.kept, "bytes_before": self.before, "bytes_after": self.after}


def gc(repo: Repo, *, dry_run: bool = False, rewrite: bool = True) -> Collected:
    """Drop every commit and object nothing reaches (``mnem_store.collect``), then give their space back.

    One write transaction that no other write runs beside (``Backend.exclusive``), then, after it commits,
    ``Backend.compact`` (``rewrite`` False: the files keep their size and later writes reuse the space).  A dry
    run is one read and changes nothing.
    """
    from .collect import collect

    before = repo.backend.size()
    if dry_run:
        with repo.backend.read():
            dropped = collect(repo, dry_run=True)
        return Collected(dropped.commits, dropped.objects, before, before, True, dropped.kept)
    with repo.backend.exclusive():
        dropped = collect(repo, dry_run=False)
    repo.backend.compact(rewrite=rewrite)
    return Collected(dropped.commits, dropped.objects, before, repo.backend.size(), False, dropped.kept)


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
    from .errors import UsageError

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
    from .redaction import Redaction, apply, select

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
