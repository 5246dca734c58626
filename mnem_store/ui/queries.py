"""The UI's read model: each answer is porcelain verbs in, a plain JSON-ready dict out.

Like the CLI, it reads only through the porcelain, which owns every
transaction: a ``Repo`` here is a handle passed on, never queried
(``tests/test_layers.py``).

Every answer is bounded: facts, commits, changes and timeline steps come a
page at a time (``params.MAX_PAGE`` at most), and none reads more of the
history than its page needs.  A page of memory is read at one commit, resolved first, so its
parts agree even while agents write.  Costs at 10k facts and 10k commits:
a facts page lists the state's ids and blames only that page's nodes;
a search reads the nodes of the memory it searches (``docs/ui.md``); a
timeline follows the node's own changes; a history page costs the commits
up to its end.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import porcelain
from ..bisect import content_equals
from ..canonical import dump_compact
from ..errors import CommandError
from ..objects import PROVENANCE_KEYS, Commit, MemoryNode
from ..pushed import shown_all
from ..repo import Repo

__all__ = ["blame", "commit_changes", "facts", "head", "history", "summary", "timeline", "value_diff", "when"]


def _node(node: MemoryNode | None) -> dict[str, Any] | None:
    return node.to_dict() if node is not None else None


def _commits(repo: Repo, commits: Sequence[tuple[bytes, Commit]]) -> list[dict[str, Any]]:
    """Each commit's JSON, with ``pushed_by`` and ``pushed_at`` where another than its author pushed it here."""
    return shown_all(commits, porcelain.pushes_of(repo, [raw for raw, _ in commits]))


def _at(repo: Repo, rev: str | None) -> str | None:
    """The commit (hex) a read happens at: ``rev`` resolved once, or HEAD's commit (None: no commit yet)."""
    if rev is not None:
        return porcelain.resolve(repo, rev).hex()
    tip = porcelain.head(repo)[1]
    return tip.hex() if tip is not None else None


def head(repo: Repo) -> dict[str, Any]:
    """Where HEAD is and every branch: what the page polls to notice new commits."""
    where, tip = porcelain.head(repo)
    location = Path(repo.location)
    return {
        "store": repo.location,
        # What the page's header shows: the folder a SQLite store's .mnem is in, or the URL.
        "name": location.parent.name if location.name == ".mnem" else repo.location,
        "branch": where.branch,
        "commit": tip.hex() if tip is not None else None,
        "branches": [{"name": b.name, "commit": b.tip.hex(), "current": b.current}
                     for b in porcelain.branch_list(repo)],
    }


def summary(repo: Repo) -> dict[str, Any]:
    """What the page shows before its script has run: ``head``, how many facts HEAD holds, and its commit.

    Costs HEAD's state map (which a page of memory reads too, and an open
    store keeps), counted without listing it, and one commit: ``latest`` is
    that commit (None in a store without commits).
    """
    where = head(repo)
    tip = where["commit"]
    if tip is None:
        return {**where, "facts": 0, "latest": None}
    return {**where, "facts": porcelain.count(repo, tip),
            "latest": _commits(repo, porcelain.log(repo, rev=tip, limit=1))[0]}


def _matches(node: MemoryNode, needle: str) -> bool:
    texts = [node.id, dump_compact(node.content), *node.provenance.present().values()]
    return any(needle in text.casefold() for text in texts)


def facts(repo: Repo, rev: str | None, query: str, offset: int, limit: int) -> dict[str, Any]:
    """A page of the memory at ``rev`` (default HEAD), in id order, each fact with its provenance and blame.

    ``query`` (case-insensitive) keeps the facts whose id, content or
    provenance contains it; without one, only the page's nodes are read.
    """
    at = _at(repo, rev)
    if at is None:
        return {"commit": None, "total": 0, "offset": offset, "limit": limit, "facts": []}
    needle = query.casefold()
    if needle:
        ids = [node_id for node_id, node in porcelain.show(repo, at).items() if _matches(node, needle)]
    else:
        ids = porcelain.ls(repo, at)
    blamed = list(porcelain.blame_many(repo, ids[offset:offset + limit], at).values())
    setters = _commits(repo, [(found.commit, commit) for found, commit in blamed])
    rows = [{**found.node.to_dict(), "time": found.time, "set_by": set_by}
            for (found, _), set_by in zip(blamed, setters, strict=True)]
    return {"commit": at, "total": len(ids), "offset": offset, "limit": limit, "facts": rows}


def _fields(node: MemoryNode | None, split_content: bool) -> dict[str, Any]:
    """A node as flat ``field -> value`` pairs (absent fields left out); ``split_content`` spreads a map's keys."""
    if node is None:
        return {}
    if node.redacted is not None:  # nothing of the old value is left to compare: the record stands for it
        return {"redacted": node.redacted.shown()}
    found: dict[str, Any] = {}
    if split_content:
        found.update({f"content.{key}": value for key, value in node.content.items()})
    else:
        found["content"] = node.content
    found["content_kind"] = node.content_kind
    found.update({f"provenance.{name}": getattr(node.provenance, name) for name in PROVENANCE_KEYS.values()
                  if getattr(node.provenance, name) is not None})  # in the ADR's order: source, step, observation
    if node.event_time is not None:
        found["event_time"] = node.event_time
    return found


