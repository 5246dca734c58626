"""What the shared SQL needs from a database: a connection in a transaction, and the few dialect differences.

The store's tables are the same in SQLite and PostgreSQL, and so are almost
all statements over them: ``?`` placeholders, ``INSERT ... ON CONFLICT``,
``RETURNING`` and recursive CTEs mean the same in both.  A ``Session`` runs
those statements on its backend's open transaction and supplies what
differs: how a list of keys becomes a table, how a node id is stored
(PostgreSQL text cannot hold NUL, so it keeps UTF-8 bytes), and the row and
named locks that let PostgreSQL writers to different branches run at once
where SQLite's single write lock already serializes everything.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any, Protocol

from ..cache import EPOCH_BITS, GENERATION_KEY, Kept

__all__ = [
    "BUMP", "GENERATION", "REBUILD", "Rows", "Session", "bump", "busy_timeout_s", "fresh_generation", "generation",
]


class Rows(Protocol):
    """The cursor a statement returns (``sqlite3.Cursor`` and ``psycopg.Cursor`` both are one)."""

    @property
    def rowcount(self) -> int:
        """Rows an INSERT, UPDATE or DELETE touched."""
        ...

    def fetchone(self) -> Any:
        """The next row, or None."""
        ...

    def fetchall(self) -> list[Any]:
        """Every remaining row."""
        ...

    def __iter__(self) -> Iterator[Any]: ...


def busy_timeout_s() -> float:
    """How long a writer waits for a lock (and a worker for a pooled connection): ``MNEM_BUSY_TIMEOUT_MS`` or 10 s."""
    raw = os.environ.get("MNEM_BUSY_TIMEOUT_MS", "")
    return (int(raw) if raw.isdigit() else 10_000) / 1000


#: Parameters one SQLite statement binds at most (its default limit is 32,766).
_SQLITE_PARAMETERS = 30_000

#: The memo's list of keys to forget when the transaction that learnt them ends (``remember_briefly``).
BRIEF = "brief"

#: Read first by every read transaction (``Kept.observe``).
GENERATION = f"SELECT value FROM meta WHERE key = '{GENERATION_KEY}'"


#: ``bump``'s statement with the new value as parameters (the value as text, then as a number): a server
#: prepares it once, where each of ``bump``'s texts would be a new statement to parse and plan.
BUMP = (
    f"INSERT INTO meta (key, value) VALUES ('{GENERATION_KEY}', ?) ON CONFLICT (key) DO UPDATE SET "
    f"value = CAST(((CAST(meta.value AS BIGINT) >> {EPOCH_BITS}) << {EPOCH_BITS}) + ? AS TEXT)"
)


@lru_cache(maxsize=256)
def _valued(statement: str, columns: int, count: int) -> str:
    """``Session.execute_rows``'s statement with ``count`` rows of ``columns`` values each, as ``VALUES``."""
    row = "(" + ", ".join("?" * columns) + ")"
    return statement.replace("{rows}", "VALUES " + ", ".join([row] * count))


def fresh_generation() -> int:
    """A new generation within the epoch (``BUMP``'s value).

    New at random within the epoch rather than counted up: a PostgreSQL
    server that crashes may lose commits a reader had already seen, and a
    count would then reach the same generation again over other contents.
    ``secrets`` (with hashlib's OpenSSL) is imported here, by writes only: a one-shot read never loads it.
    """
    import secrets

    return secrets.randbelow((1 << EPOCH_BITS) - 1) + 1


def bump() -> str:
    """The statement every write transaction runs just before it commits: a new generation in the same epoch."""
    fresh = fresh_generation()
    return BUMP.replace("?", f"'{fresh}'", 1).replace("?", str(fresh), 1)


#: Run by a rebuild (``Session.rebuild``): the generation starts the next epoch, so every shelf empties.
REBUILD = (
    f"INSERT INTO meta (key, value) VALUES ('{GENERATION_KEY}', '{1 << EPOCH_BITS}') "
    f"ON CONFLICT (key) DO UPDATE SET value = "
    f"CAST(((CAST(meta.value AS BIGINT) >> {EPOCH_BITS}) + 1) << {EPOCH_BITS} AS TEXT)"
)


