"""The storage seam: everything a store keeps, behind one interface.

A store holds five things, and a ``Backend`` holds all of them in one
database so that one transaction covers any change to them:

* **objects**: content-addressed nodes, states and commits (``ObjectIndex``);
* **the change index**: the commit graph and each commit's change rows, from
  which states are rebuilt (``ChangeIndex``);
* **refs and HEAD**: branches move by compare-and-swap, and HEAD is a row
  beside them, so a commit, a checkout or a branch creation moves them in
  the same transaction as everything else it writes;
* **staging and tombstones**: the pending ``add``/``rm`` of the CLI;
* **config**: upstream's ``format_version``/``hash_algo``/``default_branch``.

Beside them, never part of a commit or its id, a backend keeps what an
adapter attaches to memory (``Leases``: expiry times of nodes on a branch,
LangGraph's TTL; ``Vectors``: embeddings of node objects for semantic
search), who pushed what into the store (``Pushes``: each branch move
a push made, and the commits it brought), and which node versions had their
bytes removed (``Redactions``: who, when, why).  They live in the same
database so that a write and its lease, vectors, push or redaction record
are one transaction.

Nothing outside a backend module touches a connection: ``Repo`` and the
porcelain verbs speak only these methods, inside ``read()`` (one consistent
snapshot) or ``write()`` (all or nothing).  SQLite is the first
implementation (``mnem_store.sqlite``); a second engine is a second module
implementing the same three classes, with no change to the verbs.  A
backend's engine-specific failures are raised as the taxonomy's errors
(``busy``, ``store_io``, ``corrupt_store``), never as driver exceptions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import NamedTuple

from .cache import Kept
from .layout import Head
from .objects import Redaction
from .stateimage import StateImage

__all__ = [
    "CHANGE_KINDS",
    "KIND_CODES",
    "Backend",
    "ChangeIndex",
    "ChangeRow",
    "Collector",
    "Dropped",
    "Erasure",
    "GraphRow",
    "Leases",
    "NewCommit",
    "ObjectIndex",
    "ObjectRow",
    "Push",
    "Pushes",
    "Redaction",
    "Redactions",
    "VectorRow",
    "Vectors",
    "corrected_time",
]

#: ``(key, kind code, canonical bytes or None for a virtual state)`` of one stored object.
ObjectRow = tuple[int, int, bytes | None]

#: One change row to write: node id, change kind, id of the new object (None when removed).
ChangeRow = tuple[str, str, bytes | None]

#: What a change row says a commit did to a node, against its first parent.
CHANGE_KINDS = ("added", "modified", "removed")

#: Small integers for an object's kind, as ``ObjectRow`` carries it (and the SQLite ``objects.kind`` column
#: stores it, so commit-prefix lookups skip nodes and states).
KIND_CODES = {"memory_node": 0, "state": 1, "commit": 2}


def corrected_time(time: int, parents: Iterable[int]) -> int:
    """A commit's corrected time from its own time and its parents' corrected times (``GraphRow``)."""
    return max([0, time, *(parent + 1 for parent in parents)])


class GraphRow(NamedTuple):
    """A commit's row in the commit graph, with its state's id.

    ``corrected`` is the commit's corrected time (git's generation number
    v2): its own time, raised to one more than every parent's corrected
    time, and to at least 0.  It grows strictly along every parent link
    whatever the clocks said, so ordering by it never lists a parent before
    its child, and for histories whose clocks ran forward from 1970 it
    equals the commit's time.  A commit's time is a signed 64-bit integer
    (upstream's format), but the stored form is unsigned: a time before
    1970 is as valid, and is ordered among its kind by the graph alone.

    ``since`` is how many change rows lie on the commit's first-parent
    chain since its last stored snapshot (``ChangeIndex``): a child's
    write decides from it whether its state is due as a snapshot.
    """

    key: int
    parent: int | None
    state_key: int
    state: bytes
    corrected: int
    since: int


class NewCommit(NamedTuple):
    """A commit to index, with everything its rows need, named by ids: ``ChangeIndex.record`` writes it in a batch.

    The caller never waits for an object's key: the rows find their keys
    by id where they are written, so a server takes the whole commit in
    one round trip.
    """

    id: bytes
    #: The commit's canonical bytes.
    data: bytes
    #: Its first parent's graph row (None: a root).
    parent: GraphRow | None
    state: bytes
    corrected: int
    #: Its change rows against the first parent; every object they name is stored or in ``objects``.
    changes: list[ChangeRow]
    #: Node objects stored with it, by id (canonical bytes), unless stored already.
    objects: dict[bytes, bytes]


class ObjectIndex(ABC):
    """Content-addressed objects behind small integer keys (the other tables refer to keys)."""

    @abstractmethod
    def row(self, raw: bytes) -> ObjectRow | None:
        """``(key, kind code, canonical bytes or None)`` of an object, or None when absent."""

    @abstractmethod
    def prefetch(self, raws: Iterable[bytes]) -> None:
        """Read these objects in a few statements, so the ``row`` calls that follow in the transaction cost none."""

    @abstractmethod
    def stored_rows(self) -> Iterator[tuple[bytes, int, bytes | None]]:
        """Every object's ``(id, kind code, stored bytes as kept, or None)`` in id order, for ``verify``."""

    @abstractmethod
    def all_rows(self) -> Iterable[tuple[int, bytes, bytes | None]]:
        """Every object's ``(key, id, canonical bytes or None)``, in id order."""

    @abstractmethod
    def key(self, raw: bytes) -> int | None:
        """The key of an object id, or None."""

    @abstractmethod
    def missing(self, raws: Iterable[bytes]) -> list[bytes]:
        """Those of these object ids that are not stored, asked in a few statements, not one per id."""

    @abstractmethod
    def id_of(self, key: int) -> bytes:
        """The id behind a key; a dangling key is ``corrupt_store``."""

    @abstractmethod
    def insert(self, raw: bytes, kind: str, data: bytes | None) -> int:
        """Store an object unless its id is there (write transaction); returns its key."""

    @abstractmethod
    def insert_many(self, rows: Iterable[tuple[bytes, str, bytes | None]]) -> None:
        """Store many new objects at once (an import into a fresh store)."""

    @abstractmethod
    def commits_with_prefix(self, low: bytes, high: bytes, limit: int) -> list[bytes]:
        """Up to ``limit`` commit ids between ``low`` and ``high`` inclusive."""

    @abstractmethod
    def count_commits_with_prefix(self, low: bytes, high: bytes) -> int:
        """How many commit ids lie between ``low`` and ``high`` inclusive."""


class ChangeIndex(ABC):
    """The commit graph and per-commit change rows; states are rebuilt from them.

    Implementations keep a small cache of verified state images (built
    only from bytes that hashed to their id), so committing on a warm tip
    costs what the commit changed.
    """

    @abstractmethod
    def graph(self, commit_raw: bytes) -> GraphRow | None:
        """The graph row of a commit id, or None when it is not an indexed commit."""

    @abstractmethod
    def graph_row(self, commit_key: int) -> GraphRow:
        """The graph row of a commit key (``corrupt_store`` when missing)."""

    @abstractmethod
    def all_commits(self) -> list[GraphRow]:
        """Every commit, parents before children."""

    @abstractmethod
    def first_parent_chain(self, commit_key: int) -> list[bytes]:
        """Ids of a commit and its first-parent ancestors, newest first."""

    @abstractmethod
    def chain_at(self, commit_key: int, key: int | None) -> tuple[int, bytes]:
        """``(key, id)`` of the newest commit on a commit's first-parent chain whose key is at most ``key``.

        ``key`` None, or below the chain's root: the root.  Keys grow along
        every parent link, so the chain in key order is the chain in order,
        and this is one indexed probe, whatever the chain's length.
        """

    @abstractmethod
    def record(self, new: NewCommit, image: StateImage) -> None:
        """Store and index a new commit (write transaction): its objects, graph row, change rows, snapshot when due.

        ``image`` is its state, known to hash to ``new.state``; it is stored
        as a snapshot when due.  A commit indexed already is left as it is.
        """

    @abstractmethod
    def relink(self, key: int, parent: int | None, corrected: int) -> None:
        """Re-derive an indexed commit's first-parent link and corrected time (reindex; parents first)."""

    @abstractmethod
    def reset_derived(self) -> None:
        """Drop what ``relink`` re-derives, before a reindex re-links every commit."""

    @abstractmethod
    def write_changes(self, commit: bytes, changes: list[ChangeRow]) -> None:
        """Replace a commit's change rows."""

    @abstractmethod
    def last_change(self, commit_key: int, node_id: str) -> tuple[bytes, bytes | None, str] | None:
        """The nearest commit at or before ``commit_key`` on its chain that changed ``node_id``.

        Returns ``(commit id, id of the object it set or None when removed, the change's kind: added |
        modified | removed against that commit's first parent)``, or None.
        """

    @abstractmethod
    def changes_of(self, commit_key: int) -> dict[str, str]:
        """A commit's change set: node id -> added | modified | removed."""

    @abstractmethod
    def ever_named_under(self, prefix: str) -> bool:
        """Whether any commit ever changed a node whose id starts with ``prefix`` (one indexed probe)."""

    @abstractmethod
    def change_set(self, commit_key: int) -> dict[str, tuple[str, bytes | None]]:
        """A commit's change rows: node id -> (kind, new object id or None)."""

    @abstractmethod
    def versions(self, ids: Collection[str] | None = None, prefix: str | None = None) -> list[tuple[bytes, str, bytes]]:
        """Every ``(commit id, node id, object id)`` a change row sets, in commit key order (``mnem redact``).

        With ``ids`` or ``prefix``, only the rows of those node ids and of the ids under the prefix.
        """

    @abstractmethod
    def image(self, row: GraphRow) -> StateImage:
        """A commit's verified state (``corrupt_store`` when it does not rebuild to its id)."""

    @abstractmethod
    def state_image(self, state_key: int, state_id: bytes) -> StateImage:
        """A virtual state's image, rebuilt through a commit that has it."""

    @abstractmethod
    def repair_snapshot(self, row: GraphRow, image: StateImage) -> None:
        """Rewrite a commit's stored state bytes from a verified image if they no longer hash to the id."""

    @abstractmethod
    def fresh(self) -> ChangeIndex:
        """The same index with an empty image cache (``verify`` trusts nothing cached earlier)."""


class Leases(ABC):
    """When nodes on a branch expire (``mnem write``'s ``ttl``): kept beside history, never in a commit.

    A lease is ``(expires, ttl)`` in Unix ms for one node id on one branch;
    an expired node is hidden by live reads at once and removed by ``mnem
    expire`` as one commit.  Branches keep their own leases: a branch made
    from another starts with none.
    """

    @abstractmethod
    def set(self, branch: str, rows: Iterable[tuple[str, int, int]]) -> None:
        """Give nodes ``(node id, expires, ttl)`` leases, replacing theirs (write transaction)."""

    @abstractmethod
    def drop(self, branch: str, ids: Iterable[str]) -> None:
        """End these nodes' leases: they no longer expire (write transaction)."""

    @abstractmethod
    def of(self, branch: str, ids: Iterable[str] | None = None) -> dict[str, int]:
        """``{node id: expires}`` of the leased ones among ``ids`` (None: every lease of the branch)."""

    @abstractmethod
    def touch(self, branch: str, ids: Iterable[str], now: int) -> dict[str, int]:
        """Restart the unexpired leases among ``ids`` at ``now`` (write transaction); returns their new expiry."""

    @abstractmethod
    def expired(self, branch: str, now: int) -> list[str]:
        """The branch's node ids whose lease ran out at or before ``now``, sorted."""


#: ``(node object id, field path, vector as little-endian float32 bytes)``.
VectorRow = tuple[bytes, str, bytes]


class Vectors(ABC):
    """Embeddings of node objects, by model and field: an adapter's search index beside the store.

    Keyed by the node object's id (a hash of its content and provenance)
    and the field path embedded, so one vector serves every commit and
    branch that holds the object, and a past commit is searched with the
    vectors of the values it held.
    """

    @abstractmethod
    def add(self, model: str, rows: Iterable[VectorRow]) -> None:
        """Store vectors, replacing any for the same object and field (write transaction)."""

    @abstractmethod
    def of(self, model: str, objects: Iterable[bytes]) -> list[VectorRow]:
        """The model's vectors of these objects (those that have any)."""


class Push(NamedTuple):
    """Who pushed a commit into the store (``mnem receive-pack``'s ``pusher``), and when, in Unix ms."""

    pusher: str
    at: int


class Pushes(ABC):
    """Who pushed what into the store: each branch move a push made, and the commits that push brought.

    A commit's author is whatever its bytes say, which a pusher chooses; the
    pusher is who the server that took the push knew the sender to be (a
    token's subject).  Kept beside history, never in a commit or an id: a
    commit pushed to two servers is the same commit on both, each knowing
    who brought it there.
    """

    @abstractmethod
    def record(self, push: Push, branch: str, old: bytes | None, new: bytes, commits: Iterable[bytes]) -> None:
        """Record a push that moved ``branch`` from ``old`` to ``new`` and brought ``commits`` (write transaction)."""

    @abstractmethod
    def of(self, commits: Iterable[bytes]) -> dict[bytes, Push]:
        """The push that brought each of ``commits`` into the store, for those a push brought."""


class Redactions(ABC):
    """Node versions whose bytes were removed from the store, and the record of each (who, when, why).

    Removing is one statement set inside the caller's write transaction:
    the object's stored bytes become NULL (its row, id and key stay, so
    every state and change row naming it still holds), its vectors go, and
    a record is kept.  A record is never removed: it is what tells a read,
    ``verify`` and a transfer that the missing bytes are meant to be missing;
    but for one a transfer disproves (``forget_disproved``).
    """

    @abstractmethod
    def remove(self, records: Iterable[Redaction]) -> list[Redaction]:
        """Remove the bytes of these node objects and record why (write transaction).

        Idempotent: an object already recorded keeps its first record, and
        only the records new to the store are returned.  Starts a new epoch
        (``Session.rebuild``): every shelf held the value under the object's id.
        """

    @abstractmethod
    def of(self, objects: Iterable[bytes]) -> dict[bytes, Redaction]:
        """The record of each of ``objects`` that was redacted."""

    @abstractmethod
    def every(self) -> list[Redaction]:
        """Every record, oldest first (then by object id)."""

    @abstractmethod
    def count(self) -> int:
        """How many records the store keeps."""

    @abstractmethod
    def forget_disproved(self, objects: Iterable[bytes]) -> None:
        """Drop the records of ``objects``, which arrived as commits or states (write transaction).

        A record names a node version, and an id hashes its object's bytes,
        so an object that verifies as a commit or a state was never one: a
        record naming it came from a party that guessed the id before it
        existed, and would otherwise refuse that commit for good.
        """

    @abstractmethod
    def ids(self, low: bytes, high: bytes | None, after: bytes | None, limit: int) -> list[bytes]:
        """Up to ``limit`` objects with records, ascending by their bytes, so a range is read page by page.

        From ``low`` (inclusive) to ``high`` (exclusive; None: no end), and past ``after`` when it is given.
        """


class Dropped(NamedTuple):
    """What garbage collection dropped (or, in a dry run, would drop): commit-graph rows and object rows."""

    commits: int
    objects: int
    #: The commits it kept: what the next collection walks again.
    kept: int


class Collector(ABC):
    """What garbage collection asks of a store: the commits to walk, and dropping what kept commits do not need.

    Which commits are kept is the caller's (``mnem_store.collect``: those a
    ref, HEAD, a tracking branch reaches); which rows those commits need is
    the store's own knowledge of where a state lives.
    """

    @abstractmethod
    def commits(self) -> list[tuple[int, bytes, bytes | None]]:
        """Every commit object's ``(key, id, canonical bytes)``, for a walk of the whole graph."""

    @abstractmethod
    def drop(self, keep: Collection[int], *, dry_run: bool) -> Dropped:
        """Drop every commit whose key is not in ``keep`` and every object the kept ones do not need.

        Kept besides the commits: their states, the node objects their
        change rows set, staged objects and every redacted object (records
        are never dropped).  What hangs off a dropped row goes with it (its
        change rows, node names no change row uses any more, lanes, vectors,
        pushed-commit rows, leases of branches that no longer exist), and a
        new epoch starts, so no shelf answers for a dropped id.  With
        ``dry_run`` nothing is written: the counts are what would go.
        Runs inside the caller's transaction (a write unless ``dry_run``).
        """


class Erasure:
    """What ``Backend.erasing`` achieved once its transaction committed.

    ``complete``: no file of the store still holds what it removed; if
    not, ``residue`` says what still does, and the fix.
    """

    __slots__ = ("complete", "residue")

    def __init__(self) -> None:
        self.complete = False
        self.residue = "the transaction did not commit"


class Backend(ABC):
    """One open store: objects, the change index, refs with HEAD, staging and config.

    Every method that writes must run inside ``write()``; reads outside a
    snapshot see the latest committed data, one statement at a time.
    """

    #: Where the store is, as shown to a user (a path; never a secret).
    location: str
    #: Whether the store can only be read (a read-only file system or folder).
    read_only: bool
    objects: ObjectIndex
    states: ChangeIndex
    leases: Leases
    vectors: Vectors
    pushes: Pushes
    redactions: Redactions
    collector: Collector
    #: What the store keeps between reads (``mnem_store.cache``): the one rule is applied by ``read()``.
    kept: Kept

    # ------------------------------------------------------------ transactions
    @abstractmethod
    def read(self) -> AbstractContextManager[None]:
        """A read snapshot: several queries see one consistent version of the store."""

    @abstractmethod
    def write(self) -> AbstractContextManager[None]:
        """One durable write transaction: everything inside commits or nothing does.

        A writer waits a bounded time for others, then fails with ``busy``;
        on a read-only store it fails with ``store_io`` saying so.
        """

    @abstractmethod
    def erasing(self, *, rewrite: bool = True) -> AbstractContextManager[Erasure]:
        """One write transaction (as ``write()``) after which what it removed is in no file of the store.

        For a verb that removes bytes a user needs gone (``mnem redact``):
        SQLite zeroes what the transaction frees and empties the WAL after it
        commits; PostgreSQL rewrites the tables it changed after it commits
        (docs/postgres.md says what the server still keeps).  ``rewrite``
        False (a write that removes bytes to keep the store small, not to
        honour an erasure request: the saver's retention) has PostgreSQL run a
        plain ``VACUUM`` instead of the rewrite, whose cost grows with the
        tables and which locks their readers out: the old row versions' space
        is marked free, their bytes stay until later rows are written over
        them or a rewrite drops them, and the erasure says so (``complete``
        False).  SQLite's erasure is the same either way.
        """

    @abstractmethod
    def exclusive(self) -> AbstractContextManager[None]:
        """One write transaction (as ``write()``) that no other write runs beside, from its first read on.

        For a verb that removes rows another write might be about to use
        (``mnem gc``): it waits for the writes under way to end and holds
        new ones off until it commits.  Every SQLite write is one already;
        on PostgreSQL every write holds a shared lock on the store and this
        one the exclusive lock (docs/postgres.md).
        """

    @abstractmethod
    def size(self) -> int:
        """The bytes the store takes where it lives (SQLite: its files; PostgreSQL: its tables and indexes)."""

    @abstractmethod
    def compact(self, *, rewrite: bool = True) -> None:
        """Give the space of dropped rows back, outside any transaction.

        SQLite runs ``VACUUM``; PostgreSQL ``VACUUM FULL`` of the tables
        ``Collector.drop`` changes.  Without ``rewrite`` the files are not
        rewritten, so they do not shrink, but the space is reused by later
        writes (a store kept at a steady size, as a checkpointer's retention
        keeps one): SQLite only empties its WAL (dropped rows are zeroed as
        they go, ``secure_delete``), PostgreSQL runs a plain ``VACUUM``.

        Raises:
            BusyError: Another writer held the store past the busy timeout; running it again later finishes it.
        """

    @abstractmethod
    def close(self) -> None:
        """Release the connection."""

    @abstractmethod
    def replaced(self) -> bool:
        """Whether the store this backend opened has since been replaced where it lives.

        A long-lived worker keeps stores open between requests; a store
        deleted and made again (or restored from a backup) must be reopened.
        """

    @property
    @abstractmethod
    def writing(self) -> bool:
        """Whether a ``write()`` transaction is open: every writing method needs one."""

    # ------------------------------------------------------------------ config
    @abstractmethod
    def config_text(self) -> str:
        """The store's config, in upstream's ``key = value`` text."""

    @abstractmethod
    def setting(self, key: str) -> str | None:
        """A local setting kept beside the config, never exported (the remotes: ``mnem_store.remotes``), or None."""

    @abstractmethod
    def set_setting(self, key: str, value: str) -> None:
        """Write a local setting (write transaction)."""

    # -------------------------------------------------------------- HEAD, refs
    @abstractmethod
    def head(self) -> Head:
        """HEAD as stored (``corrupt_store`` when damaged)."""

    @abstractmethod
    def set_head(self, head: Head) -> None:
        """Move HEAD (write transaction)."""

    @abstractmethod
    def ref(self, name: str) -> bytes | None:
        """A branch's tip, or None when there is no such branch."""

    @abstractmethod
    def refs(self) -> list[tuple[str, bytes]]:
        """Every branch and its tip, by name."""

    @abstractmethod
    def set_ref(self, name: str, expected: bytes | None, new: bytes) -> bool:
        """Compare-and-swap a branch tip (write transaction).

        ``expected`` None means the branch must not exist yet.  Returns
        whether the swap happened; the caller turns a miss into its error.
        """

    @abstractmethod
    def set_refs(self, refs: Iterable[tuple[str, bytes]]) -> None:
        """Create many branches at once (an import into a fresh store)."""

    @abstractmethod
    def delete_ref(self, name: str) -> bool:
        """Remove a branch (write transaction); returns whether it existed."""

    # ----------------------------------------------------------------- staging
    @abstractmethod
    def staged(self) -> list[tuple[str, bytes]]:
        """Staged adds ``(node id, object id)``, by node id."""

    @abstractmethod
    def staged_deletions(self) -> list[str]:
        """Tombstoned node ids, sorted."""

    @abstractmethod
    def staged_node(self, node_id: str) -> tuple[bool, bytes | None]:
        """``(True, object id)`` when staged, ``(True, None)`` when tombstoned, else ``(False, None)``."""

    @abstractmethod
    def stage(self, node_id: str, raw: bytes) -> None:
        """Stage an object for a node id, lifting any tombstone (write transaction)."""

    @abstractmethod
    def drop_staged(self, node_id: str) -> bool:
        """Drop a staged add (write transaction); returns whether there was one."""

    @abstractmethod
    def add_tombstone(self, node_id: str) -> None:
        """Stage the deletion of a node id (write transaction)."""

    @abstractmethod
    def unstage(self, node_id: str) -> bool:
        """Drop a staged add or tombstone; returns whether there was one."""

    @abstractmethod
    def clear_staging(self) -> None:
        """Drop every staged add and tombstone (write transaction)."""

    @abstractmethod
    def is_dirty(self) -> bool:
        """Whether anything is staged."""
