"""``build_server``: the tools and resources of ``mnem-mcp`` registered on an ``MCPServer``.

The logic lives in ``tools`` and ``resources`` as plain functions that take
a bridge ``Store`` first.  Here each tool is a plain typed function, a
closure over the server's ``StoreBinding`` that opens the store on a worker
thread and calls its ``tools`` function; its parameters (with their
descriptions, from ``models``) are the tool's input schema, and its return
type gives the exact ``outputSchema``.  Nothing reads request internals,
so every tool works the same through a client session or through
``server.call_tool(name, arguments)`` with none.

Each input schema has ``additionalProperties: false``: an unknown argument
(``sources`` for ``source``) is refused rather than silently dropped.
Failures are answered by ``MnemServer.call_tool`` as coded error results,
mapped by exception type (``errors``); the SDK's own "Error executing tool"
text never reaches a client.

Descriptions are written for the model: when to reach for the tool and what
comes back.  The harness tools (``branch``, ``switch``, ``merge``) are
registered only with ``tools="all"`` (ADR-0016).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar, get_type_hints

from mcp.server import CacheHint
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.resources import ResourceSecurity
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import ValidationError, create_model

import mnem_bridge

from . import identity, resources, tools
from .answers import answer
from .binding import StoreBinding, locate_store
from .errors import resource_error, scope_error, tool_error, unknown_tool, usage_error
from .models import (
    Absent,
    At,
    BranchCreated,
    BranchName,
    CommitRef,
    Content,
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
    result_schema,
    wrapped,
)

__all__ = ["INSTRUCTIONS", "TOOLS", "MnemServer", "ToolSet", "ToolSpec", "build_server"]

logger = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

ToolSet = Literal["core", "all"]

INSTRUCTIONS = """\
This server is your long-term memory, under version control: every fact you record is a commit \
with where it came from, so a wrong belief can be traced back to the observation that caused it.
- Record what you learn with `remember` (a stable id per fact, plus source / step / observation); \
use `revise` when new evidence changes a fact, `forget` when it no longer holds.
- Read with `recall` (or the mnem://memory resource); look back with `history`, `recall_at`, `whats_new`.
- When a belief looks wrong, ask `why` (who set it, from what) and `when_did` (the first commit \
where it took that value).
Every write is one commit; nothing is ever half-written."""

#: Reads: no side effects, same answer until the next write.
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
#: Writes that add to memory and history; repeating one records another commit.
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)

#: List results are fixed for the life of the process.
STATIC = CacheHint(ttl_ms=3_600_000, scope="public")

#: Node ids and commit names in resource URIs are not paths: '..' or 'c:' in one is not an attack.
#: (NUL is still refused: it cannot reach a command line.)
NOT_PATHS = ResourceSecurity(reject_path_traversal=False, reject_absolute_paths=False)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """How the model sees one MCP tool.

    Attributes:
        name: The tool's name (also the name of its function in ``build_server``).
        title: A short human-readable name.
        description: What the model reads: when to use it and what it returns.
        annotations: Behaviour hints for clients.
        harness: Only registered with ``tools="all"``.
    """

    name: str
    title: str
    description: str
    annotations: ToolAnnotations
    harness: bool = False


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "remember", "Remember a fact",
        "Remember one fact as its own commit, together with where it came from. Use it whenever you learn "
        "something worth keeping. Give each fact a stable id and reuse that id to update it later; fill in "
        "source (and step / observation when you have them) so `why` can trace the fact back. "
        "Returns {commit}.",
        WRITE,
    ),
    ToolSpec(
        "revise", "Revise a belief",
        "Change a fact you already hold: records the new value under the same id as its own commit; the old "
        "value stays in history. Use it when new evidence updates or contradicts a belief, and give the source "
        "of that evidence. Same arguments and result as `remember`.",
        WRITE,
    ),
    ToolSpec(
        "remember_many", "Remember several facts",
        "Remember several facts as one commit (all or nothing), e.g. everything one document told you. Each "
        "item is {id, content} plus optional source, step, observation, tool_call, note. Returns {commit}.",
        WRITE,
    ),
    ToolSpec(
        "forget", "Forget a fact",
        "Remove a fact from current memory as its own commit; history keeps it (`recall_at` and `why` at "
        "older commits still see it). Use it when a fact no longer holds and has no replacement. Fails with "
        "invalid_ref when nothing is remembered under that id. Returns {commit}.",
        ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False),
    ),
    ToolSpec(
        "recall", "Recall memory",
        "Read what you currently remember: one fact by id, or, without id, the whole memory. With id: the fact "
        "{id, content, content_kind, provenance, event_time}, or null when nothing is remembered under it. "
        "Without: {id: fact} for every fact, in id order; prefix keeps the ids that start with it (e.g. "
        "'customer-4821:'). For a large memory, ask for pages: with limit (or cursor) the answer is {memory: "
        "{id: fact}, next_cursor}; when next_cursor is not null, pass it as cursor for the next page.",
        READ,
    ),
    ToolSpec(
        "recall_at", "Recall memory at a commit",
        "Read memory as it stood at a past commit (an id from `history`, `why` or `when_did`, or a branch), "
        "without changing anything. Use it to see what you believed before a change. Same arguments and answers "
        "as `recall`, at that commit.",
        READ,
    ),
    ToolSpec(
        "history", "Memory history",
        "List the latest commits of the current branch's history (merged branches included), newest first; every "
        "write is one commit with a message, author and time. Use it to find commit ids for `recall_at` and "
        "`whats_new`. "
        "Returns the list [{id, parents, state, message, author, time}] (as {result: [...]} in structured output).",
        READ,
    ),
    ToolSpec(
        "why", "Why do I believe this?",
        "Explain a fact: the commit that set its current value and the provenance recorded with it (source, "
        "step, observation, tool_call, note) and who made that commit. Use it when a belief looks wrong or needs a "
        "citation. Returns {commit, node, time, author}; fails with invalid_ref when the fact is not in memory.",
        READ,
    ),
    ToolSpec(
        "when_did", "When did this become true?",
        "Find the first commit where a fact took a value (equals: the value), disappeared (absent: true) or "
        "appeared (present: true); give exactly one of the three. It bisects the current branch's first-parent "
        "line and assumes that once the condition held it kept holding. Use it to date when a wrong belief "
        "crept in. The search starts after `good` when given, else after the line's first commit (pass "
        "include_root: true to let that first commit be the answer). Returns {commit, blame}: blame is the fact "
        "as set at that commit with its provenance (null for absent). Fails with invalid_ref when the condition "
        "does not hold now, or already holds where the search starts.",
        READ,
    ),
    ToolSpec(
        "whats_new", "What did a commit change?",
        "Show what one commit did: each fact it added, modified or removed, compared with the commit before. "
        "Returns {id: 'added' | 'modified' | 'removed'}.",
        READ,
    ),
    ToolSpec(
        "branch", "Create a memory branch",
        "Create a branch of memory at the current commit (or at start) without switching to it, to explore a "
        "hypothesis away from the main line; then `switch` to it. Fails with invalid_ref when the name is taken. "
        "Returns {branch}.",
        WRITE, harness=True,
    ),
    ToolSpec(
        "switch", "Switch branch",
        "Make a branch the current one, or look at a commit (read-only: writes fail until you switch to a "
        "branch again); every later read and write uses it. "
        "Returns {head}: 'ref: <branch>', or a commit id when detached.",
        ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        harness=True,
    ),
    ToolSpec(
        "merge", "Merge a branch",
        "Merge another branch into the current one. Facts changed on one side only merge cleanly; facts both "
        "sides changed differently are conflicts: then nothing is written and the result lists each with its "
        "base / ours / theirs, so call again with resolutions or a strategy. "
        "Returns {status, commit, conflicts}.",
        ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        harness=True,
    ),
)

#: The tools that change memory or its branches: over HTTP with ``--auth jwt`` they need ``mnem:write``.
WRITES = frozenset(spec.name for spec in TOOLS if not spec.annotations.read_only_hint)


class MnemServer(MCPServer[dict[str, Any]]):
    """``MCPServer`` whose ``call_tool`` raises every failure as a ``ToolError`` whose text starts with its code.

    The SDK raises ``ToolError`` for arguments that break the input schema
    and for unknown tools, and ``UnexpectedToolError`` around anything a
    tool raised, each with a fixed "Error executing tool" text.  Here each
    failure is mapped by its type (the ``ValidationError`` or the tool's own
    exception, the SDK's ``__cause__``) to a ``ToolError`` reading
    ``usage: ...``, the bridge error's code, or ``error: ...``: a direct
    ``call_tool`` caller catches it, as with any ``MCPServer`` (and as
    upstream's tests expect), and over a session the SDK answers it as an
    ``isError`` result of the same text.
    """

    _taken: dict[str, list[str]] | None = None  # each tool's argument names, by tool name (None: not listed yet)

    def add_tool(self, *args: Any, **kwargs: Any) -> None:
        """``MCPServer.add_tool``; the argument names are listed anew on the next call."""
        self._taken = None
        super().add_tool(*args, **kwargs)

    def remove_tool(self, name: str) -> None:
        """``MCPServer.remove_tool``; the argument names are listed anew on the next call."""
        self._taken = None
        super().remove_tool(name)

    async def _argument_names(self) -> dict[str, list[str]]:
        """Each tool's argument names, by tool name: listed once, not on every call (it builds every tool's model)."""
        self._taken = {tool.name: list(tool.input_schema["properties"]) for tool in await self.list_tools()}
        return self._taken

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[dict[str, Any], Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Call a tool; a failure raises ``ToolError`` with text that starts with its code (``errors``).

        Args:
            name: The tool.
            arguments: Its arguments, as a client sends them.
            context: The request's context (``None``: a call with no session).

        Returns:
            The tool's result.

        Raises:
            ToolError: The tool is unknown, the token lacks the scope, the
                arguments break the schema, or the tool failed.
        """
        taken = self._taken if self._taken is not None else await self._argument_names()
        if name not in taken:
            raise unknown_tool(name, taken)
        refusal = identity.missing_write_scope(name) if name in WRITES else None
        if refusal is not None:
            raise scope_error(refusal)
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:  # the tool (or the SDK converting its result) raised
            raise tool_error(exc.__cause__ or exc, name) from exc
        except ToolError as exc:  # the SDK refused the arguments
            if isinstance(exc.__cause__, ValidationError):
                raise usage_error(name, exc.__cause__, taken[name]) from exc
            raise tool_error(exc.__cause__ or exc, name) from exc

    async def run_stdio_async(self) -> None:
        """Serve over standard input and output, awaited on the event loop where they allow it (``stdio``)."""
        from .stdio import serve

        await serve(self)


def build_server(
    store_path: str | os.PathLike[str] | mnem_bridge.StoreUrl | None = None,
    *,
    tools: ToolSet = "core",
    mnem: str | os.PathLike[str] | None = None,
    timeout: float = mnem_bridge.DEFAULT_TIMEOUT,
    binding: StoreBinding | None = None,
    auth: AuthSettings | None = None,
    token_verifier: TokenVerifier | None = None,
    author: str | None = None,
) -> MnemServer:
    """The ``mnem-mcp`` server for one store.

    Nothing is opened here: every tool call and resource read opens the store
    itself, so a server built over a missing or broken store still starts and
    answers each call with the typed error.  The ``mnem`` worker the calls
    share ends when the session does.

    Args:
        store_path: The store's root (or a PostgreSQL store's URL); ``None``
            (upstream's default) resolves as ``mnem-mcp`` does: ``$MNEM_STORE``,
            then the per-user default store.  It is the only path the server
            ever uses, and it is the operator's choice (this argument,
            ``mnem-mcp --store`` or ``$MNEM_STORE``), never the model's: no
            tool argument or resource URI names a file; ids, commits and
            branch names are data inside the store (tests/test_security.py).
        tools: ``"core"`` for the agent tools, ``"all"`` to add ``branch``, ``switch`` and ``merge``.
        mnem: The ``mnem`` binary (default: the bridge's lookup, ``$MNEM_BIN`` then PATH).
        timeout: Seconds one ``mnem`` invocation may take before its process group is killed.
        binding: The binding to serve through, already started (``mnem-mcp``
            starts its worker while the SDK loads); ``store_path``, ``mnem`` and
            ``timeout`` then come from it.
        auth: The resource-server settings for HTTP with ``--auth jwt`` (``auth.auth_settings``).
        token_verifier: What checks each bearer token (``auth.JwtVerifier``); given with ``auth``.
        author: The commit author of writes that carry no bearer token (``None``: ``$MNEM_AUTHOR``, else
            ``"agent"``); a token's subject always takes its place.

    Returns:
        The server, ready for ``run("stdio")``, an in-process ``Client``, or ``call_tool``.
    """
    if binding is None:
        binding = StoreBinding(locate_store(store_path).path, None if mnem is None else os.fspath(mnem), timeout)

    @asynccontextmanager
    async def lifespan(_: MCPServer[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            binding.close()  # the mnem worker ends with the session, not at interpreter exit

    functions = _tool_functions(binding, identity.default_author(author))
    server = MnemServer(
        "mnem",
        title="Mnemosyne memory",
        version=version("mnemosyne-toolkit"),
        instructions=INSTRUCTIONS,
        tools=[_strict_tool(functions[spec.name], spec) for spec in TOOLS if tools == "all" or not spec.harness],
        cache_hints={
            "resources/read": resources.LIVE,
            "resources/list": STATIC,
            "resources/templates/list": STATIC,
            "tools/list": STATIC,
        },
        middleware=[resources.ResourceCacheHints()],
        lifespan=lifespan,
        auth=auth,
        token_verifier=token_verifier,
    )
    _add_resources(server, binding)
    return server


def _strict_tool(fn: Callable[..., Awaitable[Any]], spec: ToolSpec) -> Tool:
    """The SDK's ``Tool`` for ``fn``: arguments that refuse unknown keys, output published from the bridge's models.

    ``MCPServer`` builds each tool's argument model from the function's
    signature with pydantic's default of ignoring extra keys; this derives
    the same model with ``extra="forbid"``, so the schema says
    ``additionalProperties: false`` and validation refuses what it says.
    The output side is the return type itself (a bridge model, an envelope
    of them, or a page of memory, ``models``): ``models.result_schema``
    publishes its schema, and ``answers.answer`` turns each result into the
    ``CallToolResult`` the SDK sends as it is.
    """
    tool = Tool.from_function(fn, name=spec.name, title=spec.title, description=spec.description,
                              annotations=spec.annotations, structured_output=False)
    loose = tool.fn_metadata.arg_model
    strict = create_model(f"{spec.name}Arguments", __base__=loose, __cls_kwargs__={"extra": "forbid"})
    shape = get_type_hints(fn)["return"]
    metadata = tool.fn_metadata.model_copy(  # a schema without a model: published, not re-checked per call
        update={"arg_model": strict, "output_model": None, "output_schema": result_schema(shape)})
    wrap = wrapped(shape)

    async def answered(*args: Any, **kwargs: Any) -> CallToolResult:
        return answer(await fn(*args, **kwargs), wrap=wrap)

    return tool.model_copy(update={"fn": answered, "fn_metadata": metadata,
                                   "parameters": strict.model_json_schema(by_alias=True)})


def _tool_functions(binding: StoreBinding, author: str) -> dict[str, Callable[..., Any]]:
    """Every tool as a plain typed function over ``binding``, by tool name (``revise`` shares ``remember``'s).

    Writes record ``author`` unless the request carries a bearer token (``identity.author``).
    """

    async def run(fn: Callable[Concatenate[mnem_bridge.Store, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await binding.call(fn, *args, **kwargs)

    async def stale(ctx: Context[dict[str, Any], Any], node_ids: Iterable[str] = ()) -> None:
        for uri in resources.stale_after_write(node_ids):
            await ctx.notify_resource_updated(uri)

    async def remember(
        ctx: Context[dict[str, Any], Any],
        id: NodeId,
        content: Content,
        source: Source = None,
        step: Step = None,
        observation: Observation = None,
        tool_call: ToolCall = None,
        note: Note = None,
        summary: Summary = None,
    ) -> Written:
        written = await run(tools.remember, id, content, source=source, step=step, observation=observation,
                            tool_call=tool_call, note=note, summary=summary, author=identity.author(author))
        await stale(ctx, [id])
        return written

    async def remember_many(ctx: Context[dict[str, Any], Any], items: Items, summary: Summary = None) -> Written:
        written = await run(tools.remember_many, items, summary=summary, author=identity.author(author))
        await stale(ctx, [item.id for item in items])
        return written

    async def forget(ctx: Context[dict[str, Any], Any], id: ExistingNodeId, summary: Summary = None) -> Written:
        written = await run(tools.forget, id, summary=summary, author=identity.author(author))
        await stale(ctx, [id])
        return written

    async def recall(id: OptionalNodeId = None, prefix: Prefix = None, limit: PageLimit = None,
                     cursor: Cursor = None) -> Recalled:
        return await run(tools.recall, id, prefix, limit, cursor)

    async def recall_at(commit: CommitRef, id: OptionalNodeId = None, prefix: Prefix = None,
                        limit: PageLimit = None, cursor: Cursor = None) -> Recalled:
        return await run(tools.recall_at, commit, id, prefix, limit, cursor)

    async def history(limit: Limit = 20) -> list[mnem_bridge.Commit]:
        return await run(tools.history, limit)

    async def why(id: ExistingNodeId, at: At = None) -> Why:
        return await run(tools.why, id, at)

    async def when_did(id: ExistingNodeId, equals: Equals = None, absent: Absent = False, present: Present = False,
                       good: Good = None, include_root: IncludeRoot = False) -> Found:
        return await run(tools.when_did, id, equals, absent, present, good, include_root)

    async def whats_new(commit: CommitRef) -> dict[str, mnem_bridge.ChangeKind]:
        return await run(tools.whats_new, commit)

    async def branch(name: BranchName, start: Start = None) -> BranchCreated:
        return await run(tools.branch, name, start)

    async def switch(ctx: Context[dict[str, Any], Any], target: Target) -> Head:
        head = await run(tools.switch, target)
        await stale(ctx)
        return head

    async def merge(
        ctx: Context[dict[str, Any], Any],
        theirs: Theirs,
        resolutions: Resolutions = None,
        strategy: Strategy = None,
        summary: Summary = None,
    ) -> mnem_bridge.MergeResult:
        outcome = await run(tools.merge, theirs, resolutions, strategy, summary, author=identity.author(author))
        await stale(ctx)
        return outcome

    return {
        "remember": remember, "revise": remember, "remember_many": remember_many, "forget": forget,
        "recall": recall, "recall_at": recall_at, "history": history, "why": why, "when_did": when_did,
        "whats_new": whats_new, "branch": branch, "switch": switch, "merge": merge,
    }


def _add_resources(server: MCPServer[dict[str, Any]], binding: StoreBinding) -> None:
    """Register the four resources, each reading through a fresh store."""
    options: dict[str, Any] = {"mime_type": "application/json", "security": NOT_PATHS}

    async def read(uri: str, fn: Callable[Concatenate[mnem_bridge.Store, P], T],
                   *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await binding.call(fn, *args, **kwargs)
        except Exception as exc:
            raise resource_error(exc, uri) from exc

    @server.resource(resources.MEMORY_URI, name="memory", title="Current memory",
                     description="Everything currently remembered, as {id: node} JSON.", **options)
    async def memory() -> dict[str, Any]:
        return await read(resources.MEMORY_URI, resources.memory)

    @server.resource(resources.NODE_URI, name="node", title="One remembered fact",
                     description="One fact of current memory as JSON (id, content, content_kind, provenance, "
                     "event_time), or null when nothing is remembered under the id. Percent-encode the id as a URI "
                     "path segment: 'a/b' is mnem://memory/a%2Fb.",
                     **options)
    async def node(node_id: str) -> dict[str, Any] | None:
        return await read(resources.node_uri(node_id), resources.node, node_id)

    @server.resource(resources.LOG_URI, name="log", title="Recent commits",
                     description=f"The latest {resources.LOG_LIMIT} commits, newest first, as JSON.", **options)
    async def log() -> list[dict[str, Any]]:
        return await read(resources.LOG_URI, resources.log)

    @server.resource(resources.COMMIT_URI, name="commit", title="One commit",
                     description='A commit as JSON: {"changed": {id: kind}, "state": {id: node}}. '
                     "Immutable when named by full id.", **options)
    async def commit(id: str) -> dict[str, Any]:
        return await read(resources.COMMIT_URI.format(id=id), resources.commit, id)
