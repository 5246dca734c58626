"""HEAD and config as upstream writes them, branch-name rules, and how a store in PostgreSQL is named.

Upstream keeps HEAD and config as files beside its database; we keep the
same text as rows inside the store's database (see ``backend``), so they
change in the same transaction as the refs.  The formats and their errors
are upstream's: an export's ``head`` and an old store's files parse here.
A store in PostgreSQL is ours: a URL (``StoreUrl``), which the backend
opens and ``location`` makes from what a user typed.
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import parse_qsl, quote, urlsplit

from .errors import CorruptStoreError, FormatVersionError, InvalidRefError, UsageError

__all__ = [
    "CONFIG_TEXT",
    "FORMAT_VERSION",
    "Head",
    "StoreUrl",
    "parse_config",
    "parse_head",
    "validate_branch_name",
]

FORMAT_VERSION = 1
CONFIG_TEXT = (
    "# Mnemosyne store config. See docs/format/.\n"
    "format_version = 1\n"
    "hash_algo = blake3\n"
    "default_branch = main\n"
)
_ALLOWED_PUNCT = set("-_./")


class Head(NamedTuple):
    """HEAD: attached to ``branch``, or detached at ``commit`` (raw id)."""

    branch: str | None = None
    commit: bytes | None = None

    @property
    def text(self) -> str:
        """HEAD as upstream's SDK ``head()`` returns it and its HEAD file holds it: ``ref: main`` or a bare hex id."""
        return f"ref: {self.branch}" if self.branch is not None else (self.commit or b"").hex()


def validate_branch_name(name: str) -> None:
    """Apply upstream's branch-name rules in upstream's order."""

    def bad(reason: str) -> InvalidRefError:
        return InvalidRefError(f'"{name}": {reason}')

    if not name:
        raise bad("empty")
    if name == "HEAD":
        raise bad("HEAD is reserved")
    if name.startswith("/") or name.endswith("/"):
        raise bad("must not start or end with '/'")
    if name.startswith(".") or name.endswith("."):
        raise bad("must not start or end with '.'")
    if ".." in name:
        raise bad("must not contain '..'")
    # Unicode's "Other" (C*) categories: ``isprintable`` is false for them and for the separators (Z*), which are all
    # whitespace, so this is the category test without importing ``unicodedata`` on every read of HEAD.
    if any(ch.isspace() or not ch.isprintable() for ch in name):
        raise bad("must not contain whitespace or control characters")
    if any(not (ch.isalnum() or ch in _ALLOWED_PUNCT) for ch in name):
        raise bad("only letters, digits, '-', '_', '.', '/' are allowed")


def parse_head(text: str) -> Head:
    """Parse a HEAD file's contents."""
    line = text.strip()
    if line.startswith("ref:"):
        name = line[4:].strip()
        if not name:
            raise CorruptStoreError("HEAD: 'ref:' with no branch name")
        try:
            validate_branch_name(name)
        except InvalidRefError as exc:
            raise CorruptStoreError(f"HEAD is not a ref or a commit id: {exc.detail}") from None
        return Head(branch=name)
    if len(line) == 64:
        try:
            return Head(commit=bytes.fromhex(line))
        except ValueError:
            pass
    raise CorruptStoreError(f"HEAD is not a ref or a commit id: {line!r} is neither 'ref: <branch>' nor a 64-hex id")


def parse_config(text: str) -> dict[str, str]:
    """Parse and check ``config`` text: format version and hash algorithm."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise CorruptStoreError(f"config line has no `=`: {line}")
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    version = values.get("format_version")
    if version is None:
        raise CorruptStoreError("config has no format_version")
    if not version.isdigit():
        raise CorruptStoreError(f"format_version is not a number: {version}")
    if int(version) > FORMAT_VERSION:
        raise FormatVersionError(int(version), FORMAT_VERSION)
    algo = values.get("hash_algo")
    if algo is None:
        raise CorruptStoreError("config has no hash_algo")
    if algo != "blake3":
        raise CorruptStoreError(f"unsupported hash_algo: {algo}")
    values.setdefault("default_branch", "main")
    return values


#: What a store's name may be: it becomes part of a PostgreSQL schema name (at most 63 bytes, "mnem_" first).
#: Compiled on first use (``re`` keeps it): only a PostgreSQL store's URL is checked against it.
_STORE_NAME = r"[A-Za-z0-9][A-Za-z0-9_-]{0,57}"


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
        if not re.fullmatch(_STORE_NAME, store):
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
