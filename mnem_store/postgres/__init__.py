"""The PostgreSQL backend: stores named by ``postgresql://…?store=NAME`` URLs, many to a database.

``connect`` makes connections (one, lazily, for a one-shot command; a pool
per database in a ``mnem serve`` worker); ``session`` runs the shared
statements (``mnem_store.sql``) in transactions and maps PostgreSQL's
failures to the taxonomy; ``backend`` opens and creates stores, each a
schema of its own.  Importing this package imports psycopg, so the engine
imports it only when a URL names a store.  psycopg is the ``postgres`` extra:
without it, naming a URL is a ``usage`` error that says how to install it
(not an ImportError turned into an internal ``store_io`` one).
"""

try:
    import psycopg  # noqa: F401  (checked before the modules below import it)
    import psycopg_pool  # noqa: F401
except ImportError as missing:
    from ..errors import UsageError
    from ..install import pip_install

    raise UsageError(
        f"postgresql:// stores need the PostgreSQL driver, which is not installed here ({missing}): "
        f"{pip_install('postgres')}"
    ) from None

from .backend import PostgresBackend
from .connect import Connections, OneConnection, PooledConnections

__all__ = ["Connections", "OneConnection", "PooledConnections", "PostgresBackend"]
