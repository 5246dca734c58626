"""Fixtures for the official MCP conformance suite, added to a real ``mnem-mcp`` by ``conformance_server.py``.

Many of the suite's server scenarios call a fixture of its reference
server by name: a tool that answers an image, a resource at
``test://static-text``, a prompt with arguments, a completion handler.  None
of them belongs to a memory server, so they live here, in the tests, and
only the server ``tests/mcp/test_mcp_conformance.py`` starts has them; each
answers exactly what its scenario's description asks for.
The memory tools and resources are served beside them unchanged, so the
scenarios that do not need a fixture still check mnem-mcp's own surface.

Sampling and elicitation are asked of the client the handshake era's way
(a request on the session) by the 2025-11-25 fixtures, and through
``input_required`` results by the 2026-07-28 (SEP-2322) ones.
``MCPServer`` serves neither ``logging/setLevel`` nor
``resources/subscribe``, which 2026-07-28 removed; ``HandshakeEraMethods``
answers them for handshake-era sessions, through the SDK's public server
middleware.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any, Final, get_args

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    AudioContent,
    CallToolResult,
    ClientCapabilities,
    Completion,
    CompletionArgument,
    CompletionContext,
    CreateMessageRequest,
    CreateMessageRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    InputRequests,
    InputRequiredResult,
    InputResponse,
    InputResponses,
    ListRootsRequest,
    ListRootsResult,
    LoggingLevel,
    MissingRequiredClientCapabilityErrorData,
    PromptReference,
    ResourceTemplateReference,
    SamplingCapability,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    UnsubscribeRequestParams,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

__all__ = ["add_fixtures"]

#: A 1x1 PNG, the smallest image a scenario accepts.
PNG: Final = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
#: A WAV header with no samples: audio of length zero, still a valid file.
WAV: Final = (b"RIFF" + (36).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
              + (1).to_bytes(2, "little") + (1).to_bytes(2, "little") + (8000).to_bytes(4, "little")
              + (8000).to_bytes(4, "little") + (1).to_bytes(2, "little") + (8).to_bytes(2, "little")
              + b"data" + (0).to_bytes(4, "little"))
#: The pause between a fixture's notifications (the scenarios ask for about 50 ms).
PAUSE: Final = 0.05
#: MCP's log severities, least severe first (the order ``LoggingLevel`` lists them in).
SEVERITIES: Final[tuple[LoggingLevel, ...]] = get_args(LoggingLevel)
#: The fixture resource a handshake-era client may subscribe to; it never changes, so no update is owed.
WATCHED: Final = "test://watched-resource"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _image() -> ImageContent:
    return ImageContent(type="image", data=_b64(PNG), mime_type="image/png")


def _embedded(uri: str, mime_type: str, text: str) -> EmbeddedResource:
    return EmbeddedResource(type="resource", resource=TextResourceContents(uri=uri, mime_type=mime_type, text=text))


def add_fixtures(server: MCPServer[Any]) -> None:
    """Register the reference fixtures the conformance suite's scenarios call.

    Args:
        server: The built ``mnem-mcp`` server.
    """
    legacy = HandshakeEraMethods()
    server.middleware.append(legacy)
    _add_tools(server, legacy)
    _add_input_required(server)
    _add_stateless(server)
    _add_resources(server)
    _add_prompts(server)

    @server.completion()  # type: ignore[no-untyped-call, untyped-decorator]  # the SDK's decorator is unannotated
    async def complete(ref: PromptReference | ResourceTemplateReference, argument: CompletionArgument,
                       context: CompletionContext | None) -> Completion:
        """Offer a few values that start with what was typed so far."""
        values = [value for value in ("paris", "park", "parse") if value.startswith(argument.value)]
        return Completion(values=values, total=len(values), has_more=False)


class HandshakeEraMethods:
    """Server middleware: ``logging/setLevel`` and ``resources/(un)subscribe`` for 2025-11-25 sessions.

    ``MCPServer`` registers no handler for either and keeps its low-level
    ``Server`` private, so the public middleware chain answers them here,
    and adds the ``logging`` and ``resources.subscribe`` capabilities to the
    ``initialize`` result, as the SDK would for registered handlers.  At
    2026-07-28, which removed both methods, the requests pass on to the
    SDK, which refuses them with ``-32601``.

    Subscriptions are accepted for the fixture resource only: it never
    changes, so there is no ``notifications/resources/updated`` to owe, and
    none is tracked.  mnem-mcp's own resources change with every write, and
    it publishes that on ``subscriptions/listen`` only, so subscribing to
    them here is refused rather than silently never answered.

    Attributes:
        levels: The level each session asked for, by its ``Mcp-Session-Id``
            (``None``: the one stdio session); the logging fixture sends only
            at or above it.  Never pruned: a fixture-mode server lives for one
            test run.
    """

    def __init__(self) -> None:
        self.levels: dict[str | None, LoggingLevel] = {}

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Answer the two handshake-era methods; declare them on ``initialize``."""
        if ctx.method == "initialize":
            return _declaring_them(await call_next(ctx))
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return await call_next(ctx)
        params = ctx.params or {}
        if ctx.method == "logging/setLevel":
            self.levels[_session(getattr(ctx.request, "headers", None))] = SetLevelRequestParams.model_validate(
                params, by_name=False).level
            return {}
        if ctx.method in ("resources/subscribe", "resources/unsubscribe"):
            kind = SubscribeRequestParams if ctx.method == "resources/subscribe" else UnsubscribeRequestParams
            uri = kind.model_validate(params, by_name=False).uri
            if uri != WATCHED:
                raise MCPError(code=INVALID_PARAMS, message=f"{uri}: only the fixture {WATCHED} takes a handshake-era "
                               "subscription; mnem-mcp publishes changes to its own resources through "
                               "subscriptions/listen (2026-07-28)")
            return {}
        return await call_next(ctx)

    def allows(self, headers: Mapping[str, str] | None, level: LoggingLevel) -> bool:
        """Whether a log message at ``level`` may go to the session these request headers name."""
        chosen = self.levels.get(_session(headers), SEVERITIES[0])
        return SEVERITIES.index(level) >= SEVERITIES.index(chosen)


