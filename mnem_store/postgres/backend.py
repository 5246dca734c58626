"""Stores in PostgreSQL: each one a schema (``mnem_<store>``) in a database many stores share.

Creating a store is one transaction: the schema, its tables, HEAD, config
and (for an import) every object commit together or not at all, so a kill
or a lost connection during ``init`` or ``import`` leaves no half store.
Opening checks that the schema exists and was written by a release this
one reads.  A store that does not exist is never made by opening it: a
typo in ``store=`` would otherwise start an empty memory beside the real
one, so the error names the stores the database holds (``NoSuchStoreError``)
and creating takes ``mnem init`` or a caller's explicit create option.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql

from ..backend import Backend, Erasure
from ..errors import BusyError, CorruptStoreError, NoStoreError, StoreExistsError
from ..layout import StoreUrl
from ..sql import SqlBackend
from .connect import Connections, OneConnection
from .session import PgSession, translate

__all__ = ["SCHEMA_VERSION", "NoSuchStoreError", "PostgresBackend"]

logger = logging.getLogger(__name__)

#: 1: the tables of SQLite's schema 3, with node ids as bytes.
#: 2: ``leases`` and ``vectors``, what adapters keep beside history (SQLite's schema 4).
#: 3: ``pushes`` and ``pushed_commits``, who pushed what (SQLite's schema 5).
#: 4: ``redactions``, the node versions whose bytes were removed (SQLite's schema 6).
SCHEMA_VERSION = 4

#: Schema 2's tables, also what an upgrade from schema 1 adds.
_SIDE_TABLES = """
CREATE TABLE IF NOT EXISTS leases (
    branch TEXT NOT NULL, node_id BYTEA NOT NULL, expires BIGINT NOT NULL, ttl BIGINT NOT NULL,
    PRIMARY KEY (branch, node_id)
);
CREATE INDEX IF NOT EXISTS leases_by_expiry ON leases (branch, expires);
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL, object BYTEA NOT NULL, field TEXT NOT NULL, vector BYTEA NOT NULL,
    PRIMARY KEY (model, object, field)
)
"""

#: Schema 3's tables, also what an upgrade from schema 2 adds.
_PUSH_TABLES = """
CREATE TABLE IF NOT EXISTS pushes (
    push BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, pusher BYTEA NOT NULL, at BIGINT NOT NULL,
    branch TEXT NOT NULL, old BYTEA, new BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS pushed_commits (commit_id BYTEA PRIMARY KEY, push BIGINT NOT NULL)
"""

#: Schema 4's table, also what an upgrade from schema 3 adds.
_REDACTION_TABLES = """
CREATE TABLE IF NOT EXISTS redactions (
    object BYTEA PRIMARY KEY, node_id BYTEA NOT NULL, at BIGINT NOT NULL, author BYTEA NOT NULL, reason BYTEA NOT NULL
)
"""

#: What the upgrade from each older schema adds (one step, one transaction), and what for (the log says).
_UPGRADES = {
    1: (_SIDE_TABLES, "tables for TTL leases and embeddings"),
    2: (_PUSH_TABLES, "tables for who pushed what"),
    3: (_REDACTION_TABLES, "a table for redactions"),
}

_TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE objects (
    key BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id BYTEA NOT NULL UNIQUE, kind SMALLINT NOT NULL, data BYTEA
);
CREATE TABLE refs (name TEXT PRIMARY KEY, target BYTEA NOT NULL);
CREATE TABLE staging (node_id BYTEA PRIMARY KEY, object BYTEA NOT NULL);
CREATE TABLE tombstones (node_id BYTEA PRIMARY KEY);
CREATE TABLE names (key BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name BYTEA NOT NULL UNIQUE);
CREATE TABLE commits (
    key BIGINT PRIMARY KEY, parent BIGINT, state BIGINT NOT NULL, lane BIGINT NOT NULL, since BIGINT NOT NULL,
    corrected BYTEA NOT NULL
);
CREATE INDEX commits_by_state ON commits (state);
CREATE TABLE lanes (lane BIGINT PRIMARY KEY, head BIGINT NOT NULL);
CREATE TABLE changes (
    commit_key BIGINT NOT NULL, name BIGINT NOT NULL, kind SMALLINT NOT NULL, object BIGINT,
    PRIMARY KEY (commit_key, name)
);
CREATE INDEX changes_by_name ON changes (name, commit_key, object);
""" + _SIDE_TABLES + ";" + _PUSH_TABLES + ";" + _REDACTION_TABLES


#: The stores a database holds: schemas named ``mnem_NAME`` that have a store's ``meta`` table.
_STORES = """
SELECT substr(n.nspname, 6) FROM pg_namespace n
WHERE starts_with(n.nspname, 'mnem_')
  AND EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid AND c.relname = 'meta')
ORDER BY 1
"""

#: How many of a database's stores a ``no_store`` message lists (its JSON ``stores`` field has them all).
_SHOWN_STORES = 10


class NoSuchStoreError(NoStoreError):
    """No store of that name in the database: the message lists the ones there are, and how to create this one."""

    def __init__(self, url: StoreUrl, stores: list[str]) -> None:
        super().__init__(url.shown, exact=True)
        self.store = url.store
        self.stores = stores

    def __str__(self) -> str:
        if self.stores:
            shown = ", ".join(self.stores[:_SHOWN_STORES])
            more = f" and {len(self.stores) - _SHOWN_STORES} more" if len(self.stores) > _SHOWN_STORES else ""
            held = f"that database holds the stores {shown}{more}: if you meant one of them, fix store= in the URL"
        else:
            held = "that database holds no mnemosyne store yet"
        return (
            f"no mnemosyne store named {self.store!r} at {self.detail}; {held}; to create this one, run "
            f"`mnem init {shlex.quote(self.detail)}` (or use the create option: `mnem-mcp --create`, "
            "`MnemosyneStore(url, create=True)`, `mnem_bridge.open(url, create=True)`)"
        )

    def details(self) -> dict[str, Any]:
        """The stores the database holds, every one of them, for a program to offer."""
        return {"stores": self.stores}


class PostgresBackend(SqlBackend):
    """One store in a PostgreSQL database, behind the storage seam."""

    def __init__(self, session: PgSession, *, read_only: bool) -> None:
        super().__init__(session, session.url.shown, read_only=read_only)
        self.pg = session

    # --------------------------------------------------------------- lifecycle
    @classmethod
    def open(cls, url: StoreUrl, connections: Connections | None = None) -> PostgresBackend:
        """Open the store ``url`` names (one connection made now, unless ``connections`` pools them).

        Raises:
            NoStoreError: The database has no such store (the message says how to create it).
            CorruptStoreError: The store's schema is newer than this release reads, or damaged.
            StoreIoError: The server cannot be reached or refuses the role.
        """
        session = PgSession(url, connections or OneConnection(url.conninfo))
        try:
            with session.transaction(write=False):
                found, standby = session.execute(
                    "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = ?), pg_is_in_recovery()",
                    (url.schema,),
                ).fetchone()
                if not found:
                    raise NoSuchStoreError(url, [str(name) for (name,) in session.execute(_STORES)])
                backend = cls(session, read_only=standby)
                version = session.meta("schema_version")
        except BaseException:
            session.close()
            raise
        if version is not None and version.isdigit() and int(version) in _UPGRADES and not standby:
            backend.upgrade(int(version))
            version = str(SCHEMA_VERSION)
        if version is None or not version.isdigit() or int(version) != SCHEMA_VERSION:
            session.close()
            raise CorruptStoreError(
                f"the store's schema version is {version!r}, this release reads only {SCHEMA_VERSION}"
            )
        session.opened = True
        return backend

    @classmethod
    def create(cls, url: StoreUrl, meta: dict[str, str], populate: Callable[[Backend], None] | None = None) -> None:
        """Create the store in one transaction: schema, tables, ``meta`` rows and whatever ``populate`` writes.

        Raises:
            StoreExistsError: The database already has a store of that name.
            StoreIoError: The server cannot be reached, or the role may not create schemas.
        """
        session = PgSession(url, OneConnection(url.conninfo))
        backend = cls(session, read_only=False)
        try:
            with session.transaction(write=True):
                try:
                    session.execute_sql(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(url.schema)))
                except (pg_errors.DuplicateSchema, pg_errors.UniqueViolation):
                    raise StoreExistsError(url.shown) from None
                session.execute_sql(sql.SQL(_TABLES))
                for key, value in {**meta, "schema_version": str(SCHEMA_VERSION)}.items():
                    session.set_meta(key, value)
                if populate is not None:
                    populate(backend)
        except psycopg.Error as exc:
            raise translate(exc, url) from None
        finally:
            session.close()
        logger.info("created the store %s", url)

    def upgrade(self, version: int) -> None:
        """Bring an older schema to the current one, a step at a time, each once, in one transaction.

        Each step adds its tables, empty (``_UPGRADES``); a concurrent
        upgrade is waited for, and a step another process made is skipped.
        """
        try:
            for step in range(version, SCHEMA_VERSION):
                tables, what = _UPGRADES[step]
                with self.pg.transaction(write=True):
                    self.pg.lock("schema")
                    if self.pg.meta("schema_version") == str(step):
                        self.pg.execute_sql(sql.SQL(tables))
                        self.pg.set_meta("schema_version", str(step + 1))
                        logger.info("upgraded %s to schema %d (%s)", self.location, step + 1, what)
        except BaseException:
            self.pg.close()
            raise

    def close(self) -> None:
        """Give back the connection (a worker's pool keeps it for the next store)."""
        self.pg.close()

    def replaced(self) -> bool:
        """Never: every statement finds the store's tables by name, so a store made again is simply used.

        What a process caches across requests is keyed by content (state
        images by state id, checked against the hash), never by a row key
        the new store could reuse.
        """
        return False

    # ------------------------------------------------------------ transactions
    def read(self) -> AbstractContextManager[None]:
        """A ``REPEATABLE READ`` snapshot (nested snapshots join the outer one)."""
        return self.pg.transaction(write=False)

    def write(self) -> AbstractContextManager[None]:
        """One ``READ COMMITTED`` transaction whose writes lock what they change (``session``)."""
        return self.pg.transaction(write=True)

    #: The tables an erasure rewrites: where removed bytes lie (node objects and their vectors).
    _ERASED_TABLES = ("objects", "vectors")

    @contextmanager
    def erasing(self, *, rewrite: bool = True) -> Iterator[Erasure]:
        """A write, then ``VACUUM FULL`` of the tables it removed bytes from (``PgSession.vacuum``).

        Without ``rewrite`` a plain ``VACUUM`` runs instead (``Backend.erasing``):
        the erasure is incomplete, and its residue says where the bytes wait.

        Before a rewrite it waits, within the busy timeout, for every
        transaction of the server that could still see the removed row
        versions (``PgSession.outlive_snapshots``): the rewrite would copy
        them into the new files.  The server's write-ahead log, its archive
        and backups keep their copies until they are recycled or removed:
        docs/postgres.md says so.
        The write has committed before the rewrite starts, so a rewrite that
        cannot take its lock within the busy timeout (a long read of the
        store) is no failure of the write: the erasure is incomplete, and says so.
        """
        erasure = Erasure()
        with self.pg.transaction(write=True):
            yield erasure
            xid = self.pg.write_xid() if rewrite else None
        try:
            unseen = xid is None or self.pg.outlive_snapshots(xid)
            self.pg.vacuum(self._ERASED_TABLES, full=rewrite)
        except BusyError:
            erasure.residue = (
                "the removal is committed, but another session held the store's tables past the busy timeout, so "
                "their files may still hold the old row versions until VACUUM rewrites them: run the same command "
                "again once that session is done (nothing is removed twice)"
            )
            return
        if not unseen:
            erasure.residue = (
                "the removal is committed, but a transaction open since before it (another session's snapshot, "
                "a prepared transaction or a replication slot of the server) could still see the old "
                "row versions past the busy timeout, so VACUUM had to keep them in the tables' files: run the same "
                "command again once that transaction is done (nothing is removed twice)"
            )
            return
        if not rewrite:
            erasure.residue = (
                "the removal is committed and no row or read holds the bytes, but a plain VACUUM only marked the old "
                "row versions' space free: the store's table files keep the bytes until later rows are written over "
                "them, or a rewrite drops them: run `mnem gc` (or VACUUM FULL) to drop them now"
            )
            return
        erasure.complete, erasure.residue = True, ""

    def exclusive(self) -> AbstractContextManager[None]:
        """A write holding the store's lock exclusive: it waits for the writes under way, and new ones wait for it."""
        return self.pg.transaction(write=True, alone=True)

    def size(self) -> int:
        """The bytes of the store's tables, their indexes and TOAST, as the server counts them."""
        row = self.pg.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relkind = 'r'",
            (self.pg.url.schema,),
        ).fetchone()
        return int(row[0])

    #: The tables ``Collector.drop`` deletes rows from.
    _COLLECTED_TABLES = ("objects", "commits", "changes", "lanes", "names", "vectors", "pushed_commits", "leases")

    def compact(self, *, rewrite: bool = True) -> None:
        """``VACUUM FULL`` of the tables garbage collection changed (``PgSession.vacuum``), or a plain one.

        A plain ``VACUUM`` without ``rewrite``.  Rewritten, their files shrink, and readers of this store wait
        meanwhile (the busy timeout bounds them); a plain ``VACUUM`` holds
        nobody up and only makes the dead rows' space reusable.
        """
        self.pg.vacuum(self._COLLECTED_TABLES, full=rewrite)
