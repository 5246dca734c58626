"""Transactions on PostgreSQL, and its failures in the taxonomy's words.

Reads run in ``REPEATABLE READ READ ONLY`` transactions: one snapshot for
everything a command reads, and readers never wait for writers (MVCC).
Writes run in ``READ COMMITTED`` and lock what they are about to change
before reading it: a branch's tip (``lock("ref:NAME")``, a transaction-
scoped advisory lock, which also covers a branch that does not exist yet),
staging, and the lane row a new commit joins (by compare-and-swap, as
it writes: ``_RECORD_GRAPH``).  Writers to one branch
therefore queue, each computing its commit on the tip the one before it
left; writers to other branches and other stores do not wait at all.  A
lock not granted within the busy timeout fails with ``busy``.  Before all
that, every write takes its store's lock *shared* (``_SHARED``, in its
``BEGIN`` round trip), which writers never contend for; only ``mnem gc``
takes it exclusive, to drop rows no write under way may be using.

Every transaction first points ``search_path`` at its store's schema, so
the shared statements name bare tables and a pooled connection can serve
any store in its database.

Every read's first round trip also reads the store's generation, which
every write moves before it commits (``mnem_store.cache``): a worker
reading a quiet store keeps what it learnt (HEAD's commit row, its lanes,
node names, objects, each node's last change, whether anything is staged)
and sends only what each read is about, so a repeated recall of one node
is ``BEGIN`` and ``COMMIT``, two round trips, not ten.

A write waits for the server only where it needs an answer.  Its
``BEGIN`` round trip also reads HEAD; after it the transaction runs in
libpq's pipeline mode, so a statement whose result nobody reads (a lock,
an index row, the ref's move) is sent at once and not waited for: it
travels with the next statement that is read, and the generation's move
and ``COMMIT`` go out with whatever the write left unread, in the last
round trip.  A commit's rows need no answer at all (they find their keys
by id, ``SqlStateStore.record``), so a commit of any size is 3 round
trips: ``BEGIN``, the branch's tip, and the rest.  It was 22, then 8 and
one more per node; ``tests/store/test_pg_round_trips.py`` keeps it there.
A statement's error arrives with the round trip that carries it, so it
surfaces at the next read (or at ``COMMIT``) and ends the transaction the
same way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, suppress
from functools import lru_cache
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql

from ..errors import BusyError, CorruptStoreError, MnemError, StoreIoError
from ..layout import StoreUrl
from ..sql import Rows, Session
from ..sql.session import BUMP, GENERATION, busy_timeout_s, fresh_generation, generation
from .connect import Connections, first_line

__all__ = ["PgSession", "translate"]

logger = logging.getLogger(__name__)

#: PostgreSQL errors that mean "someone else holds it; try again".
_BUSY = (pg_errors.LockNotAvailable, pg_errors.DeadlockDetected, pg_errors.SerializationFailure)


#: Connections tried for one BEGIN: the one at hand, then (after ``Connections.reset``) a new one.
_BEGIN_ATTEMPTS = 2


@lru_cache(maxsize=256)
def _placeholders(statement: str) -> str:
    """A shared statement in psycopg's parameter style (the shared SQL uses ``?`` and no literal ``%``)."""
    return statement.replace("?", "%s")


#: Rows up to which ``PgSession.execute_rows`` sends each value on its own, in a ``VALUES`` list: psycopg
#: dumps a scalar in well under half the time of an array (about 28 against 70 us a statement, measured),
#: and most commits write a few rows.  Past it, one array per column, and one statement text for any count.
_VALUES_ROWS = 8


@lru_cache(maxsize=256)
def _rows_query(statement: str, types: tuple[str, ...], count: int | None) -> str:
    """``Session.execute_rows``'s statement with ``count`` rows of typed values, or (None) arrays unnested."""
    if count is None:
        return statement.replace("{rows}", f"SELECT * FROM unnest({', '.join(f'?::{kind}[]' for kind in types)})")
    row = "(" + ", ".join(f"?::{kind}" for kind in types) + ")"
    return statement.replace("{rows}", "VALUES " + ", ".join([row] * count))


