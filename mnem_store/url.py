"""A PostgreSQL store's URL: below both the backend that opens it and ``location``, which makes it from user text."""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import parse_qsl, quote, urlsplit

from .errors import UsageError

__all__ = ["StoreUrl"]

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
