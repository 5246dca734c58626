"""The JSON shapes the tools take and return, as types the MCP SDK can publish.

Result shapes are defined once, in the bridge's models (``mnem_bridge.Blame``,
``MemoryNode``, ``Commit``, ``MergeResult``...), whose field order is the
``to_dict()`` order of docs/cli-json.md.  The tools return those objects,
wrapped where a tool answers more than one thing in the small envelopes
below, and ``result_schema`` derives each tool's ``outputSchema`` from the
return type, so the schema a client sees and the dict it receives come from
the same declaration (tests/mcp/test_mcp_shapes.py holds pydantic's dump of
each bridge model to its ``to_dict()``, and every tool's real output to its
published schema).  A list (``history``'s) is published and answered
wrapped as ``{"result": [...]}``, as the SDK wraps one, since structured
content is an object.

Argument types carry their descriptions here, once, because several tools
share them (``remember``, ``revise`` and each ``remember_many`` item take the
same provenance fields).  The descriptions are written for the model reading
the tool list.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, NotRequired, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, with_config
from pydantic.json_schema import GenerateJsonSchema
from typing_extensions import TypedDict

import mnem_bridge

__all__ = [
    "DEFAULT_PAGE",
    "WHOLE",
    "WIRE_SHAPES",
    "Absent",
    "At",
    "BranchCreated",
    "BranchName",
    "CommitRef",
    "Content",
    "ContentResolution",
    "Cursor",
    "DryRun",
    "Equals",
    "EventTime",
    "ExistingNodeId",
    "Found",
    "Good",
    "Head",
    "IncludeRoot",
    "Items",
    "Limit",
    "Logged",
    "NodeId",
    "Note",
    "Observation",
    "OptionalNodeId",
    "Page",
    "PageLimit",
    "Prefix",
    "Present",
    "Recalled",
    "RememberItem",
    "Resolutions",
    "RevertAuthor",
    "RevertCommit",
    "RevertObservation",
    "RevertSource",
    "RevertStep",
    "Since",
    "Source",
    "Start",
    "Step",
    "Strategy",
    "Summary",
    "Target",
    "Theirs",
    "ToolCall",
    "Until",
    "ValidAt",
    "Written",
    "logged",
    "result_schema",
]

logger = logging.getLogger(__name__)


# --- result envelopes (every value in them is a bridge model) ----------------------------------


class Written(TypedDict):
    """A write tool's result: the one commit it recorded."""

    commit: str


class Page(TypedDict):
    """A page of memory as a map from node id to node, and where the next page starts (null on the last)."""

    memory: dict[str, mnem_bridge.MemoryNode]
    next_cursor: str | None


#: What ``recall`` / ``recall_at`` answer: one node (or null), the memory ``{id: node}`` (as the binary printed it
#: when whole, ``WholeMemory``), or a page of it.
Recalled = (mnem_bridge.MemoryNode | None | dict[str, mnem_bridge.MemoryNode] | mnem_bridge.WholeMemory
            | mnem_bridge.MemoryPage)


class Why(TypedDict):
    """The blame (ADR-0016's ``{commit, node, time}``) and who made that commit: ``author`` is an extension.

    ``pushed_by`` (an extension too) is there only when someone other than the author pushed that commit into
    this store: the author is what the commit says, the pusher who the server knew the sender to be.
    """

    commit: str
    node: mnem_bridge.MemoryNode
    time: int
    author: str | None
    pushed_by: NotRequired[str]


@with_config(title="Commit")
class Logged(TypedDict):
    """One commit: parents (first parent first), the state it records, message, author, time (ms).

    As history lists it: pushed_by (an extension) is there only when someone other than its author pushed it
    into this store.
    """

    id: str
    parents: list[str]
    state: str
    message: str
    author: str
    time: int
    pushed_by: NotRequired[str]


def logged(commit: mnem_bridge.Commit, pusher: mnem_bridge.Pusher | None) -> Logged:
    """A commit as ``history`` lists it (see ``Logged``)."""
    entry: Logged = {"id": commit.id, "parents": list(commit.parents), "state": commit.state,
                     "message": commit.message, "author": commit.author, "time": commit.time}
    if pusher is not None:
        entry["pushed_by"] = pusher.name
    return entry


