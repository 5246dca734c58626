"""An answer for every line a stdio client sends, even one the SDK cannot read.

The SDK's stdio transport parses each line into a JSON-RPC message; a line
it cannot parse (not JSON, a lone surrogate in a string, a number out of
its parser's range, JSON that is not a JSON-RPC message) becomes an
exception on the session's stream, which the session only logs.  No answer
goes back, so a client waits for one until its own timeout.  And a request
whose ``id`` is neither a string nor an integer (``7.5``, ``true``) parses
as a notification, which is never answered either.

``screen`` looks at each line first, with the SDK's own parser.  A line the
SDK takes is passed on unchanged; any other gets a JSON-RPC error, with the
request's ``id`` when one can be read from it (JSON-RPC 2.0 answers ``null``
when it cannot): ``-32700`` (parse error) for text that is not strict JSON
in UTF-8, ``-32600`` (invalid request) for JSON that is not a JSON-RPC 2.0
message.  The message starts ``usage: ``, as every refusal of ours does
(``errors``), says what was wrong without echoing the line, and names what
a message must be.  A line of whitespace only is no message and gets no
answer.

Invalid UTF-8 is refused rather than decoded with replacement characters
(what the SDK does): a replaced byte would change a stored value silently.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Final

import orjson
from mcp import types as mcp_types
from mcp.types import JSONRPCNotification

from mnem_bridge.text import is_utf8

from .errors import USAGE

__all__ = ["Screened", "screen"]

#: What every message must be, said in each refusal.
SHAPE: Final = ('a JSON-RPC 2.0 message is one JSON object per line, in UTF-8: {"jsonrpc": "2.0", "id": a string or '
                'an integer, "method": a string, "params": an object (optional)}')


@dataclass(frozen=True, slots=True)
class Screened:
    """What to do with one line: pass ``text`` on to the SDK, write ``answer`` back, or neither (a blank line)."""

    text: str | None = None
    answer: bytes | None = None


def screen(line: bytes) -> Screened:
    """Decide what becomes of one line of the wire.

    Args:
        line: The bytes of one line, its newline included or not.

    Returns:
        The line's text for the SDK when it parses as a JSON-RPC message,
        else the JSON-RPC error line to answer (newline-terminated).
    """
    if not line.strip():
        return Screened()
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"byte 0x{line[exc.start]:02x} at offset {exc.start} is not UTF-8"
        return _refused(mcp_types.PARSE_ERROR, reason, line.decode("utf-8", "replace"))
    try:
        message = mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError:  # pydantic's ValidationError: the SDK would drop the line
        return _unparsed(text)
    if isinstance(message, JSONRPCNotification) and _carries_id(text):
        return _refused(mcp_types.INVALID_REQUEST, "its id is neither a string nor an integer", text)
    return Screened(text=text)


def _unparsed(text: str) -> Screened:
    """The refusal of a line the SDK cannot parse: not strict JSON, or JSON that is no JSON-RPC message."""
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return _refused(mcp_types.PARSE_ERROR, f"it is not JSON ({exc})", text)
    return _refused(mcp_types.INVALID_REQUEST, "it is JSON but not a JSON-RPC 2.0 message", text)


def _refused(code: int, reason: str, text: str) -> Screened:
    error = {"code": code, "message": f"{USAGE}: the line was refused: {reason}; {SHAPE}"}
    answer = {"jsonrpc": "2.0", "id": _request_id(text), "error": error}
    return Screened(answer=orjson.dumps(answer) + b"\n")


def _lenient(text: str) -> Any:
    """``text`` parsed as leniently as Python's ``json`` allows (lone surrogates, NaN); ``None`` if it is not JSON.

    An integer literal too long for ``int`` (which refuses past 4300 digits) is read as ``None``: only the
    message's ``id`` and ``method`` are wanted from it.
    """
    try:
        return json.loads(text, parse_int=lambda literal: int(literal) if len(literal) <= 4000 else None)
    except (ValueError, RecursionError):
        return None


def _request_id(text: str) -> str | int | float | None:
    """The id of the request ``text`` holds, when it is a request whose id can be sent back; else ``None``.

    JSON-RPC 2.0 answers a request with the id it was sent (a string or a
    number); a notification or a response is not a request, and an id that
    is not text (a lone surrogate) or not a finite number cannot be echoed.
    """
    found = _lenient(text)
    if not isinstance(found, dict) or "method" not in found:
        return None
    ident = found.get("id")
    if isinstance(ident, str):
        return ident if is_utf8(ident) else None
    if isinstance(ident, int) and not isinstance(ident, bool):
        return ident if -(2**63) <= ident < 2**64 else None
    return ident if isinstance(ident, float) and math.isfinite(ident) else None


def _carries_id(text: str) -> bool:
    """Whether a line the SDK read as a notification has an ``id`` member: a request it would never answer."""
    found = _lenient(text)
    return isinstance(found, dict) and "id" in found
