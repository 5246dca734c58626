"""The JSON shapes the tools take and return, as types the MCP SDK can publish.

Results are ``TypedDict``s that mirror the bridge's ``to_dict()`` shapes key
for key and in the same order (docs/cli-json.md).  The ``*_json`` functions
build them from the bridge's typed results (the dicts ``to_dict()`` would
return, so a type checker holds each shape against the bridge's field types),
and the SDK derives each tool's ``outputSchema`` from the return annotation
and sends the same dict as ``structuredContent``.  Every tool result is a
JSON object (never a bare list or ``null``), so clients always get structured
content rather than the SDK's ``{"result": ...}`` wrapping.

Argument types carry their descriptions here, once, because several tools
share them (``remember``, ``revise`` and each ``remember_many`` item take the
same provenance fields).  The descriptions are written for the model reading
the tool list.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

import mnem_bridge

__all__ = [
    "At",
    "Blame",
    "BranchCreated",
    "BranchName",
    "Changes",
    "Commit",
    "CommitRef",
    "Condition",
    "ConditionValue",
    "Conflict",
    "Content",
    "ContentResolution",
    "ExistingNodeId",
    "Found",
    "Good",
    "Head",
    "History",
    "Items",
    "Limit",
    "MemoryNode",
    "MergeOutcome",
    "NodeId",
    "Note",
    "Observation",
    "OptionalNodeId",
    "Provenance",
    "Recalled",
    "RememberItem",
    "Resolutions",
    "Source",
    "Start",
    "Step",
    "Strategy",
    "Summary",
    "Target",
    "Theirs",
    "ToolCall",
    "Written",
    "blame_json",
    "changes_json",
    "commit_json",
    "memory_json",
    "merge_json",
    "node_json",
]

logger = logging.getLogger(__name__)

ChangeKind = Literal["added", "modified", "removed"]


# --- result shapes (mirrors of the bridge's to_dict()) -----------------------------------------


class Provenance(TypedDict):
    """Where a belief came from; any field may be null."""

    agent_step: str | None
    observation: str | None
    tool_call: str | None
    source: str | None
    note: str | None


class MemoryNode(TypedDict):
    """One remembered fact: its id, JSON content, kind, provenance and event time (ms)."""

    id: str
    content: Any
    content_kind: Literal["note", "claim"]
    provenance: Provenance
    event_time: int | None


class Commit(TypedDict):
    """One commit: every write to memory is one of these."""

    id: str
    parents: list[str]
    state: str
    message: str
    author: str
    time: int


class Blame(TypedDict):
    """The commit that set a node's current value, the node as set, and when (ms)."""

    commit: str
    node: MemoryNode
    time: int


class Conflict(TypedDict):
    """A node both sides of a merge changed differently; a missing side is null."""

    id: str
    kind: Literal["edit/edit", "delete/edit", "edit/delete", "add/add"]
    base: MemoryNode | None
    ours: MemoryNode | None
    theirs: MemoryNode | None


class Written(TypedDict):
    """A write tool's result: the one commit it recorded."""

    commit: str


class Recalled(TypedDict):
    """Memory as a map from node id to node (one entry or none when an id was asked for)."""

    memory: dict[str, MemoryNode]


class History(TypedDict):
    """Commits, newest first."""

    commits: list[Commit]


class Found(TypedDict):
    """The first commit where the condition holds, and the blame of the fact there (null when it is absent)."""

    commit: str
    blame: Blame | None


class Changes(TypedDict):
    """What one commit did to each node it touched."""

    changed: dict[str, ChangeKind]


class MergeOutcome(TypedDict):
    """A merge's outcome; with status 'conflicts' nothing was written and commit is null."""

    status: Literal["up-to-date", "fast-forwarded", "merged", "conflicts"]
    commit: str | None
    conflicts: list[Conflict]


class BranchCreated(TypedDict):
    """The branch that was created."""

    branch: str


class Head(TypedDict):
    """Where HEAD points now: 'ref: <branch>', or a bare commit id when detached."""

    head: str


# --- the bridge's results in those shapes (what their to_dict() returns) ----------------------


def _provenance_json(provenance: mnem_bridge.Provenance) -> Provenance:
    return {
        "agent_step": provenance.agent_step,
        "observation": provenance.observation,
        "tool_call": provenance.tool_call,
        "source": provenance.source,
        "note": provenance.note,
    }


def node_json(node: mnem_bridge.MemoryNode) -> MemoryNode:
    """A bridge node in its JSON shape, as ``node.to_dict()``."""
    return {
        "id": node.id,
        "content": node.content,
        "content_kind": node.content_kind,
        "provenance": _provenance_json(node.provenance),
        "event_time": node.event_time,
    }


def _optional_node_json(node: mnem_bridge.MemoryNode | None) -> MemoryNode | None:
    return None if node is None else node_json(node)


def memory_json(memory: Mapping[str, mnem_bridge.MemoryNode]) -> dict[str, MemoryNode]:
    """A bridge memory map (``working_memory``, ``state_at``) in its JSON shape, ``{id: node}``."""
    return {node_id: node_json(node) for node_id, node in memory.items()}


def commit_json(commit: mnem_bridge.Commit) -> Commit:
    """A bridge commit in its JSON shape, as ``commit.to_dict()``."""
    return {
        "id": commit.id,
        "parents": list(commit.parents),
        "state": commit.state,
        "message": commit.message,
        "author": commit.author,
        "time": commit.time,
    }