def _session(headers: Mapping[str, str] | None) -> str | None:
    """The session a request belongs to: its ``Mcp-Session-Id`` over HTTP, ``None`` over stdio."""
    return None if headers is None else headers.get("mcp-session-id")


def _declaring_them(result: HandlerResult) -> HandlerResult:
    """The ``initialize`` result, with the ``logging`` and ``resources.subscribe`` capabilities added."""
    if not isinstance(result, dict):
        return result
    capabilities = dict(result["capabilities"])
    capabilities["logging"] = {}
    capabilities["resources"] = {**capabilities.get("resources", {}), "subscribe": True}
    return {**result, "capabilities": capabilities}


def _add_tools(server: MCPServer[Any], legacy: HandshakeEraMethods) -> None:
    @server.tool(description="Fixture: a text answer.")
    def test_simple_text() -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="This is a simple text response for testing.")])

    @server.tool(description="Fixture: an image answer.")
    def test_image_content() -> CallToolResult:
        return CallToolResult(content=[_image()])

    @server.tool(description="Fixture: an audio answer.")
    def test_audio_content() -> CallToolResult:
        return CallToolResult(content=[AudioContent(type="audio", data=_b64(WAV), mime_type="audio/wav")])

    @server.tool(description="Fixture: an embedded resource answer.")
    def test_embedded_resource() -> CallToolResult:
        return CallToolResult(content=[
            _embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")])

    @server.tool(description="Fixture: text, an image and a resource in one answer.")
    def test_multiple_content_types() -> CallToolResult:
        return CallToolResult(content=[
            TextContent(type="text", text="Multiple content types test:"), _image(),
            _embedded("test://mixed-content-resource", "application/json", json.dumps({"test": "data", "value": 123})),
        ])

    @server.tool(description="Fixture: three info log messages while it runs (fewer if the level set is higher).")
    async def test_tool_with_logging(ctx: Context[Any, Any]) -> str:
        for number, text in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
            if number:
                await anyio.sleep(PAUSE)
            if legacy.allows(ctx.headers, "info"):
                await ctx.info(text)
        return "Logging test completed"

    @server.tool(description="Fixture: progress 0, 50 and 100 of 100 while it runs.")
    async def test_tool_with_progress(ctx: Context[Any, Any]) -> str:
        for step in (0, 50, 100):
            if step:
                await anyio.sleep(PAUSE)
            await ctx.report_progress(step, 100)
        return "Progress test completed"

    @server.tool(description="Fixture: asks the client's model to answer a prompt (sampling).")
    async def test_sampling(prompt: str, ctx: Context[Any, Any]) -> str:
        asked = [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))]
        result = await ctx.session.create_message(asked, max_tokens=100, related_request_id=ctx.request_id)
        content = result.content
        return f"LLM response: {content.text if isinstance(content, TextContent) else content}"

    @server.tool(description="Fixture: asks the user for a name and an email (elicitation).")
    async def test_elicitation(message: str, ctx: Context[Any, Any]) -> str:
        schema = {"type": "object", "required": ["username", "email"], "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}}}
        result = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        return f"User response: action={result.action}, content={json.dumps(result.content)}"

    @server.tool(description="Fixture: elicitation with a default for every primitive type (SEP-1034).")
    async def test_elicitation_sep1034_defaults(ctx: Context[Any, Any]) -> str:
        return await _elicited(ctx, {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": True},
        })

    @server.tool(description="Fixture: elicitation with the five kinds of enum (SEP-1330).")
    async def test_elicitation_sep1330_enums(ctx: Context[Any, Any]) -> str:
        options = ["option1", "option2", "option3"]
        titled = [{"const": f"value{n}", "title": title} for n, title in enumerate(("First", "Second", "Third"), 1)]
        return await _elicited(ctx, {
            "untitledSingle": {"type": "string", "enum": options},
            "titledSingle": {"type": "string", "oneOf": [{**t, "title": f"{t['title']} Option"} for t in titled]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": options}},
            "titledMulti": {"type": "array",
                            "items": {"anyOf": [{**t, "title": f"{t['title']} Choice"} for t in titled]}},
        })

    @server.tool(description="Fixture: a tool that always fails.")
    def test_error_handling() -> str:
        raise RuntimeError("This tool intentionally returns an error for testing")


async def _elicited(ctx: Context[Any, Any], properties: dict[str, Any]) -> str:
    """Ask the client for a form with ``properties``; what came back, as the SEP scenarios expect it."""
    schema = {"type": "object", "properties": properties}
    result = await ctx.session.elicit_form("Please fill in the form.", schema, related_request_id=ctx.request_id)
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


def _add_resources(server: MCPServer[Any]) -> None:
    @server.resource("test://static-text", name="static-text", mime_type="text/plain",
                     description="Fixture: a text resource.")
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", name="static-binary", mime_type="image/png",
                     description="Fixture: a binary resource.")
    def static_binary() -> bytes:
        return PNG

    @server.resource("test://template/{id}/data", name="template", mime_type="application/json",
                     description="Fixture: a resource template.")
    def template(id: str) -> str:
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    @server.resource("test://watched-resource", name="watched-resource", mime_type="text/plain",
                     description="Fixture: a resource to subscribe to.")
    def watched() -> str:
        return "Watched resource content."


def _add_prompts(server: MCPServer[Any]) -> None:
    @server.prompt(description="Fixture: a prompt without arguments.")
    def test_simple_prompt() -> list[Message]:
        return [UserMessage("This is a simple prompt for testing.")]

    @server.prompt(description="Fixture: a prompt with two arguments.")
    def test_prompt_with_arguments(arg1: str, arg2: str) -> list[Message]:
        return [UserMessage(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")]

    @server.prompt(description="Fixture: a prompt embedding a resource.")
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:  # noqa: N803 - the scenario's name
        return [UserMessage(_embedded(resourceUri, "text/plain", "Embedded resource content for testing.")),
                UserMessage("Please process the embedded resource above.")]

    @server.prompt(description="Fixture: a prompt with an image.")
    def test_prompt_with_image() -> list[Message]:
        return [UserMessage(_image()), UserMessage("Please analyze the image above.")]


def _form(message: str, field: str, kind: str = "string") -> ElicitRequest:
    """An elicitation of one required field, the shape every SEP-2322 scenario asks for."""
    schema = {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))


def _sample(text: str, max_tokens: int) -> CreateMessageRequest:
    """A sampling request of one user message."""
    message = SamplingMessage(role="user", content=TextContent(type="text", text=text))
    return CreateMessageRequest(params=CreateMessageRequestParams(messages=[message], max_tokens=max_tokens))


def _round(ctx: Context[Any, Any], asked: InputRequests,
           state: str | None = None) -> InputResponses | InputRequiredResult:
    """The answers to ``asked`` once the client has given them all, else the ``input_required`` result asking again.

    Only the requests still unanswered are asked again (the suite's
    missing-input scenario wants a re-request, not an error), and keys the
    fixture never asked are ignored.  With ``state``, answers count only on
    a retry that echoes that state, so a retry without it starts over; the
    SDK seals every ``requestState`` it sends and refuses a tampered one
    before the fixture runs (``mcp.server.request_state``), so the plain
    text compared here is always one the fixture minted.
    """
    answers = (ctx.input_responses or {}) if ctx.request_state == state else {}
    missing = {key: request for key, request in asked.items() if key not in answers}
    return InputRequiredResult(input_requests=missing, request_state=state) if missing else answers


def _said(response: InputResponse) -> str:
    """What one input response says, for a fixture's final text."""
    if isinstance(response, ElicitResult):
        return f"{response.action} {json.dumps(response.content)}"
    if isinstance(response, ListRootsResult):
        return " ".join(str(root.uri) for root in response.roots)
    blocks = response.content if isinstance(response.content, list) else [response.content]
    return " ".join(block.text for block in blocks if isinstance(block, TextContent))


def _field(response: InputResponse, name: str) -> str:
    """One field of an accepted elicitation; what the response said instead, otherwise."""
    if isinstance(response, ElicitResult) and response.content and name in response.content:
        return str(response.content[name])
    return f"({_said(response)})"


def _add_input_required(server: MCPServer[Any]) -> None:
    """The SEP-2322 fixtures: 2026-07-28 ``input_required`` results, keyed as the scenarios expect.

    They answer the stateless era only (the scenarios run nowhere else);
    on 2025-11-25 the elicitation and sampling fixtures above ask the client
    mid-call instead.
    """
    @server.tool(description="Fixture: asks the user's name through an input_required result (SEP-2322).")
    def test_input_required_result_elicitation(ctx: Context[Any, Any]) -> str | InputRequiredResult:
        got = _round(ctx, {"user_name": _form("What is your name?", "name")})
        return got if isinstance(got, InputRequiredResult) else f"Hello, {_field(got['user_name'], 'name')}!"

    @server.tool(description="Fixture: asks the client's model a question through an input_required result.")
    def test_input_required_result_sampling(ctx: Context[Any, Any]) -> str | InputRequiredResult:
        got = _round(ctx, {"capital_question": _sample("What is the capital of France?", 100)})
        return got if isinstance(got, InputRequiredResult) else f"LLM response: {_said(got['capital_question'])}"

    @server.tool(description="Fixture: asks the client's roots through an input_required result.")
    def test_input_required_result_list_roots(ctx: Context[Any, Any]) -> str | InputRequiredResult:
        got = _round(ctx, {"client_roots": ListRootsRequest()})
        return got if isinstance(got, InputRequiredResult) else f"Roots: {_said(got['client_roots'])}"

    @server.tool(description="Fixture: asks for a confirmation and checks the requestState echoed with it.")
    def test_input_required_result_request_state(ctx: Context[Any, Any]) -> str | InputRequiredResult:
        got = _round(ctx, {"confirm": _form("Please confirm", "ok", "boolean")}, "awaiting-confirmation")
        return got if isinstance(got, InputRequiredResult) else f"state-ok: confirmed {_field(got['confirm'], 'ok')}"

    @server.tool(description="Fixture: asks an elicitation, a sampling and the roots at once.")
    def test_input_required_result_multiple_inputs(ctx: Context[Any, Any]) -> str | InputRequiredResult:
        got = _round(ctx, {"user_name": _form("What is your name?", "name"),
                           "greeting": _sample("Generate a greeting", 50),
                           "client_roots": ListRootsRequest()}, "awaiting-three-answers")
        return got if isinstance(got, InputRequiredResult) else _summary(got)

    @server.tool(description="Fixture: asks a name, then a colour, each round with a new requestState.")
    def test_input_required_result_multi_round(ctx: Context[Any, Any]) -> str | InputRequiredResult:
        first, state = "awaiting-step1", ctx.request_state
        second: InputRequests = {"step2": _form("Step 2: What is your favorite color?", "color")}
        if state is None or state == first:
            got = _round(ctx, {"step1": _form("Step 1: What is your name?", "name")}, first)
            if isinstance(got, InputRequiredResult):
                return got
            return InputRequiredResult(input_requests=second,  # the name rides the new state (sealed, as every one)
                                       request_state=json.dumps({"name": _field(got["step1"], "name")}))
        got = _round(ctx, second, state)
        return got if isinstance(got, InputRequiredResult) else (
            f"{json.loads(state)['name']} likes {_field(got['step2'], 'color')}.")

    @server.tool(description="Fixture: asks for a confirmation under a requestState the SDK seals against tampering.")
    def test_input_required_result_tampered_state(ctx: Context[Any, Any]) -> str | InputRequiredResult:
        got = _round(ctx, {"confirm": _form("Please confirm", "ok", "boolean")}, "sealed-by-the-sdk")
        return got if isinstance(got, InputRequiredResult) else f"Confirmed: {_field(got['confirm'], 'ok')}"

    @server.tool(description="Fixture: asks only what the client's declared capabilities allow.")
    def test_input_required_result_capabilities(ctx: Context[Any, Any]) -> str | InputRequiredResult:
        declared = ctx.client_capabilities or ClientCapabilities()
        asked: InputRequests = {}
        if declared.elicitation is not None:
            asked["user_name"] = _form("What is your name?", "name")
        if declared.sampling is not None:
            asked["capital_question"] = _sample("What is the capital of France?", 100)
        if declared.roots is not None:
            asked["client_roots"] = ListRootsRequest()
        got = _round(ctx, asked)
        return got if isinstance(got, InputRequiredResult) else _summary(got)

    @server.prompt(description="Fixture: a prompt that asks for its context through an input_required result.")
    def test_input_required_result_prompt(ctx: Context[Any, Any]) -> list[Message] | InputRequiredResult:
        got = _round(ctx, {"user_context": _form("What context should the prompt use?", "context")})
        if isinstance(got, InputRequiredResult):
            return got
        return [UserMessage(f"Answer within this context: {_field(got['user_context'], 'context')}")]


def _summary(answers: InputResponses) -> str:
    """Every answer a fixture got, by key."""
    return "; ".join(f"{key}: {_said(response)}" for key, response in sorted(answers.items())) or "Nothing to ask."


def _add_stateless(server: MCPServer[Any]) -> None:
    """The SEP-2575 diagnostic hooks of the 2026-07-28 stateless scenarios."""
    @server.tool(description="Fixture: refuses (-32021) unless the client declared sampling, which it would need.")
    def test_missing_capability(ctx: Context[Any, Any]) -> str:
        if ctx.client_capabilities is None or ctx.client_capabilities.sampling is None:
            needed = MissingRequiredClientCapabilityErrorData(
                required_capabilities=ClientCapabilities(sampling=SamplingCapability()))
            raise MCPError(code=MISSING_REQUIRED_CLIENT_CAPABILITY, message="This tool needs the sampling capability",
                           data=needed.model_dump(by_alias=True, mode="json", exclude_none=True))
        return "The client declared sampling."

    @server.tool(description="Fixture: announces a change of the tool list to subscriptions/listen streams.")
    async def test_trigger_tool_change(ctx: Context[Any, Any]) -> str:
        await ctx.notify_tools_changed()
        return "Tool list change announced."

    @server.tool(description="Fixture: announces a change of the prompt list to subscriptions/listen streams.")
    async def test_trigger_prompt_change(ctx: Context[Any, Any]) -> str:
        await ctx.notify_prompts_changed()
        return "Prompt list change announced."
