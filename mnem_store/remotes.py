"""Remotes: the other stores a store knows by name, and where their branches were at the last fetch.

Upstream has no remotes; this is the toolkit's addition (docs/remotes.md).
A remote is a name for a store address, exactly what ``mnem -C`` takes: a
folder, or a ``postgresql://`` store URL.  What a store knows of its
remotes is local to it, like git's ``.git/config`` and ``refs/remotes``:
one setting row (``Backend.setting``) holding, per remote, its URL and its
*remote-tracking branches* (each branch of the remote and the commit it had
when last fetched or pushed to).  One row means one read answers both
``remote list`` and a commit-ish like ``origin/main``, and a fetch moves
every tracking branch of a remote in the write that brought their commits.
The row is never part of a commit or an export.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlsplit

from .errors import CommandError, CorruptStoreError, InvalidRefError, UsageError
from .layout import StoreUrl, validate_branch_name

__all__ = ["SETTING", "Remote", "check_remote_name", "dump_remotes", "find_remote", "parse_remotes", "remote_url"]

#: The setting (``Backend.setting``) that holds every remote.
SETTING = "remotes"


class Remote(NamedTuple):
    """One remote: its name, its address as stored, and its tracking branches (remote branch -> commit)."""

    name: str
    url: str
    branches: dict[str, bytes]

    @property
    def shown(self) -> str:
        """The address as messages print it: a PostgreSQL URL without its password."""
        return StoreUrl.parse(self.url).shown if _is_url(self.url) else self.url

    def tracking(self) -> list[tuple[str, bytes]]:
        """``(NAME/BRANCH, commit)`` of every tracking branch, by name."""
        return [(f"{self.name}/{branch}", tip) for branch, tip in sorted(self.branches.items())]

    def to_dict(self) -> dict[str, Any]:
        """The ``remote list --json`` entry (docs/cli-json.md)."""
        return {"name": self.name, "url": self.shown,
                "branches": [{"name": name, "commit": tip.hex()} for name, tip in self.tracking()]}


def _is_url(text: str) -> bool:
    return text.startswith(("postgresql://", "postgres://"))


def check_remote_name(name: str) -> str:
    """A remote's name follows the branch-name rules and holds no ``/`` (``NAME/BRANCH`` splits at the first).

    Raises:
        InvalidRefError: The name is refused, saying why.
    """
    if "/" in name:
        raise InvalidRefError(f'remote name "{name}" must not contain "/": origin/main means branch main of origin')
    validate_branch_name(name)
    return name


def remote_url(text: str) -> str:
    """The address to keep for a remote: a store URL checked as ``-C`` checks it, or a folder made absolute.

    A folder is kept absolute (and normalised) so that the remote means the
    same store whichever folder a later ``mnem`` runs in.  A URL is kept as
    given, so it must not hold a password: the store would keep it.

    Raises:
        UsageError: The URL is malformed or holds a password, or the text is empty.
    """
    if not text or text.startswith("-"):
        raise UsageError(f"{text!r} is not a store address: give a folder, a postgresql://...?store=NAME URL or "
                         "the http(s):// URL of a mnem-mcp server")
    if text.startswith(("http://", "https://")):
        parts = urlsplit(text)
        if not parts.hostname or parts.query or parts.fragment:
            raise UsageError(f"{text!r} is not an HTTP remote: give the mnem-mcp endpoint's URL, e.g. "
                             "https://HOST/mcp, with no query")
        if parts.username or parts.password:
            raise UsageError("a remote's URL is kept in the store, so it must not hold credentials: give the bearer "
                             "token through MNEM_TOKEN")
        return text.rstrip("/")
    if _is_url(text):
        shown = StoreUrl.parse(text).shown
        parts = urlsplit(text)
        if parts.password or any(key == "password" for key, _ in parse_qsl(parts.query)):
            raise UsageError(f"a remote's URL is kept in the store, so it must not hold a password: use {shown} "
                             "and give the password through PGPASSWORD or a pgpass file")
        return text
    return os.path.abspath(text)


def parse_remotes(text: str | None) -> dict[str, Remote]:
    """The remotes a setting row holds (none when the row is absent).

    Raises:
        CorruptStoreError: The row is not what ``dump_remotes`` writes.
    """
    if text is None:
        return {}
    try:
        data = json.loads(text)
        return {name: Remote(name, entry["url"], {b: bytes.fromhex(t) for b, t in entry["branches"].items()})
                for name, entry in data.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CorruptStoreError(f"the remotes setting is damaged ({exc}); remove and add the remotes again") from None


def dump_remotes(remotes: Mapping[str, Remote]) -> str:
    """The setting row for ``remotes``: compact JSON, sorted, commits as hex."""
    return json.dumps({name: {"url": remote.url, "branches": {b: t.hex() for b, t in sorted(remote.branches.items())}}
                       for name, remote in sorted(remotes.items())}, separators=(",", ":"))


def find_remote(remotes: Mapping[str, Remote], name: str) -> Remote:
    """The remote called ``name``.

    Raises:
        CommandError: ``not_found``: no such remote; the message lists the known ones and how to add one.
    """
    found = remotes.get(name)
    if found is None:
        known = ", ".join(sorted(remotes)) or "none"
        raise CommandError(f'no remote named "{name}" (known: {known}); add it with `mnem remote add {name} URL`',
                           "not_found")
    return found
