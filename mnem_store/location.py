"""Where a store is: an explicit root or URL, or discovery from the current folder.

A store lives in a folder (SQLite, the default) or in a PostgreSQL database,
named by a ``postgresql://`` URL (``StoreUrl``) wherever a folder is accepted.

An explicit store (``-C``/``--store``, ``MNEM_STORE``, a path given to the
bridge, the MCP server or the LangGraph store) names the store's root
exactly, or its ``.mnem`` folder: nothing walks up from it, so a typo or a
missing store can never silently land in a store further up.  Only
discovery from the current folder walks up, as git does, and like git's
``safe.directory`` it refuses a store that belongs to another user.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple
from urllib.parse import parse_qsl, quote, urlsplit

from .errors import ForeignStoreError, NoStoreError, UsageError
from .sqlite import MNEM_DIR

__all__ = ["Address", "StoreUrl", "address", "discover_root", "exact_root", "make_private_dirs"]

#: What a store's name may be: it becomes part of a PostgreSQL schema name (at most 63 bytes, "mnem_" first).
_STORE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,57}")


def _query(pairs: list[tuple[str, str]]) -> str:
    """A URL query from its pairs, keeping a socket folder (``host=/run/postgresql``) as typed."""
    return "&".join(f"{quote(key, safe='')}={quote(value, safe='/:,@')}" for key, value in pairs)


class StoreUrl(NamedTuple):
    """A store in PostgreSQL: a libpq connection URI plus ``store=NAME`` (default ``default``).

    Many stores share one database, each in a schema of its own.  ``shown``
    is the URL as every message, echo and log prints it: with any password
    removed (give passwords through ``PGPASSWORD`` or a pgpass file).
    """

    conninfo: str  # may hold a password: never in repr()
    store: str
    shown: str

    @classmethod
    def parse(cls, text: str) -> StoreUrl:
        """Split ``text`` into the connection URI and the store name.

        Raises:
            UsageError: The store name is not 1-58 letters, digits, ``_`` or ``-``, or the URL is malformed.
        """
        try:
            parts = urlsplit(text)
            query = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
        except ValueError as exc:
            raise UsageError(f"the store URL is malformed: {exc}") from None
        names = [value for key, value in query if key == "store"]
        store = names[-1] if names else "default"
        if not _STORE_NAME.fullmatch(store):
            raise UsageError(
                f"the store name {store!r} in the URL is refused: use 1 to 58 letters, digits, '_' or '-', "
                "starting with a letter or digit"
            )
        rest = [(key, value) for key, value in query if key != "store"]
        conninfo = parts._replace(query=_query(rest)).geturl()
        userinfo, at, host = parts.netloc.rpartition("@")
        netloc = f"{userinfo.partition(':')[0]}@{host}" if at else host
        shown_query = [(key, value) for key, value in query if key != "password"]
        shown = parts._replace(netloc=netloc, query=_query(shown_query)).geturl()
        return cls(conninfo, store, shown)

    def __repr__(self) -> str:
        """Without ``conninfo``: a password in it must not reach a log or a traceback."""
        return f"StoreUrl(store={self.store!r}, shown={self.shown!r})"

    @property
    def schema(self) -> str:
        """The PostgreSQL schema that holds this store's tables."""
        return f"mnem_{self.store}"

    def __str__(self) -> str:
        return self.shown


#: Where a store is: a folder (SQLite) or a URL (PostgreSQL).
Address = Path | StoreUrl


@lru_cache(maxsize=256)
def address(text: str) -> Address:
    """A store address as a user typed it: a ``postgresql://`` or ``postgres://`` URL, else a path.

    Remembered per text: a worker is handed the same ``-C`` request after
    request, and the one object keeps its hash for the worker's store cache.
    """
    if text.startswith(("postgresql://", "postgres://")):
        return StoreUrl.parse(text)
    return Path(text)


def exact_root(path: Path) -> Path:
    """The store root ``path`` names: the folder holding ``.mnem``, or that ``.mnem`` folder itself.

    Raises:
        NoStoreError: No store exactly there (the message says how to create one).
    """
    here = path.absolute()
    if here.name == MNEM_DIR and here.is_dir():
        return here.parent
    if (here / MNEM_DIR).is_dir():
        return here
    raise NoStoreError(str(here), exact=True)


def discover_root(start: Path) -> Path:
    """The nearest store at or above ``start`` that the current user owns (or ``start``'s own store).

    Raises:
        NoStoreError: None at or above ``start``.
        ForeignStoreError: The nearest one above ``start`` belongs to another user.
    """
    here = start.absolute()
    if here.name == MNEM_DIR and here.is_dir():
        return here.parent
    for candidate in (here, *here.parents):
        mnem_dir = candidate / MNEM_DIR
        if mnem_dir.is_dir():
            owner = mnem_dir.stat().st_uid
            if owner != os.geteuid():
                raise ForeignStoreError(str(candidate), owner)
            return candidate
    raise NoStoreError(str(here))


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and its missing ancestors owner-only (0700); folders that exist keep their mode.

    ``mkdir(parents=True)`` gives ancestors the umask's mode, so under a
    permissive umask a store's new folders (the MCP server's default store
    among them) would let another local user replace its ``.mnem``.
    """
    missing = []
    while not path.is_dir():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
