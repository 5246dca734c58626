"""Failures as the client sees them: text that starts with a stable code.

Every failed tool call answers ``isError: true`` with one text block that
begins ``<code>: `` (``invalid_ref``, ``not_found``, ``busy``, ``no_store``,
``store_io``, ``usage``, ... as in docs/cli-json.md), then the message, then
the ``mnem`` command line that reproduces it.  A model can branch on the
code; a person can paste the command.

The SDK's own ``ToolError`` path would prefix every message with "Error
executing tool X: ", so the server builds the error ``CallToolResult``
itself (``tool_error``).  The SDK still answers two failures before our
code runs, arguments that break the input schema and unknown tool names;
``CodedToolErrors`` rewrites those into ``usage: ...`` so that every error
text starts with a code.  Resource reads fail as JSON-RPC errors whose
message carries the same text (``resource_error``).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.types import CallToolResult, TextContent

import mnem_bridge

__all__ = ["CodedToolErrors", "error_code", "error_text", "resource_error", "tool_error"]

logger = logging.getLogger(__name__)

#: Code for arguments the tool refuses (the contract's code for a refused command line).
USAGE = "usage"
#: Code for anything unforeseen (upstream's fallback code); the traceback stays in the server log.
UNEXPECTED = "error"

_CODED = re.compile(r"^[a-z][a-z_]*: ")


def error_code(exc: Exception) -> str:
    """The stable code for a failure.

    Args:
        exc: What a tool or resource raised.

    Returns:
        The bridge error's ``code``; ``usage`` for a refused argument value
        (the bridge raises ``ValueError`` for those, as upstream's SDK does);
        ``error`` for anything else.
    """
    if isinstance(exc, mnem_bridge.MnemError):
        return exc.code
    if isinstance(exc, ValueError):
        return USAGE
    return UNEXPECTED


#: The longest message, and the longest rerun line, a client is sent.  An error is read by a model, and
#: an argument of a few MB echoed back (in the message, or in the rerun line's heredoc) would flood its
#: context without explaining anything; the server log keeps the full text.
MAX_PART = 2000


def error_text(exc: Exception, *, bounded: bool = False) -> str:
    """``<code>: <message>``, then the command that reproduces it when one ran.

    Args:
        exc: What a tool or resource raised.
        bounded: Cut the message and the rerun line to ``MAX_PART`` characters each
            (what a client is sent; the log gets the full text).

    Returns:
        The text.
    """
    message = str(exc)
    command = exc.command if isinstance(exc, mnem_bridge.MnemError) else None
    if bounded:
        message = _cut(message, "message")
        command = None if command is None else _cut(command, "command line")
    text = f"{error_code(exc)}: {message}"
    return text if command is None else f"{text}\nrerun: {command}"


def _cut(text: str, what: str) -> str:
    if len(text) <= MAX_PART:
        return text
    return f"{text[:MAX_PART]}... ({len(text) - MAX_PART} more characters; the server log has the whole {what})"


def tool_error(exc: Exception, tool: str) -> CallToolResult:
    """The error result for a failed tool call, logged the way the failure deserves.

    Args:
        exc: What the tool raised.
        tool: The tool's name, for the log.

    Returns:
        An ``isError`` result whose text starts with the code.
    """
    if error_code(exc) == UNEXPECTED:
        logger.exception("tool %s failed unexpectedly", tool, exc_info=exc)
        text = f"{UNEXPECTED}: {tool} failed unexpectedly ({type(exc).__name__}); the server log has the details"
    else:
        logger.info("tool %s: %s", tool, error_text(exc))
        text = error_text(exc, bounded=True)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def resource_error(exc: Exception, uri: str) -> ResourceError:
    """The SDK error to raise for a failed resource read.

    Args:
        exc: What reading the resource raised.
        uri: The resource, for the log.

    Returns:
        ``ResourceNotFoundError`` (JSON-RPC -32602) when the thing named does
        not exist (``not_found``, ``invalid_ref``), else ``ResourceError``
        (-32603); the message is ``error_text``.
    """
    if error_code(exc) == UNEXPECTED:
        logger.exception("reading %s failed unexpectedly", uri, exc_info=exc)
    else:
        logger.info("resource %s: %s", uri, error_text(exc))
    missing = isinstance(exc, mnem_bridge.NotFoundError | mnem_bridge.InvalidRefError)
    return (ResourceNotFoundError if missing else ResourceError)(error_text(exc, bounded=True))


class CodedToolErrors:
    """Server middleware: give the SDK's own tool-call errors a ``usage:`` code.

    The SDK rejects schema-breaking arguments ("Error executing tool X: 1
    validation error ...") and unknown tools ("Unknown tool: X") before any
    tool code runs.  This rewrites the text of any error result that does not
    already start with a code, so clients can rely on the prefix; a crash
    the SDK caught after the tool returned becomes ``error:``.
    """

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Pass the request on; recode an uncoded ``tools/call`` error on the way back."""
        result = await call_next(ctx)
        if ctx.method != "tools/call" or not isinstance(result, dict) or not result.get("isError"):
            return result
        content = result.get("content") or []
        first = content[0] if content else {}
        text = first.get("text", "") if isinstance(first, dict) else ""
        if _CODED.match(text):
            return result
        name = (ctx.params or {}).get("name", "")
        if text == f"Error executing tool {name}":  # the SDK's text for a crash it caught (output conversion)
            text = f"{UNEXPECTED}: {name} failed unexpectedly; the server log has the details"
        else:  # pydantic quotes each bad input in full: bound it as our own errors are
            logger.info("tool %s refused: %s", name, text)
            text = f"{USAGE}: {_cut(text.removeprefix(f'Error executing tool {name}: '), 'message')}"
        return {**result, "content": [{**first, "type": "text", "text": text}, *content[1:]]}
