"""What a URL may ask the UI for: bounded pages, commit ids, node ids and JSON values, checked up front.

Every parameter is checked before the store is touched, and a bad one is
a typed error naming the fix (``usage`` or ``invalid_ref``), so a request
can never ask for an unbounded page, and nothing in a URL is ever used as
a path: commit ids are hex, node ids only ever reach the store as query
parameters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..canonical import parse_json
from ..errors import InvalidRefError, UsageError

__all__ = ["MAX_PAGE", "commit_id", "every_branch", "json_value", "node_id", "offset", "page_size", "rev", "thread"]

#: The most facts, commits, changes or timeline steps one answer holds.
MAX_PAGE = 200
#: The longest branch name or commit id a request may name (longer is refused before any lookup).
MAX_REV = 255
_HEX = re.compile(r"[0-9a-f]{4,64}")


def page_size(query: Mapping[str, str], default: int) -> int:
    """``limit``: 1 to ``MAX_PAGE`` items, else ``usage``."""
    text = query.get("limit")
    if text is None:
        return default
    if not text.isdigit() or not 1 <= int(text) <= MAX_PAGE:
        raise UsageError(f"limit must be a whole number from 1 to {MAX_PAGE}; got {text[:20]!r}")
    return int(text)


def offset(query: Mapping[str, str]) -> int:
    """``offset``: a whole number of items to skip (bounded so a huge one cannot run away), else ``usage``."""
    text = query.get("offset", "0")
    if not text.isdigit() or len(text) > 9:
        raise UsageError(f"offset must be a whole number below 10^9; got {text[:20]!r}")
    return int(text)


def commit_id(text: str) -> str:
    """A commit id or unique prefix as it appears in a URL path: 4 to 64 lowercase hex, else ``invalid_ref``."""
    if not _HEX.fullmatch(text):
        raise InvalidRefError(f"{text[:80]!r} is not a commit id: use 4 to 64 lowercase hex characters")
    return text


def rev(query: Mapping[str, str]) -> str | None:
    """``at``: a branch name or commit id prefix to read memory at (None: HEAD), resolved later by the store."""
    text = query.get("at") or None
    if text is not None and (len(text) > MAX_REV or "\0" in text):
        raise InvalidRefError("at must be a branch name or a commit id (4 to 64 lowercase hex)")
    return text


def every_branch(query: Mapping[str, str]) -> bool:
    """``all=1``: the history of every branch at once (the graph's default); absent, one branch's (``at``)."""
    text = query.get("all")
    if text is None:
        return False
    if text != "1":
        raise UsageError(f"all takes only all=1 (every branch), or is left out for one branch; got {text[:20]!r}")
    if query.get("at"):
        raise UsageError("all=1 reads every branch, at reads one: ask for one or the other")
    return True


def thread(query: Mapping[str, str]) -> str | None:
    """``thread``: one LangGraph thread whose checkpoints, with the memory commits, a history keeps (None: all)."""
    text = query.get("thread") or None
    if text is not None and (len(text) > MAX_REV or "\0" in text):
        raise UsageError(f"thread must be a LangGraph thread id of at most {MAX_REV} characters, without NUL")
    return text


def node_id(query: Mapping[str, str]) -> str:
    """``id``: the node a request is about; required, without NUL (no stored node can hold one)."""
    text = query.get("id")
    if not text:
        raise UsageError("id is required: the node id of the fact, e.g. ?id=customer-4821")
    if "\0" in text:
        raise UsageError("id must not contain NUL")
    return text


def json_value(query: Mapping[str, str]) -> Any:
    """``value``: the JSON value a ``when`` question asks about, strictly parsed, else ``usage``."""
    text = query.get("value")
    if text is None:
        raise UsageError('value is required: the JSON value to look for, e.g. ?value="on the Enterprise plan"')
    return parse_json(text, "value")