class Found(TypedDict):
    """The first commit where the condition holds, and the blame of the fact there (null when it is absent)."""

    commit: str
    blame: mnem_bridge.Blame | None


class BranchCreated(TypedDict):
    """The branch that was created."""

    branch: str


class Head(TypedDict):
    """Where HEAD points now: 'ref: <branch>', or a bare commit id when detached."""

    head: str


class _ResultSchema(GenerateJsonSchema):
    """Pydantic's generator, with every key of a result required.

    A result is serialized with every field, defaults and nulls included
    (the ``to_dict()`` shapes), so a client may rely on each key being
    there; pydantic would otherwise leave fields that have defaults
    (``MemoryNode.content_kind``, ``Provenance``'s five) optional.  Only a
    key an envelope declares ``NotRequired`` (an extension that is there
    when it says something: ``pushed_by``) is optional.
    """

    def field_is_required(self, field: Any, total: bool) -> bool:
        return bool(field.get("required", True)) if field["type"] == "typed-dict-field" else True


#: Results passed on as the binary printed them, and the shape their JSON has.
WIRE_SHAPES: dict[Any, Any] = {mnem_bridge.MemoryPage: Page}


def result_schema(shape: Any) -> dict[str, Any] | None:
    """The ``outputSchema`` a tool returning ``shape`` publishes: its serialized form, every key required.

    ``recall``'s answer is one of several shapes, null among them (the
    ADR's "one node, or the whole current memory"), which no object schema
    describes, so it publishes none; a list is published, and answered,
    wrapped as ``{"result": [...]}``, as the SDK wraps a list.

    The schema is flat: definitions are written in place and ``X | None``
    is ``"type": [X, "null"]`` rather than ``$ref`` and ``anyOf``.  It
    accepts exactly the same documents, and a client that checks each
    result against it (the SDK's ``Client`` does) checks a 10k-fact answer
    in less than half the time.

    Args:
        shape: A tool's return type: a bridge model, an envelope above, a list, or a key of ``WIRE_SHAPES``.

    Returns:
        The JSON schema (none of the shapes is recursive, so its root is the object itself, as MCP requires),
        or ``None`` for ``Recalled``.
    """
    if shape == Recalled:
        return None
    schema = TypeAdapter(WIRE_SHAPES.get(shape, shape)).json_schema(
        mode="serialization", schema_generator=_ResultSchema)
    definitions = schema.pop("$defs", {})
    flat: dict[str, Any] = _flat(schema, definitions)
    if get_origin(shape) is list:  # answered as {"result": [...]}: structured output is an object
        return {"type": "object", "properties": {"result": flat}, "required": ["result"]}
    return flat