def translate(exc: psycopg.Error, url: StoreUrl, *, committing: bool = False) -> MnemError:
    """The taxonomy's error for a psycopg failure, with the fix where there is one."""
    if isinstance(exc, _BUSY):
        return BusyError("another writer holds this branch of the store; try again")
    if isinstance(exc, pg_errors.DiskFull):
        return StoreIoError("the PostgreSQL server's disk is full: nothing was written; free some space there")
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction):
        return StoreIoError(
            f"the PostgreSQL server at {url} is read-only (a standby): reads work, writes do not; "
            "point writes at the primary"
        )
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return StoreIoError(f"PostgreSQL refused access for {url}: {first_line(exc)}; grant the role access")
    if isinstance(exc, pg_errors.UndefinedTable | pg_errors.UndefinedColumn | pg_errors.InvalidSchemaName):
        return CorruptStoreError(f"the store's tables in {url} are missing or damaged: {first_line(exc)}")
    if isinstance(exc, psycopg.OperationalError):
        if committing:
            return StoreIoError(
                f"the connection to PostgreSQL ({url}) was lost while committing: the change may or may not "
                "have been stored; check with `mnem log` before retrying"
            )
        return StoreIoError(f"cannot use PostgreSQL at {url}: {first_line(exc)}; nothing was changed")
    return StoreIoError(f"PostgreSQL failed: {first_line(exc)}")


#: Read by a write's ``BEGIN`` round trip: every commit needs HEAD first, and nothing else can go with it.
_HEAD = "SELECT value FROM meta WHERE key = 'head'"

#: Taken by every write's ``BEGIN`` round trip, before it reads anything: the store's lock, shared, so writes
#: run beside each other; ``mnem gc``'s write takes it exclusive (``_ALONE``) and so waits for every write under
#: way and holds new ones off until it commits.  Without it a write could reuse an object gc is about to drop
#: (an insert that finds the object there already), or point a branch at a commit gc does not know is wanted.
_SHARED = "SELECT pg_advisory_xact_lock_shared(hashtextextended({}, 0))"
_ALONE = "SELECT pg_advisory_xact_lock(hashtextextended({}, 0))"


#: ``Session.record_graph``: a new commit's graph row and lane, by ids, in one statement.  The commit joins its
#: parent's lane if the parent heads it still: the lane row's update is a compare-and-swap, which a concurrent
#: writer extending the same parent on another branch (its lane row updated first) fails in READ COMMITTED, so
#: that commit starts a lane of its own and the lane never forks.  A commit indexed already (``fresh`` is empty)
#: changes nothing; its since is 0 when its state's bytes are stored (a snapshot), else the given count.
_RECORD_GRAPH = """WITH c AS (SELECT key FROM objects WHERE id = ?),
s AS (SELECT key, data IS NOT NULL AS stored FROM objects WHERE id = ?),
fresh AS (SELECT c.key FROM c WHERE NOT EXISTS (SELECT 1 FROM commits x WHERE x.key = c.key)),
joined AS (
    UPDATE lanes l SET head = f.key FROM fresh f, commits p
    WHERE p.key = ? AND l.lane = p.lane AND l.head = p.key RETURNING l.lane
),
graph AS (
    INSERT INTO commits (key, parent, state, lane, since, corrected)
    SELECT f.key, ?, s.key, coalesce((SELECT lane FROM joined), f.key), CASE WHEN s.stored THEN 0 ELSE ? END, ?
    FROM fresh f, s ON CONFLICT (key) DO NOTHING RETURNING key, lane
)
INSERT INTO lanes (lane, head) SELECT key, key FROM graph WHERE lane = key
ON CONFLICT (lane) DO UPDATE SET head = excluded.head"""


#: ``Session.upsert_object``: the insert, else the row that is there (which the insert's snapshot does not hold).
_UPSERT_OBJECT = """WITH new AS (
    INSERT INTO objects (id, kind, data) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING key
)
SELECT key, TRUE, FALSE FROM new UNION ALL SELECT key, FALSE, data IS NULL FROM objects WHERE id = ?"""


class _Later:
    """A statement sent in a write's pipeline: its rows are waited for when read, and its row count likewise.

    psycopg fetches a pipelined cursor's rows when they are read, but its
    ``rowcount`` would answer before the result came back.
    """

    __slots__ = ("_cursor", "_pipeline")

    def __init__(self, cursor: psycopg.Cursor[Any], pipeline: psycopg.Pipeline) -> None:
        self._cursor = cursor
        self._pipeline = pipeline

    @property
    def rowcount(self) -> int:
        """Rows the statement touched, once the server has said."""
        if self._cursor.pgresult is None:
            self._pipeline.sync()
        return self._cursor.rowcount

    def fetchone(self) -> Any:
        """The next row (waiting for the result, and everything sent before it)."""
        return self._cursor.fetchone()

    def fetchall(self) -> list[Any]:
        """Every remaining row."""
        return self._cursor.fetchall()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cursor)


