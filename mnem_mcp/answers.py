"""Tool results on the wire: compact JSON, encoded once.

The SDK's default turns a tool's return value into text by encoding it as
indented JSON, then validates it against the output model and encodes it
again as structured content: three passes, and for a 10k-fact ``recall``
most of the server's time.  Here each result becomes a ``CallToolResult``
directly: the memory, whole or a page of it, keeps the bytes ``mnem``
printed (``WholeMemory``, ``MemoryPage``) as its text and their one
decoding as its structured content, with no node built; any other
result is encoded once by orjson, each bridge model by its ``to_dict()``
(the shape ``models.result_schema`` publishes; tests/mcp/test_mcp_shapes.py
holds every tool's real output to its schema, so nothing is validated per
call).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import orjson
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.types import CallToolResult, TextContent

import mnem_bridge

__all__ = ["MemoryPastChecks", "answer", "plain", "sent"]

#: The memory answers a ``MemoryPastChecks`` holds for its request; ``None`` outside one.
_held: ContextVar[list[CallToolResult] | None] = ContextVar("mnem_mcp_held_answers", default=None)
#: What the SDK's result passes check in place of the memory: the same shape, with nothing in it.
_STAND_IN = CallToolResult(content=[TextContent(type="text", text="")], structured_content={})


def answer(value: Any) -> CallToolResult:
    """A tool's return value as its result: the same JSON as text and as structured content.

    A list is structured as ``{"result": [...]}``, the SDK's wrapping, and
    its text is the list itself.  ``None`` (``recall`` of an id that is not
    remembered) is the text ``null`` with no structured content, which must
    be an object.
    """
    if value is None:
        return CallToolResult(content=[TextContent(type="text", text="null")])
    if isinstance(value, mnem_bridge.MemoryPage | mnem_bridge.WholeMemory):
        text, structured = value.json, value.document
    else:
        text = _encoded(value)
        structured = orjson.loads(text)
        if isinstance(value, list):
            structured = {"result": structured}
    return CallToolResult(content=[TextContent(type="text", text=text.decode().rstrip("\n"))],
                          structured_content=structured)


def plain(value: Any) -> Any:
    """A tool's return value as plain JSON data (dicts, lists, strings, numbers, booleans, ``None``).

    What a client reads as the result (its structured content, a list not
    wrapped): what upstream's ``do_*`` functions return (``operations``).
    """
    if isinstance(value, mnem_bridge.MemoryPage | mnem_bridge.WholeMemory):
        return dict(value.document)
    return None if value is None else orjson.loads(_encoded(value))


def _encoded(value: Any) -> bytes:
    """``value`` as compact JSON, each bridge model as its ``to_dict()``."""
    return orjson.dumps(value, default=_to_dict, option=orjson.OPT_PASSTHROUGH_DATACLASS)


def _to_dict(value: Any) -> Any:
    """A bridge model's JSON shape (orjson calls this for every dataclass)."""
    to_dict = getattr(value, "to_dict", None)
    if to_dict is None:
        raise TypeError(f"{type(value).__name__} has no JSON shape")
    return to_dict()


def sent(value: Any) -> CallToolResult:
    """``answer(value)``, with the memory (whole or a page) held back from the SDK's result passes when it can be.

    Inside a request that ``MemoryPastChecks`` serves, the SDK gets an empty
    stand-in of the same shape and the middleware puts the memory back
    afterwards; anywhere else (``MCPServer.call_tool`` with no session) the
    answer is the result itself.
    """
    result = answer(value)
    held = _held.get()
    if held is None or not isinstance(value, mnem_bridge.MemoryPage | mnem_bridge.WholeMemory):
        return result
    held.append(result)
    return _STAND_IN


class MemoryPastChecks:
    """Server middleware: a tool's memory answer reaches the wire without the SDK's passes over it.

    The SDK shapes every result for the wire by dumping its model, then
    validating that dump against the protocol's result model and dumping it
    again: two walks over every value of a 10k-fact memory, more time than
    everything else the server does for it (BENCHMARKS.md, "Whole memory").
    A memory answer is known to fit that model (one text block, an object
    of JSON values as structured content), so the SDK checks an empty
    stand-in of the same shape (``sent``) and this puts the memory's text and
    structured content into the shaped result: the SDK still decides every
    key around them, the ``resultType`` and ``_meta`` of a 2026-07-28
    session included.
    """

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Run the call with a place for its memory answer; put that answer into the shaped result."""
        if ctx.method != "tools/call":
            return await call_next(ctx)
        held: list[CallToolResult] = []
        token = _held.set(held)
        try:
            result = await call_next(ctx)
        finally:
            _held.reset(token)
        if not held or not isinstance(result, dict):
            return result
        memory = held[0]
        text = memory.content[0]
        assert isinstance(text, TextContent)  # answer() makes one text block
        return {**result, "content": [{**result["content"][0], "text": text.text}],
                "structuredContent": memory.structured_content}
