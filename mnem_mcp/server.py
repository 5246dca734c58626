"""``build_server``: the tools and resources of ``mnem-mcp`` registered on an ``MCPServer``.

The logic lives in ``tools`` and ``resources`` as plain functions that take
a bridge ``Store`` first; this module only adapts each one into what the SDK
registers.  The adapter drops the ``store`` parameter from the signature the
SDK reads (so the input schema is the function's other parameters, with
their descriptions), opens the store for the call, runs the blocking
``mnem`` invocations on a worker thread, and turns any failure into an
error result whose text starts with its code (``errors``).  The SDK derives
``outputSchema`` from each function's return type.

The adapter passes a function only the arguments the client actually sent,
so a parameter's Python default decides what "not given" means.  That is how
``when_did`` tells an omitted ``equals`` from ``"equals": null``.

Descriptions are written for the model: when to reach for the tool and what
comes back.  The harness tools (``branch``, ``switch``, ``merge``) are
registered only with ``tools="all"`` (ADR-0016).
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp.server import CacheHint
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resources import ResourceSecurity
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field
from pydantic.config import JsonDict

import mnem_bridge

from . import resources, tools
from .binding import StoreBinding
from .errors import CodedToolErrors, resource_error, tool_error

__all__ = ["INSTRUCTIONS", "TOOLS", "ToolSet", "ToolSpec", "build_server"]

logger = logging.getLogger(__name__)

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
    """One MCP tool: the function that does the work and how the model sees it.

    Attributes:
        name: The tool's name.
        fn: A ``tools`` function (store first).
        title: A short human-readable name.
        description: What the model reads: when to use it and what it returns.
        annotations: Behaviour hints for clients.
        harness: Only registered with ``tools="all"``.
        writes: Changes memory, so the memory resources are announced as updated afterwards.
    """

    name: str
    fn: Callable[..., Any]
    title: str
    description: str
    annotations: ToolAnnotations
    harness: bool = False
    writes: bool = False


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "remember", tools.remember, "Remember a fact",
        "Remember one fact as its own commit, together with where it came from. Use it whenever you learn "
        "something worth keeping. Give each fact a stable id and reuse that id to update it later; fill in "
        "source (and step / observation when you have them) so `why` can trace the fact back. "
        "Returns {commit}.",
        WRITE, writes=True,
    ),
    ToolSpec(
        "revise", tools.remember, "Revise a belief",
        "Change a fact you already hold: records the new value under the same id as its own commit; the old "
        "value stays in history. Use it when new evidence updates or contradicts a belief, and give the source "
        "of that evidence. Same arguments and result as `remember`.",
        WRITE, writes=True,
    ),
    ToolSpec(
        "remember_many", tools.remember_many, "Remember several facts",
        "Remember several facts as one commit (all or nothing), e.g. everything one document told you. Each "
        "item is {id, content} plus optional source, step, observation, tool_call, note. Returns {commit}.",
        WRITE, writes=True,
    ),
    ToolSpec(
        "forget", tools.forget, "Forget a fact",
        "Remove a fact from current memory as its own commit; history keeps it (`recall_at` and `why` at "
        "older commits still see it). Use it when a fact no longer holds and has no replacement. Fails with "
        "invalid_ref when nothing is remembered under that id. Returns {commit}.",
        ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False),
        writes=True,
    ),
    ToolSpec(
        "recall", tools.recall, "Recall memory",
        "Read what you currently remember: one fact by id, or everything when id is omitted. Returns "
        "{memory: {id: {id, content, content_kind, provenance, event_time}}}; the map is empty when nothing "
        "is remembered under the id.",
        READ,
    ),
    ToolSpec(
        "recall_at", tools.recall_at, "Recall memory at a commit",
        "Read memory as it stood at a past commit (an id from `history`, `why` or `when_did`, or a branch), "
        "without changing anything. Use it to see what you believed before a change. Returns {memory} at "
        "that commit, narrowed to id when given.",
        READ,
    ),
    ToolSpec(
        "history", tools.history, "Memory history",
        "List the latest commits on the current branch, newest first; every write is one commit with a "
        "message, author and time. Use it to find commit ids for `recall_at` and `whats_new`. "
        "Returns {commits: [{id, parents, state, message, author, time}]}.",
        READ,
    ),
    ToolSpec(
        "why", tools.why, "Why do I believe this?",
        "Explain a fact: the commit that set its current value and the provenance recorded with it (source, "
        "step, observation, tool_call, note). Use it when a belief looks wrong or needs a citation. Returns "
        "{commit, node, time}; fails with invalid_ref when the fact is not in memory.",
        READ,
    ),
    ToolSpec(
        "when_did", tools.when_did, "When did this become true?",
        "Find the first commit where a fact took a value (equals), disappeared (absent) or appeared "
        "(present), by bisecting the current branch. Give exactly one of equals / absent / present. Use it to "
        "date when a wrong belief crept in. Returns {commit, blame}: blame is the fact as set at that commit "
        "with its provenance (null for absent). Fails with invalid_ref when the condition already holds at "
        "the start (pass an earlier `good`) or does not hold now.",
        READ,
    ),
    ToolSpec(
        "whats_new", tools.whats_new, "What did a commit change?",
        "Show what one commit did: each fact it added, modified or removed, compared with the commit before. "
        "Returns {changed: {id: 'added' | 'modified' | 'removed'}}.",
        READ,
    ),
    ToolSpec(
        "branch", tools.branch, "Create a memory branch",
        "Create a branch of memory at the current commit (or at start) without switching to it, to explore a "
        "hypothesis away from the main line; then `switch` to it. Returns {branch}.",
        WRITE, harness=True,
    ),
    ToolSpec(
        "switch", tools.switch, "Switch branch",
        "Make a branch the current one (or look at a commit, read-only); every later read and write uses it. "
        "Returns {head}: 'ref: <branch>', or a commit id when detached.",
        ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        harness=True, writes=True,
    ),
    ToolSpec(
        "merge", tools.merge, "Merge a branch",
        "Merge another branch into the current one. Facts changed on one side only merge cleanly; facts both "
        "sides changed differently are conflicts: then nothing is written and the result lists each with its "
        "base / ours / theirs, so call again with resolutions or a strategy. "
        "Returns {status, commit, conflicts}.",
        ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        harness=True, writes=True,
    ),
)


def build_server(
    store: str | os.PathLike[str],
    *,
    tools: ToolSet = "core",
    mnem: str | os.PathLike[str] | None = None,
    timeout: float = mnem_bridge.DEFAULT_TIMEOUT,
) -> MCPServer:
    """The ``mnem-mcp`` server for one store.

    Nothing is opened here: every tool call and resource read opens the store
    itself, so a server built over a missing or broken store still starts and
    answers each call with the typed error.  The ``mnem`` worker the calls
    share ends when the session does.

    Args:
        store: A path at or below the store's root.  It is the only path the
            server ever uses, and it is the operator's choice (this argument,
            ``mnem-mcp --store`` or ``$MNEM_STORE``), never the model's: no
            tool argument or resource URI names a file; ids, commits and
            branch names are data inside the store (tests/test_security.py).
        tools: ``"core"`` for the agent tools, ``"all"`` to add ``branch``, ``switch`` and ``merge``.
        mnem: The ``mnem`` binary (default: the bridge's lookup, ``$MNEM_BIN`` then PATH).
        timeout: Seconds one ``mnem`` invocation may take before its process group is killed.

    Returns:
        The server, ready for ``run("stdio")`` or an in-process ``Client``.
    """
    binding = StoreBinding(Path(store).absolute(), None if mnem is None else os.fspath(mnem), timeout)

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            binding.close()  # the mnem worker ends with the session, not at interpreter exit

    server = MCPServer(
        "mnem",
        title="Mnemosyne memory",
        version=version("mnemosyne-toolkit"),
        instructions=INSTRUCTIONS,
        cache_hints={
            "resources/read": resources.LIVE,
            "resources/list": STATIC,
            "resources/templates/list": STATIC,
            "tools/list": STATIC,
        },
        middleware=[CodedToolErrors(), resources.ResourceCacheHints()],
        lifespan=lifespan,
    )
    for spec in TOOLS:
        if tools == "all" or not spec.harness:
            server.add_tool(
                _tool_function(spec, binding), name=spec.name, title=spec.title, description=spec.description,
                annotations=spec.annotations,
            )
    _add_resources(server, binding)
    return server


def _tool_function(spec: ToolSpec, binding: StoreBinding) -> Callable[..., Any]:
    """An async MCP tool function for ``spec``: the store parameter gone, a ``Context`` added."""
    signature = inspect.signature(spec.fn, eval_str=True)
    parameters = [_schema_parameter(p) for p in list(signature.parameters.values())[1:]]

    async def call(ctx: Context, **arguments: Any) -> Any:
        sent = (ctx.request_context.params or {}).get("arguments") or {}
        given = {name: value for name, value in arguments.items() if name in sent}
        try:
            result = await anyio.to_thread.run_sync(partial(_with_store, binding, spec.fn, given))
        except Exception as exc:  # every failure becomes a coded error result; nothing escapes to the SDK
            return tool_error(exc, spec.name)
        if spec.writes:
            for uri in resources.stale_after_write(_written_ids(given)):
                await ctx.notify_resource_updated(uri)
        return result

    context = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    # The declared result model gives outputSchema; the function may also return an error CallToolResult.
    return _present(call, spec.name, [*parameters, context], Annotated[CallToolResult, signature.return_annotation])


def _schema_parameter(parameter: inspect.Parameter) -> inspect.Parameter:
    """A tool parameter as the SDK should see it: keyword-only; an ``UNSET`` default becomes optional with no default.

    The schema cannot express "absent" as a default, and advertising ``null``
    would tell the model that sending nothing means sending null.
    """
    parameter = parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY)
    if parameter.default is not tools.UNSET:
        return parameter
    unadvertised = Field(json_schema_extra=_drop_default)
    return parameter.replace(default=None, annotation=Annotated[parameter.annotation, unadvertised])


def _drop_default(schema: JsonDict) -> None:
    """Take ``default`` out of a property's JSON schema (pydantic's ``json_schema_extra`` hook)."""
    schema.pop("default", None)


def _add_resources(server: MCPServer, binding: StoreBinding) -> None:
    """Register the four resources, each reading through a fresh store."""
    for uri, fn, title, description in (
        (resources.MEMORY_URI, resources.memory, "Current memory",
         "Everything currently remembered, as {id: node} JSON."),
        (resources.NODE_URI, resources.node, "One remembered fact",
         "One fact of current memory as JSON (id, content, content_kind, provenance, event_time)."),
        (resources.LOG_URI, resources.log, "Recent commits",
         f"The latest {resources.LOG_LIMIT} commits, newest first, as JSON."),
        (resources.COMMIT_URI, resources.commit, "One commit",
         'A commit as JSON: {"changed": {id: kind}, "state": {id: node}}. Immutable when named by full id.'),
    ):
        server.resource(uri, name=fn.__name__, title=title, description=description, mime_type="application/json",
                        security=NOT_PATHS)(_resource_function(fn, uri, binding))


def _resource_function(fn: Callable[..., Any], uri: str, binding: StoreBinding) -> Callable[..., Any]:
    """A resource function for ``fn``: the store parameter gone, failures raised as the SDK's resource errors."""
    signature = inspect.signature(fn, eval_str=True)
    parameters = list(signature.parameters.values())[1:]

    def read(**arguments: str) -> Any:
        try:
            return _with_store(binding, fn, arguments)
        except Exception as exc:
            raise resource_error(exc, uri.format(**arguments)) from exc

    return _present(read, fn.__name__, parameters, signature.return_annotation)


def _present(
    wrapper: Callable[..., Any], name: str, parameters: list[inspect.Parameter], returns: Any
) -> Callable[..., Any]:
    """Make ``wrapper`` look, to the SDK's introspection, like a function with this name and signature."""
    wrapper.__name__ = name
    # inspect.signature() honours a function's __signature__, but typeshed does not declare that attribute on
    # function objects, so mypy cannot see it.
    wrapper.__signature__ = inspect.Signature(parameters, return_annotation=returns)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": returns}
    return wrapper


def _with_store(binding: StoreBinding, fn: Callable[..., Any], arguments: dict[str, Any]) -> Any:
    """Open the store, run ``fn`` on it with ``arguments``, close it (runs on a worker thread)."""
    with binding.open() as store:
        return fn(store, **arguments)


def _written_ids(arguments: dict[str, Any]) -> list[str]:
    """The node ids a write tool was asked to touch (``id``, or each of ``items``)."""
    ids = [arguments["id"]] if "id" in arguments else []
    return ids + [item.id for item in arguments.get("items", ())]
