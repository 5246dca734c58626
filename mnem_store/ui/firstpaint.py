"""The page's first paint: ``index.html`` with the store's name, its branch and what HEAD holds written in.

The page's script replaces the summary with the view its URL names as soon
as it has run; until then (a slow link, a blocked script) a person reads
which store this is, how many facts it holds and its last commit, not a
bare "Loading…".  The server does not see the URL's ``#`` part, so the
summary is the store's, whatever the view.  Every value is HTML-escaped:
a branch name, an author and a commit message are other parties' text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from html import escape
from typing import Any

from ..times import iso

__all__ = ["render"]

#: ``{{name}}`` in the template: a slot this module fills.
_SLOT = re.compile(r"\{\{(\w+)\}\}")


def _time(ms: int) -> str:
    """A commit's time as the page's script shows it: ``2026-03-02 09:04:00Z``."""
    return re.sub(r"\.\d+Z$", "Z", iso(ms).replace("T", " "))


def _summary(found: Mapping[str, Any]) -> str:
    """The summary ``<main>`` starts with, as HTML (each value escaped)."""
    name, latest = escape(found["name"]), found["latest"]
    if latest is None:
        return (f"<h1>{name}</h1>\n<p>No commits yet: this store's memory is empty. Facts appear here when an agent "
                "commits them.</p>")
    facts, branches = found["facts"], len(found["branches"])
    where = f"on {escape(found['branch'])}" if found["branch"] else "at a detached HEAD"
    subject = escape(latest["message"].split("\n", 1)[0])
    return (f"<h1>{name}</h1>\n<p>{facts} {'fact' if facts == 1 else 'facts'} {where} ({branches} "
            f"{'branch' if branches == 1 else 'branches'}). Last commit <code>{latest['id'][:12]}</code> "
            f"“{subject}” by {escape(latest['author'])} at {_time(latest['time'])}.</p>\n"
            '<p class="dim">Loading the page…</p>')


def render(template: str, found: Mapping[str, Any]) -> bytes:
    """``template`` (``index.html``) with its slots filled from ``found`` (``queries.summary``'s answer).

    Raises:
        KeyError: the template names a slot this module does not fill.
    """
    slots = {
        "title": escape(f"mnem ui · {found['name']}"),
        "store": escape(found["store"]),
        "name": escape(found["name"]),
        "where": f"on {escape(found['branch'])}" if found["branch"] else "detached HEAD",
        "summary": _summary(found),
    }
    return _SLOT.sub(lambda slot: slots[slot[1]], template).encode()
