"""HEAD and config as upstream writes them, and branch-name rules.

Upstream keeps HEAD and config as files beside its database; we keep the
same text as rows inside the store's database (see ``backend``), so they
change in the same transaction as the refs.  The formats and their errors
are upstream's: an export's ``head`` and an old store's files parse here.
"""

from __future__ import annotations

import unicodedata
from typing import NamedTuple

from .errors import CorruptStoreError, FormatVersionError, InvalidRefError

__all__ = [
    "CONFIG_TEXT",
    "FORMAT_VERSION",
    "Head",
    "format_head",
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
        """HEAD as upstream's SDK ``head()`` returns it: ``ref: main`` or a bare hex id."""
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
    if any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in name):
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


def format_head(head: Head) -> str:
    """HEAD's text as upstream writes it, newline included."""
    return f"ref: {head.branch}\n" if head.branch is not None else f"{(head.commit or b'').hex()}\n"


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