def value_diff(old: MemoryNode | None, new: MemoryNode | None) -> list[dict[str, Any]]:
    """The fields that differ between two values of a node: ``{"field", "before", "after"}``, in a fixed order.

    Content that is a map on both sides is compared key by key
    (``content.plan``), so a one-key change does not show the whole map.
    """
    split = all(node is not None and node.redacted is None and isinstance(node.content, dict) for node in (old, new))
    before, after = _fields(old, split), _fields(new, split)
    names = list(dict.fromkeys([*before, *after]))
    return [{"field": name, "before": before.get(name), "after": after.get(name)}
            for name in names
            if name not in before or name not in after or dump_compact(before[name]) != dump_compact(after[name])]


def timeline(repo: Repo, node_id: str, rev: str | None, limit: int) -> dict[str, Any]:
    """A page of every value ``node_id`` had (newest first), each with its commits, provenance and diff.

    ``next`` is the ``at`` of the following page (None: the story is complete).
    """
    found = porcelain.timeline(repo, node_id, rev, limit=limit)
    if not found.entries and rev is None:
        raise CommandError(f'no fact "{node_id}" in the history of HEAD; check the id in the memory view', "not_found")
    pairs = _commits(repo, [pair for entry in found.entries
                            for pair in ((entry.commit, entry.commit_obj), (entry.origin, entry.origin_obj))])
    return {
        "id": node_id,
        "entries": [{
            "commit": pairs[2 * n],
            "origin": pairs[2 * n + 1],
            "kind": entry.kind,
            "value": _node(entry.value),
            "previous": _node(entry.previous),
            "diff": value_diff(entry.previous, entry.value),
        } for n, entry in enumerate(found.entries)],
        "next": found.next.hex() if found.next is not None else None,
    }


def blame(repo: Repo, node_id: str, rev: str | None) -> dict[str, Any]:
    """Why the fact holds its value at ``rev`` (default HEAD): the commit that set it and its provenance."""
    found, _ = porcelain.blame(repo, node_id, rev)
    return {**found.to_dict(), "commit": _commits(repo, porcelain.log(repo, rev=found.commit.hex(), limit=1))[0]}


def when(repo: Repo, node_id: str, value: Any, rev: str | None) -> dict[str, Any]:
    """The first commit on ``rev``'s first-parent history (default HEAD) where ``node_id`` equals ``value``."""
    found = porcelain.bisect(repo, node_id, content_equals(node_id, value), bad=rev, include_root=True)
    commit = _commits(repo, porcelain.log(repo, rev=found.commit.hex(), limit=1))[0]
    return {"commit": commit, "blame": found.blame.to_dict() if found.blame is not None else None}


def history(repo: Repo, rev: str | None, offset: int, limit: int, *, every: bool = False,
            thread: str | None = None) -> dict[str, Any]:
    """A page of history from ``rev`` (default HEAD), or of every branch, newest first in graph order.

    Each commit comes with its parents and ``threads``: the LangGraph
    threads whose checkpoints it changed (``[]`` for a memory commit), read
    from its change rows, so the page can tell what the graph did from what
    the agent learnt.  ``thread`` keeps that thread's checkpoint commits and
    the memory commits (``mnem log --thread``).  The walk stops at the page's
    end, so a page costs ``offset + limit`` listed commits (per branch with
    ``every``); ``more`` says whether another page follows.  ``checkpoints``
    says whether the store ever held a LangGraph checkpoint (one index
    probe), so the page offers a thread filter only where there is a thread
    to filter by.
    """
    count = offset + limit + 1
    threads = [thread] if thread is not None else []
    if every:
        at, entries = None, porcelain.log(repo, limit=count, threads=threads, every=True)
    else:
        at = _at(repo, rev)
        entries = porcelain.log(repo, rev=at, limit=count, threads=threads) if at is not None else []
    page = entries[offset:offset + limit]
    marks = porcelain.threads_of(repo, [raw for raw, _ in page])
    checkpoints = porcelain.holds_checkpoints(repo)
    return {"commit": at, "offset": offset, "thread": thread,
            "commits": [{**shown, "threads": marks[raw]} for (raw, _), shown in zip(page, _commits(repo, page),
                                                                                      strict=True)],
            "more": len(entries) > offset + limit, "checkpoints": checkpoints}


def commit_changes(repo: Repo, rev: str, offset: int, limit: int) -> dict[str, Any]:
    """One commit and a page of its change set: each node added, modified or removed, before and after."""
    found = porcelain.changes(repo, rev, offset, limit)
    return {
        "commit": _commits(repo, [(found.commit, found.commit_obj)])[0],
        "total": found.total,
        "offset": offset,
        "changes": [{**change.to_dict(), "diff": value_diff(change.old, change.new)} for change in found.changes],
    }
