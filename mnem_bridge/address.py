"""Store addresses as the bridge takes them: a folder, or a PostgreSQL URL whose password travels apart.

A URL (``postgresql://user@host/db?store=NAME``) is passed to ``mnem -C`` as
is, except for a password: that is cut out of the URL and given to the
child process as ``PGPASSWORD``, so it never appears in an argv, an echoed
command, a ``rerun:`` line, a log or a repr.  To rerun an echoed line by
hand, set ``PGPASSWORD`` (or use a pgpass file) as the bridge did.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlsplit

__all__ = ["StoreUrl", "is_url", "store_address"]

_SCHEMES = ("postgresql://", "postgres://")


def is_url(text: str | os.PathLike[str]) -> bool:
    """Whether ``text`` names a store in PostgreSQL rather than a folder."""
    return isinstance(text, str) and text.startswith(_SCHEMES)


@dataclass(frozen=True, slots=True)
class StoreUrl:
    """A PostgreSQL store's URL without its password, and the password (if the URL had one)."""

    url: str
    password: str | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, text: str) -> StoreUrl:
        """Cut the password out of the user info or the ``password`` query parameter (the last one given wins)."""
        parts = urlsplit(text)
        password = None
        userinfo, at, host = parts.netloc.rpartition("@")
        if at and ":" in userinfo:
            user, _, secret = userinfo.partition(":")
            password = unquote(secret)
            parts = parts._replace(netloc=f"{user}@{host}")
        query = parse_qsl(parts.query, keep_blank_values=True)
        if any(key == "password" for key, _ in query):
            password = [value for key, value in query if key == "password"][-1]
            kept = "&".join(f"{quote(k, safe='')}={quote(v, safe='/:,@')}" for k, v in query if k != "password")
            parts = parts._replace(query=kept)
        return cls(parts.geturl(), password or None)

    def env(self) -> dict[str, str]:
        """What the child's environment needs to connect (``PGPASSWORD``, when the URL carried one)."""
        return {"PGPASSWORD": self.password} if self.password else {}

    def __str__(self) -> str:
        return self.url


def store_address(where: str | os.PathLike[str] | StoreUrl) -> Path | StoreUrl:
    """A folder (absolute) or a URL, from what a caller passed."""
    if isinstance(where, StoreUrl):
        return where
    if isinstance(where, str) and is_url(where):
        return StoreUrl.parse(where)
    return Path(where).absolute()