def generation(row: Any) -> int | None:
    """The generation from ``GENERATION``'s row (None: the store was not written since generations began)."""
    return None if row is None else int(row[0])


class Session(ABC):
    """One store's database connection, as ``mnem_store.sql`` sees it.

    ``memo`` holds what statements learned (graph rows, object rows, a
    written branch's tip, the locks held), so that a transaction asks the
    database for each once: a round trip to a server costs far more than a
    lookup in SQLite's page cache.  It is ``kept.memo``: it outlives a read
    while the store's generation does not move (``mnem_store.cache``), and
    a write learns its own from scratch.
    """

    def __init__(self) -> None:
        self.kept = Kept()
        self.memo: dict[Any, Any] = self.kept.memo
        self._writing = False

    @property
    def writing(self) -> bool:
        """Whether a write transaction is open."""
        return self._writing

    def forget_brief(self) -> None:
        """Let go of what a read remembered only for itself (``remember_briefly``): now, not at the next read."""
        for key in self.memo.pop(BRIEF, ()):
            self.memo.pop(key, None)

    def meta(self, key: str) -> str | None:
        """One ``meta`` row's value (HEAD, config, schema version), or None."""
        row = self.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row is not None else None

    def set_meta(self, key: str, value: str) -> None:
        """Write one ``meta`` row (inside a write transaction)."""
        self.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def rebuild(self) -> None:
        """Start a new epoch (inside a write): derived rows about existing ids changed, so no shelf may be trusted."""
        self.execute(REBUILD)

    def remember_briefly(self, key: Any, value: Any) -> None:
        """Put ``value`` in the memo for the current transaction only (a large object: never kept longer)."""
        self.memo[key] = value
        self.memo.setdefault(BRIEF, []).append(key)

    #: Appended to a SELECT to lock the rows it reads until the transaction ends ("" where the database has
    #: one write lock for everything, as SQLite has).
    row_lock = ""

    #: A statement that indexes a new commit's graph row and lane by ids in one (``SqlStateStore.record``), its
    #: parameters the commit's id, its state's id, its parent's key twice, its ``since`` unless its state is stored,
    #: and its corrected time.  None: the facts are read first and each row written on its own (SQLite, in process).
    record_graph: str | None = None

    #: A statement that inserts an object ``(id, kind, data)`` unless its id (the fourth parameter) is stored,
    #: and answers ``(key, whether it is new, whether its bytes are missing)`` either way: one round trip to a
    #: server for an object written again.  None: insert, then read what was there (SQLite, in process).
    upsert_object: str | None = None

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """Run one statement with ``?`` placeholders."""

    @abstractmethod
    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement once per row of parameters."""

    def execute_rows(self, statement: str, types: Sequence[str], rows: Sequence[Sequence[Any]], *after: Any) -> None:
        """Run ``statement`` over ``rows`` at once, nothing read back: a batch of a commit's rows.

        ``{rows}`` in the statement stands for a query of the rows (its
        ``WITH t(...) AS ({rows})`` names their columns), ``types`` are the
        columns' PostgreSQL types and ``after`` the parameters that follow
        the rows'.  Here the rows go as ``VALUES``, as many a statement as
        SQLite's limit on parameters allows; a server takes them as arrays,
        in one statement however many there are.
        """
        per = max(1, _SQLITE_PARAMETERS // len(types))
        for start in range(0, len(rows), per):
            chunk = rows[start : start + per]
            self.execute(_valued(statement, len(types), len(chunk)), [*(v for row in chunk for v in row), *after])

    @abstractmethod
    def keys_table(self, keys: list[int]) -> tuple[str, Any]:
        """A FROM-clause item ``j`` with one integer column ``value`` holding ``keys``, and its one parameter."""

    @abstractmethod
    def lock(self, resource: str) -> None:
        """Hold an exclusive lock on a named part of the store until the transaction ends.

        Called inside write transactions before reading what a write will
        change (a branch tip, staging, the lanes).
        """

    def node_name(self, node_id: str) -> Any:
        """A node id as its column stores it."""
        return node_id

    def node_id(self, stored: Any) -> str:
        """A node id from its column."""
        text: str = stored
        return text
