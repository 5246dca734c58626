"""What each MCP tool does, as plain functions over an open bridge ``Store``.

Nothing here knows about MCP: every function takes a ``mnem_bridge.Store``
first, then the tool's arguments, and returns the bridge's typed result
(``why`` a ``mnem_bridge.Blame``, ``merge`` a ``MergeResult``) or one of
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
from typing import Final

import orjson

import mnem_bridge
from mnem_bridge import agents

from .models import (
    DEFAULT_PAGE,
    At,
    BranchCreated,
    BranchName,
    Changes,
    CommitRef,
    Condition,
    ConditionValue,
    Content,
    ContentResolution,
    Cursor,
    ExistingNodeId,
    Found,
    Good,
    Head,
    History,
    Items,
    Limit,
    NodeId,
    Note,
    Observation,
    OptionalNodeId,
    PageLimit,
    Prefix,
    Resolutions,
    Source,
    Start,
    Step,
    Strategy,
    Summary,
    Target,
    Theirs,
    ToolCall,
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
    items: Items,
    summary: Summary = None,
    *,
    author: str = AUTHOR,
) -> Written:
    """Record several facts as a single commit (all or nothing).

    Returns:
        ``{"commit": id}`` of the new commit.
    """
    items_json = [item.model_dump() for item in items]
    return {"commit": agents.remember_many(store, items_json, summary=summary, author=author)}


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
    limit: PageLimit = DEFAULT_PAGE,
    cursor: Cursor = None,
) -> mnem_bridge.MemoryPage:
    """Read one fact, or current memory a page at a time.

    Returns:
        The page ``{"memory": {id: node}, "next_cursor"}``; asking for an id
        that is not remembered gives an empty map.
    """
    return _page(store, None, id, prefix, limit, cursor)


def recall_at(
    store: mnem_bridge.Store,
    commit: CommitRef,
    id: OptionalNodeId = None,
    prefix: Prefix = None,
    limit: PageLimit = DEFAULT_PAGE,
    cursor: Cursor = None,
) -> mnem_bridge.MemoryPage:
    """Read memory as it stood at a past commit, a page at a time, without moving anything.

    Returns:
        The page at that commit, narrowed to ``id`` when given.
    """
    return _page(store, commit, id, prefix, limit, cursor)


def _page(
    store: mnem_bridge.Store, at: str | None, id: str | None, prefix: str | None, limit: int, cursor: str | None,
) -> mnem_bridge.MemoryPage:
    """One fact as a page of one (or none), or a page of memory (``mnem show --limit``)."""
    if id is None:
        return store.memory_page(limit=limit, cursor=cursor, prefixes=None if prefix is None else [prefix], at=at)
    if prefix is not None or cursor is not None:
        raise mnem_bridge.UsageError("recall: give id for one fact, or prefix / cursor for a page, not both")
    node = store.working_node(id, at=at)
    document = {"memory": {} if node is None else {id: node.to_dict()}, "next_cursor": None}
    return mnem_bridge.MemoryPage(orjson.dumps(document), document)


def history(
    store: mnem_bridge.Store,
    limit: Limit = 20,
) -> History:
    """The most recent commits on the current branch, newest first.

    Returns:
        ``{"commits": [commit, ...]}``.
    """
    return {"commits": store.log(limit=limit)}


def why(
    store: mnem_bridge.Store,
    id: ExistingNodeId,
    at: At = None,
) -> mnem_bridge.Blame:
    """The commit that set a fact's current value, with the provenance recorded then.

    Returns:
        The blame: ``{"commit", "node", "time"}``.
    """
    return store.blame(id, at=at)


def when_did(
    store: mnem_bridge.Store,
    id: ExistingNodeId,
    condition: Condition,
    value: ConditionValue = None,
    good: Good = None,
) -> Found:
    """Bisect the current branch's first-parent line for the first commit where a condition on one fact holds.

    With no ``good`` the first commit of the line is a candidate too: when
    the condition already holds there, it is the answer (the engine's
    ``mnem bisect --include-root``), since a caller has no earlier commit to
    offer.

    Returns:
        ``{"commit", "blame"}``: the first commit where it holds and the blame of
        the fact there (``null`` when the fact is absent there).

    Raises:
        mnem_bridge.UsageError: A ``value`` was given with ``absent`` or ``present``.
    """
    root = good is None
    if condition == "equals":
        commit, blame = store.bisect_explain(id, equals=value, good=good, include_root=root)
    elif value is not None:
        raise mnem_bridge.UsageError(f"when_did: value goes with condition 'equals' only, not {condition!r}")
    else:
        commit, blame = store.bisect_explain(
            id, absent=condition == "absent", present=condition == "present", good=good, include_root=root
        )
    return {"commit": commit, "blame": blame}


def whats_new(store: mnem_bridge.Store, commit: CommitRef) -> Changes:
    """What one commit did to each fact it touched, compared with its first parent.

    Returns:
        ``{"changed": {id: "added" | "modified" | "removed"}}``.
    """
    return {"changed": store.changed_by(commit)}


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
