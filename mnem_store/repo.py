"""A store on disk: opening, objects, refs, staging, commits and checkout.

``Repo`` is the engine's one entry point.  Every public method is one read
snapshot or one write transaction, so a command either happens entirely or
not at all, and several processes may share the store (see ``db``).
Algorithms over history (merge, blame, bisect, log) live in their own
modules and use only the methods here.  States are stored as per-commit
changes (see ``states``); this module turns them back into the object model.
"""

from __future__ import annotations

import os
import sqlite3
import time as _time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .canonical import hex_id
from .db import DB_FILE, KIND_CODES, Database
from .errors import (
    CommandError,
    ConflictError,
    CorruptStoreError,
    InvalidRefError,
    NoStoreError,
    NotFoundError,
    StoreExistsError,
    StoreIoError,
)
from .layout import CONFIG_TEXT, Head, format_head, parse_head, read_config, validate_branch_name, write_atomic
from .objects import Commit, MemoryNode, State, StoredObject, decode_object, encode_object
from .objectstore import ObjectStore
from .stateimage import StateImage
from .states import GraphRow, StateStore

__all__ = ["Repo", "Change", "MNEM_DIR", "now_ms", "default_author"]

MNEM_DIR = ".mnem"
Nodes = dict[str, bytes]


def now_ms() -> int:
    return _time.time_ns() // 1_000_000


def default_author(explicit: str | None) -> str:
    """Upstream CLI fallback: ``--author``, else ``$MNEM_AUTHOR`` verbatim, else ``unknown``."""
    if explicit is not None:
        return explicit
    return os.environ.get("MNEM_AUTHOR", "unknown")


@dataclass(frozen=True, slots=True)
class Change:
    """One node's difference between two states (object ids; None = absent)."""

    id: str
    kind: str  # "added" | "removed" | "modified"
    old: bytes | None
    new: bytes | None


