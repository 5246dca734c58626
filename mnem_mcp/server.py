"""``build_server``: the tools and resources of ``mnem-mcp`` registered on an ``MCPServer``.

The tools are declared in ``tools``, each once, as a typed method of
``MemoryTools``: its name, docstring, typed parameters and return type are
the tool's name, description, input schema and result.  ``build_server``
registers each method as it is, through ``MCPServer.add_tool``.  Nothing
reads request internals, so every tool works the same through a client
session or through ``server.call_tool(name, arguments)`` with none.  The
resources are plain functions over a store (``resources``).

``MnemServer`` adds, with the SDK's public methods only, what ``add_tool``
leaves out: unknown arguments are refused (the schema says
``additionalProperties: false``) rather than silently dropped, each
result is answered in one encoding with the schema of its return type
published, and every failure is a coded error (``errors``), never the
SDK's own "Error executing tool" text.  The harness tools (``branch``,
``switch``, ``merge``) are registered only with ``tools="all"`` (ADR-0016).
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar, get_type_hints

from mcp.server import CacheHint
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer, ResourceSecurity
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError, UnexpectedToolError
from mcp.server.mcpserver.resources.templates import ResourceSecurityError
from mcp.types import CallToolResult, InputRequiredResult
from mcp.types import Tool as ListedTool
from pydantic import AnyUrl, ValidationError

import mnem_bridge

from . import identity, resources
from .answers import MemoryPastChecks, sent
from .binding import Binding, StoreBinding, locate_store, resolve_store_path
from .errors import (
    Redaction,
    coded_refusals,
    error_code,
    resource_error,
    scope_error,
    tool_error,
    unknown_resource,
    unknown_tool,
    usage_error,
)
from .models import result_schema
from .operations import (
    do_branch,
    do_commit_view,
    do_forget,
    do_history,
    do_merge,
    do_recall,
    do_recall_at,
    do_remember,
    do_remember_many,
    do_revert,
    do_switch,
    do_whats_new,
    do_when_did,
    do_why,
)
from .tools import TOOLS, WRITES, MemoryTools, ToolSpec

#: Upstream's public API lives in this module (its tests import ``server``): ``build_server``, the ``do_*``
#: operations (``operations``), ``error_code`` and ``resolve_store_path``.
__all__ = [
    "INSTRUCTIONS", "MnemServer", "ToolSet", "build_server", "do_branch", "do_commit_view", "do_forget", "do_history",
    "do_merge", "do_recall", "do_recall_at", "do_remember", "do_remember_many", "do_revert", "do_switch",
    "do_whats_new", "do_when_did", "do_why", "error_code", "resolve_store_path",
]

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

#: List results are fixed for the life of the process.
STATIC = CacheHint(ttl_ms=3_600_000, scope="public")

#: Node ids and commit names in resource URIs are not paths: '..' or 'c:' in one is not an attack.
#: (NUL is still refused: it cannot reach a command line.)
NOT_PATHS = ResourceSecurity(reject_path_traversal=False, reject_absolute_paths=False)


class MnemServer(MCPServer[dict[str, Any]]):
    """``MCPServer`` whose tools take only the arguments they name, answer in one encoding, and fail with codes.

    * ``call_tool`` refuses arguments a tool does not take, naming them
      (``usage: ...``), before the SDK's argument check, which would drop
      them silently; ``list_tools`` says so in every input schema
      (``additionalProperties: false``).
    * A tool added by ``add_memory_tool`` answers with ``answers.answer``
      (its value as compact JSON, encoded once) and publishes its return
      type's schema as its ``outputSchema`` (``models.result_schema``),
      which the SDK's own conversion would check on every call instead
      (tests/mcp/test_mcp_shapes.py holds every tool's real output to it).
      Over a session, a memory answer goes past the SDK's passes over a
      result (``answers.MemoryPastChecks``).
    * ``call_tool`` raises every failure as a ``ToolError`` whose text
      starts with its code (``errors``), mapped by its type: the SDK's
      ``ValidationError`` or the tool's own exception (the ``__cause__`` of
      what the SDK raises).  A direct caller catches it, as with any
      ``MCPServer`` (and as upstream's tests expect); over a session the
      SDK answers it as an ``isError`` result of the same text.
    """

    _taken: dict[str, list[str]] | None = None  # each tool's argument names, by tool name (None: not listed yet)
    #: How the tools reach their store, set by ``build_server``: an HTTP route mounted beside them
    #: (``http.serve(routes=...)``) reaches the same store by ``server.binding.binding_for_request()``.
    binding: Binding
    #: How failures are told: ``None`` tells the local user everything (stdio); ``http.app`` sets one for remote
    #: clients, which are never told the server's paths, URLs or rerun lines (``errors.Redaction``).
    redaction: Redaction | None = None
    #: Who writes are by when a request carries no token (``identity.default_author``), set by ``build_server``:
    #: pushes record it as their pusher then, as tools record it as their author.
    author: str = identity.AUTHOR
    #: Whether a push may bring only commits its pusher authored (``mnem-mcp --push-own-commits-only``).
    push_own_commits_only: bool = False
    #: Whether a forced push is refused, so no push rewrites a branch's history (``--deny-non-fast-forwards``).
    deny_non_fast_forwards: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._published: dict[str, dict[str, Any] | None] = {}  # each memory tool's outputSchema, by name
        self.middleware.extend([coded_refusals, MemoryPastChecks()])

    def add_memory_tool(self, method: Callable[..., Awaitable[Any]], spec: ToolSpec) -> None:
        """Add ``method`` as the tool ``spec`` describes, its value answered by ``answers.answer`` (``answers.sent``).

        The SDK reads the method's signature through ``functools.wraps``.  Left
        to itself it would also turn each value into text and structured
        content, checking it against the return type on every call: three
        encodings, most of a 10k-fact ``recall``.  With
        ``structured_output=False`` it passes on the ``CallToolResult`` that
        ``answer`` makes in one, and ``list_tools`` publishes the return type's
        schema.

        Args:
            method: A bound ``MemoryTools`` method.
            spec: Its name, title, description and hints.
        """

        @functools.wraps(method)
        async def answered(*args: Any, **kwargs: Any) -> CallToolResult:
            return sent(await method(*args, **kwargs))

        answered.__name__ = spec.name  # the SDK names the input schema "<name>Arguments"
        self._published[spec.name] = result_schema(get_type_hints(method)["return"])
        self.add_tool(answered, name=spec.name, title=spec.title, description=spec.description,
                      annotations=spec.annotations, structured_output=False)

    def add_tool(self, *args: Any, **kwargs: Any) -> None:
        """``MCPServer.add_tool``; the argument names are listed anew on the next call."""
        self._taken = None
        super().add_tool(*args, **kwargs)

    def remove_tool(self, name: str) -> None:
        """``MCPServer.remove_tool``; the argument names are listed anew on the next call."""
        self._taken = None
        super().remove_tool(name)

    async def list_tools(self) -> list[ListedTool]:
        """The SDK's listing, each input schema closed to unknown arguments, each memory tool's output schema."""
        listed = await super().list_tools()
        for listing in listed:
            listing.input_schema = {**listing.input_schema, "additionalProperties": False}
            if listing.name in self._published:
                listing.output_schema = self._published[listing.name]
        return listed

    async def _argument_names(self) -> dict[str, list[str]]:
        """Each tool's argument names, by tool name: listed once, not on every call (it builds every tool's model)."""
        self._taken = {listing.name: list(listing.input_schema["properties"]) for listing in await self.list_tools()}
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
        unknown = [key for key in arguments if key not in taken[name]]
        if unknown:  # refused as pydantic refuses an unknown key, so the text is usage_error's
            raise usage_error(name, ValidationError.from_exception_data(name, [
                {"type": "extra_forbidden", "loc": (key,), "input": arguments[key]} for key in unknown]), taken[name])
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:  # the tool (or the SDK converting its result) raised
            raise tool_error(exc.__cause__ or exc, name, self.redaction) from exc
        except ToolError as exc:  # the SDK refused the arguments
            if isinstance(exc.__cause__, ValidationError):
                raise usage_error(name, exc.__cause__, taken[name]) from exc
            raise tool_error(exc.__cause__ or exc, name, self.redaction) from exc

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[dict[str, Any], Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        """Read a resource; a URI that names none is ``not_found``, naming the ones there are (``errors``).

        Args:
            uri: The resource's URI.
            context: The request's context (``None``: a read with no session).

        Returns:
            The resource's contents.

        Raises:
            ResourceError: The URI names no resource, or reading it failed (``errors.resource_error``).
        """
        try:
            return await super().read_resource(uri, context)
        except ResourceNotFoundError as exc:
            if exc.__cause__ is not None and not isinstance(exc.__cause__, ResourceSecurityError):
                raise  # a resource that exists, whose read found nothing: already coded (``resource_error``)
            known = [str(r.uri) for r in await self.list_resources()]
            known += [t.uri_template for t in await self.list_resource_templates()]
            raise unknown_resource(str(uri), known) from exc

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
    store_per: str | None = None,
    max_stores: int | None = None,
    create: bool = False,
    push_own_commits_only: bool = False,
    deny_non_fast_forwards: bool = False,
) -> MnemServer:
    """The ``mnem-mcp`` server for one store, or for one store per token (``store_per``).

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
        store_per: Serve one store per value of this token claim (``mnem-mcp --store-per``): ``store_path``
            is then a template holding ``{tenant}`` (``tenants``), and ``token_verifier`` is required.
        max_stores: With ``store_per``: how many stores' ``mnem`` workers are kept (default
            ``tenants.DEFAULT_MAX_STORES``).
        create: With ``store_per``: create a PostgreSQL store on its first use (a folder is created anyway).
        push_own_commits_only: Over HTTP, refuse a push (``remote_sync``) that brings a commit its pusher (the
            token's subject, else ``author``) did not author.
        deny_non_fast_forwards: Over HTTP, refuse a forced push (``--force-with-lease``), so that no push
            rewrites a branch's history (git's ``receive.denyNonFastForwards``).

    Returns:
        The server, ready for ``run("stdio")``, an in-process ``Client``, or ``call_tool``.

    Raises:
        ValueError: ``store_per`` without a template holding ``{tenant}``, or without a token verifier.
    """
    serving: Binding
    if store_per is not None:
        from . import tenants  # only here: one store's server (stdio) starts without it

        if binding is not None or store_path is None or token_verifier is None:
            raise ValueError("store_per takes its stores from store_path, a template holding {tenant}, and the "
                             "tenant from each bearer token: give store_path and token_verifier, not binding")
        serving = tenants.StoreRouter(tenants.StoreTemplate.parse(str(store_path)), store_per,
                                      None if mnem is None else os.fspath(mnem), timeout, create=create,
                                      max_stores=max_stores or tenants.DEFAULT_MAX_STORES)
        token_verifier = tenants.TenantVerifier(token_verifier, store_per)
    elif binding is None:
        serving = StoreBinding(locate_store(store_path).path, None if mnem is None else os.fspath(mnem), timeout)
    else:
        serving = binding

    @asynccontextmanager
    async def lifespan(_: MCPServer[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            serving.close()  # the mnem workers end with the session, not at interpreter exit

    server = MnemServer(
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
        middleware=[resources.ResourceCacheHints()],
        lifespan=lifespan,
        auth=auth,
        token_verifier=token_verifier,
    )
    server.binding = serving
    server.author = identity.default_author(author)
    server.push_own_commits_only = push_own_commits_only
    server.deny_non_fast_forwards = deny_non_fast_forwards
    memory = MemoryTools(serving, server.author)
    for spec in TOOLS:
        if tools == "all" or not spec.harness:
            server.add_memory_tool(getattr(memory, spec.method.__name__), spec)
    _add_resources(server, serving)
    return server


def _add_resources(server: MnemServer, binding: Binding) -> None:
    """Register the four resources, each reading through a fresh store."""
    options: dict[str, Any] = {"mime_type": "application/json", "security": NOT_PATHS}

    async def read(uri: str, fn: Callable[Concatenate[mnem_bridge.Store, P], T],
                   *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await binding.call(fn, *args, **kwargs)
        except Exception as exc:
            raise resource_error(exc, uri, server.redaction) from exc

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
