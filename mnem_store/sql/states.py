"""States stored as changes: the commit graph, per-commit change rows and snapshots.

A commit's state is *virtual*: its 32-byte id and its bytes stay exactly
upstream's (BLAKE3 of the full canonical state map, exported in full), but
storing it costs what the commit changed, not the memory's size.

Design (chosen over the sketch's alternatives for the reasons given):

* ``changes`` rows (commit, node name, kind, new object or NULL) are the
  state storage *and* the per-commit change index: one row per node a
  commit changed against its first parent (a root against the empty state,
  a merge against ours).  Names and objects are integer keys, so a row is a
  few bytes.  Every commit has its rows, so the value of node X at commit C
  is always "what the nearest commit on C's first-parent chain that changed
  X set it to".
* ``commits`` is the graph table (commit -> first parent, state) plus two
  derived columns.  ``lane``: first-parent chains are cut into lanes, a lane
  being a run of commits each extending the previous one (a commit joins
  its first parent's lane when the parent is that lane's head, else it
  starts a new lane).  A chain is then a few (lane, up-to-key) segments, and
  "node X at C" is one indexed probe per segment into ``changes_by_name``,
  O(lanes * log n) at any history length, instead of a walk over every
  commit since X last changed (13 ms per 10k commits when measured), and
  listing a chain (bisect) is one range scan per segment.
  Other parents are not copied out of the commit objects: no hot path
  follows them.
* ``since`` bounds reconstruction: the change rows accumulated on the chain
  since the last snapshot (each commit counts at least one).  When it
  exceeds the new state's size, the state's canonical bytes are stored in
  its ``objects`` row (materialised) and ``since`` restarts at 0.  Storage
  stays amortised O(change) and rebuilding any state reads at most its
  size in snapshot entries plus about as many change rows: O(n), whatever
  the history length.  A snapshot is the state object itself, so it is
  checked by hashing it, and a bad one is skipped (the rows behind it are
  still there), never trusted.
* No persistent "tip index": keeping one honest would need an O(n) check
  per process, and the lane probes already give O(log n) single-node
  reads at any commit.  Instead each process keeps a small LRU of
  ``StateImage``s keyed by state id, built only from bytes that hashed to
  that id, so committing on a warm tip costs O(change) plus one O(n) join
  and hash, and a wrong cache entry is impossible by construction.

Every full reconstruction is verified: the rebuilt bytes must hash to the
state's id, else the store is reported corrupt.  Single-node reads and chain
listings trust the graph and change rows (written once, in the commit's own
transaction) the way every read trusts the object table; ``Repo.rebuild_index``
re-derives the graph's links and lanes from the commit objects.
"""

from __future__ import annotations

from collections.abc import Collection

from ..backend import CHANGE_KINDS, ChangeIndex, ChangeRow, GraphRow, NewCommit
from ..cache import Shelf
from ..canonical import object_id
from ..errors import CorruptStoreError
from ..logs import logger
from ..stateimage import StateImage
from .leases import in_list
from .objects import SqlObjectStore
from .session import Session

__all__ = ["IMAGE_CACHE_SIZE", "SqlStateStore", "pack_time", "unpack_time"]


#: ``changes.kind`` codes (0 and 1 cost no payload bytes in SQLite's record format).
_KIND_CODE = {kind: code for code, kind in enumerate(CHANGE_KINDS)}
_KIND_NAME = dict(enumerate(CHANGE_KINDS))

#: State images one process keeps (each ~20 MB at 100k nodes; a commit shares most of its parent's).
IMAGE_CACHE_SIZE = 8

#: Commits the first query of a state's walk back to its base reads (``_base``).
_WALK_FIRST = 8

#: Bytes of a stored corrected time.  Commit times are unsigned 64-bit and a corrected time adds one per
#: generation on top, so it can outgrow a signed 64-bit integer column; nine big-endian bytes hold any.
_TIME_BYTES = 9


