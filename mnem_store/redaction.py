"""Redaction: which node versions a request names, and removing their bytes from the whole history.

A node object's id hashes its content, so its bytes can go while every id
that names it (states, commits, change rows) stays and still verifies: a
redaction sets the object's stored bytes to nothing, drops its vectors and
keeps a record of who removed it, when and why (``Backend.redactions``).
Reads then answer the record (``MemoryNode.redacted``) in place of the old
value; ``verify`` accepts missing bytes only where a record says so.

A request names *versions* (node objects), by four kinds of criteria:

* where: node ids (every version each id ever had, in any commit of the
  store or staged), a node-id prefix, object ids;
* a provenance match: the version's own ``source``, ``agent_step`` or
  ``observation``, or the author of a commit that wrote it, matched by the
  rule ``mnem revert`` matches by (``provenance.ProvenanceMatch``).

A version is chosen when it is named by one of the "where" criteria (any
version, when none is given) and matches every provenance field given.
Everything here runs inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, NamedTuple

from .backend import KIND_CODES
from .canonical import hex_id
from .errors import CommandError, UsageError
from .objects import Redaction
from .provenance import ProvenanceMatch

if TYPE_CHECKING:
    from .repo import Repo

__all__ = ["Redaction", "Selection", "Version", "apply", "erase", "record_of", "recorded", "select"]

_NODE = KIND_CODES["memory_node"]


class Selection(NamedTuple):
    """What a redaction request names (see the module docstring for how the criteria combine)."""

    nodes: tuple[str, ...] = ()
    objects: tuple[bytes, ...] = ()
    prefix: str | None = None
    source: str | None = None
    step: str | None = None
    observation: str | None = None
    author: str | None = None

    def provenance(self) -> ProvenanceMatch:
        """The provenance match: the node's fields and the commit author, matched as ``mnem revert`` matches them."""
        return ProvenanceMatch(self.source, self.step, self.observation, self.author)

    def is_empty(self) -> bool:
        """Whether it names nothing at all (a request must name something: it never means "everything")."""
        return not (self.nodes or self.objects or self.prefix is not None) and self.provenance().is_empty()


class Version(NamedTuple):
    """One node version a request chose: its object, node id, the commits that wrote it, and its record if any."""

    object: bytes
    node_id: str
    commits: tuple[bytes, ...]
    redacted: Redaction | None


def recorded(repo: Repo) -> dict[bytes, Redaction]:
    """Every redaction record of the store, by object id."""
    return {record.object: record for record in repo.backend.redactions.every()}


def record_of(repo: Repo, raw: bytes) -> Redaction | None:
    """The redaction record of one object, or None when its bytes were never redacted."""
    return repo.backend.redactions.of([raw]).get(raw)


def apply(repo: Repo, records: Iterable[Redaction]) -> list[Redaction]:
    """Remove the bytes of these records' objects and keep the records (write transaction).

    Records already kept stay as they were (the first record of an object
    wins); returns the records that are new to this store.  A record for an
    object the store does not hold is kept too, so that bytes which arrive
    later (a pack, an import) are known to be unwanted.
    """
    repo._in_write()
    return repo.backend.redactions.remove(records)


def erase(repo: Repo, nodes: Collection[str], prefix: str | None, *, at: int, author: str,
          reason: str) -> list[Redaction]:
    """Redact every version ``nodes`` and the nodes under ``prefix`` ever had, in history or staged (write transaction).

    What a write that deletes nodes erases beside its commit (``mnem write
    --erase-deleted``): unlike ``select``, an id no version was ever stored
    under, or a prefix nothing lies under, names nothing and is no error (a
    delete the write skipped, or a thread never checkpointed).  Versions
    redacted before keep their first record; returns the records new to the store.
    """
    repo._in_write()
    if not nodes and prefix is None:
        return []
    if prefix == "":
        raise UsageError("--erase-prefix '' names every node of the store: give the prefix the nodes to erase share")
    names = {raw: node_id for _, node_id, raw in repo.backend.states.versions(tuple(nodes), prefix)}
    wanted = set(nodes)
    names.update((raw, node_id) for node_id, raw in repo.staged()
                 if node_id in wanted or (prefix is not None and node_id.startswith(prefix)))
    return apply(repo, [Redaction(raw, node_id, at, author, reason) for raw, node_id in names.items()])


