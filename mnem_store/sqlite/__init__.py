"""The SQLite backend, the default: a store is ``<root>/.mnem/store.sqlite3``.

``database`` holds the connection, schema and transactions; ``objectstore``
and ``states`` the objects and the change index; ``backend`` puts them
behind the storage seam (``mnem_store.backend``) with refs, HEAD, staging
and config; ``migrate`` upgrades stores an older release wrote.
"""

from .backend import MNEM_DIR, SqliteBackend, io_error

__all__ = ["MNEM_DIR", "SqliteBackend", "io_error"]
