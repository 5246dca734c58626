"""An open store: the object model over a storage backend.

``Repo`` turns what a ``Backend`` keeps (objects, the change index, refs
with HEAD, staging) back into the object model: states from change rows,
commits with their graph rows, HEAD resolved to a commit.  Its writing
methods run inside the caller's transaction; the porcelain verbs
(``mnem_store.porcelain``) own the transactions, so a command either
happens entirely or not at all.  Algorithms over history (merge, blame,
bisect, stamps) live in their own modules and use only the methods here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .backend import KIND_CODES, Backend, ChangeRow, GraphRow, NewCommit, corrected_time
from .canonical import hex_id
from .clock import now_ms
from .errors import (
    CommandError,
    ConflictError,
    CorruptStoreError,
    InvalidRefError,
    NotFoundError,
    StoreExistsError,
    UsageError,
)
from .layout import CONFIG_TEXT, Head, StoreUrl, parse_config, validate_branch_name
from .location import Address, discover_root, exact_root, make_private_dirs, remove_made_dirs
from .objects import Commit, MemoryNode, State, StoredObject, decode_object, encode_object
from .sqlite import MNEM_DIR, SqliteBackend, io_error
from .stateimage import StateImage

if TYPE_CHECKING:  # remotes and times are imported by the methods that use them: a one-shot read skips both
    from .postgres import Connections, PooledConnections
    from .remotes import Remote

__all__ = ["MNEM_DIR", "Change", "Nodes", "Repo", "StorePools", "default_author", "diff_nodes"]

Nodes = dict[str, bytes]


def default_author(explicit: str | None) -> str:
    """Upstream CLI fallback: ``--author``, else ``$MNEM_AUTHOR`` verbatim, else ``unknown``."""
    return explicit if explicit is not None else os.environ.get("MNEM_AUTHOR", "unknown")


#: A commit-ish followed by git's ancestry suffixes: ``~``/``~N`` (first parents back) and ``^``/``^N`` (a parent).
#: These patterns are compiled on first use (``re`` keeps them): a read of working memory never resolves a revision.
_ANCESTRY = r"(.+?)((?:[~^][0-9]*)+)"
_STEP = r"([~^])([0-9]*)"
#: ``BRANCH@{TIME}`` (git's syntax; an empty BRANCH is HEAD's): the line's newest commit at or before TIME.
_AT_TIME = r"(.*)@\{([^{}]*)\}"

class Written(NamedTuple):
    """A commit made by ``Repo.write`` (None when ``skip_missing`` left nothing to do) and what it changed.

    The commit object comes back with its id, as it was built, so nothing
    after the write reads back what the write just stored.
    """

    commit: tuple[bytes, Commit] | None
    changes: list[Change]


class Change(NamedTuple):
    """One node's difference between two states (object ids; None = absent)."""

    id: str
    kind: str  # "added" | "removed" | "modified"
    old: bytes | None
    new: bytes | None


def diff_nodes(old: Mapping[str, bytes], new: Mapping[str, bytes]) -> list[Change]:
    """Structural diff by object id, in node-id order."""
    changes = []
    for node_id in sorted(old.keys() | new.keys()):
        a, b = old.get(node_id), new.get(node_id)
        if a == b:
            continue
        kind = "added" if a is None else "removed" if b is None else "modified"
        changes.append(Change(node_id, kind, a, b))
    return changes


class StorePools:
    """Connections a long-lived process (a ``mnem serve`` worker) shares among the stores it keeps open.

    One pool per PostgreSQL database, made when its first store is opened:
    a worker serving many stores of one database holds a few connections,
    not one per store.  Stores in folders need none.
    """

    def __init__(self) -> None:
        self._pools: PooledConnections | None = None

    def for_database(self, url: StoreUrl) -> Connections:
        """Where a store in ``url``'s database takes its connections from."""
        if self._pools is None:
            from .postgres import PooledConnections

            self._pools = PooledConnections()
        return self._pools.for_database(url.conninfo)

    def close(self) -> None:
        """Close every pool."""
        if self._pools is not None:
            self._pools.close()
            self._pools = None