def blame_json(blame: mnem_bridge.Blame) -> Blame:
    """A bridge blame in its JSON shape, as ``blame.to_dict()``."""
    return {"commit": blame.commit, "node": node_json(blame.node), "time": blame.time}


def _conflict_json(conflict: mnem_bridge.Conflict) -> Conflict:
    return {
        "id": conflict.id,
        "kind": conflict.kind,
        "base": _optional_node_json(conflict.base),
        "ours": _optional_node_json(conflict.ours),
        "theirs": _optional_node_json(conflict.theirs),
    }


def merge_json(result: mnem_bridge.MergeResult) -> MergeOutcome:
    """A bridge merge result in its JSON shape, as ``result.to_dict()``."""
    return {
        "status": result.status,
        "commit": result.commit,
        "conflicts": [_conflict_json(conflict) for conflict in result.conflicts],
    }


def changes_json(changed: Mapping[str, str]) -> dict[str, ChangeKind]:
    """``Store.changed_by``'s map as a new dict typed with its three change kinds.

    The bridge types the kinds as ``str``; the binary only ever prints
    ``added``, ``modified`` or ``removed`` there (docs/cli-json.md, ``show REV
    --stat``), and the SDK validates a tool result against ``Changes``.
    """
    return cast(dict[str, ChangeKind], dict(changed))


# --- argument types ------------------------------------------------------------------------------

NodeId = Annotated[
    str,
    Field(
        min_length=1,
        description="The fact's stable id, e.g. 'customer-4821' or 'user:prefs:language'. "
        "The same id always names the same fact; writing it again revises it.",
    ),
]
ExistingNodeId = Annotated[
    str,
    Field(min_length=1, description="The id of a fact you remembered, e.g. 'customer-4821'."),
]
Condition = Annotated[
    Literal["equals", "absent", "present"],
    Field(
        description="What to look for: 'equals' (the fact's content equals value), 'absent' (the fact is gone) "
        "or 'present' (the fact exists, whatever its content)."
    ),
]
ConditionValue = Annotated[
    Any,
    Field(
        description="For condition 'equals': the JSON value the content must equal, compared exactly "
        "(1 is not 1.0, 'Pro' is not 'pro'); null or omitted means JSON null. Leave it out for 'absent' and "
        "'present'."
    ),
]
Content = Annotated[
    Any,
    Field(description="The fact itself: any JSON value (a sentence, a number, an object...)."),
]
Source = Annotated[
    str | None,
    Field(description="Where the fact came from: a document, ticket, URL or message id, e.g. 'ticket-4821'."),
]
Step = Annotated[str | None, Field(description="The agent step or turn that produced it, e.g. 'step-31'.")]
Observation = Annotated[
    str | None,
    Field(description="The observation it was read from, e.g. 'billing-note-8842'."),
]
ToolCall = Annotated[str | None, Field(description="The tool call that produced it, if any.")]
Note = Annotated[str | None, Field(description="Free-form remark about the fact or how sure you are.")]
Summary = Annotated[
    str | None,
    Field(description="The commit message for this change; a default one is written when omitted."),
]
CommitRef = Annotated[
    str,
    Field(
        min_length=1,
        description="A commit id (or a unique prefix of at least 4 hex characters) or a branch name.",
    ),
]


OptionalNodeId = Annotated[
    str | None,
    Field(min_length=1, description="The fact to read; omit it to read the whole memory."),
]


class RememberItem(BaseModel):
    """One fact: id and content plus optional provenance. Unknown keys are refused, so a typo is not silently lost."""

    model_config = ConfigDict(extra="forbid")

    id: NodeId
    content: Content
    source: Source = None
    step: Step = None
    observation: Observation = None
    tool_call: ToolCall = None
    note: Note = None


class ContentResolution(BaseModel):
    """A merge resolution that settles a conflict with new content (recorded without provenance)."""

    model_config = ConfigDict(extra="forbid")

    content: Content


Items = Annotated[
    list[RememberItem],
    Field(min_length=1, description="The facts, each {id, content} plus optional provenance fields."),
]
Limit = Annotated[int, Field(ge=1, le=1000, description="How many commits to return at most.")]
At = Annotated[
    str | None,
    Field(description="Explain the value as of this commit or branch instead of the current one."),
]
Good = Annotated[
    str | None,
    Field(
        description="A commit known to be before the change; the search starts after it, and fails when the "
        "condition already holds there. Omit it to search the whole line from its first commit."
    ),
]
BranchName = Annotated[str, Field(min_length=1, description="The new branch's name, e.g. 'hypothesis-churn'.")]
Start = Annotated[str | None, Field(description="Where it starts (default: the current commit).")]
Target = Annotated[str, Field(min_length=1, description="A branch name, or a commit to look at.")]
Theirs = Annotated[str, Field(min_length=1, description="The branch (or commit) to merge into the current one.")]
Resolutions = Annotated[
    dict[str, Literal["ours", "theirs", "base", "delete"] | ContentResolution] | None,
    Field(
        description="How to settle conflicting facts, by id, after a merge reported conflicts: "
        "a side ('ours', 'theirs', 'base'), 'delete', or {\"content\": <new value>}."
    ),
]
Strategy = Annotated[
    Literal["ours", "theirs"] | None,
    Field(description="Settle every conflict not in resolutions by taking this side."),
]
