"""A store on disk: opening, objects, refs, staging, commits and checkout.

``Repo`` is the engine's one entry point.  Every public method is one read
snapshot or one write transaction, so a command either happens entirely or
not at all, and several processes may share the store (see ``db``).
Algorithms over history (merge, blame, bisect, log) live in their own
modules and use only the methods here.
"""

from __future__ import annotations

import os
import sqlite3
import time as _time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cbor2

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
            path.mkdir(parents=True, exist_ok=True)
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
        conn.execute(
            "INSERT OR IGNORE INTO objects (id, kind, data) VALUES (?, ?, ?)", (raw, KIND_CODES[obj.kind], data)
        )
        return raw

    def get(self, raw: bytes) -> StoredObject:
        row = self.db.conn.execute("SELECT data FROM objects WHERE id = ?", (raw,)).fetchone()
        if row is None:
            raise NotFoundError(hex_id(raw))
        return decode_object(row[0])

    def has(self, raw: bytes) -> bool:
        return self.db.conn.execute("SELECT 1 FROM objects WHERE id = ?", (raw,)).fetchone() is not None

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
        if commit_raw is None:
            return {}
        return self.state_nodes(self.commit_obj(commit_raw).state)

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
            in_head = node_id in self.commit_nodes(self.head_commit())
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
        """Write a commit's change-index entry (vs its first parent)."""
        entry = {c.id: c.kind for c in sorted(changes, key=lambda c: c.id.encode())}
        conn.execute("INSERT OR REPLACE INTO commit_nodes (commit_id, changes) VALUES (?, ?)", (commit_raw, cbor2.dumps(entry)))

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
        state_raw = self.put(conn, State(nodes))
        commit = Commit(parents, state_raw, message, author, time_ms)
        commit_raw = self.put(conn, commit)
        first_parent_nodes = self.commit_nodes(parents[0]) if parents else {}
        self.record_changes(conn, commit_raw, diff_nodes(first_parent_nodes, nodes))
        self.move_branch(conn, branch, expected_tip, commit_raw)
        return commit_raw

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
            nodes = dict(self.commit_nodes(tip))
            for node_id in self.staged_deletions():
                nodes.pop(node_id, None)
            nodes.update(self.staged())
            raw = self.write_commit(conn, branch, (tip,) if tip else (), nodes, message, author, time_ms, tip)
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
            before = self.commit_nodes(tip)
            nodes = dict(before)
            for node in puts:
                nodes[node.id] = self.put(conn, node)
            effective_deletes = 0
            for node_id in deletes:
                if node_id in nodes:
                    del nodes[node_id]
                    effective_deletes += 1
                elif not skip_missing:
                    raise InvalidRefError(f'no node "{node_id}" in memory')
            if skip_missing and not puts and not effective_deletes:
                return None, []
            raw = self.write_commit(conn, branch, (tip,) if tip else (), nodes, message, author, time_ms, tip)
        return raw, diff_nodes(before, nodes)

    def changes_of(self, commit_raw: bytes) -> dict[str, str]:
        """A commit's change set vs its first parent, from the index or recomputed on a miss."""
        row = self.db.conn.execute("SELECT changes FROM commit_nodes WHERE commit_id = ?", (commit_raw,)).fetchone()
        if row is not None:
            try:
                entry = cbor2.loads(row[0])
            except Exception as exc:
                raise CorruptStoreError(f"bad commit_nodes entry: {exc}") from None
            if isinstance(entry, dict):
                return entry
            raise CorruptStoreError("bad commit_nodes entry: not a map")
        commit = self.commit_obj(commit_raw)
        parent = self.commit_nodes(commit.parents[0]) if commit.parents else {}
        return {c.id: c.kind for c in diff_nodes(parent, self.state_nodes(commit.state))}

    def rebuild_index(self) -> int:
        """Recompute the change index for every stored commit; returns the count."""
        with self.db.write() as conn:
            conn.execute("DELETE FROM commit_nodes")
            rows = conn.execute("SELECT id FROM objects WHERE kind = ?", (KIND_CODES["commit"],)).fetchall()
            for (raw,) in rows:
                commit = self.commit_obj(raw)
                parent = self.commit_nodes(commit.parents[0]) if commit.parents else {}
                self.record_changes(conn, raw, diff_nodes(parent, self.state_nodes(commit.state)))
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
        return self.db.conn.execute("SELECT id, data FROM objects ORDER BY id").fetchall()

    def describe(self) -> dict[str, Any]:
        return {"root": str(self.root), "store": str(self.dir)}
