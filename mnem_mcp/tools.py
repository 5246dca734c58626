"""The MCP tools, each declared once: an ``async`` method of ``MemoryTools`` marked ``@tool``.

A tool is its method.  The method's name is the tool's name; its docstring
is the tool's description, written for the model (when to reach for it and
what comes back); its typed parameters are the tool's arguments (the
``Annotated`` types of ``models``, whose ``Field`` descriptions the model
reads too); its return type is the tool's result, whose schema the server
publishes as ``outputSchema`` (``models.result_schema``).  ``@tool`` adds
what a signature cannot say: a title and the behaviour hints.
``server.build_server`` registers the methods as they are; nothing else
repeats a tool's arguments.  ``revise`` is ``remember`` under a second
name, title and description.

Each body runs the tool's function of ``operations`` (what the tool does,
over an open store, also published as upstream's ``do_<tool>``) on a store
opened for the call (``StoreBinding.call``).  Failures are the bridge's
typed ``MnemError``s, raised unchanged; the server answers them as coded errors.
Writes go through ``mnem_bridge.agents`` (``merge`` through the store) and
are exactly one commit each: nothing is ever left staged between calls
(ADR-0016, "no staging over MCP").  None writes a reserved id (a LangGraph
checkpoint's node, ``mnem_bridge.reserved``): ``agents`` refuses one, and
``merge`` refuses a resolution naming one.  Every write records the caller as its
author (``identity.author``) and announces the resources it made stale.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations

import mnem_bridge

from . import identity, operations, resources
from .binding import Binding
from .models import (
    Absent,
    At,
    BranchCreated,
    BranchName,
    CommitRef,
    Content,
    Cursor,
    DryRun,
    Equals,
    EventTime,
    ExistingNodeId,
    Found,
    Good,
    Head,
    IncludeRoot,
    Items,
    Limit,
    Logged,
    NodeId,
    Note,
    Observation,
    OptionalNodeId,
    PageLimit,
    Prefix,
    Present,
    Recalled,
    Resolutions,
    RevertAuthor,
    RevertCommit,
    RevertObservation,
    RevertSource,
    RevertStep,
    Since,
    Source,
    Start,
    Step,
    Strategy,
    Summary,
    Target,
    Theirs,
    ToolCall,
    Until,
    ValidAt,
    Why,
    Written,
)

__all__ = ["TOOLS", "WRITES", "MemoryTools", "ToolSpec", "tool"]

logger = logging.getLogger(__name__)

#: Reads: no side effects, same answer until the next write.
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
#: Writes that add to memory and history; repeating one records another commit.
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
#: ``forget``: a write that takes a fact out of current memory.
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                              open_world_hint=False)
#: ``switch`` and ``merge``: writes that change nothing more when repeated.
IDEMPOTENT = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

#: What a write tool gets from the SDK to announce the resources it made stale.
Ctx = Context[dict[str, Any], Any]

M = TypeVar("M", bound=Callable[..., Awaitable[Any]])


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """How the model sees one tool, and the method that answers it (``@tool`` makes these).

    Attributes:
        name: The tool's name.
        title: A short human-readable name.
        description: What the model reads: the method's docstring as one paragraph.
        annotations: Behaviour hints for clients.
        method: The ``MemoryTools`` method that answers it.
        harness: Only registered with ``tools="all"`` (ADR-0016's harness tools).
    """

    name: str
    title: str
    description: str
    annotations: ToolAnnotations
    method: Callable[..., Awaitable[Any]]
    harness: bool = False


#: Every tool, in the order ``tools/list`` gives them; ``@tool`` adds each as its method is defined.
TOOLS: list[ToolSpec] = []


def tool(title: str, annotations: ToolAnnotations, *, harness: bool = False, name: str | None = None,
         description: str | None = None) -> Callable[[M], M]:
    """Mark a ``MemoryTools`` method as a tool, adding it to ``TOOLS``.

    Args:
        title: The tool's title.
        annotations: Its behaviour hints (``READ``, ``WRITE``, ...).
        harness: Only served with ``tools="all"``.
        name: Another tool answered by the same method (default: the method's name).
        description: That other tool's description (default: the method's docstring).

    Returns:
        A decorator that returns the method unchanged.
    """

    def mark(method: M) -> M:
        said = " ".join((description or method.__doc__ or "").split())  # one paragraph, as a model reads it
        TOOLS.append(ToolSpec(name or method.__name__, title, said, annotations, method, harness))
        return method

    return mark


class MemoryTools:
    """The tools over one store: each method marked ``@tool`` is one MCP tool (see the module's docstring).

    Args:
        binding: The store each call opens (per request, with ``tenants.StoreRouter``).
        author: The author of writes whose request carries no bearer token (``identity.default_author``).
    """

    def __init__(self, binding: Binding, author: str) -> None:
        self.binding = binding
        self.author = author

    @tool("Remember a fact", WRITE)
    async def remember(
        self,
        ctx: Ctx,
        id: NodeId,
        content: Content,
        source: Source = None,
        step: Step = None,
        observation: Observation = None,
        tool_call: ToolCall = None,
        note: Note = None,
        summary: Summary = None,
        event_time: EventTime = None,
    ) -> Written:
        """Remember one fact as its own commit, together with where it came from.

        Use it whenever you learn something worth keeping. Give each fact a stable id and reuse that id to update it
        later; fill in source (and step / observation when you have them) so `why` can trace the fact back. When the
        fact became true earlier than now (a change that happened in March, learnt today), give event_time.
        Returns {commit}.
        """
        written = await self.binding.call(
            operations.remember, id, content, source=source, step=step, observation=observation, tool_call=tool_call,
            note=note, summary=summary, author=identity.author(self.author), event_time=event_time)
        await _stale(ctx, [id])
        return written

    revise = tool("Revise a belief", WRITE, name="revise", description=(
        "Change a fact you already hold: records the new value under the same id as its own commit; the old "
        "value stays in history. Use it when new evidence updates or contradicts a belief, and give the source "
        "of that evidence, and event_time when the change happened before now. Same arguments and result as "
        "`remember`."))(remember)

    @tool("Remember several facts", WRITE)
    async def remember_many(self, ctx: Ctx, items: Items, summary: Summary = None) -> Written:
        """Remember several facts as one commit (all or nothing), e.g. everything one document told you.

        Each item is {id, content} plus optional source, step, observation, tool_call, note and event_time (when it
        became true, if before now). Returns {commit}.
        """
        written = await self.binding.call(operations.remember_many, [item.model_dump() for item in items],
                                          summary=summary, author=identity.author(self.author))
        await _stale(ctx, [item.id for item in items])
        return written

    @tool("Forget a fact", DESTRUCTIVE)
    async def forget(self, ctx: Ctx, id: ExistingNodeId, summary: Summary = None) -> Written:
        """Remove a fact from current memory as its own commit; history keeps it.

        `recall_at` and `why` at older commits still see it. Use it when a fact no longer holds and has no
        replacement. Fails with invalid_ref when nothing is remembered under that id. Returns {commit}.
        """
        written = await self.binding.call(operations.forget, id, summary=summary,
                                          author=identity.author(self.author))
        await _stale(ctx, [id])
        return written

    @tool("Recall memory", READ)
    async def recall(self, id: OptionalNodeId = None, prefix: Prefix = None, limit: PageLimit = None,
                     cursor: Cursor = None, valid_at: ValidAt = None) -> Recalled:
        """Read what you currently remember: one fact by id, or, without id, the whole memory.

        With id: the fact {id, content, content_kind, provenance, event_time}, or null when nothing is remembered
        under it. Without: {id: fact} for every fact, in id order; prefix keeps the ids that start with it (e.g.
        'customer-4821:'). For a large memory, ask for pages: with limit (or cursor) the answer is {memory: {id:
        fact}, next_cursor}; when next_cursor is not null, pass it as cursor for the next page. With valid_at (a
        time), the answer is what was true then by the facts' event_time, by all you know now (id or prefix, no
        pages); to see what you knew at a time instead, use `recall_at` with commit 'main@{TIME}'.
        """
        return await self.binding.call(operations.recall, id, prefix=prefix, limit=limit, cursor=cursor,
                                       valid_at=valid_at)

    @tool("Recall memory at a commit", READ)
    async def recall_at(self, commit: CommitRef, id: OptionalNodeId = None, prefix: Prefix = None,
                        limit: PageLimit = None, cursor: Cursor = None, valid_at: ValidAt = None) -> Recalled:
        """Read memory as it stood at a past commit, without changing anything.

        The commit is an id from `history`, `why` or `when_did`, or a branch; 'main@{2026-12-01}' is what you knew
        on that date (the branch's last commit made by then; ISO 8601, UTC unless it gives an offset, or Unix ms;
        '@{...}' alone for the current branch). Use it to see what you believed before a change. Same arguments and
        answers as `recall`, at that commit (valid_at: what was true then, as known at that commit).
        """
        return await self.binding.call(operations.recall_at, commit, id, prefix=prefix, limit=limit, cursor=cursor,
                                       valid_at=valid_at)

    @tool("Memory history", READ)
    async def history(self, limit: Limit = 20, since: Since = None, until: Until = None) -> list[Logged]:
        """List the latest commits of the current branch's history (merged branches included), newest first.

        Every write is one commit with a message, author and time. Use it to find commit ids for `recall_at` and
        `whats_new`; since / until keep the commits made in that time range. Returns the list [{id, parents,
        state, message, author, time}] (as {result: [...]} in structured output); a commit that someone other
        than its author pushed here also has pushed_by.
        """
        return await self.binding.call(operations.history, limit, since=since, until=until)

    @tool("Why do I believe this?", READ)
    async def why(self, id: ExistingNodeId, at: At = None) -> Why:
        """Explain a fact: which commit set its current value, from what provenance, and who made that commit.

        The provenance is the source, step, observation, tool_call and note recorded with it. Use it when a
        belief looks wrong or needs a citation. Returns {commit, node, time, author}, and pushed_by when someone
        other than the author pushed that commit here; fails with invalid_ref when the fact is not in memory.
        """
        return await self.binding.call(operations.why, id, at)

    @tool("When did this become true?", READ)
    async def when_did(self, id: ExistingNodeId, equals: Equals = None, absent: Absent = False,
                       present: Present = False, good: Good = None, include_root: IncludeRoot = False) -> Found:
        """Find the first commit where a fact took a value, disappeared or appeared.

        Give exactly one of equals (the value), absent: true or present: true. It bisects the current branch's
        first-parent line and assumes that once the condition held it kept holding. Use it to date when a wrong
        belief crept in. The search starts after `good` when given, else after the line's first commit (pass
        include_root: true to let that first commit be the answer). Returns {commit, blame}: blame is the fact as
        set at that commit with its provenance (null for absent). Fails with invalid_ref when the condition does
        not hold now, or already holds where the search starts.
        """
        return await self.binding.call(operations.when_did, id, equals=equals, absent=absent, present=present,
                                       good=good, include_root=include_root)

    @tool("What did a commit change?", READ)
    async def whats_new(self, commit: CommitRef) -> dict[str, mnem_bridge.ChangeKind]:
        """Show what one commit did: each fact it added, modified or removed, compared with the commit before.

        Returns {id: 'added' | 'modified' | 'removed'}.
        """
        return await self.binding.call(operations.whats_new, commit)

    @tool("Create a memory branch", WRITE, harness=True)
    async def branch(self, name: BranchName, start: Start = None) -> BranchCreated:
        """Create a branch of memory at the current commit (or at start) without switching to it.

        Use it to explore a hypothesis away from the main line; then `switch` to it. Fails with invalid_ref when
        the name is taken. Returns {branch}.
        """
        return await self.binding.call(operations.branch, name, start)

    @tool("Switch branch", IDEMPOTENT, harness=True)
    async def switch(self, ctx: Ctx, target: Target) -> Head:
        """Make a branch the current one, or look at a commit; every later read and write uses it.

        Looking at a commit is read-only: writes fail until you switch to a branch again. Returns {head}: 'ref:
        <branch>', or a commit id when detached.
        """
        head = await self.binding.call(operations.switch, target)
        await _stale(ctx)
        return head

    @tool("Merge a branch", IDEMPOTENT, harness=True)
    async def merge(self, ctx: Ctx, theirs: Theirs, resolutions: Resolutions = None, strategy: Strategy = None,
                    summary: Summary = None) -> mnem_bridge.MergeResult:
        """Merge another branch into the current one.

        Facts changed on one side only merge cleanly; facts both sides changed differently are conflicts: then
        nothing is written and the result lists each with its base / ours / theirs, so call again with resolutions
        or a strategy. Returns {status, commit, conflicts}.
        """
        outcome = await self.binding.call(operations.merge, theirs, resolutions=resolutions, strategy=strategy,
                                          summary=summary, author=identity.author(self.author))
        await _stale(ctx)
        return outcome


    @tool("Revert a source", DESTRUCTIVE, harness=True)
    async def revert(self, ctx: Ctx, source: RevertSource = None, step: RevertStep = None,
                     observation: RevertObservation = None, author: RevertAuthor = None, commit: RevertCommit = None,
                     dry_run: DryRun = False) -> mnem_bridge.Reverted:
        """Undo, as one commit, every fact whose value now came from one source, step, observation, author or commit.

        Use it when a source turns out wrong or hostile (a misread note, a poisoned document): each such fact
        gets back the value it had before (or is removed where it had none). Every argument given must hold, and
        at least one is needed. A fact something else changed since is not overwritten: it is listed in skipped.
        Call with dry_run: true first to see the change. Returns {commit, reverted: [{id, action, current,
        restored, undone}], skipped: [{id, current, changed_by, undone}]}; commit is null on a dry run. Fails
        with not_found when nothing matches, invalid_ref when nothing is left to undo.
        """
        done = await self.binding.call(operations.revert, source=source, step=step, observation=observation,
                                       author=author, commit=commit, dry_run=dry_run,
                                       by=identity.author(self.author))
        if done.commit is not None:
            await _stale(ctx, [fact.id for fact in done.reverted])
        return done

#: The tools that change memory or its branches: over HTTP with ``--auth jwt`` they need ``mnem:write``.
WRITES = frozenset(spec.name for spec in TOOLS if not spec.annotations.read_only_hint)


async def _stale(ctx: Ctx, node_ids: Iterable[str] = ()) -> None:
    """Announce what a write made stale (``resources.stale_after_write``) to ``subscriptions/listen`` clients."""
    for uri in resources.stale_after_write(node_ids):
        await ctx.notify_resource_updated(uri)
