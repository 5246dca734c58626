"""What each MCP tool does, as plain functions over an open bridge ``Store``.

Nothing here knows about MCP: every function takes a ``mnem_bridge.Store``
first, then the tool's arguments, and returns a JSON-ready dict shaped like
``models``.  That keeps the logic testable without a session and lets the
server register one function per tool (``revise`` is ``remember`` under a
second description).  Failures are the bridge's typed ``MnemError``s, raised
unchanged; the server turns them into tool errors.

Writes go through ``mnem_bridge.agents`` and are exactly one commit each:
nothing is ever left staged between calls (ADR-0016, "no staging over MCP").
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Final, Literal

from pydantic import Field

import mnem_bridge
from mnem_bridge import agents

from .models import (
    Blame,
    BranchCreated,
    Changes,
    CommitRef,
    Content,
    ContentResolution,
    Found,
    Head,
    History,
    MergeOutcome,
    NodeId,
    Note,
    Observation,
    OptionalNodeId,
    Recalled,
    RememberItem,
    Source,
    Step,
    Summary,
    ToolCall,
    Written,
    blame_json,
    changes_json,
    commit_json,
    memory_json,
    merge_json,
    node_json,
)

__all__ = [
    "UNSET",
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


class _Unset:
    """The type of ``UNSET``: an argument the caller did not send (distinct from JSON null)."""

    def __repr__(self) -> str:
        return "UNSET"


#: Default of an argument whose absence means something different from null (``when_did``'s ``equals``).
UNSET: Final = _Unset()


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
) -> Written:
    """Record (or revise) one fact with its provenance as one commit.

    Returns:
        ``{"commit": id}`` of the new commit.
    """
    commit = agents.remember(
        store, id, content, source=source, step=step, observation=observation, tool_call=tool_call, note=note,
        summary=summary,
    )
    return {"commit": commit}


def remember_many(
    store: mnem_bridge.Store,
    items: Annotated[
        list[RememberItem],
        Field(min_length=1, description="The facts, each {id, content} plus optional provenance fields."),
    ],
    summary: Summary = None,
) -> Written:
    """Record several facts as a single commit (all or nothing).

    Returns:
        ``{"commit": id}`` of the new commit.
    """
    return {"commit": agents.remember_many(store, [item.model_dump() for item in items], summary=summary)}


def forget(store: mnem_bridge.Store, id: NodeId, summary: Summary = None) -> Written:
    """Drop one fact from current memory as one commit; history keeps every past value.

    Returns:
        ``{"commit": id}`` of the new commit.
    """
    return {"commit": agents.forget(store, id, summary=summary)}


def recall(store: mnem_bridge.Store, id: OptionalNodeId = None) -> Recalled:
    """Read one fact, or the whole current memory.

    Returns:
        ``{"memory": {id: node}}``; asking for an id that is not remembered gives an empty map.
    """
    if id is None:
        return {"memory": memory_json(store.working_memory())}
    node = store.working_node(id)
    return {"memory": {} if node is None else {id: node_json(node)}}


def recall_at(store: mnem_bridge.Store, commit: CommitRef, id: OptionalNodeId = None) -> Recalled:
    """Read memory as it stood at a past commit, without moving anything.

    Returns:
        ``{"memory": {id: node}}`` at that commit, narrowed to ``id`` when given.
    """
    state = store.state_at(commit)
    if id is not None:
        state = {id: state[id]} if id in state else {}
    return {"memory": memory_json(state)}


def history(
    store: mnem_bridge.Store,
    limit: Annotated[int, Field(ge=1, le=1000, description="How many commits to return at most.")] = 20,
) -> History:
    """The most recent commits on the current branch, newest first.

    Returns:
        ``{"commits": [commit, ...]}``.
    """
    return {"commits": [commit_json(commit) for commit in store.log(limit=limit)]}


def why(
    store: mnem_bridge.Store,
    id: NodeId,
    at: Annotated[
        str | None, Field(description="Explain the value as of this commit or branch instead of the current one.")
    ] = None,
) -> Blame:
    """The commit that set a fact's current value, with the provenance recorded then.

    Returns:
        The blame: ``{"commit", "node", "time"}``.
    """
    return blame_json(store.blame(id, at=at))


def when_did(
    store: mnem_bridge.Store,
    id: NodeId,
    equals: Annotated[
        Any,
        Field(
            description="Find the first commit where the fact's content equals this JSON value "
            "(null means the content is JSON null). Omit it when using absent or present."
        ),
    ] = UNSET,
    absent: Annotated[bool, Field(description="Find the first commit where the fact is gone.")] = False,
    present: Annotated[bool, Field(description="Find the first commit where the fact exists.")] = False,
    good: Annotated[
        str | None,
        Field(
            description="A commit known to be before the change (default: the first commit of the current branch)."
        ),
    ] = None,
) -> Found:
    """Bisect the current branch for the first commit where a condition on one fact holds.

    Exactly one of ``equals`` / ``absent`` / ``present`` must be given.

    Returns:
        ``{"commit", "blame"}``: the first commit where it holds and the blame of
        the fact there (``null`` when the fact is absent there).

    Raises:
        mnem_bridge.UsageError: Not exactly one condition was given.
    """
    chosen = [name for name, given in (("equals", equals is not UNSET), ("absent", absent), ("present", present))
              if given]
    if len(chosen) != 1:
        got = " and ".join(chosen) if chosen else "none"
        raise mnem_bridge.UsageError(f"when_did needs exactly one of equals, absent or present (got {got})")
    condition: dict[str, Any] = {"equals": equals} if chosen == ["equals"] else {chosen[0]: True}
    commit, blame = store.bisect_explain(node=id, good=good, **condition)
    return {"commit": commit, "blame": None if blame is None else blame_json(blame)}


def whats_new(store: mnem_bridge.Store, commit: CommitRef) -> Changes:
    """What one commit did to each fact it touched, compared with its first parent.

    Returns:
        ``{"changed": {id: "added" | "modified" | "removed"}}``.
    """
    return {"changed": changes_json(store.changed_by(commit))}


def branch(
    store: mnem_bridge.Store,
    name: Annotated[str, Field(min_length=1, description="The new branch's name, e.g. 'hypothesis-churn'.")],
    start: Annotated[str | None, Field(description="Where it starts (default: the current commit).")] = None,
) -> BranchCreated:
    """Create a branch of memory without switching to it.

    Returns:
        ``{"branch": name}``.
    """
    store.new_branch(name, start=start)
    return {"branch": name}


def switch(
    store: mnem_bridge.Store,
    target: Annotated[str, Field(min_length=1, description="A branch name, or a commit to look at read-only.")],
) -> Head:
    """Move HEAD to a branch (or detach it at a commit); later reads and writes follow it.

    Returns:
        ``{"head": "ref: <branch>" | commit}``.
    """
    store.checkout(target)
    return {"head": store.head()}


def merge(
    store: mnem_bridge.Store,
    theirs: Annotated[str, Field(min_length=1, description="The branch (or commit) to merge into the current one.")],
    resolutions: Annotated[
        dict[str, Literal["ours", "theirs", "base", "delete"] | ContentResolution] | None,
        Field(
            description="How to settle conflicting facts, by id, after a merge reported conflicts: "
            "a side ('ours', 'theirs', 'base'), 'delete', or {\"content\": <new value>}."
        ),
    ] = None,
    strategy: Annotated[
        Literal["ours", "theirs"] | None,
        Field(description="Settle every conflict not in resolutions by taking this side."),
    ] = None,
    summary: Summary = None,
) -> MergeOutcome:
    """Merge another branch into the current one; conflicts write nothing and are reported.

    Returns:
        The merge result: ``{"status", "commit", "conflicts"}``.
    """
    settled = {node_id: mnem_bridge.MemoryNode(node_id, choice.content) if isinstance(choice, ContentResolution)
               else choice for node_id, choice in (resolutions or {}).items()}
    return merge_json(store.merge(theirs, resolutions=settled, strategy=strategy, message=summary))
