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

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

__all__ = ["Rows", "Session"]


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


#: The memo's list of keys to forget when the transaction that learnt them ends (``remember_briefly``).
BRIEF = "brief"

#: Entries a lasting memo may hold between reads before it is emptied (rows, ids and a few decoded values).
MEMO_LIMIT = 20_000


class Session(ABC):
    """One store's database connection, as ``mnem_store.sql`` sees it.

    ``memo`` holds what statements learned inside the current transaction
    (graph rows, object rows, a written branch's tip, the locks held), so
    that a write asks the database for each once: a round trip to a server
    costs far more than a lookup in SQLite's page cache.  Implementations
    clear it whenever an outermost transaction begins, unless they can tell
    that nothing changed the database since it was learnt (both backends can).
    """

    memo: dict[Any, Any]

    #: Whether the memo outlives transactions while the database is unchanged (both backends'): only then is a
    #: fact worth a statement of its own to learn once for the reads after it.
    lasting_memo = False

    def remember_briefly(self, key: Any, value: Any) -> None:
        """Put ``value`` in the memo for the current transaction only (a large object: never kept longer)."""
        self.memo[key] = value
        self.memo.setdefault(BRIEF, []).append(key)

    #: Appended to a SELECT to lock the rows it reads until the transaction ends ("" where the database has
    #: one write lock for everything, as SQLite has).
    row_lock = ""

    @property
    @abstractmethod
    def writing(self) -> bool:
        """Whether a write transaction is open."""

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """Run one statement with ``?`` placeholders."""

    @abstractmethod
    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement once per row of parameters."""

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