def diff_nodes(old: Nodes, new: Nodes) -> list[Change]:
    """Structural diff by object id, in node-id order."""
    changes = []
    for node_id in sorted(old.keys() | new.keys()):
        a, b = old.get(node_id), new.get(node_id)
        if a == b:
            continue
        kind = "added" if a is None else "removed" if b is None else "modified"
        changes.append(Change(node_id, kind, a, b))
    return changes


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and its missing ancestors owner-only (0700); folders that exist keep their mode.

    ``mkdir(parents=True)`` gives ancestors the umask's mode, so under a
    permissive umask a store's new folders (the MCP server's default store
    among them) would let another local user replace its ``.mnem``.
    """
    missing = []
    while not path.is_dir():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)


def find_store(start: Path) -> Path:
    """Walk up from ``start`` to the nearest directory holding a ``.mnem`` directory."""
    here = start.absolute()
    if here.name == MNEM_DIR and here.is_dir():
        return here.parent
    for candidate in (here, *here.parents):
        if (candidate / MNEM_DIR).is_dir():
            return candidate
    raise NoStoreError(str(here))


class Repo:
    """An open store.  Use as a context manager, or call ``close()``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir = root / MNEM_DIR
        self.config = read_config(self.dir / "config")
        self.head()  # a damaged HEAD is reported on open, before any command acts
        self.db = Database(self.dir / DB_FILE)
        self.objects = ObjectStore(self.db)
        self.states = StateStore(self.db)

    # ----------------------------------------------------------------- lifecycle
    @classmethod
    def init(cls, path: Path) -> "Repo":
        """Create ``path/.mnem`` (refusing a store at or above ``path`` as given) and open it."""
        target = path / MNEM_DIR
        if target.exists() or target.is_symlink():
            raise StoreExistsError(str(target))
        for ancestor in path.parents:
            if (ancestor / MNEM_DIR).is_dir():
                raise StoreExistsError(str(ancestor / MNEM_DIR))
        try:
            make_private_dirs(path)
            target.mkdir(mode=0o700)
        except FileExistsError:
            raise StoreExistsError(str(target)) from None
        except OSError as exc:
            raise StoreIoError(f"creating {target}: {exc.strerror or exc}") from None
        try:
            write_atomic(target / "config", CONFIG_TEXT)
            write_atomic(target / "HEAD", "ref: main\n")
            fd = os.open(target / DB_FILE, os.O_WRONLY | os.O_CREAT, 0o600)
            os.close(fd)
            Database(target / DB_FILE, create=True).close()
        except OSError as exc:
            raise StoreIoError(f"creating {target}: {exc.strerror or exc}") from None
        return cls(path)

    @classmethod
    def open(cls, start: Path) -> "Repo":
        """Open the nearest store at or above ``start``."""
        return cls(find_store(start))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Repo":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------- objects
    def put(self, conn: sqlite3.Connection, obj: StoredObject) -> bytes:
        """Store an object inside a write transaction; writing an existing id is a no-op."""
        raw, data = encode_object(obj)
        self.objects.insert(conn, raw, obj.kind, data)
        return raw

    def get(self, raw: bytes) -> StoredObject:
        """Load an object; a virtual state is rebuilt (and verified) from the commit graph."""
        row = self.objects.row(raw)
        if row is None:
            raise NotFoundError(hex_id(raw))
        key, kind, data = row
        if data is None:
            if kind != KIND_CODES["state"]:
                raise CorruptStoreError(f"{hex_id(raw)} has no stored bytes")
            return State(dict(self.states.state_image(key, raw).nodes))
        return decode_object(data)

    def has(self, raw: bytes) -> bool:
        return self.objects.key(raw) is not None

    def commit_obj(self, raw: bytes) -> Commit:
        obj = self.get(raw)
        if not isinstance(obj, Commit):
            raise CorruptStoreError(f"{hex_id(raw)} is a {obj.kind}, not a commit")
        return obj

    def state_nodes(self, raw: bytes) -> Nodes:
        obj = self.get(raw)
        if not isinstance(obj, State):
            raise CorruptStoreError(f"{hex_id(raw)} is a {obj.kind}, not a state")
        return obj.nodes

    def node(self, raw: bytes) -> MemoryNode:
        obj = self.get(raw)
        if not isinstance(obj, MemoryNode):
            raise CorruptStoreError(f"{hex_id(raw)} is a {obj.kind}, not a memory node")
        return obj

    def commit_nodes(self, commit_raw: bytes | None) -> Nodes:
        """The state map of a commit, or empty for ``None`` (an unborn branch)."""
        return dict(self._image(commit_raw).nodes)

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
        if commit_raw is None:
            return None
        found = self.states.last_change(self._graph(commit_raw).key, node_id)
        return self.objects.id_of(found[1]) if found is not None and found[1] is not None else None

    def last_change(self, commit_raw: bytes, node_id: str) -> bytes | None:
        """The nearest commit at or before ``commit_raw`` on its first-parent chain that changed ``node_id``.

        That commit's change set against its first parent holds the node,
        so its first parent's value differs; None when no commit on the
        chain ever held the node.
        """
        found = self.states.last_change(self._graph(commit_raw).key, node_id)
        return self.objects.id_of(found[0]) if found is not None else None

    def first_parent_chain(self, commit_raw: bytes) -> list[bytes]:
        """``commit_raw`` and its first-parent ancestors, newest first."""
        return self.states.first_parent_chain(self._graph(commit_raw).key)

    def nodes_of(self, nodes: Nodes) -> dict[str, MemoryNode]:
        """Load every node of a state map, in id order."""
        return {node_id: self.node(nodes[node_id]) for node_id in sorted(nodes)}

    # ---------------------------------------------------------------- HEAD, refs
    def head(self) -> Head:
        try:
            text = (self.dir / "HEAD").read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CorruptStoreError("HEAD is missing") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CorruptStoreError(f"HEAD is unreadable: {exc}") from None
        return parse_head(text)

    def set_head(self, head: Head) -> None:
        if head.branch is not None:
            validate_branch_name(head.branch)
        write_atomic(self.dir / "HEAD", format_head(head))

    def branch_tip(self, name: str) -> bytes | None:
        row = self.db.conn.execute("SELECT target FROM refs WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def head_commit(self) -> bytes | None:
        head = self.head()
        return self.branch_tip(head.branch) if head.branch is not None else head.commit

    def branches(self) -> list[tuple[str, bytes]]:
        rows = self.db.conn.execute("SELECT name, target FROM refs").fetchall()
        return sorted((name, target) for name, target in rows)

    def resolve(self, spec: str) -> bytes:
        """Commit-ish: an exact branch name, else a unique 4-64 lowercase-hex commit prefix."""
        tip = self.branch_tip(spec)
        if tip is not None:
            return tip
        if not (4 <= len(spec) <= 64) or any(ch not in "0123456789abcdef" for ch in spec):
            raise InvalidRefError(
                f'no branch named "{spec}", and it is not a commit id prefix (4 to 64 lowercase hex)'
            )
        low = bytes.fromhex(spec.ljust(64, "0"))
        high = bytes.fromhex(spec.ljust(64, "f"))
        rows = self.db.conn.execute(
            "SELECT id FROM objects WHERE id BETWEEN ? AND ? AND kind = ? LIMIT 2", (low, high, KIND_CODES["commit"])
        ).fetchall()
        if not rows:
            raise InvalidRefError(f'no commit matching "{spec}"')
        if len(rows) > 1:
            count = self.db.conn.execute(
                "SELECT count(*) FROM objects WHERE id BETWEEN ? AND ? AND kind = ?",
                (low, high, KIND_CODES["commit"]),
            ).fetchone()[0]
            raise InvalidRefError(f'ambiguous commit prefix "{spec}": {count} commits match')
        return rows[0][0]

    def create_branch(self, name: str, start: str | None = None) -> bytes:
        """Create a branch at ``start`` (a commit-ish) or at HEAD's commit."""
        with self.db.write() as conn:
            return self._insert_branch(conn, name, start)

    def _insert_branch(self, conn: sqlite3.Connection, name: str, start: str | None) -> bytes:
        validate_branch_name(name)
        if self.branch_tip(name) is not None:
            raise InvalidRefError(f'branch "{name}" already exists')
        if start is not None:
            target = self.resolve(start)
        else:
            target = self.head_commit()
            if target is None:
                raise InvalidRefError("cannot create a branch: HEAD does not point at a commit yet")
        conn.execute("INSERT INTO refs (name, target) VALUES (?, ?)", (name, target))
        return target

    def delete_branch(self, name: str) -> bool:
        """Remove a branch pointer (commits stay); refuses the current branch."""
        with self.db.write() as conn:
            if self.branch_tip(name) is None:
                return False
            if self.head().branch == name:
                raise InvalidRefError(f'cannot delete "{name}": it is the current branch')
            conn.execute("DELETE FROM refs WHERE name = ?", (name,))
        return True

    def move_branch(self, conn: sqlite3.Connection, name: str, expected: bytes | None, new: bytes) -> None:
        """Compare-and-swap a branch tip inside a write transaction."""
        current = self.branch_tip(name)
        if current != expected:
            raise ConflictError(f'branch "{name}" moved during commit')
        conn.execute("INSERT OR REPLACE INTO refs (name, target) VALUES (?, ?)", (name, new))

    # ------------------------------------------------------------------- staging
    def staged(self) -> list[tuple[str, bytes]]:
        return sorted(self.db.conn.execute("SELECT node_id, object FROM staging").fetchall())

    def staged_deletions(self) -> list[str]:
        return sorted(row[0] for row in self.db.conn.execute("SELECT node_id FROM tombstones"))

    def stage(self, node: MemoryNode) -> bytes:
        """Write the node object now and stage it; re-adding lifts a tombstone."""
        with self.db.write() as conn:
            raw = self.put(conn, node)
            conn.execute("INSERT OR REPLACE INTO staging (node_id, object) VALUES (?, ?)", (node.id, raw))
            conn.execute("DELETE FROM tombstones WHERE node_id = ?", (node.id,))
        return raw

    def remove(self, node_id: str) -> None:
        """Stage a deletion, or just unstage a pending add."""
        with self.db.write() as conn:
            in_head = self.node_at(self.head_commit(), node_id) is not None
            was_staged = conn.execute("DELETE FROM staging WHERE node_id = ?", (node_id,)).rowcount > 0
            if not in_head and not was_staged:
                raise InvalidRefError(f'no node "{node_id}" in memory')
            if in_head:
                conn.execute("INSERT OR IGNORE INTO tombstones (node_id) VALUES (?)", (node_id,))

    def unstage(self, node_id: str) -> bool:
        with self.db.write() as conn:
            a = conn.execute("DELETE FROM staging WHERE node_id = ?", (node_id,)).rowcount
            b = conn.execute("DELETE FROM tombstones WHERE node_id = ?", (node_id,)).rowcount
        return a + b > 0

    def is_dirty(self) -> bool:
        conn = self.db.conn
        return bool(
            conn.execute("SELECT 1 FROM staging LIMIT 1").fetchone()
            or conn.execute("SELECT 1 FROM tombstones LIMIT 1").fetchone()
        )

    def working_node(self, node_id: str) -> bytes | None:
        """One node of working memory: staged wins, a tombstone hides, else HEAD's."""
        with self.db.read() as conn:
            row = conn.execute("SELECT object FROM staging WHERE node_id = ?", (node_id,)).fetchone()
            if row is not None:
                staged: bytes = row[0]
                return staged
            if conn.execute("SELECT 1 FROM tombstones WHERE node_id = ?", (node_id,)).fetchone():
                return None
            return self.node_at(self.head_commit(), node_id)

    def working_nodes(self) -> Nodes:
        """HEAD's state, minus tombstones, overlaid with staging."""
        with self.db.read():
            nodes = dict(self.commit_nodes(self.head_commit()))
            for node_id in self.staged_deletions():
                nodes.pop(node_id, None)
            nodes.update(self.staged())
        return nodes

    # ------------------------------------------------------------------- commits
    def record_changes(self, conn: sqlite3.Connection, commit_raw: bytes, changes: Iterable[Change]) -> None:
        """Write a commit's change rows (vs its first parent), replacing any it had."""
        key = self.objects.key(commit_raw)
        if key is None:
            raise NotFoundError(hex_id(commit_raw))
        self.states.write_changes(conn, key, self._change_rows(changes))

    def _change_rows(self, changes: Iterable[Change]) -> list[tuple[str, str, int | None]]:
        rows = []
        for change in changes:
            obj = self.objects.key(change.new) if change.new is not None else None
            if change.new is not None and obj is None:
                raise NotFoundError(hex_id(change.new))
            rows.append((change.id, change.kind, obj))
        return rows

    def write_commit(
        self,
        conn: sqlite3.Connection,
        branch: str,
        parents: tuple[bytes, ...],
        nodes: Nodes,
        message: str,
        author: str,
        time_ms: int,
        expected_tip: bytes | None,
    ) -> bytes:
        """Write state, commit, index entry and ref move inside ``conn``'s transaction."""
        base = self._image(parents[0] if parents else None)
        changes = {c.id: c.new for c in diff_nodes(base.nodes, nodes)}
        return self._commit_changes(conn, branch, parents, base, changes, message, author, time_ms, expected_tip)[0]

    def _commit_changes(
        self,
        conn: sqlite3.Connection,
        branch: str,
        parents: tuple[bytes, ...],
        base: StateImage,
        changes: dict[str, bytes | None],
        message: str,
        author: str,
        time_ms: int,
        expected_tip: bytes | None,
    ) -> tuple[bytes, list[Change]]:
        """Commit ``changes`` (node id -> object id or None) on top of the first parent's state ``base``.

        The cost is O(changes) plus one join and hash of the new state's
        bytes, however large the memory: the state is never re-encoded whole.
        """
        image = base.apply(changes)
        commit = Commit(parents, image.state_id(), message, author, time_ms)
        commit_raw, effective = self._index(conn, commit, base, image, changes)
        self.move_branch(conn, branch, expected_tip, commit_raw)
        return commit_raw, effective

    def index_commit(self, conn: sqlite3.Connection, commit: Commit, nodes: Nodes) -> bytes:
        """Store a commit whose state is known in full (an import) and index it against its first parent.

        The first parent must be indexed already, and every node object of
        the state stored.  The state is stored virtual unless it is due as a
        snapshot; its bytes must hash to the commit's state id.
        """
        base = self._image(commit.parents[0] if commit.parents else None)
        image = base.apply({c.id: c.new for c in diff_nodes(base.nodes, nodes)})
        if image.state_id() != commit.state:
            raise CorruptStoreError(f"state {hex_id(commit.state)} does not match its node map")
        return self._index(conn, commit, base, image, image.nodes.keys() | base.nodes.keys())[0]

    def _index(
        self, conn: sqlite3.Connection, commit: Commit, base: StateImage, image: StateImage, touched: Iterable[str]
    ) -> tuple[bytes, list[Change]]:
        """Store ``commit`` and its graph and change rows; ``touched`` covers every node id that may differ."""
        effective = diff_nodes({k: base.nodes[k] for k in touched if k in base.nodes},
                               {k: image.nodes[k] for k in touched if k in image.nodes})
        commit_raw, data = encode_object(commit)
        state_key = self.objects.insert(conn, commit.state, "state", None)
        commit_key = self.objects.insert(conn, commit_raw, "commit", data)
        parent_key = self._graph(commit.parents[0]).key if commit.parents else None
        row = GraphRow(commit_key, parent_key, state_key, commit.state)
        self.states.record(conn, row, image, self._change_rows(effective))
        return commit_raw, effective

    def attached_branch(self, action: str) -> str:
        """The branch HEAD is attached to; call inside the write transaction."""
        head = self.head()
        if head.branch is None:
            raise InvalidRefError(f"cannot {action} from a detached HEAD; check out a branch first")
        return head.branch

    def commit(self, message: str, author: str, time_ms: int) -> bytes:
        """Commit the staged changes on the current branch and clear staging."""
        with self.db.write() as conn:
            branch = self.attached_branch("commit")
            tip = self.branch_tip(branch)
            changes: dict[str, bytes | None] = {node_id: None for node_id in self.staged_deletions()}
            changes.update(self.staged())
            parents = (tip,) if tip else ()
            base = self._image(tip)
            raw, _ = self._commit_changes(conn, branch, parents, base, changes, message, author, time_ms, tip)
            conn.execute("DELETE FROM staging")
            conn.execute("DELETE FROM tombstones")
        return raw

    def write(
        self,
        puts: list[MemoryNode],
        deletes: list[str],
        message: str,
        author: str,
        time_ms: int,
        *,
        skip_missing: bool = False,
    ) -> tuple[bytes | None, list[Change]]:
        """Apply puts and deletes to the branch tip as exactly one commit, bypassing staging.

        Deletions apply after puts, in order.  Deleting an id absent from the
        result is an error unless ``skip_missing``; with ``skip_missing``, a
        batch left with no operation at all makes no commit and returns
        ``(None, [])``.  Otherwise there is always exactly one commit, even
        for an empty batch (as upstream's ``remember_many([])``).
        """
        with self.db.write() as conn:
            branch = self.attached_branch("commit")
            tip = self.branch_tip(branch)
            base = self._image(tip)
            changes: dict[str, bytes | None] = {}
            for node in puts:
                changes[node.id] = self.put(conn, node)
            effective_deletes = 0
            for node_id in deletes:
                if (changes[node_id] if node_id in changes else base.nodes.get(node_id)) is not None:
                    changes[node_id] = None
                    effective_deletes += 1
                elif not skip_missing:
                    raise InvalidRefError(f'no node "{node_id}" in memory')
            if skip_missing and not puts and not effective_deletes:
                return None, []
            parents = (tip,) if tip else ()
            return self._commit_changes(conn, branch, parents, base, changes, message, author, time_ms, tip)

    def changes_of(self, commit_raw: bytes) -> dict[str, str]:
        """A commit's change set vs its first parent: node id -> added | modified | removed."""
        return self.states.changes_of(self._graph(commit_raw).key)

    def rebuild_index(self) -> int:
        """Check every commit's state against its id and re-derive what is derived; returns the count.

        Change rows are where states live, so this cannot recover lost rows.
        Parents first, it re-links each commit to its first parent and lane
        from the commit object, rebuilds its state (which must hash to the
        state id), rewrites its change kinds from the verified states and
        replaces a damaged snapshot: a fsck that repairs what it can.
        """
        with self.db.write() as conn:
            conn.execute("DELETE FROM lanes")
            rows = []
            for stale in self.states.all_commits():
                parents = self.commit_obj(self.objects.id_of(stale.key)).parents
                self.states.relink(conn, stale.key, self._graph(parents[0]).key if parents else None)
                rows.append(self.states.graph_row(stale.key))
            for row in rows:
                image = self.states.image(row)
                parent = self.states.graph_row(row.parent) if row.parent is not None else None
                base = self.states.image(parent) if parent is not None else StateImage.empty()
                self.states.write_changes(conn, row.key, self._change_rows(diff_nodes(base.nodes, image.nodes)))
                self.states.repair_snapshot(conn, row, image)
        return len(rows)

    # ------------------------------------------------------------------ checkout
    def checkout(self, target: str | None, *, create: str | None = None, discard: bool = False) -> tuple[str, Head]:
        """Move HEAD to a branch (attached) or a commit (detached), optionally creating the branch.

        Returns ``("branch"|"detached"|"already", new_head)``.  Unlike
        upstream, a refused ``checkout -b`` does not leave the new branch
        behind: creation and checkout are one transaction.
        """
        with self.db.write() as conn:
            if create is not None:
                self._insert_branch(conn, create, target)
                target = create
            if target is None:
                raise CommandError("checkout needs a target, or -b <name> to create one", "usage")
            if self.branch_tip(target) is not None:
                new = Head(branch=target)
            else:
                new = Head(commit=self.resolve(target))
            if new == self.head():
                return "already", new
            if self.is_dirty():
                if not discard:
                    pending = sorted({n for n, _ in self.staged()} | set(self.staged_deletions()))
                    raise InvalidRefError(
                        f"checkout refused: {len(pending)} pending change(s) ({', '.join(pending)}); "
                        "commit them or pass discard"
                    )
                conn.execute("DELETE FROM staging")
                conn.execute("DELETE FROM tombstones")
            self.set_head(new)
        return ("branch" if new.branch is not None else "detached"), new

    # ------------------------------------------------------------------ log
    def log(self, start: bytes | None, *, first_parent: bool = False, limit: int | None = None) -> list[tuple[bytes, Commit]]:
        """History from ``start``: first-parent chain, or all ancestors by time then id, newest first."""
        if start is None:
            return []
        out: list[tuple[bytes, Commit]] = []
        if first_parent:
            cursor: bytes | None = start
            while cursor is not None and (limit is None or len(out) < limit):
                commit = self.commit_obj(cursor)
                out.append((cursor, commit))
                cursor = commit.parents[0] if commit.parents else None
            return out
        seen: set[bytes] = set()
        stack = [start]
        while stack:
            raw = stack.pop()
            if raw in seen:
                continue
            seen.add(raw)
            commit = self.commit_obj(raw)
            out.append((raw, commit))
            stack.extend(commit.parents)
        out.sort(key=lambda pair: (pair[1].time, pair[0]), reverse=True)
        return out if limit is None else out[:limit]

    # ------------------------------------------------------------------ export
    def all_objects(self) -> Iterable[tuple[bytes, bytes]]:
        """Every object's ``(id, canonical bytes)`` in id order, virtual states rebuilt and verified.

        Virtual states are rebuilt parents first, so each is its first
        parent's (still cached) image plus one commit's change rows: the
        export costs about what it writes, not a rebuild from a snapshot per
        state.
        """
        rows = list(self.objects.all_rows())
        virtual = {key for key, _, data in rows if data is None}
        rebuilt: dict[int, bytes] = {}
        for commit in self.states.all_commits():
            if commit.state_key in virtual and commit.state_key not in rebuilt:
                rebuilt[commit.state_key] = self.states.image(commit).encoding()
        return [
            (raw, data if data is not None else rebuilt.get(key) or self.states.state_image(key, raw).encoding())
            for key, raw, data in rows
        ]

    def describe(self) -> dict[str, Any]:
        return {"root": str(self.root), "store": str(self.dir)}