#: Whether a session of this database (or a process of the whole server), a prepared transaction or a
#: replication slot may still see rows the transaction ``xid`` deleted: its oldest transaction id is ``xid``
#: or older (``age`` orders ids across wraparound; the session asking is left out; sessions of other
#: databases do not hold this database's row versions back).
_SEEING = """
SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid <> pg_backend_pid()
               AND (datname IS NULL OR datname = current_database())
               AND greatest(age(backend_xmin), age(backend_xid)) >= age(%(xid)s::xid))
    OR EXISTS (SELECT 1 FROM pg_prepared_xacts WHERE age(transaction) >= age(%(xid)s::xid))
    OR EXISTS (SELECT 1 FROM pg_replication_slots WHERE greatest(age(xmin), age(catalog_xmin)) >= age(%(xid)s::xid))
"""
#: How often ``outlive_snapshots`` asks again.
_SNAPSHOT_POLL_S = 0.02


class PgSession(Session):
    """One store's view of its connections: the open transaction, if any, and the store's schema."""

    row_lock = " FOR UPDATE"
    upsert_object = _UPSERT_OBJECT
    record_graph = _RECORD_GRAPH

    def __init__(self, url: StoreUrl, connections: Connections) -> None:
        super().__init__()
        self.url = url
        self._connections = connections
        self._conn: psycopg.Connection[Any] | None = None
        #: Whether the store's tables are known to exist (``PostgresBackend.open`` checks): only then can a read
        #: read the generation, and keep anything.
        self.opened = False
        self._schema = sql.Identifier(url.schema)
        #: A write's pipeline while it is open (``_pipe``), and the context that leaves it.
        self._pipeline: psycopg.Pipeline | None = None
        self._piping: AbstractContextManager[psycopg.Pipeline] | None = None

    # ------------------------------------------------------------ statements
    def execute(self, statement: str, params: Sequence[Any] = ()) -> Rows:
        """Run a shared statement in the open transaction (binary results: ids and bytes travel as they are)."""
        if self._conn is None:
            with self.transaction(write=False):
                return self.execute(statement, params)
        if self._writing:
            pipeline = self._pipe()
            return _Later(self._conn.execute(_placeholders(statement), params, binary=True), pipeline)
        return self._conn.execute(_placeholders(statement), params, binary=True)

    def execute_sql(self, statement: sql.SQL | sql.Composed) -> None:
        """Run a composed statement (DDL naming the store's schema) in the open transaction.

        Outside the pipeline: DDL may be several statements in one text,
        which only the simple protocol takes, and its errors (a schema that
        exists already) must surface here, where the caller expects them.
        """
        if self._conn is None:
            raise RuntimeError("a schema change outside a transaction")
        self._unpipe()
        self._conn.execute(statement)

    def close(self) -> None:
        """Give back the connections."""
        self._connections.close()

    def executemany(self, statement: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run a statement per row, pipelined."""
        if self._conn is None:
            raise RuntimeError("executemany outside a transaction")
        if self._writing:
            self._pipe()
        with self._conn.cursor() as cursor:
            cursor.executemany(_placeholders(statement), list(rows))

    def execute_rows(self, statement: str, types: Sequence[str], rows: Sequence[Sequence[Any]], *after: Any) -> None:
        """One statement, whatever the rows' number: a few as typed values, more as one array per column, unnested."""
        if not rows:
            return
        if len(rows) <= _VALUES_ROWS:
            self.execute(_rows_query(statement, tuple(types), len(rows)), [*(v for row in rows for v in row), *after])
        else:
            columns = [list(column) for column in zip(*rows, strict=True)]
            self.execute(_rows_query(statement, tuple(types), None), [*columns, *after])

    def _pipe(self) -> psycopg.Pipeline:
        """The open write's pipeline, entered on its first statement (``BEGIN`` was sent before it)."""
        if self._pipeline is None:
            assert self._conn is not None
            self._piping = self._conn.pipeline()
            self._pipeline = self._piping.__enter__()
        return self._pipeline

    def _unpipe(self, failed: BaseException | None = None) -> None:
        """Leave the pipeline: wait for every statement sent, raising the first error (unless ``failed`` already).

        After a failure psycopg only logs what syncing the aborted pipeline
        says, so the failure that ended the transaction is the one reported.
        """
        piping, self._piping, self._pipeline = self._piping, None, None
        if piping is not None:
            piping.__exit__(type(failed) if failed is not None else None, failed, None)

    def keys_table(self, keys: list[int]) -> tuple[str, Any]:
        """The keys as an array, unnested."""
        return "unnest(?::bigint[]) AS j(value)", keys

    def lock(self, resource: str) -> None:
        """A transaction-scoped advisory lock on ``schema/resource`` (waits at most the busy timeout)."""
        if ("lock", resource) in self.memo:
            return
        self.memo["lock", resource] = True
        self.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (f"{self.url.schema}/{resource}",))

    def node_name(self, node_id: str) -> bytes:
        """Node ids are stored as UTF-8 bytes: PostgreSQL text cannot hold NUL, and upstream's ids may."""
        return node_id.encode("utf-8", "surrogatepass")

    def node_id(self, stored: Any) -> str:
        """A node id from its bytes."""
        try:
            return bytes(stored).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise CorruptStoreError("a stored node id is not UTF-8") from None

    # ---------------------------------------------------------- transactions
    def _begin(self, conn: psycopg.Connection[Any], write: bool, alone: bool = False) -> None:
        """Begin, in one round trip.

        A read also reads the store's generation (``Kept.observe``); a write
        takes the store's lock (``_SHARED``, or ``_ALONE``), then reads HEAD.
        """
        if write:
            self.kept.forget_memo()
            timeout = f"{int(busy_timeout_s() * 1000)}ms"
            begin = sql.SQL(
                "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL search_path TO {}; SET LOCAL lock_timeout = {}"
            ).format(self._schema, sql.Literal(timeout))
            if not self.opened:  # creating the store: no tables to read yet
                conn.execute(begin)
                return
            lock = sql.SQL(_ALONE if alone else _SHARED).format(sql.Literal(f"{self.url.schema}/writers"))
            cursor = conn.execute(begin + sql.SQL("; ") + lock + sql.SQL("; " + _HEAD))
            while cursor.nextset():  # to the last statement's result
                pass
            row = cursor.fetchone()
            self.memo["meta", "head"] = row[0] if row is not None else None
            return
        if not self.opened:
            self.kept.forget_memo()
            conn.execute(sql.SQL(
                "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL search_path TO {}"
            ).format(self._schema))
            return
        cursor = conn.execute(sql.SQL(
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL search_path TO {}; " + GENERATION
        ).format(self._schema))
        while cursor.nextset():  # to the last statement's result
            pass
        self.kept.observe(generation(cursor.fetchone()))

    def _begun(self, held: ExitStack, write: bool, alone: bool = False) -> psycopg.Connection[Any]:
        """A connection with the transaction begun, held open by ``held``.

        A connection the server has ended since its last use (a restart, a
        stop, ``pg_terminate_backend``) fails at ``BEGIN``, before anything
        was sent that could have changed the store: it is closed, the
        connections are reset (a worker's pool is dropped whole: a restart
        ends every idle connection at once) and one new connection tried,
        which fails at once with ``store_io`` if the server is down.  This
        costs nothing on the way, where checking each connection out of the
        pool would cost a round trip every time.
        """
        lost: psycopg.OperationalError | None = None
        for _ in range(_BEGIN_ATTEMPTS):
            with ExitStack() as trying:
                conn = trying.enter_context(self._connections.connection())
                try:
                    self._begin(conn, write, alone)
                except _BUSY:  # the store's lock was not granted in time: the connection is well, the store busy
                    self._rollback(conn)
                    raise
                except psycopg.OperationalError as exc:
                    conn.close()  # so the pool drops it (and a lone connection is made again)
                    lost = exc
                else:
                    held.push(trying.pop_all())
                    return conn
            logger.info("a connection to %s was lost while idle; starting afresh", self.url)
            self._connections.reset()
        assert lost is not None  # every attempt either returned or recorded its failure
        raise lost

    @contextmanager
    def transaction(self, *, write: bool, alone: bool = False) -> Iterator[None]:
        """One transaction; a read inside another transaction joins it.

        ``alone``: a write no other write runs beside (``Backend.exclusive``: ``_ALONE``).

        Raises:
            RuntimeError: A write inside a read (a bug in the caller, never a user's doing).
        """
        if self._conn is not None:
            if write and not self._writing:
                raise RuntimeError("a write transaction inside a read snapshot")
            yield
            return
        conn: psycopg.Connection[Any] | None = None
        try:
            with ExitStack() as held:
                conn = self._begun(held, write, alone)
                self._conn, self._writing = conn, write
                try:
                    yield
                except BaseException as exc:
                    self._unpipe(exc)
                    self._rollback(conn)
                    raise
                try:
                    if write:  # with what the write left unread, in one round trip
                        fresh = fresh_generation()
                        self._pipe()
                        conn.execute(_placeholders(BUMP), (str(fresh), fresh))
                        conn.execute("COMMIT")
                        self._unpipe()
                    else:
                        conn.execute("COMMIT")
                except psycopg.Error as exc:
                    self._unpipe(exc)
                    self._rollback(conn)
                    raise translate(exc, self.url, committing=write) from None
        except psycopg.Error as exc:
            raise translate(exc, self.url) from None
        finally:
            if conn is not None and conn.broken:  # lost mid-transaction: the server may be gone, the pool with it
                self._connections.reset()
            self._piping = self._pipeline = None
            self._conn, self._writing = None, False
            self._forget(write)

    def write_xid(self) -> int:
        """The open write's transaction id, 32 bits as ``pg_stat_activity`` shows them.

        Every write has one: its commit bumps the generation.
        """
        return int(self.execute("SELECT pg_current_xact_id()::text").fetchone()[0]) % (1 << 32)

    def outlive_snapshots(self, xid: int) -> bool:
        """Wait, up to the busy timeout, until no snapshot in the cluster predates the committed transaction ``xid``.

        ``VACUUM FULL`` copies a deleted row version into the new file while
        any session, prepared transaction or replication slot of the
        cluster may still see it (its oldest transaction id is ``xid`` or
        older), so an erasure waits for them first.  Whether none is left;
        a session of another role is counted as far as ``pg_stat_activity``
        shows it.  A wait on the server's state, polled, as a lock wait is.
        """
        deadline = time.monotonic() + busy_timeout_s()
        try:
            with self._connections.connection() as conn:
                while (seen := conn.execute(_SEEING, {"xid": str(xid)}).fetchone()) is not None and seen[0]:
                    if time.monotonic() >= deadline:
                        return False
                    time.sleep(_SNAPSHOT_POLL_S)
        except psycopg.Error as exc:
            raise translate(exc, self.url) from None
        return True

    def vacuum(self, tables: Iterable[str], *, full: bool = True) -> None:
        """``VACUUM FULL`` these tables of the store (``full`` False: plain ``VACUUM``), outside any transaction.

        (VACUUM cannot run in one.)  A plain VACUUM only marks a dead
        tuple's space reusable: its bytes stay in the table's file until a
        later row is written over them; it takes no lock that holds reads or
        writes off.  FULL writes the live rows into new files (the table's
        TOAST too) and drops the old ones, holding the table's exclusive
        lock meanwhile, so readers of this store wait for it (the busy
        timeout bounds them), and its cost grows with the table.
        """
        try:
            with self._connections.connection() as conn:
                conn.execute(sql.SQL("SET lock_timeout = {}").format(sql.Literal(f"{int(busy_timeout_s() * 1000)}ms")))
                try:
                    for table in tables:
                        conn.execute(sql.SQL("VACUUM (FULL) {}" if full else "VACUUM {}").format(
                            sql.Identifier(self.url.schema, table)))
                finally:
                    conn.execute("RESET lock_timeout")  # a pooled connection serves other stores next
        except psycopg.Error as exc:
            raise translate(exc, self.url) from None

    def meta(self, key: str) -> str | None:
        """A ``meta`` row's value; a write's HEAD came with its ``BEGIN`` (and follows its own ``set_meta``)."""
        if ("meta", key) in self.memo:
            found: str | None = self.memo["meta", key]
            return found
        return super().meta(key)

    def set_meta(self, key: str, value: str) -> None:
        """Write one ``meta`` row (and what this write reads of it next)."""
        super().set_meta(key, value)
        if ("meta", key) in self.memo:
            self.memo["meta", key] = value

    def _forget(self, write: bool) -> None:
        """At a transaction's end, what its memo may not keep: all of a write's, a read's large objects."""
        if write:
            self.kept.forget_memo()
        else:
            self.forget_brief()

    @staticmethod
    def _rollback(conn: psycopg.Connection[Any]) -> None:
        """Undo the open transaction; a lost connection has nothing left to undo."""
        if not conn.closed and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            with suppress(psycopg.Error):
                conn.execute("ROLLBACK")
