"""Connections to a PostgreSQL server: one per one-shot command, a pool per database in a worker.

A one-shot ``mnem`` opens one connection when its store is first used and
closes it when the command ends.  A ``mnem serve`` worker answers many
requests over many stores, so it keeps a ``psycopg_pool`` pool per
database, shared by every store in that database: a connection the server
ended while idle (a restart, ``pg_terminate_backend``) is replaced at the
next transaction's BEGIN, so one lost connection fails at most the request
that was using it.
"""

from __future__ import annotations

import logging
import os
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

import psycopg

from ..errors import BusyError

if TYPE_CHECKING:  # a one-shot command never makes a pool, so it does not pay psycopg_pool's import
    from psycopg_pool import ConnectionPool

__all__ = ["Connections", "OneConnection", "PooledConnections", "busy_timeout_s", "connect"]

logger = logging.getLogger(__name__)

DEFAULT_BUSY_TIMEOUT_MS = 10_000
#: Seconds to wait for an unreachable server when neither the URL nor ``PGCONNECT_TIMEOUT`` says.
CONNECT_TIMEOUT_S = 10


def busy_timeout_s() -> float:
    """How long a writer waits for a lock (and a request for a pooled connection): ``MNEM_BUSY_TIMEOUT_MS``."""
    raw = os.environ.get("MNEM_BUSY_TIMEOUT_MS", "")
    return (int(raw) if raw.isdigit() else DEFAULT_BUSY_TIMEOUT_MS) / 1000


def _options(conninfo: str) -> dict[str, Any]:
    """Connection settings: autocommit (the backend issues BEGIN itself), a name, a bounded connect wait."""
    given = psycopg.conninfo.conninfo_to_dict(conninfo)
    options: dict[str, Any] = {"autocommit": True}
    if "application_name" not in given and "PGAPPNAME" not in os.environ:
        options["application_name"] = "mnem"
    if "connect_timeout" not in given and "PGCONNECT_TIMEOUT" not in os.environ:
        options["connect_timeout"] = CONNECT_TIMEOUT_S
    return options


def connect(conninfo: str) -> psycopg.Connection[Any]:
    """One new connection (errors are psycopg's; the session translates them)."""
    return psycopg.connect(conninfo, **_options(conninfo))


class Connections(ABC):
    """Where a store's transactions get their connection."""

    @abstractmethod
    def connection(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        """A connection for one transaction."""

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

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class PooledConnections:
    """A worker's pools, one per connection string, shared by the stores it keeps open."""

    def __init__(self) -> None:
        self._pools: dict[str, ConnectionPool[psycopg.Connection[Any]]] = {}

    def for_database(self, conninfo: str) -> Connections:
        """What a store in the database ``conninfo`` names takes its connections from."""
        return _Pooled(self, conninfo)

    def pool(self, conninfo: str) -> ConnectionPool[psycopg.Connection[Any]]:
        """The pool for ``conninfo``, made on first use.

        A first direct connection comes before the pool: a wrong host or
        password then fails at once with libpq's own words, where a pool
        would retry in the background and report only a timeout.
        """
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

    def close(self) -> None:
        """Close every pool."""
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()


class _Pooled(Connections):
    """One database's pool, as a store sees it."""

    def __init__(self, pools: PooledConnections, conninfo: str) -> None:
        self._pools = pools
        self._conninfo = conninfo

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A checked-out connection (``busy`` if none frees up within the busy timeout)."""
        from psycopg_pool import PoolTimeout

        try:
            with self._pools.pool(self._conninfo).connection() as conn:
                yield conn
        except PoolTimeout:
            raise BusyError("every pooled PostgreSQL connection is in use; try again") from None

    def close(self) -> None:
        """Nothing: the worker closes the pools when it stops."""
