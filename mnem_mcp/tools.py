"""What each MCP tool does, as plain functions over an open bridge ``Store``.

Nothing here knows about MCP: every function takes a ``mnem_bridge.Store``
first, then the tool's arguments, and returns the bridge's typed result
(``merge`` a ``MergeResult``) or one of
``models``' envelopes around such results; the SDK serializes them into
the shape ``models.result_schema`` publishes.  That keeps the logic testable without a session; the server
registers a typed closure per tool that opens the store and calls one of
these (``revise`` is ``remember`` under a second description).  Failures
are the bridge's typed ``MnemError``s, raised unchanged; the server turns
them into tool errors.

Writes go through ``mnem_bridge.agents`` (``merge`` through the store) and
are exactly one commit each: nothing is ever left staged between calls
(ADR-0016, "no staging over MCP").  Every write records its ``author``
argument, ``merge`` included: ``AUTHOR`` unless the server passes the
caller's identity (``identity.author``, over authenticated HTTP).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

import mnem_bridge
from mnem_bridge import agents

from .models import (
    DEFAULT_PAGE,
    WHOLE,
    Absent,
    At,
    BranchCreated,
    BranchName,
    CommitRef,
    Content,
    ContentResolution,
    Cursor,
    Equals,
    ExistingNodeId,
    Found,
    Good,
    Head,
    IncludeRoot,
    Items,
    Limit,
    NodeId,
    Note,
    Observation,
    OptionalNodeId,
    PageLimit,
    Prefix,
    Present,
    Recalled,
    RememberItem,
    Resolutions,
    Source,
    Start,
    Step,
    Strategy,
    Summary,
    Target,
    Theirs,
    ToolCall,
    Why,
    Written,
)

__all__ = [
    "AUTHOR",
    "branch",
    "forget",
    "history",
    "merge",
    "recall",
    "recall_at",
    "remember",
    "remember_many",
    "switch",
    "whats_new",
    "when_did",
    "why",
]

logger = logging.getLogger(__name__)


#: The author a write records when nobody is authenticated (stdio, ``--auth none``; ``mnem_bridge.agents``' default).
AUTHOR: Final = "agent"


def remember(
    store: mnem_bridge.Store,
    id: NodeId,
    content: Content,
    source: Source = None,
    step: Step = None,
    observation: Observation = None,
    tool_call: ToolCall = None,
    note: Note = None,
    summary: Summary = None,
    *,
    author: str = AUTHOR,
) -> Written:
    """Record (or revise) one fact with its provenance as one commit.

    Returns:
        ``{"commit": id}`` of the new commit.
    """
    commit = agents.remember(
        store, id, content, source=source, step=step, observation=observation, tool_call=tool_call, note=note,
        summary=summary, author=author,
    )
    return {"commit": commit}


def remember_many(
    store: mnem_bridge.Store,
    items: Items | Sequence[Mapping[str, Any]],
    summary: Summary = None,
    *,
    author: str = AUTHOR,
) -> Written:
    """Record several facts as a single commit (all or nothing).

    ``items`` are the ADR's ``[{id, content, ...}]``: plain mappings, as a
    direct caller passes them, or the validated models the server hands on.

    Returns:
        ``{"commit": id}`` of the new commit.
    """
    plain = [item.model_dump() if isinstance(item, RememberItem) else item for item in items]
    return {"commit": agents.remember_many(store, plain, summary=summary, author=author)}


def forget(store: mnem_bridge.Store, id: ExistingNodeId, summary: Summary = None, *, author: str = AUTHOR) -> Written:
    """Drop one fact from current memory as one commit; history keeps every past value.

    Returns:
        ``{"commit": id}`` of the new commit.
    """
    return {"commit": agents.forget(store, id, summary=summary, author=author)}


def recall(
    store: mnem_bridge.Store,
    id: OptionalNodeId = None,
    prefix: Prefix = None,
    limit: PageLimit = None,
    cursor: Cursor = None,
) -> Recalled:
    """Read one fact, or the whole current memory (ADR-0016's ``recall``).

    ``prefix``, ``limit`` and ``cursor`` are extensions: ``prefix`` keeps the
    ids that start with it, and a page ``{memory, next_cursor}`` is answered
    only when ``limit`` or ``cursor`` asks for one.

    Returns:
        The node (``None`` when nothing is remembered under ``id``), the memory
        ``{id: node}``, or with ``limit`` / ``cursor`` one page of it.
    """
    return _read(store, None, id, prefix, limit, cursor)


def recall_at(
    store: mnem_bridge.Store,
    commit: CommitRef,
    id: OptionalNodeId = None,
    prefix: Prefix = None,
    limit: PageLimit = None,
    cursor: Cursor = None,
) -> Recalled:
    """Read memory as it stood at a past commit, without moving anything: ``recall``'s shapes, at ``commit``."""
    return _read(store, commit, id, prefix, limit, cursor)


def _read(
    store: mnem_bridge.Store, at: str | None, id: str | None, prefix: str | None, limit: int | None,
    cursor: str | None,
) -> Recalled:
    """One node, the memory, or a page of it, at ``at`` (``None``: current memory)."""
    if id is not None:
        if prefix is not None or limit is not None or cursor is not None:
            raise mnem_bridge.UsageError("recall: give id for one fact, or prefix / limit / cursor, not both")
        return store.working_node(id, at=at)
    if limit is not None or cursor is not None:
        return store.memory_page(limit=limit or DEFAULT_PAGE, cursor=cursor,
                                 prefixes=None if prefix is None else [prefix], at=at)
    if prefix is not None:
        page = store.memory_page(limit=WHOLE, prefixes=[prefix], at=at)
        return dict(page.document["memory"])
    return dict(store.working_memory() if at is None else store.state_at(at))


def history(
    store: mnem_bridge.Store,
    limit: Limit = 20,
) -> list[mnem_bridge.Commit]:
    """The most recent commits on the current branch, newest first.

    Returns:
        The commits (over MCP, structured output wraps the list as ``{"result": [...]}``).
    """
    return store.log(limit=limit)


def why(
    store: mnem_bridge.Store,
    id: ExistingNodeId,
    at: At = None,
) -> Why:
    """The commit that set a fact's current value, with the provenance recorded then, and who made that commit.

    Provenance says where a value came from; the author says which agent
    wrote it, so one ``mnem blame`` answers both (``author`` is the extension
    beside the ADR's three keys).

    Returns:
        ``{"commit", "node", "time", "author"}``.
    """
    blame, author = store.blame_with_author(id, at=at)
    return {"commit": blame.commit, "node": blame.node, "time": blame.time, "author": author}


def when_did(
    store: mnem_bridge.Store,
    id: ExistingNodeId,
    equals: Equals = None,
    absent: Absent = False,
    present: Present = False,
    good: Good = None,
    include_root: IncludeRoot = False,
) -> Found:
    """Bisect the current branch's first-parent line for the first commit where one fact meets one condition.

    The ADR's form: exactly one of ``equals`` (a JSON value other than
    null, as upstream forwards it only when it is not null), ``absent`` or
    ``present``.  Without ``good`` the search starts after the line's first
    commit, as upstream's; ``include_root`` (an extension, the engine's
    ``mnem bisect --include-root``) lets that first commit be the answer.

    Returns:
        ``{"commit", "blame"}``: the first commit where it holds and the blame of
        the fact there (``null`` when the fact is absent there).

    Raises:
        mnem_bridge.UsageError: Not exactly one of ``equals`` / ``absent`` / ``present``.
    """
    chosen = [name for name, given in (("equals", equals is not None), ("absent", absent), ("present", present))
              if given]
    if len(chosen) != 1:
        said = "none" if not chosen else " and ".join(chosen)
        raise mnem_bridge.UsageError(f"when_did needs exactly one of equals, absent or present (got {said})")
    condition: dict[str, Any] = {"equals": equals} if equals is not None else {"absent": absent, "present": present}
    commit, blame = store.bisect_explain(id, **condition, good=good, include_root=include_root)
    return {"commit": commit, "blame": blame}


def whats_new(store: mnem_bridge.Store, commit: CommitRef) -> dict[str, mnem_bridge.ChangeKind]:
    """What one commit did to each fact it touched, compared with its first parent.

    Returns:
        ``{id: "added" | "modified" | "removed"}``.
    """
    return store.changed_by(commit)


def branch(
    store: mnem_bridge.Store,
    name: BranchName,
    start: Start = None,
) -> BranchCreated:
    """Create a branch of memory without switching to it.

    Returns:
        ``{"branch": name}``.
    """
    store.new_branch(name, start=start)
    return {"branch": name}


def switch(
    store: mnem_bridge.Store,
    target: Target,
) -> Head:
    """Move HEAD to a branch (or detach it at a commit); later reads and writes follow it.

    Returns:
        ``{"head": "ref: <branch>" | commit}``.
    """
    store.checkout(target)
    return {"head": store.head()}


def merge(
    store: mnem_bridge.Store,
    theirs: Theirs,
    resolutions: Resolutions = None,
    strategy: Strategy = None,
    summary: Summary = None,
    *,
    author: str = AUTHOR,
) -> mnem_bridge.MergeResult:
    """Merge another branch into the current one; conflicts write nothing and are reported.

    Returns:
        The merge result: ``{"status", "commit", "conflicts"}``.
    """
    settled = {node_id: mnem_bridge.MemoryNode(node_id, choice.content) if isinstance(choice, ContentResolution)
               else choice for node_id, choice in (resolutions or {}).items()}
    return store.merge(theirs, resolutions=settled, strategy=strategy, message=summary, author=author)
