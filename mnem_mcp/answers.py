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

from typing import Any

import orjson
from mcp.types import CallToolResult, TextContent

import mnem_bridge

__all__ = ["answer", "plain"]


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
