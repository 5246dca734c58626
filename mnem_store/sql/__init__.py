"""The store's tables and statements, shared by every SQL engine.

``session`` says what an engine supplies; ``objects`` and ``states`` are the
object table and the change index; ``backend`` puts them behind the
storage seam (``mnem_store.backend``) with refs, HEAD, staging and config.
``mnem_store.sqlite`` and ``mnem_store.postgres`` each add a connection,
transactions and a schema.
"""

from .backend import SqlBackend
from .objects import pack, unpack
from .session import Rows, Session
from .states import pack_time, unpack_time

__all__ = ["Rows", "Session", "SqlBackend", "pack", "pack_time", "unpack", "unpack_time"]
