"""The JSON shapes the tools take and return, as types the MCP SDK can publish.

Result shapes are defined once, in the bridge's models (``mnem_bridge.Blame``,
``MemoryNode``, ``Commit``, ``MergeResult``...), whose field order is the
``to_dict()`` order of docs/cli-json.md.  The tools return those objects,
wrapped where a tool answers more than one thing in the small envelopes
below, and ``result_schema`` derives each tool's ``outputSchema`` from the
return type, so the schema a client sees and the dict it receives come from
the same declaration (tests/mcp/test_mcp_shapes.py holds pydantic's dump of
each bridge model to its ``to_dict()``, and every tool's real output to its
published schema).  Every tool result is a JSON object (never a bare list or
``null``), so clients always get structured content rather than the SDK's
``{"result": ...}`` wrapping.

Argument types carry their descriptions here, once, because several tools
share them (``remember``, ``revise`` and each ``remember_many`` item take the
same provenance fields).  The descriptions are written for the model reading
the tool list.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.utilities.func_metadata import StrictJsonSchema
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from typing_extensions import TypedDict

import mnem_bridge

__all__ = [
    "At",
    "BranchCreated",
    "BranchName",
    "Changes",
    "CommitRef",
    "Condition",
    "ConditionValue",
    "Content",
    "ContentResolution",
    "ExistingNodeId",
    "Found",
    "Good",
    "Head",
    "History",
    "Items",
    "Limit",
    "NodeId",
    "Note",
    "Observation",
    "OptionalNodeId",
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
    "result_schema",
]

logger = logging.getLogger(__name__)


# --- result envelopes (every value in them is a bridge model) ----------------------------------


class Written(TypedDict):
    """A write tool's result: the one commit it recorded."""

    commit: str


class Recalled(TypedDict):
    """Memory as a map from node id to node (one entry or none when an id was asked for)."""

    memory: dict[str, mnem_bridge.MemoryNode]


class History(TypedDict):
    """Commits, newest first."""

    commits: list[mnem_bridge.Commit]


class Found(TypedDict):
    """The first commit where the condition holds, and the blame of the fact there (null when it is absent)."""

    commit: str
    blame: mnem_bridge.Blame | None


class Changes(TypedDict):
    """What one commit did to each node it touched."""

    changed: dict[str, mnem_bridge.ChangeKind]


class BranchCreated(TypedDict):
    """The branch that was created."""

    branch: str


class Head(TypedDict):
    """Where HEAD points now: 'ref: <branch>', or a bare commit id when detached."""

    head: str


class _ResultSchema(StrictJsonSchema):
    """The SDK's strict generator, with every key of a result required.

    A result is serialized with every field, defaults and nulls included
    (the ``to_dict()`` shapes), so a client may rely on each key being
    there; pydantic would otherwise leave fields that have defaults
    (``MemoryNode.content_kind``, ``Provenance``'s five) optional.
    """

    def field_is_required(self, field: Any, total: bool) -> bool:
        return True


def result_schema(shape: Any) -> dict[str, Any]:
    """The ``outputSchema`` a tool returning ``shape`` publishes: its serialized form, every key required.

    Args:
        shape: A tool's return type: a bridge model or an envelope above.

    Returns:
        The JSON schema (none of the shapes is recursive, so its root is the object itself, as MCP requires).
    """
    return TypeAdapter(shape).json_schema(mode="serialization", schema_generator=_ResultSchema)


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
