"""The SQLite backend, the default: a store is ``<root>/.mnem/store.sqlite3``.

``database`` holds the connection, schema and transactions (the tables and
statements are ``mnem_store.sql``'s); ``backend`` opens and creates stores
atomically; ``migrate`` upgrades stores an older release wrote.
"""

from .backend import MNEM_DIR, SqliteBackend, io_error

__all__ = ["MNEM_DIR", "SqliteBackend", "io_error"]