def pack_time(value: int) -> bytes:
    """A corrected time as stored (fixed width, so byte order is number order)."""
    return value.to_bytes(_TIME_BYTES, "big")


def unpack_time(stored: bytes) -> int:
    """A stored corrected time."""
    if not isinstance(stored, bytes) or len(stored) != _TIME_BYTES:
        raise CorruptStoreError("bad commit-graph row: its corrected time is not 9 bytes")
    return int.from_bytes(stored, "big")


def _graph_row(row: tuple[int, int | None, int, bytes, bytes, int]) -> GraphRow:
    key, parent, state_key, state, corrected, since = row
    return GraphRow(key, parent, state_key, state, unpack_time(corrected), since)


#: What ``SqlStateStore._record_graph_here`` reads first, by the state's id, the parent's key and the commit's id:
#: the commit's and the state's keys, whether the commit is indexed already, whether the state's bytes are stored,
#: and the parent's lane row (NULLs for a root, or a parent whose lane a reindex left without a row).
_FACTS = """SELECT c.key, s.key, EXISTS (SELECT 1 FROM commits x WHERE x.key = c.key), s.data IS NOT NULL,
l.lane, l.head FROM objects c JOIN objects s ON s.id = ?
LEFT JOIN commits p ON p.key = ? LEFT JOIN lanes l ON l.lane = p.lane WHERE c.id = ?"""

#: ``SqlStateStore._add_names``: node ids not named before get a key (the rows: each id as its column stores it).
_ADD_NAMES = ("INSERT INTO names (name) WITH t(name) AS ({rows}) "
              "SELECT name FROM t WHERE true ORDER BY name ON CONFLICT (name) DO NOTHING")

#: ``SqlStateStore._add_changes``: change rows ``(node id as stored, kind code, object id or NULL)`` of the commit
#: whose id follows them.  The commit's rows are there already only when it was indexed before, with these very
#: rows (the same id names the same parent and state).
_ADD_CHANGES = """INSERT INTO changes (commit_key, name, kind, object)
WITH t(name, kind, object) AS ({rows})
SELECT c.key, n.key, t.kind, o.key FROM t JOIN names n ON n.name = t.name LEFT JOIN objects o ON o.id = t.object
JOIN objects c ON c.id = ? WHERE true ON CONFLICT (commit_key, name) DO NOTHING"""

#: Every change row that sets an object, with its commit's key (to order by), the commit's id, node id and object id.
_VERSIONS = """SELECT ch.commit_key, x.id, n.name, o.id FROM changes ch JOIN names n ON n.key = ch.name
JOIN objects o ON o.key = ch.object JOIN objects x ON x.key = ch.commit_key"""


