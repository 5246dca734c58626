"""Connections to a PostgreSQL server: one per one-shot command, a pool per database in a worker.

A one-shot ``mnem`` opens one connection when its store is first used and
closes it when the command ends.  A ``mnem serve`` worker answers many
requests over many stores, so it keeps a ``psycopg_pool`` pool per
database, shared by every store in that database.

A server that cannot be reached is a fault, not a load: every new
connection this module makes itself is a direct ``psycopg.connect``, whose
refusal is ``store_io`` at once, naming the host and port and the fix
(``cannot_connect``).  A pool would instead retry in the background and
leave the request waiting for the busy timeout, to answer ``busy``.  So
when a session finds a connection lost (``Connections.reset``), a worker
closes that database's whole pool: the next request makes a new one, which
begins with a direct connection, so while the server is down each request
fails within a round trip, and once it is back the first request finds it.
One lost connection therefore fails at most the request that was using it.
"""

from __future__ import annotations

import logging
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

import psycopg

from ..errors import BusyError, StoreIoError
from ..sql.session import busy_timeout_s

if TYPE_CHECKING:  # a one-shot command never makes a pool, so it does not pay psycopg_pool's import
    from psycopg_pool import ConnectionPool

__all__ = ["Connections", "OneConnection", "PooledConnections", "cannot_connect", "connect", "first_line"]

logger = logging.getLogger(__name__)

#: Seconds to wait for an unreachable server when neither the URL nor ``PGCONNECT_TIMEOUT`` says.
CONNECT_TIMEOUT_S = 10


def _options(conninfo: str) -> dict[str, Any]:
    """Connection settings: autocommit (the backend issues BEGIN itself), a name, a bounded connect wait."""
    given = psycopg.conninfo.conninfo_to_dict(conninfo)
    options: dict[str, Any] = {"autocommit": True}
    if "application_name" not in given and "PGAPPNAME" not in os.environ:
        options["application_name"] = "mnem"
    if "connect_timeout" not in given and "PGCONNECT_TIMEOUT" not in os.environ:
        options["connect_timeout"] = CONNECT_TIMEOUT_S
    return options


def first_line(exc: BaseException) -> str:
    """The first line of an error's text (libpq adds hints on further lines)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def cannot_connect(exc: psycopg.OperationalError) -> StoreIoError:
    """``store_io`` for a connection the server refused or never answered: where, why, and the fix.

    Where comes from libpq's own record of the attempt (the host and port it
    tried, after ``PG*`` variables and defaults), never from the connection
    string, which may hold a password.
    """
    pgconn = exc.pgconn
    host = (pgconn.host or b"").decode(errors="replace") if pgconn is not None else ""
    port = (pgconn.port or b"").decode(errors="replace") if pgconn is not None else ""
    if not host:
        where = "the server the store URL names"
    elif host.startswith("/"):
        where = f"the unix socket {host}/.s.PGSQL.{port or 5432}"
    else:
        where = f"{host}:{port or 5432}"
    reason = first_line(exc).rpartition("failed: ")[2] or first_line(exc)
    text = str(exc)
    if "password" in text:
        fix = "give the role's password through PGPASSWORD or a pgpass file"
    elif "does not exist" in text:
        fix = "check the database and user in the URL, or create them (createdb, createuser)"
    else:
        fix = "start the server, or check the host and port in the store URL"
    return StoreIoError(f"cannot connect to PostgreSQL at {where}: {reason}; {fix}; nothing was changed")


def connect(conninfo: str) -> psycopg.Connection[Any]:
    """One new connection.

    Raises:
        StoreIoError: The server refused it or did not answer (``cannot_connect``).
    """
    try:
        return psycopg.connect(conninfo, **_options(conninfo))
    except psycopg.OperationalError as exc:
        raise cannot_connect(exc) from None


class Connections(ABC):
    """Where a store's transactions get their connection."""

    @abstractmethod
    def connection(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        """A connection for one transaction."""

    @abstractmethod
    def reset(self) -> None:
        """A connection was found lost (the server restarted or stopped): make the next one afresh."""

    @abstractmethod
    def close(self) -> None:
        """Close what this holds."""


class OneConnection(Connections):
    """One connection, opened on first use (a one-shot command that never touches the store never connects)."""

    def __init__(self, conninfo: str) -> None:
        self._conninfo = conninfo
        self._conn: psycopg.Connection[Any] | None = None

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection, made again if the last one was lost."""
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = connect(self._conninfo)
        yield self._conn

    def reset(self) -> None:
        """Close the lost connection: the next transaction connects again."""
        self.close()

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class PooledConnections:
    """A worker's pools, one per connection string, shared by the stores it keeps open."""

    def __init__(self) -> None:
        self._pools: dict[str, ConnectionPool[psycopg.Connection[Any]]] = {}
        self._lock = threading.Lock()

    def for_database(self, conninfo: str) -> Connections:
        """What a store in the database ``conninfo`` names takes its connections from."""
        return _Pooled(self, conninfo)

    def pool(self, conninfo: str) -> ConnectionPool[psycopg.Connection[Any]]:
        """The pool for ``conninfo``, made on first use.

        A first direct connection comes before the pool: a server that is
        down, a wrong host or a wrong password then fails at once with
        libpq's own words (``StoreIoError``), where a pool would retry in
        the background and report only a timeout.
        """
        with self._lock:
            pool = self._pools.get(conninfo)
            if pool is None:
                from psycopg_pool import ConnectionPool

                connect(conninfo).close()
                # No ``check`` on checkout (a round trip per transaction): the session retries a connection that
                # turns out dead at BEGIN on a fresh one instead (``PgSession._begun``).
                pool = ConnectionPool(
                    conninfo, kwargs=_options(conninfo), min_size=1, max_size=4, open=True,
                    timeout=busy_timeout_s(), name="mnem",
                )
                self._pools[conninfo] = pool
            return pool

    def drop(self, conninfo: str) -> None:
        """Close the pool for ``conninfo`` without waiting: its connections may all be dead, and its retries futile.

        Connections checked out of it keep working until given back, when
        they are closed; the next ``pool`` call starts a new pool.
        """
        with self._lock:
            pool = self._pools.pop(conninfo, None)
        if pool is not None:
            pool.close(timeout=0)

    def close(self) -> None:
        """Close every pool."""
        with self._lock:
            pools = list(self._pools.values())
            self._pools.clear()
        for pool in pools:
            pool.close()


class _Pooled(Connections):
    """One database's pool, as a store sees it."""

    def __init__(self, pools: PooledConnections, conninfo: str) -> None:
        self._pools = pools
        self._conninfo = conninfo

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A checked-out connection.

        Raises:
            StoreIoError: The server cannot be reached (a new pool's first connection, or when none came in time).
            BusyError: The server answers, but no pooled connection freed up within the busy timeout.
        """
        from psycopg_pool import PoolTimeout

        try:
            with self._pools.pool(self._conninfo).connection() as conn:
                yield conn
        except PoolTimeout:
            try:  # every connection in use, or the pool could not make one: a direct connection tells them apart
                connect(self._conninfo).close()
            except StoreIoError:
                self.reset()
                raise
            raise BusyError("every pooled PostgreSQL connection is in use; try again") from None

    def reset(self) -> None:
        """Close the database's pool: the next transaction starts a new one, from a direct connection."""
        self._pools.drop(self._conninfo)

    def close(self) -> None:
        """Nothing: the worker closes the pools when it stops."""
