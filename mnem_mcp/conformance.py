"""Test-only fixtures for the official MCP conformance suite (``mnem-mcp --conformance-fixtures``, hidden).

Many of the suite's server scenarios call a fixture of its reference
server by name: a tool that answers an image, a resource at
``test://static-text``, a prompt with arguments, a completion handler.  None
of them belongs to a memory server, so they are registered only with the
hidden ``--conformance-fixtures`` flag that ``tests/mcp/test_mcp_conformance.py``
passes; each answers exactly what its scenario's description asks for.
The memory tools and resources are served beside them unchanged, so the
scenarios that do not need a fixture still check mnem-mcp's own surface.

Sampling and elicitation are asked of the client the handshake era's way
(a request on the session), which is what the 2025-11-25 scenarios check;
the 2026-07-28 ``input_required`` round trips, ``logging/setLevel`` and
``resources/subscribe`` are not here, and the expected-failures file says
why for each.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Final

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.types import (
    AudioContent,
    CallToolResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    EmbeddedResource,
    ImageContent,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    TextContent,
    TextResourceContents,
)

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
    _add_tools(server)
    _add_resources(server)
    _add_prompts(server)

    @server.completion()  # type: ignore[no-untyped-call, untyped-decorator]  # the SDK's decorator is unannotated
    async def complete(ref: PromptReference | ResourceTemplateReference, argument: CompletionArgument,
                       context: CompletionContext | None) -> Completion:
        """Offer a few values that start with what was typed so far."""
        values = [value for value in ("paris", "park", "parse") if value.startswith(argument.value)]
        return Completion(values=values, total=len(values), has_more=False)


def _add_tools(server: MCPServer[Any]) -> None:
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

    @server.tool(description="Fixture: three log messages while it runs.")
    async def test_tool_with_logging(ctx: Context[Any, Any]) -> str:
        for number, text in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
            if number:
                await anyio.sleep(PAUSE)
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
