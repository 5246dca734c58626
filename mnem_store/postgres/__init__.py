"""The PostgreSQL backend: stores named by ``postgresql://…?store=NAME`` URLs, many to a database.

``connect`` makes connections (one, lazily, for a one-shot command; a pool
per database in a ``mnem serve`` worker); ``session`` runs the shared
statements (``mnem_store.sql``) in transactions and maps PostgreSQL's
failures to the taxonomy; ``backend`` opens and creates stores, each a
schema of its own.  Importing this package imports psycopg, so the engine
imports it only when a URL names a store.
"""

from .backend import PostgresBackend
from .connect import Connections, OneConnection, PooledConnections

__all__ = ["Connections", "OneConnection", "PooledConnections", "PostgresBackend"]