class SqlStateStore(ChangeIndex):
    """Reads and writes virtual states; one per open store."""

    def __init__(self, db: Session, objects: SqlObjectStore) -> None:
        self.db = db
        self.objects = objects

    # -------------------------------------------------------------- graph rows
    _ROW = ("SELECT c.key, c.parent, c.state, s.id, c.corrected, c.since "
            "FROM commits c JOIN objects s ON s.key = c.state")

    def graph(self, commit_raw: bytes) -> GraphRow | None:
        """The graph row of the commit with this id (None when it is not an indexed commit)."""
        found: GraphRow | None = self.db.memo.get(("graph", commit_raw))
        if found is None:
            row = self.db.execute(
                f"{self._ROW} JOIN objects x ON x.key = c.key WHERE x.id = ?", (commit_raw,)
            ).fetchone()
            found = _graph_row(row) if row else None
            if found is not None:
                self.db.memo["graph", commit_raw] = found
        return found

    def remember_graph(self, commit_raw: bytes, row: tuple[int, int | None, int, bytes, bytes, int]) -> None:
        """Memoise a graph row another statement read along (``SqlBackend.ref``: the tip a write builds on)."""
        self.db.memo["graph", commit_raw] = _graph_row(row)

    def graph_row(self, commit_key: int) -> GraphRow:
        """The graph row of a commit key (``corrupt_store`` when missing)."""
        row = self.db.execute(f"{self._ROW} WHERE c.key = ?", (commit_key,)).fetchone()
        if row is None:
            raise CorruptStoreError(f"commit key {commit_key} is not in the commit graph")
        return _graph_row(row)

    def all_commits(self) -> list[GraphRow]:
        """Every commit, parents before children (keys grow along every parent link)."""
        return [_graph_row(row) for row in self.db.execute(f"{self._ROW} ORDER BY c.key")]

    def first_parent_chain(self, commit_key: int) -> list[bytes]:
        """Ids of ``commit_key`` and its first-parent ancestors, newest first: one range scan per lane segment."""
        chain: list[bytes] = []
        for lane, high in self._segments(commit_key):
            chain += [
                raw
                for (raw,) in self.db.execute(
                    """SELECT o.id FROM commits c JOIN objects o ON o.key = c.key
                       WHERE c.key BETWEEN ? AND ? AND c.lane = ? ORDER BY c.key DESC""",
                    (lane, high, lane),
                )
            ]
        return chain

    def chain_at(self, commit_key: int, key: int | None) -> tuple[int, bytes]:
        """``(key, id)`` of the newest commit of the chain at or below ``key``: one probe into the segment holding it.

        A segment's lane is its oldest commit's key, so a key below every
        segment's lane is the root's (the last segment's lane) at most.
        """
        segments = self._segments(commit_key)
        lane, high = next(((lane, high) for lane, high in segments if key is not None and key >= lane), segments[-1])
        found = self.db.execute(
            """SELECT c.key, o.id FROM commits c JOIN objects o ON o.key = c.key
               WHERE c.key BETWEEN ? AND ? AND c.lane = ? ORDER BY c.key DESC LIMIT 1""",
            (lane, lane if key is None or key < lane else min(key, high), lane),
        ).fetchone()
        if found is None:
            raise CorruptStoreError(f"commit key {commit_key}'s chain has no commit in lane {lane}")
        return found[0], found[1]

    def _segments(self, commit_key: int) -> list[tuple[int, int]]:
        """A commit's first-parent chain as ``(lane, highest key)`` runs, newest first.

        A lane's commits up to some key are exactly that commit's ancestors in
        the lane; the chain goes on from the parent of the lane's first commit.
        """
        found: list[tuple[int, int]] | None = self.db.memo.get(("segments", commit_key))
        if found is not None:
            return found
        found = self.db.memo["segments", commit_key] = self.db.execute(
            """WITH RECURSIVE seg(lane, high, depth) AS (
                   SELECT lane, key, 0 FROM commits WHERE key = ?
                   UNION ALL
                   SELECT p.lane, p.key, seg.depth + 1
                   FROM seg JOIN commits f ON f.key = seg.lane JOIN commits p ON p.key = f.parent)
               SELECT lane, high FROM seg ORDER BY depth""",
            (commit_key,),
        ).fetchall()
        return found

    # ------------------------------------------------------------------ writing
    def record(self, new: NewCommit, image: StateImage) -> None:
        """Store and index a new commit in a handful of statements, none of whose answers the write waits for.

        Its objects (the nodes it brings, its state's and its own), its node
        names and its change rows go in one statement each
        (``Session.execute_rows``), every row finding the keys it refers
        to by id as it is written, so nothing waits for a key.  Where the
        engine has a statement for the graph row and its lane
        (``Session.record_graph``: PostgreSQL) that is one more, and the
        whole commit travels to the server with the ref's move and
        ``COMMIT``, in one round trip; elsewhere (SQLite, in process) the
        facts the graph row needs are read first.  ``image`` is kept, and
        stored as a snapshot when the changes since the chain's last
        snapshot outgrow it.
        """
        db = self.db
        self.objects.add([*((raw, "memory_node", data) for raw, data in new.objects.items()),
                          (new.state, "state", None), (new.id, "commit", new.data)])
        self._add_names([name for name, _, _ in new.changes])
        if db.record_graph is None:
            if not self._record_graph_here(new, image):
                return  # the same commit written again: already indexed
        else:
            parent = new.parent.key if new.parent is not None else None
            since = (new.parent.since if new.parent is not None else 0) + max(1, len(new.changes))
            if since > len(image.nodes):  # due as a snapshot; the statement then counts from 0
                db.execute("UPDATE objects SET data = ? WHERE id = ? AND data IS NULL", (image.encoding(), new.state))
            db.execute(db.record_graph, (new.id, new.state, parent, parent, since, pack_time(new.corrected)))
        self._add_changes(new.id, new.changes)
        self._images.keep(new.state, image)

    def _record_graph_here(self, new: NewCommit, image: StateImage) -> bool:
        """Write a new commit's graph row, lane and snapshot when due from facts read first; False: indexed already.

        For an engine whose writes run one at a time (SQLite): nothing can
        change the facts between their read and the rows written from them.
        """
        db = self.db
        parent = new.parent.key if new.parent is not None else None
        key, state_key, indexed, stored, lane, head = db.execute(_FACTS, (new.state, parent, new.id)).fetchone()
        if indexed:
            return False
        lane = self._head_lane(key, parent, (lane, head) if lane is not None else None)
        since = (new.parent.since if new.parent is not None else 0) + max(1, len(new.changes))
        if stored or since > len(image.nodes):
            if not stored:
                db.execute("UPDATE objects SET data = ? WHERE key = ?", (image.encoding(), state_key))
            since = 0
        db.execute(
            "INSERT INTO commits (key, parent, state, lane, since, corrected) VALUES (?, ?, ?, ?, ?, ?)",
            (key, parent, state_key, lane, since, pack_time(new.corrected)),
        )
        return True

    def _join_lane(self, key: int, parent: int | None) -> int:
        """The lane commit ``key`` belongs to, now headed by it: its parent's if the parent heads it, else its own.

        The parent's lane row is locked while it is read (``row_lock``): two
        writers extending the same commit on two branches must not both
        join its lane, or the lane would fork.
        """
        found = None
        if parent is not None:
            found = self.db.execute(
                f"SELECT l.lane, l.head FROM commits c JOIN lanes l ON l.lane = c.lane WHERE c.key = ?"
                f"{self.db.row_lock}",
                (parent,),
            ).fetchone()
        return self._head_lane(key, parent, found)

    def _head_lane(self, key: int, parent: int | None, found: tuple[int, int] | None) -> int:
        """Put ``key`` at the head of its parent's lane when the parent heads it (``found``, locked), else its own."""
        lane = key
        if parent is not None and found is not None and found[1] == parent:
            lane = found[0]
        self.db.execute(
            "INSERT INTO lanes (lane, head) VALUES (?, ?) ON CONFLICT (lane) DO UPDATE SET head = excluded.head",
            (lane, key),
        )
        return lane

    def relink(self, key: int, parent: int | None, corrected: int) -> None:
        """Re-derive an indexed commit's first-parent link, lane and corrected time (reindex; call parents first)."""
        lane = self._join_lane(key, parent)
        for remembered in [k for k in self.db.memo if k[0] == "segments"]:  # chains change with the links
            del self.db.memo[remembered]
        self.db.execute(
            "UPDATE commits SET parent = ?, lane = ?, corrected = ? WHERE key = ?",
            (parent, lane, pack_time(corrected), key),
        )

    def reset_derived(self) -> None:
        """Drop the lanes, which ``relink`` rebuilds parents first, and start a new epoch: the index is re-derived."""
        self.db.lock("lanes")
        self.db.execute("DELETE FROM lanes")
        self.db.rebuild()

    def write_changes(self, commit: bytes, changes: list[ChangeRow]) -> None:
        """Replace a commit's change rows."""
        self.db.execute("DELETE FROM changes WHERE commit_key = (SELECT key FROM objects WHERE id = ?)", (commit,))
        self._add_names([name for name, _, _ in changes])
        self._add_changes(commit, changes)

    def _add_names(self, names: list[str]) -> None:
        """Give every node id a ``names`` key unless it has one: one statement, in name order.

        In name order, so that concurrent writers (PostgreSQL) take the
        unique index's locks in one order; one that waits on another's new
        name finds it there once that commits, and leaves it.
        """
        db = self.db
        db.execute_rows(_ADD_NAMES, ("bytea",), [(db.node_name(name),) for name in names])

    def _add_changes(self, commit: bytes, changes: list[ChangeRow]) -> None:
        """Add a commit's change rows, each finding its name's, its object's and its commit's keys by id."""
        db = self.db
        db.execute_rows(_ADD_CHANGES, ("bytea", "smallint", "bytea"),
                        [(db.node_name(name), _KIND_CODE[kind], obj) for name, kind, obj in changes], commit)

    def ever_named_under(self, prefix: str) -> bool:
        """Whether the ``names`` table, every node id a change row ever named, holds one starting with ``prefix``.

        One probe of its unique index: both engines order it bytewise on
        UTF-8 (SQLite's BINARY text, PostgreSQL's bytea), so the ids under a
        prefix are the range up to the prefix with its last character's
        successor.  A name stays when the commits that named it become
        unreachable: the answer is about the store, not one branch.
        """
        if not prefix:  # every id starts with ""
            return self.db.execute("SELECT 1 FROM names LIMIT 1").fetchone() is not None
        low, high = prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)
        row = self.db.execute("SELECT 1 FROM names WHERE name >= ? AND name < ? LIMIT 1",
                              (self.db.node_name(low), self.db.node_name(high))).fetchone()
        return row is not None

    def _name_key(self, name: str) -> int | None:
        """A node id's integer key, or None when no commit ever named it (remembered for the transaction)."""
        key: int | None = self.db.memo.get(("name", name))
        if key is None:
            row = self.db.execute("SELECT key FROM names WHERE name = ?", (self.db.node_name(name),)).fetchone()
            if row is not None:
                key = self.db.memo["name", name] = row[0]
        return key

    # ----------------------------------------------------------- single nodes
    def last_change(self, commit_key: int, node_id: str) -> tuple[bytes, bytes | None, str] | None:
        """The nearest commit at or before ``commit_key`` on its first-parent chain that changed ``node_id``.

        Returns ``(commit id, id of the object it set or None if it removed
        the node, the change's kind)``, or None when no commit on the chain
        touched it (the node was never in memory there).  One probe per lane
        segment; the ids and the kind come with the probe, since callers go on
        to read them (the kind says whether the first parent held the node).
        A read remembers the answer in the memo: a worker reading the same
        node at the same commit asks once while the store is unchanged.
        """
        db = self.db
        if db.writing:
            return self._probe_last_change(commit_key, node_id)
        key = ("last_change", commit_key, node_id)
        if key not in db.memo:
            db.memo[key] = self._probe_last_change(commit_key, node_id)
        found: tuple[bytes, bytes | None, str] | None = db.memo[key]
        return found

    def _probe_last_change(self, commit_key: int, node_id: str) -> tuple[bytes, bytes | None, str] | None:
        """``last_change`` asked of the database."""
        db = self.db
        name = self._name_key(node_id)
        if name is None:
            return None
        for lane, high in self._segments(commit_key):
            found = db.execute(
                """SELECT x.id, o.id, ch.commit_key, ch.object, ch.kind
                   FROM changes ch JOIN commits c ON c.key = ch.commit_key
                   LEFT JOIN objects x ON x.key = ch.commit_key LEFT JOIN objects o ON o.key = ch.object
                   WHERE ch.name = ? AND ch.commit_key BETWEEN ? AND ? AND c.lane = ?
                   ORDER BY ch.commit_key DESC LIMIT 1""",
                (name, lane, high, lane),
            ).fetchone()
            if found is not None:
                commit, obj, commit_key_found, obj_key, kind = found
                for raw, key in ((commit, commit_key_found), (obj, obj_key)):
                    if raw is None and key is not None:
                        raise CorruptStoreError(f"object key {key} is referenced but not stored")
                if kind not in _KIND_NAME:
                    raise CorruptStoreError("bad change row: unknown kind")
                return commit, obj, _KIND_NAME[kind]
        return None

    def changes_of(self, commit_key: int) -> dict[str, str]:
        """Node id -> "added" | "modified" | "removed" against the first parent, in bytewise id order."""
        changes = self.change_set(commit_key)
        return {name: changes[name][0] for name in sorted(changes, key=str.encode)}

    def change_set(self, commit_key: int) -> dict[str, tuple[str, bytes | None]]:
        """A commit's change rows: node id -> (kind, id of the object it set, None when removed)."""
        rows = self.db.execute(
            """SELECT n.name, ch.kind, o.id FROM changes ch JOIN names n ON n.key = ch.name
               LEFT JOIN objects o ON o.key = ch.object WHERE ch.commit_key = ?""",
            (commit_key,),
        ).fetchall()
        try:
            return {self.db.node_id(name): (CHANGE_KINDS[kind], raw) for name, kind, raw in rows}
        except (IndexError, TypeError):
            raise CorruptStoreError("bad change row: unknown kind") from None

    # ------------------------------------------------------------ full states
    def versions(self, ids: Collection[str] | None = None, prefix: str | None = None) -> list[tuple[bytes, str, bytes]]:
        """Change rows that set an object, as ``(commit id, node id, object id)``, in commit key order.

        Every one, or with ``ids`` or ``prefix`` only those of these ids and
        of the ids under the prefix, found through the ``names`` index (a
        range for the prefix, as ``ever_named_under`` reads it).
        """
        db = self.db
        if ids is None and prefix is None:
            rows = db.execute(_VERSIONS + " ORDER BY ch.commit_key").fetchall()
        else:
            rows = []
            for marks, chunk in in_list([db.node_name(node_id) for node_id in dict.fromkeys(ids or ())]):
                rows += db.execute(_VERSIONS + f" WHERE n.name IN ({marks})", chunk).fetchall()
            if prefix:
                high = prefix[:-1] + chr(ord(prefix[-1]) + 1)
                rows += db.execute(_VERSIONS + " WHERE n.name >= ? AND n.name < ?",
                                   (db.node_name(prefix), db.node_name(high))).fetchall()
            elif prefix is not None:  # every id starts with ""
                rows = db.execute(_VERSIONS).fetchall()
            rows = sorted(set(rows), key=lambda row: row[0])
        return [(bytes(commit), db.node_id(name), bytes(raw)) for _, commit, name, raw in rows]

    def image(self, row: GraphRow) -> StateImage:
        """The verified state of a commit: cached, or rebuilt from a base plus change rows.

        The base is the nearest commit on the first-parent chain whose state
        is cached here or stored as a good snapshot, else the empty state
        before the root.  The result must hash to the commit's state id.
        """
        cached: StateImage | None = self._images.find(row.state)
        if cached is not None:
            return cached
        base, pending = self._base(row.key)
        # Oldest first, so a later change to a node overrides an earlier one: along a first-parent
        # chain keys grow from parent to child.
        keys, param = self.db.keys_table(pending)
        rows = self.db.execute(
            f"""SELECT n.name, o.id FROM {keys}
               JOIN changes ch ON ch.commit_key = j.value JOIN names n ON n.key = ch.name
               LEFT JOIN objects o ON o.key = ch.object ORDER BY ch.commit_key""",
            (param,),
        ).fetchall()
        image = base.apply({self.db.node_id(name): raw for name, raw in rows})
        if image.state_id() != row.state:
            raise CorruptStoreError(
                f"state {row.state.hex()} does not rebuild to its id from the stored changes"
            )
        self._images.keep(row.state, image)
        return image

    def _base(self, start: int | None) -> tuple[StateImage, list[int]]:
        """Where to rebuild commit ``start``'s state from, and the commits whose changes lie on top (newest first).

        The first-parent walk is read in growing chunks (8 commits, then 4x
        more each time): finding the parent's image cached, the usual case
        when committing or exporting, reads a couple of rows, while the walk
        back to the last snapshot (up to the state's size in commits) is a
        handful of queries.  A database server computes a recursive query
        whole before answering, so an unbounded walk cost every write a scan
        back to the last snapshot.
        """
        db = self.db
        pending: list[int] = []
        chunk = _WALK_FIRST
        while start is not None:
            walk = db.execute(
                """WITH RECURSIVE walk(key, parent, state, since, depth) AS (
                       SELECT key, parent, state, since, 1 FROM commits WHERE key = ?
                       UNION ALL
                       SELECT c.key, c.parent, c.state, c.since, walk.depth + 1
                       FROM walk JOIN commits c ON c.key = walk.parent WHERE walk.since != 0 AND walk.depth < ?)
                   SELECT w.key, w.parent, w.state, w.since, o.id FROM walk w LEFT JOIN objects o ON o.key = w.state
                   ORDER BY w.depth""",
                (start, chunk),
            ).fetchall()
            start = None
            for key, parent, state_key, since, state_id in walk:
                cached: StateImage | None = self._images.find(state_id)
                if cached is not None:
                    return cached, pending
                if since == 0:
                    snapshot = self._snapshot(state_key, state_id)
                    if snapshot is not None:
                        return snapshot, pending
                pending.append(key)
                start = parent
            chunk *= 4
        return StateImage.empty(), pending

    def _snapshot(self, state_key: int, state_id: bytes | None) -> StateImage | None:
        """A stored state's image, or None (and a warning) when its bytes are missing or damaged."""
        row = self.db.execute("SELECT data FROM objects WHERE key = ?", (state_key,)).fetchone()
        if row is None or row[0] is None or state_id is None:
            # state_id is None when the state's object row itself is gone (a damaged file): rebuild
            # from older changes all the same; image() still checks the result against the commit.
            shown = state_id.hex() if state_id is not None else f"#{state_key}"
            logger(__name__).warning("snapshot of state %s is missing; rebuilding from older changes", shown)
            return None
        try:
            image = StateImage.from_canonical(row[0], state_id)
        except CorruptStoreError as exc:
            logger(__name__).warning("ignoring damaged snapshot: %s", exc)
            return None
        self._images.keep(state_id, image)
        return image

    @property
    def _images(self) -> Shelf:
        """Verified states by id: an image is checked against its id before it is kept."""
        return self.db.kept.shelf("images", IMAGE_CACHE_SIZE)

    def state_image(self, state_key: int, state_id: bytes) -> StateImage:
        """A virtual state's image, rebuilt through a commit that has it."""
        cached: StateImage | None = self._images.find(state_id)
        if cached is not None:
            return cached
        row = self.db.execute("SELECT key FROM commits WHERE state = ? LIMIT 1", (state_key,)).fetchone()
        if row is None:
            raise CorruptStoreError(f"state {state_id.hex()} has neither stored bytes nor a commit to rebuild it from")
        return self.image(self.graph_row(row[0]))

    def repair_snapshot(self, row: GraphRow, image: StateImage) -> None:
        """Rewrite a commit's stored state bytes from a verified image if they no longer hash to the id."""
        db = self.db
        stored = db.execute("SELECT data FROM objects WHERE key = ?", (row.state_key,)).fetchone()[0]
        if stored is not None and object_id(stored) != row.state:
            db.execute("UPDATE objects SET data = ? WHERE key = ?", (image.encoding(), row.state_key))
            self.db.memo.pop(("object", row.state), None)

    def fresh(self) -> SqlStateStore:
        """The same index, trusting nothing this process kept from earlier reads."""
        self.db.kept.forget()
        return self