def _flat(node: Any, definitions: dict[str, Any]) -> Any:
    """``node`` with every ``$ref`` replaced by its definition and every nullable ``anyOf`` as a type list."""
    if isinstance(node, list):
        return [_flat(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        rest = {key: value for key, value in node.items() if key != "$ref"}
        return _flat({**definitions[node["$ref"].rsplit("/", 1)[-1]], **rest}, definitions)
    options = node.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = _flat(next(option for option in options if option != {"type": "null"}), definitions)
        if isinstance(other.get("type"), str) and "const" not in other:
            rest = {key: value for key, value in node.items() if key != "anyOf"}
            merged = {**other, **rest, "type": [other["type"], "null"]}
            if "enum" in merged:
                merged["enum"] = [*merged["enum"], None]
            return _flat(merged, definitions)
    return {key: _flat(value, definitions) for key, value in node.items()}


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
Equals = Annotated[
    Any,
    Field(
        description="Find the first commit where the fact's content equals this JSON value, compared exactly "
        "(1 is not 1.0, 'Pro' is not 'pro'). Give exactly one of equals, absent, present."
    ),
]
Absent = Annotated[bool, Field(description="Find the first commit where the fact is gone (true).")]
Present = Annotated[bool, Field(description="Find the first commit where the fact exists, whatever its content.")]
IncludeRoot = Annotated[
    bool,
    Field(
        description="Without good: let the line's first commit be the answer when the condition already holds "
        "there (by default the search starts after it, so that case fails with invalid_ref)."
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
EventTime = Annotated[
    int | str | None,
    Field(
        description="When the fact became true in the world, if not now: ISO 8601 ('2026-03-01', "
        "'2026-03-01T09:30:00+01:00'; UTC unless it gives an offset) or Unix milliseconds. E.g. a plan that "
        "changed in March, learnt today. `recall` with valid_at reads by it."
    ),
]
ValidAt = Annotated[
    int | str | None,
    Field(
        description="Answer what was true at this time by each fact's event_time (or, without one, when it was "
        "recorded), instead of the memory as it stands: ISO 8601 (UTC unless it gives an offset) or Unix ms. "
        "A fact forgotten later still counts if it held then."
    ),
]
Since = Annotated[
    int | str | None,
    Field(description="Only commits made at or after this time: ISO 8601 (UTC unless it gives an offset) or Unix ms."),
]
Until = Annotated[
    int | str | None,
    Field(description="Only commits made at or before this time: ISO 8601 (UTC unless it gives an offset) or "
          "Unix ms."),
]
Summary = Annotated[
    str | None,
    Field(description="The commit message for this change; a default one is written when omitted."),
]
CommitRef = Annotated[
    str,
    Field(
        min_length=1,
        description="A commit id (or a unique prefix of at least 4 hex characters) or a branch name; "
        "'main@{2026-12-01}' (or '@{2026-12-01T09:30}' for the current branch) is the branch's last commit "
        "made by that time (ISO 8601, UTC unless it gives an offset, or Unix ms).",
    ),
]


OptionalNodeId = Annotated[
    str | None,
    Field(min_length=1, description="The fact to read; omit it to read the whole memory."),
]
Prefix = Annotated[
    str | None,
    Field(min_length=1, description="Only facts whose id starts with this, e.g. 'customer-4821:' or 'user:prefs:'."),
]
#: Facts per page when ``limit`` is left out: about 10-20k tokens of typical facts, which a model can read.
DEFAULT_PAGE = 100
PageLimit = Annotated[
    int | None,
    Field(ge=1, le=10_000, description="Read a page of at most this many facts instead of the whole memory "
          f"(with cursor alone, pages hold {DEFAULT_PAGE})."),
]
#: A page size above any memory: ``recall(prefix=...)`` without ``limit`` reads every fact under the prefix.
WHOLE = 2**62
Cursor = Annotated[
    str | None,
    Field(min_length=1, description="The next_cursor of the page before, to read the page after it."),
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
    event_time: EventTime = None


class ContentResolution(BaseModel):
    """A merge resolution that settles a conflict with new content (recorded without provenance)."""

    model_config = ConfigDict(extra="forbid")

    content: Content


Items = Annotated[
    list[RememberItem],
    Field(min_length=1, description="The facts, each {id, content} plus optional provenance fields and "
          "event_time."),
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
RevertSource = Annotated[
    str | None,
    Field(description="Undo the facts whose current value has this source in its provenance, e.g. "
          "'billing-note-8842'."),
]
RevertStep = Annotated[str | None, Field(description="Undo the facts whose current value came from this step.")]
RevertObservation = Annotated[
    str | None, Field(description="Undo the facts whose current value came from this observation."),
]
RevertAuthor = Annotated[
    str | None, Field(description="Undo the facts whose current value this author's commits wrote."),
]
RevertCommit = Annotated[
    str | None,
    Field(description="Undo the facts whose current value this commit wrote (an id, a unique prefix of at least 4 "
          "hex characters, or a branch name)."),
]
DryRun = Annotated[bool, Field(description="Only answer what would be restored, removed and skipped; write nothing.")]
Resolutions = Annotated[
    dict[str, mnem_bridge.models.MergeSide | ContentResolution] | None,
    Field(
        description="How to settle conflicting facts, by id, after a merge reported conflicts: "
        "a side ('ours', 'theirs', 'base'), 'delete', or {\"content\": <new value>}."
    ),
]
Strategy = Annotated[
    mnem_bridge.models.MergeStrategy | None,
    Field(description="Settle every conflict not in resolutions by taking this side."),
]