def select(repo: Repo, selection: Selection) -> list[Version]:
    """The node versions ``selection`` names, in the order history first wrote them (read or write transaction).

    Raises:
        UsageError: The selection names nothing, or an object id that is not a node version.
        CommandError: ``not_found``: a named node id or object is in no commit, staging or object of this store,
            or nothing matches the selection.
    """
    if selection.prefix == "":
        raise UsageError("--prefix '' names every node of the store: give the prefix the nodes to redact share")
    if selection.is_empty():
        raise UsageError(
            "name what to redact: --node ID, --prefix P, --object HEX, or a provenance match "
            "(--source, --step, --observation, --author); a redaction never means everything"
        )
    writers: dict[bytes, list[bytes]] = {}
    names: dict[bytes, str] = {}
    # Named by ids or a prefix alone: only their change rows are read; otherwise every one.
    narrow = not selection.objects and bool(selection.nodes or selection.prefix is not None)
    ids, prefix = (selection.nodes, selection.prefix) if narrow else (None, None)
    for commit, node_id, raw in repo.backend.states.versions(ids, prefix):
        writers.setdefault(raw, []).append(commit)
        names.setdefault(raw, node_id)
    for node_id, raw in repo.staged():  # few; ``_where`` keeps those the request names
        writers.setdefault(raw, [])
        names.setdefault(raw, node_id)
    wanted = _where(repo, selection, names, writers)
    records = repo.backend.redactions.of(wanted)
    chosen = [
        Version(raw, names[raw], tuple(_writers(repo, names[raw], raw, writers.get(raw, []))), records.get(raw))
        for raw in wanted
    ]
    chosen = [version for version in chosen if _matches(repo, selection, version)]
    if not chosen:
        raise CommandError(
            "no node version matches that selection, so nothing was redacted: check the ids and provenance "
            "(`mnem redact --dry-run` with fewer criteria lists what they match)", "not_found"
        )
    return chosen


def _where(repo: Repo, selection: Selection, names: dict[bytes, str], writers: dict[bytes, list[bytes]]) -> list[bytes]:
    """The object ids the "where" criteria name, in history's order (every version when none is given)."""
    if not (selection.nodes or selection.objects or selection.prefix is not None):
        return list(names)
    by_node: dict[str, list[bytes]] = {}
    for raw, node_id in names.items():
        by_node.setdefault(node_id, []).append(raw)
    missing = [node_id for node_id in selection.nodes if node_id not in by_node]
    if missing:
        shown = ", ".join(repr(node_id) for node_id in missing[:5])
        raise CommandError(f"no commit or staged change of this store ever held the node {shown}, so nothing was "
                           "redacted: check the id (`mnem ls` lists the nodes of HEAD)", "not_found")
    wanted = dict.fromkeys(raw for node_id in selection.nodes for raw in by_node[node_id])
    if selection.prefix is not None:
        wanted.update(dict.fromkeys(raw for raw, node_id in names.items() if node_id.startswith(selection.prefix)))
    for raw in selection.objects:
        row = repo.objects.row(raw)
        if row is None:
            raise CommandError(f"object {hex_id(raw)} is not in this store, so nothing was redacted: check the id "
                               "(`mnem ls --objects` lists the objects of HEAD's nodes)", "not_found")
        if row[1] != _NODE:
            raise UsageError(f"object {hex_id(raw)} is a commit or a state, not a node version: only a node "
                             "version's bytes can be redacted (ids and history stay)")
        if raw not in names:  # a node object no commit or staging names (a leftover): its id comes from its bytes
            names[raw] = repo.node(raw).id
        wanted[raw] = None
    return list(wanted)


def _writers(repo: Repo, node_id: str, raw: bytes, commits: list[bytes]) -> list[bytes]:
    """The commits among ``commits`` (those whose change rows set ``raw``) that wrote it, not merely merged it.

    A merge's change rows hold what it took from its other parents; it wrote
    a version only where no parent held it (a resolution).
    """
    written = []
    for commit in commits:
        parents = repo.commit_obj(commit).parents
        if len(parents) < 2 or all(repo.node_at(parent, node_id) != raw for parent in parents):
            written.append(commit)
    return written


def _matches(repo: Repo, selection: Selection, version: Version) -> bool:
    """Whether a version matches every provenance field given (its node read only when a node field is given)."""
    rule = selection.provenance()
    if not rule.by(repo.commit_obj(commit).author for commit in version.commits):
        return False
    return rule.carried_by(repo.node(version.object) if rule.of_node() else None)