class Repo:
    """An open store.  Use as a context manager, or call ``close()``.

    Args:
        backend: The store's open backend (see ``open``, ``discover`` and ``init``); the repo closes it.
    """

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        try:
            with self.backend.read():
                self.config = parse_config(self.backend.config_text())
                self.head()  # a damaged HEAD is reported on open, before any command acts
        except BaseException:
            self.backend.close()
            raise
        self.objects = self.backend.objects
        self.states = self.backend.states

    @property
    def location(self) -> str:
        """Where the store is, as shown to a user (a folder, or a URL without its password)."""
        return self.backend.location

    # ----------------------------------------------------------------- lifecycle
    @classmethod
    def init(cls, where: Address, populate: Callable[[Backend], None] | None = None) -> Repo:
        """Create a store atomically (refusing a folder at or below another store) and open it.

        ``populate`` fills the new store inside its creating transaction (an
        import, a clone); a failure there, a kill, a full disk or a lost
        connection publishes nothing.  A failure also removes the folders
        this call made for the store (a new DEST and its new parents), so it
        leaves nothing behind; a folder that existed before is left as it was.
        """
        meta = {"head": Head(branch="main").text, "config": CONFIG_TEXT}
        if isinstance(where, StoreUrl):
            from .postgres import PostgresBackend  # psycopg is imported only for stores that need it

            PostgresBackend.create(where, meta, populate)
            return cls.open(where)
        target = where / MNEM_DIR
        if target.exists() or target.is_symlink():
            raise StoreExistsError(str(target))
        for ancestor in where.parents:
            if (ancestor / MNEM_DIR).is_dir():
                raise StoreExistsError(str(ancestor / MNEM_DIR))
        try:
            made = make_private_dirs(where)
        except OSError as exc:
            raise io_error(f"creating {where}", exc) from None
        try:
            SqliteBackend.create(where, meta, populate)
        except BaseException:
            remove_made_dirs(made)
            raise
        return cls.open(where)

    @classmethod
    def open(cls, where: Address, pools: StorePools | None = None) -> Repo:
        """Open the store exactly at ``where``: a URL, or a folder holding ``.mnem`` (or that ``.mnem``).

        Nothing walks up from a folder.  A worker passes its ``pools`` so
        that the stores of one PostgreSQL database share connections.
        """
        if isinstance(where, StoreUrl):
            from .postgres import PostgresBackend

            return cls(PostgresBackend.open(where, pools.for_database(where) if pools is not None else None))
        return cls(SqliteBackend.open(exact_root(where) / MNEM_DIR))

    @classmethod
    def discover(cls, start: Path) -> Repo:
        """Open the nearest store at or above ``start`` that the current user owns."""
        return cls(SqliteBackend.open(discover_root(start) / MNEM_DIR))

    def close(self) -> None:
        """Close the backend."""
        self.backend.close()

    def __enter__(self) -> Repo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _in_write(self) -> None:
        """Refuse to write outside a write transaction: a write must never be half-applied by a kill."""
        if not self.backend.writing:
            raise RuntimeError("a write outside a write transaction: use mnem_store.porcelain or backend.write()")

    # ------------------------------------------------------------------- objects
    def put(self, obj: StoredObject) -> bytes:
        """Store an object inside a write transaction; writing an existing id is a no-op."""
        self._in_write()
        raw, data = encode_object(obj)
        self.objects.insert(raw, obj.kind, data)
        return raw

    def get(self, raw: bytes) -> StoredObject:
        """Load an object; a virtual state is rebuilt (and verified) from the commit graph.

        A node version whose bytes were redacted loads as its record says
        (``MemoryNode.redacted``, no content); missing bytes without a record are damage.
        """
        row = self.objects.row(raw)
        if row is None:
            raise NotFoundError(hex_id(raw))
        key, kind, data = row
        if data is None:
            if kind == KIND_CODES["state"]:
                return State(dict(self.states.state_image(key, raw).nodes))
            record = self.backend.redactions.of([raw]).get(raw) if kind == KIND_CODES["memory_node"] else None
            if record is None:
                raise CorruptStoreError(f"{hex_id(raw)} has no stored bytes")
            return MemoryNode(record.node_id, None, redacted=record)
        return decode_object(data)

    def commit_obj(self, raw: bytes) -> Commit:
        """A commit object (``corrupt_store`` when the id names another kind)."""
        obj = self.get(raw)
        if not isinstance(obj, Commit):
            raise CorruptStoreError(f"{hex_id(raw)} is a {obj.kind}, not a commit")
        return obj

    def node(self, raw: bytes) -> MemoryNode:
        """A memory node object."""
        obj = self.get(raw)
        if not isinstance(obj, MemoryNode):
            raise CorruptStoreError(f"{hex_id(raw)} is a {obj.kind}, not a memory node")
        return obj

    def commit_nodes(self, commit_raw: bytes | None) -> Nodes:
        """The state map of a commit, or empty for ``None`` (an unborn branch)."""
        return dict(self._image(commit_raw).nodes)

    def commit_nodes_named(self, commit_raw: bytes | None, ids: Iterable[str]) -> Nodes:
        """The entries of a commit's state map for ``ids`` (those present), without copying the map."""
        nodes = self._image(commit_raw).nodes
        return {node_id: nodes[node_id] for node_id in ids if node_id in nodes}

    def ever_named_under(self, prefix: str) -> bool:
        """Whether any commit of this store ever changed a node whose id starts with ``prefix`` (one probe)."""
        return self.states.ever_named_under(prefix)

    def commit_nodes_under(self, commit_raw: bytes | None, prefixes: Iterable[str]) -> Nodes:
        """The part of a commit's state map whose ids start with one of ``prefixes`` (cost: those nodes)."""
        return self._image(commit_raw).under(prefixes)

    def _graph(self, commit_raw: bytes) -> GraphRow:
        """A commit's graph row; a missing or non-commit id raises as ``commit_obj`` does."""
        row = self.states.graph(commit_raw)
        if row is None:
            self.commit_obj(commit_raw)
            raise CorruptStoreError(f"commit {hex_id(commit_raw)} is not in the commit graph")
        return row

    def _image(self, commit_raw: bytes | None) -> StateImage:
        return StateImage.empty() if commit_raw is None else self.states.image(self._graph(commit_raw))

    def node_at(self, commit_raw: bytes | None, node_id: str) -> bytes | None:
        """The object id ``node_id`` has in a commit's state (None: absent), without loading the state."""
        found = self.change_at(commit_raw, node_id) if commit_raw is not None else None
        return found[1] if found is not None else None

    def change_at(self, commit_raw: bytes, node_id: str) -> tuple[bytes, bytes | None, str] | None:
        """The nearest change of ``node_id`` at or before ``commit_raw`` on its first-parent chain.

        ``(commit, object it set or None when removed, added | modified | removed)``, or None when no
        commit on the chain held the node: the commit that last set it and its value, in one probe.
        """
        return self.states.last_change(self._graph(commit_raw).key, node_id)

    def first_parent_chain(self, commit_raw: bytes) -> list[bytes]:
        """``commit_raw`` and its first-parent ancestors, newest first."""
        return self.states.first_parent_chain(self._graph(commit_raw).key)

    def commit_key(self, commit_raw: bytes) -> int:
        """A commit's key: keys grow along every parent link, so they order any first-parent chain."""
        return self._graph(commit_raw).key

    def chain_at(self, tip: bytes, key: int | None) -> tuple[int, bytes]:
        """``(key, id)`` of the newest commit on ``tip``'s chain with a key at most ``key`` (None: the root).

        One probe (``ChangeIndex.chain_at``), so a search along a first-parent chain never lists it.
        """
        return self.states.chain_at(self._graph(tip).key, key)

    def nodes_of(self, nodes: Nodes) -> dict[str, MemoryNode]:
        """Load every node of a state map, in id order (read in chunks, not one statement per node)."""
        self.objects.prefetch(nodes.values())
        return {node_id: self.node(nodes[node_id]) for node_id in sorted(nodes)}

    # ---------------------------------------------------------------- HEAD, refs
    def head(self) -> Head:
        """HEAD, as the backend holds it."""
        return self.backend.head()

    def set_head(self, head: Head) -> None:
        """Move HEAD (inside a write transaction)."""
        self._in_write()
        if head.branch is not None:
            validate_branch_name(head.branch)
        self.backend.set_head(head)

    def branch_tip(self, name: str) -> bytes | None:
        """A branch's tip, or None."""
        return self.backend.ref(name)

    def head_commit(self) -> bytes | None:
        """The commit HEAD names (None on an unborn branch)."""
        return self.head_and_commit()[1]

    def head_and_commit(self) -> tuple[Head, bytes | None]:
        """HEAD and the commit it names (None on an unborn branch), from one read of HEAD."""
        head = self.head()
        return head, self.branch_tip(head.branch) if head.branch is not None else head.commit

    def branches(self) -> list[tuple[str, bytes]]:
        """Every branch and its tip, by name."""
        return self.backend.refs()

    def remotes(self) -> dict[str, Remote]:
        """The remotes this store knows, with their tracking branches (``mnem_store.remotes``)."""
        from .remotes import SETTING, parse_remotes

        return parse_remotes(self.backend.setting(SETTING))

    def set_remotes(self, remotes: dict[str, Remote]) -> None:
        """Replace the remotes and their tracking branches (inside a write transaction)."""
        from .remotes import SETTING, dump_remotes

        self._in_write()
        self.backend.set_setting(SETTING, dump_remotes(remotes))

    def resolve(self, spec: str) -> bytes:
        """Commit-ish: upstream's, plus git's ``HEAD``, ancestry suffixes (``HEAD~2``, ``main^``, ``a1b2^2``) and times.

        Upstream's is an exact branch name, else a unique 4-64 lowercase-hex commit prefix.  A remote-tracking
        branch (``origin/main``) resolves where no branch has its name, as in git.  ``main@{2026-12-01}``
        (``@{TIME}`` alone: HEAD's) is the newest commit of main's first-parent line dated at or before TIME
        (``at_time``).  Branch names cannot hold ``~``, ``^``, ``@`` or braces and a branch cannot be named
        ``HEAD``, so the additions never change what one of upstream's specs names.
        """
        match = re.fullmatch(_ANCESTRY, spec)
        base, steps = (match.group(1), match.group(2)) if match else (spec, "")
        commit = self._resolve_base(base)
        for op, count in re.findall(_STEP, steps):
            commit = self._ancestor(commit, op, int(count) if count else 1, spec)
        return commit

    def _resolve_base(self, spec: str) -> bytes:
        """A commit-ish without ancestry suffixes."""
        timed = re.fullmatch(_AT_TIME, spec)
        if timed is not None:
            base, text = timed.group(1), timed.group(2)
            return self.at_time(self._resolve_base(base or "HEAD"), text, spec)
        tip = self.branch_tip(spec)
        if tip is not None:
            return tip
        if spec == "HEAD":
            commit = self.head_commit()
            if commit is None:
                raise InvalidRefError("HEAD does not point at a commit yet; record one first")
            return commit
        if "/" in spec:
            remote, _, branch = spec.partition("/")
            tracked = self.remotes().get(remote)
            if tracked is not None and branch in tracked.branches:
                return tracked.branches[branch]
        if not (4 <= len(spec) <= 64) or any(ch not in "0123456789abcdef" for ch in spec):
            raise InvalidRefError(
                f'no branch named "{spec}", and it is not a commit id prefix (4 to 64 lowercase hex)'
            )
        low = bytes.fromhex(spec.ljust(64, "0"))
        high = bytes.fromhex(spec.ljust(64, "f"))
        found = self.objects.commits_with_prefix(low, high, 2)
        if not found:
            raise InvalidRefError(f'no commit matching "{spec}"')
        if len(found) > 1:
            count = self.objects.count_commits_with_prefix(low, high)
            raise InvalidRefError(f'ambiguous commit prefix "{spec}": {count} commits match')
        return found[0]

    def at_time(self, commit: bytes, text: str, spec: str) -> bytes:
        """The newest commit of ``commit``'s first-parent line whose time is at or before the time ``text``.

        git reads ``main@{date}`` from the reflog, where the branch *pointed*
        then; a store keeps no reflog, so the line's own commit times answer
        (what ``git rev-list -1 --first-parent --before=date main`` names).
        The walk goes back from ``commit`` one first parent at a time and
        stops at the first commit dated at or before the time, so it costs
        the commits made since then.

        Raises:
            InvalidRefError: ``text`` is not a time (``times.parse_time``), or every commit of the line is later.
        """
        from .times import iso, parse_time

        try:
            when = parse_time(text)
        except UsageError as error:
            raise InvalidRefError(f'"{spec}": {error.detail}') from None
        cursor: bytes | None = commit
        first = commit
        while cursor is not None:
            found = self.commit_obj(cursor)
            if found.time <= when:
                return cursor
            first, cursor = cursor, found.parents[0] if found.parents else None
        hint = (" (here @{N} is a time in Unix ms, not git's N-th reflog entry: for the N-th commit back write "
                "BRANCH~N)" if text.isdigit() else "")
        raise InvalidRefError(
            f'"{spec}": nothing was recorded on that line by {iso(when)}; its first commit, {first.hex()[:12]}, is '
            f"from {iso(self.commit_obj(first).time)}: give a time at or after it{hint}"
        )

    def _ancestor(self, commit: bytes, op: str, count: int, spec: str) -> bytes:
        """``~N``: N first parents back; ``^N``: the N-th parent (``^0`` is the commit itself), as git reads them."""
        if op == "^":
            if count == 0:
                return commit
            parents = self.commit_obj(commit).parents
            if count > len(parents):
                raise InvalidRefError(f'"{spec}": commit {commit.hex()[:8]} has {len(parents)} parent(s), '
                                      f"not a parent {count}")
            return parents[count - 1]
        for _ in range(count):
            parents = self.commit_obj(commit).parents
            if not parents:
                raise InvalidRefError(f'"{spec}" goes back past the first commit of the line, {commit.hex()[:12]}')
            commit = parents[0]
        return commit

    def create_branch(self, name: str, start: str | None = None) -> bytes:
        """Create a branch at ``start`` (a commit-ish) or at HEAD's commit (inside a write transaction)."""
        self._in_write()
        validate_branch_name(name)
        if self.branch_tip(name) is not None:
            raise InvalidRefError(f'branch "{name}" already exists')
        target = self.resolve(start) if start is not None else self.head_commit()
        if target is None:
            raise InvalidRefError("cannot create a branch: HEAD does not point at a commit yet")
        if not self.backend.set_ref(name, None, target):
            raise ConflictError(f'branch "{name}" was created by another writer at the same time')
        return target

    def delete_branch(self, name: str) -> bool:
        """Remove a branch pointer (commits stay); refuses the current branch (inside a write transaction)."""
        self._in_write()
        if self.branch_tip(name) is None:
            return False
        if self.head().branch == name:
            raise InvalidRefError(f'cannot delete "{name}": it is the current branch')
        return self.backend.delete_ref(name)

    def move_branch(self, name: str, expected: bytes | None, new: bytes) -> None:
        """Compare-and-swap a branch tip inside a write transaction."""
        self._in_write()
        if not self.backend.set_ref(name, expected, new):
            raise ConflictError(f'branch "{name}" moved during commit')

    # ------------------------------------------------------------------- staging
    def staged(self) -> list[tuple[str, bytes]]:
        """Staged adds ``(node id, object id)``."""
        return self.backend.staged()

    def staged_deletions(self) -> list[str]:
        """Staged deletions."""
        return self.backend.staged_deletions()

    def stage(self, node: MemoryNode) -> bytes:
        """Write the node object and stage it; re-adding lifts a tombstone (inside a write transaction)."""
        raw = self.put(node)
        self.backend.stage(node.id, raw)
        return raw

    def remove(self, node_id: str) -> None:
        """Stage a deletion, or just unstage a pending add (inside a write transaction)."""
        self._in_write()
        in_head = self.node_at(self.head_commit(), node_id) is not None
        was_staged = self.backend.drop_staged(node_id)
        if not in_head and not was_staged:
            raise InvalidRefError(f'no node "{node_id}" in memory')
        if in_head:
            self.backend.add_tombstone(node_id)

    def unstage(self, node_id: str) -> bool:
        """Drop a staged add or deletion (inside a write transaction)."""
        self._in_write()
        return self.backend.unstage(node_id)

    def is_dirty(self) -> bool:
        """Whether anything is staged."""
        return self.backend.is_dirty()

    def working_node(self, node_id: str) -> bytes | None:
        """One node of working memory: staged wins, a tombstone hides, else HEAD's."""
        found, raw = self.backend.staged_node(node_id)
        if found:
            return raw
        return self.node_at(self.head_commit(), node_id)

    def working_nodes(self, prefixes: Iterable[str] | None = None) -> Nodes:
        """HEAD's state, minus tombstones, overlaid with staging; only ids under ``prefixes`` when given.

        With prefixes the cost is the nodes under them (``commit_nodes_under``), not the whole state.
        """
        if prefixes is None:
            nodes = dict(self.commit_nodes(self.head_commit()))
            wanted: Callable[[str], bool] = lambda _: True  # noqa: E731
        else:
            starts = tuple(prefixes)
            nodes = self.commit_nodes_under(self.head_commit(), starts)
            wanted = lambda node_id: node_id.startswith(starts)  # noqa: E731
        for node_id in self.staged_deletions():
            nodes.pop(node_id, None)
        nodes.update((node_id, raw) for node_id, raw in self.staged() if wanted(node_id))
        return nodes

    # ------------------------------------------------------------------- commits
    def _change_rows(self, changes: list[Change], brought: Collection[bytes] = ()) -> list[ChangeRow]:
        """Change rows by object id; an object neither stored nor ``brought`` with the commit is ``not_found``."""
        absent = self.objects.missing(change.new for change in changes if change.new is not None
                                      and change.new not in brought)
        if absent:
            raise NotFoundError(hex_id(absent[0]))
        return [(change.id, change.kind, change.new) for change in changes]

    def commit_time(self, parents: tuple[bytes, ...]) -> int:
        """The time of a commit made now, taken inside its write transaction: never before a parent.

        A clock that runs behind a parent's (another machine's, or an
        explicit ``--time`` in the future) would otherwise date a child
        before its parent; upstream takes the clock as it is.
        """
        return max([now_ms(), *(self.commit_obj(parent).time for parent in parents)])

    def write_commit(
        self,
        branch: str,
        parents: tuple[bytes, ...],
        nodes: Nodes,
        message: str,
        author: str,
        time_ms: int | None,
        expected_tip: bytes | None,
    ) -> bytes:
        """Write state, commit, index entry and ref move (inside a write transaction)."""
        base = self._image(parents[0] if parents else None)
        changes = {c.id: c.new for c in diff_nodes(base.nodes, nodes)}
        return self._commit_changes(branch, parents, base, changes, message, author, time_ms, expected_tip)[0][0]

    def _commit_changes(
        self,
        branch: str,
        parents: tuple[bytes, ...],
        base: StateImage,
        changes: dict[str, bytes | None],
        message: str,
        author: str,
        time_ms: int | None,
        expected_tip: bytes | None,
        brought: dict[bytes, bytes] | None = None,
    ) -> tuple[tuple[bytes, Commit], list[Change]]:
        """Commit ``changes`` (node id -> object id or None) on top of the first parent's state ``base``.

        The cost is O(changes) plus one join and hash of the new state's
        bytes, however large the memory: the state is never re-encoded whole.
        ``time_ms`` None takes the time now (see ``commit_time``).  ``brought``
        are node objects (id -> canonical bytes) stored with the commit's
        own, in the same statement; every other object ``changes`` names
        must be stored already.
        """
        image = base.apply(changes)
        when = self.commit_time(parents) if time_ms is None else time_ms
        commit = Commit(parents, image.state_id(), message, author, when)
        commit_raw, effective = self._index(commit, base, image, changes, brought or {})
        self.move_branch(branch, expected_tip, commit_raw)
        return (commit_raw, commit), effective

    def index_commit(self, commit: Commit, nodes: Nodes) -> bytes:
        """Store a commit whose state is known in full (an import) and index it against its first parent.

        The first parent must be indexed already, and every node object of
        the state stored.  The state is stored virtual unless it is due as a
        snapshot; its bytes must hash to the commit's state id.
        """
        base = self._image(commit.parents[0] if commit.parents else None)
        image = base.apply({c.id: c.new for c in diff_nodes(base.nodes, nodes)})
        if image.state_id() != commit.state:
            raise CorruptStoreError(f"state {hex_id(commit.state)} does not match its node map")
        return self._index(commit, base, image, image.nodes.keys() | base.nodes.keys(), {})[0]

    def index_changes(self, commit: Commit, changes: Mapping[str, bytes | None]) -> bytes:
        """Store a commit known by its changes against its first parent (a transfer) and index it.

        Like ``index_commit``, but the cost is the changes, not the state:
        the new state is the first parent's image with ``changes`` applied,
        and it must hash to the commit's state id.  The first parent must be
        indexed already, and every object ``changes`` names stored.
        """
        base = self._image(commit.parents[0] if commit.parents else None)
        image = base.apply(dict(changes))
        if image.state_id() != commit.state:
            raise CorruptStoreError(f"state {hex_id(commit.state)} does not match its parent's state and changes")
        return self._index(commit, base, image, changes.keys(), {})[0]

    def corrected_time(self, commit: Commit) -> int:
        """A commit's corrected time: its own, raised past every parent's and to at least 0 (see ``GraphRow``)."""
        return corrected_time(commit.time, (self._graph(parent).corrected for parent in commit.parents))

    def _index(
        self, commit: Commit, base: StateImage, image: StateImage, touched: Iterable[str], brought: dict[bytes, bytes]
    ) -> tuple[bytes, list[Change]]:
        """Store ``commit``, the node objects it ``brought``, its graph and change rows.

        ``touched`` covers every node id that may differ.
        """
        self._in_write()  # before the first byte: a commit's rows are written only inside a write transaction
        effective = diff_nodes({k: base.nodes[k] for k in touched if k in base.nodes},
                               {k: image.nodes[k] for k in touched if k in image.nodes})
        rows = self._change_rows(effective, brought)
        commit_raw, data = encode_object(commit)
        parent = self._graph(commit.parents[0]) if commit.parents else None
        corrected = self.corrected_time(commit)
        self.states.record(NewCommit(commit_raw, data, parent, commit.state, corrected, rows, brought), image)
        return commit_raw, effective

    def attached_branch(self, action: str) -> str:
        """The branch HEAD is attached to; call inside the write transaction."""
        head = self.head()
        if head.branch is None:
            raise InvalidRefError(f"cannot {action} from a detached HEAD; check out a branch first")
        return head.branch

    def commit(self, message: str, author: str, time_ms: int | None) -> bytes:
        """Commit the staged changes on the current branch and clear staging (inside a write transaction)."""
        branch = self.attached_branch("commit")
        tip = self.branch_tip(branch)
        changes: dict[str, bytes | None] = {node_id: None for node_id in self.staged_deletions()}
        changes.update(self.staged())
        parents = (tip,) if tip else ()
        (raw, _), _ = self._commit_changes(branch, parents, self._image(tip), changes, message, author, time_ms, tip)
        self.backend.clear_staging()
        return raw

    def write(
        self,
        puts: list[MemoryNode],
        deletes: list[str],
        message: str,
        author: str,
        time_ms: int | None,
        *,
        skip_missing: bool = False,
        branch: str | None = None,
        if_absent: Collection[str] = (),
        orphan: bool = False,
    ) -> Written:
        """Apply puts and deletes to the branch tip as exactly one commit, bypassing staging.

        Runs inside the caller's write transaction.  Deletions apply after
        puts, in order.  Deleting an id absent from the result is an error
        unless ``skip_missing``; with ``skip_missing``, a batch left with no
        operation at all makes no commit and returns ``Written(None, [])``.
        Otherwise there is always exactly one commit, even for an empty
        batch (as upstream's ``remember_many([])``).

        ``branch`` writes on that branch instead of HEAD's, without moving
        HEAD, so one writer (a replayed LangGraph run, a checkpointer) can
        keep its commits apart while others work on HEAD; a branch that does
        not exist yet starts at this commit, a root.

        A put whose id is in ``if_absent`` applies only if the tip has no
        node of that id (a LangGraph task's retried write keeps the stored
        one), decided here, in the transaction, so no read before is needed.

        With ``orphan`` the commit holds the same state but has no parent:
        the branch lets go of its history, which ``mnem gc`` can then drop
        once nothing else reaches it (a checkpointer that keeps no history
        of its own branch).  Its change rows are then every node of the
        state, as for any root, so its cost follows the state's size.
        """
        if branch is None:
            branch = self.attached_branch("commit")
        else:
            validate_branch_name(branch)
        tip = self.branch_tip(branch)
        base = self._image(tip)
        changes: dict[str, bytes | None] = {}
        added: dict[bytes, bytes] = {}
        for node in puts:
            if node.id not in if_absent or base.nodes.get(node.id) is None:
                raw, data = encode_object(node)
                changes[node.id] = raw
                added[raw] = data
        applied = len(added) > 0
        effective_deletes = 0
        for node_id in deletes:
            if (changes[node_id] if node_id in changes else base.nodes.get(node_id)) is not None:
                changes[node_id] = None
                effective_deletes += 1
            elif not skip_missing:
                raise InvalidRefError(f'no node "{node_id}" in memory')
        if skip_missing and not applied and not effective_deletes:
            return Written(None, [])
        if orphan:
            whole = base.apply(changes)
            return Written(*self._commit_changes(branch, (), self._image(None), dict(whole.nodes), message, author,
                                                 time_ms, tip, added))
        parents = (tip,) if tip else ()
        return Written(*self._commit_changes(branch, parents, base, changes, message, author, time_ms, tip, added))

    def restore(self, changes: Mapping[str, bytes | None], message: str, author: str,
                time_ms: int | None) -> tuple[bytes, Commit]:
        """Set node ids to objects the store holds (None: remove them) as one commit on HEAD's branch; the commit.

        What ``mnem revert`` writes: earlier versions come back as the very objects they were, never
        decoded and encoded again, so a version whose bytes were redacted comes back still redacted.
        Runs inside the caller's write transaction; every object must be stored already.
        """
        branch = self.attached_branch("commit")
        tip = self.branch_tip(branch)
        parents = (tip,) if tip else ()
        return self._commit_changes(branch, parents, self._image(tip), dict(changes), message, author, time_ms,
                                    tip)[0]

    def changes_of(self, commit_raw: bytes) -> dict[str, str]:
        """A commit's change set vs its first parent: node id -> added | modified | removed."""
        return self.states.changes_of(self._graph(commit_raw).key)

    def change_set(self, commit_raw: bytes) -> dict[str, tuple[str, bytes | None]]:
        """A commit's change set vs its first parent with the values: node id -> (kind, object id or None)."""
        return self.states.change_set(self._graph(commit_raw).key)

    def rebuild_index(self) -> int:
        """Check every commit's state against its id and re-derive what is derived (inside a write transaction).

        Change rows are where states live, so this cannot recover lost rows.
        Parents first, it re-links each commit to its first parent, lane and
        corrected time from the commit object, rebuilds its state (which must
        hash to the state id), rewrites its change kinds from the verified
        states and replaces a damaged snapshot: a fsck that repairs what it
        can.  Returns the number of commits.
        """
        self._in_write()
        self.states.reset_derived()
        rows = []
        for stale in self.states.all_commits():
            raw = self.objects.id_of(stale.key)
            commit = self.commit_obj(raw)
            parent = self._graph(commit.parents[0]).key if commit.parents else None
            self.states.relink(stale.key, parent, self.corrected_time(commit))
            rows.append((raw, self.states.graph_row(stale.key)))
        for raw, row in rows:
            image = self.states.image(row)
            parent_row = self.states.graph_row(row.parent) if row.parent is not None else None
            base = self.states.image(parent_row) if parent_row is not None else StateImage.empty()
            self.states.write_changes(raw, self._change_rows(diff_nodes(base.nodes, image.nodes)))
            self.states.repair_snapshot(row, image)
        return len(rows)

    # ------------------------------------------------------------------ checkout
    def checkout(self, target: str | None, *, create: str | None = None, discard: bool = False) -> tuple[str, Head]:
        """Move HEAD to a branch (attached) or a commit (detached), optionally creating the branch.

        Runs inside the caller's write transaction, so the new branch and
        HEAD change together.  Returns ``("branch"|"detached"|"already",
        new_head)``.  Unlike upstream, a refused ``checkout -b`` does not
        leave the new branch behind.
        """
        self._in_write()
        if create is not None:
            self.create_branch(create, target)
            target = create
        if target is None:
            raise CommandError("checkout needs a target, or -b <name> to create one", "usage")
        new = Head(branch=target) if self.branch_tip(target) is not None else Head(commit=self.resolve(target))
        if new == self.head():
            return "already", new
        if self.is_dirty():
            if not discard:
                pending = sorted({n for n, _ in self.staged()} | set(self.staged_deletions()))
                raise InvalidRefError(
                    f"checkout refused: {len(pending)} pending change(s) ({', '.join(pending)}); "
                    "commit them or pass discard"
                )
            self.backend.clear_staging()
        self.set_head(new)
        return ("branch" if new.branch is not None else "detached"), new

    # ------------------------------------------------------------------ log
    def log(
        self, start: bytes | None, *, first_parent: bool = False, limit: int | None = None,
        keep: Callable[[bytes], bool] | None = None, since: int | None = None, until: int | None = None,
    ) -> list[tuple[bytes, Commit]]:
        """History from ``start``, newest first, in graph order; costs what it lists.

        ``first_parent`` follows ``parents[0]``.  Otherwise every ancestor,
        by corrected time then id, descending: a commit never comes before
        one of its descendants, and for histories whose clocks ran forward
        this is upstream's order (commit time, then id, descending).  The
        walk keeps a heap of the frontier, so ``limit`` N decodes about N
        commits however long the history is.  ``keep`` (``log --touching``)
        lists only the commits it accepts; the walk still goes through the
        others, so ``limit`` counts the listed ones.  ``since`` and ``until``
        (Unix ms, both inclusive) list only the commits whose time is in that
        range, as ``git log --since/--until``; the walk stops once every commit
        left is older than ``since``: a commit's corrected time, by which it
        goes, is never below its own time.
        """
        if start is None:
            return []
        out: list[tuple[bytes, Commit]] = []

        def listed(raw: bytes, commit: Commit) -> bool:
            in_range = (since is None or commit.time >= since) and (until is None or commit.time <= until)
            return in_range and (keep is None or keep(raw))

        def older(raw: bytes) -> bool:  # nothing from here back can be dated at or after ``since``
            return since is not None and self._graph(raw).corrected < since

        if first_parent:  # corrected times fall strictly along the line, so the first too old ends it
            cursor: bytes | None = start
            while cursor is not None and (limit is None or len(out) < limit) and not older(cursor):
                commit = self.commit_obj(cursor)
                if listed(cursor, commit):
                    out.append((cursor, commit))
                cursor = commit.parents[0] if commit.parents else None
            return out

        def entry(raw: bytes) -> tuple[int, int, bytes]:
            return -self._graph(raw).corrected, -int.from_bytes(raw, "big"), raw

        import heapq  # here, not at the top: a one-shot read that walks no history never loads it

        frontier = [entry(start)]
        seen = {start}
        while frontier and (limit is None or len(out) < limit):
            raw = heapq.heappop(frontier)[2]
            if older(raw):  # the frontier pops by corrected time, so every commit left is older still
                break
            commit = self.commit_obj(raw)
            if listed(raw, commit):
                out.append((raw, commit))
            for parent in commit.parents:
                if parent not in seen:
                    seen.add(parent)
                    heapq.heappush(frontier, entry(parent))
        return out

    # ------------------------------------------------------------------ export
    def all_objects(self) -> Iterable[tuple[bytes, bytes]]:
        """Every object's ``(id, canonical bytes)`` in id order, virtual states rebuilt and verified.

        Virtual states are rebuilt parents first, so each is its first
        parent's (still cached) image plus one commit's change rows: the
        export costs about what it writes, not a rebuild from a snapshot per
        state.  A node version whose bytes were redacted has none, and is
        left out (its record says what it was: ``redaction.recorded``).
        """
        redacted = {record.object for record in self.backend.redactions.every()}
        rows = [row for row in self.objects.all_rows() if row[1] not in redacted]
        virtual = {key for key, _, data in rows if data is None}
        rebuilt: dict[int, bytes] = {}
        for commit in self.states.all_commits():
            if commit.state_key in virtual and commit.state_key not in rebuilt:
                rebuilt[commit.state_key] = self.states.image(commit).encoding()
        return [
            (raw, data if data is not None else rebuilt.get(key) or self.states.state_image(key, raw).encoding())
            for key, raw, data in rows
        ]
