"""Failures as the client sees them: text that starts with a stable code.

Every failed tool call raises ``ToolError`` (what the SDK does for tools, and
what a direct ``MCPServer.call_tool()`` caller catches); over a session the
SDK answers it as ``isError: true`` with one text block that begins
``<code>: `` (``invalid_ref``, ``not_found``, ``busy``, ``no_store``,
``store_io``, ``usage``, ... as in docs/cli-json.md), then the message, then
the ``mnem`` command line that reproduces it.  A model can branch on the
code; a person can paste the command.

Failures are mapped by type, never by their text: a bridge ``MnemError``
carries its code; a ``ValueError`` is a refused argument (``usage``); a
pydantic ``ValidationError`` from the SDK's argument check becomes a short
``usage`` line naming each bad argument (``usage_error``); anything else is
``error``, with the traceback in the server log only.  Resource reads fail
as JSON-RPC errors whose message carries the same text (``resource_error``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from pydantic import ValidationError

import mnem_bridge

from .tenants import TenantRefusedError

__all__ = [
    "MAX_PART",
    "UNEXPECTED",
    "USAGE",
    "error_code",
    "error_text",
    "resource_error",
    "scope_error",
    "tool_error",
    "unknown_tool",
    "usage_error",
]

logger = logging.getLogger(__name__)

#: Code for arguments the tool refuses (the contract's code for a refused command line).
USAGE = mnem_bridge.UsageError.code
#: Code for a call the caller's token does not allow (OAuth's name for it, RFC 6750).
INSUFFICIENT_SCOPE = "insufficient_scope"
#: Code for anything unforeseen (upstream's fallback code); the traceback stays in the server log.
UNEXPECTED = mnem_bridge.MnemError.code

#: How many argument problems one ``usage`` text lists (pydantic reports each union arm separately).
MAX_PROBLEMS = 3


def error_code(exc: BaseException) -> str:
    """The stable code for a failure.

    Args:
        exc: What a tool or resource raised.

    Returns:
        The bridge error's ``code``; ``access_denied`` for a token that
        maps to no store (``tenants``); ``usage`` for a refused argument value
        (the bridge raises ``ValueError`` for those, as upstream's SDK does);
        ``error`` for anything else, including a pydantic ``ValidationError``
        that reaches here (arguments are refused before a tool runs, by
        ``usage_error``, so it can only be a result breaking its schema).
    """
    if isinstance(exc, mnem_bridge.MnemError):
        return exc.code
    if isinstance(exc, TenantRefusedError):  # a token that maps to no store (tenants)
        return exc.code
    if isinstance(exc, ValidationError):  # a result that broke its own schema: our bug, not the caller's
        return UNEXPECTED
    if isinstance(exc, ValueError):
        return USAGE
    return UNEXPECTED


#: The longest message, and the longest rerun line, a client is sent.  An error is read by a model, and
#: an argument of a few MB echoed back (in the message, or in the rerun line's heredoc) would flood its
#: context without explaining anything; the server log keeps the full text.
MAX_PART = 2000


def _message(exc: BaseException) -> str:
    """The failure's message; a bridge error's without the Display prefix that only repeats its code."""
    return exc.detail if isinstance(exc, mnem_bridge.MnemError) else str(exc)


def error_text(exc: BaseException, *, bounded: bool = False) -> str:
    """``<code>: <message>``, then the command that reproduces it when one ran.

    Args:
        exc: What a tool or resource raised.
        bounded: Cut the message and the rerun line to ``MAX_PART`` characters each
            (what a client is sent; the log gets the full text).

    Returns:
        The text.
    """
    message = _message(exc)
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


def _refusal(text: str) -> ToolError:
    """The ``ToolError`` to raise: the SDK answers a session's call with it as an ``isError`` result of this text."""
    return ToolError(text)


def tool_error(exc: BaseException, tool: str) -> ToolError:
    """The error for a failed tool call, logged the way the failure deserves.

    Args:
        exc: What the tool raised.
        tool: The tool's name, for the log.

    Returns:
        The ``ToolError`` to raise, its text starting with the code.
    """
    if error_code(exc) == UNEXPECTED:
        logger.error("tool %s failed unexpectedly", tool, exc_info=exc)
        return _refusal(f"{UNEXPECTED}: {tool} failed unexpectedly ({type(exc).__name__}); "
                       "the server log has the details")
    logger.info("tool %s: %s", tool, error_text(exc))
    return _refusal(error_text(exc, bounded=True))


def scope_error(message: str) -> ToolError:
    """The error for a tool call the caller's token has no scope for (``identity.missing_write_scope``).

    Args:
        message: What is missing and how to get it.

    Returns:
        The ``ToolError`` to raise, its text starting ``insufficient_scope: ``.
    """
    logger.info("refused for lack of scope: %s", message)
    return _refusal(f"{INSUFFICIENT_SCOPE}: {message}")


def usage_error(tool: str, error: ValidationError, arguments: Iterable[str]) -> ToolError:
    """The error for arguments that break a tool's input schema.

    One short line naming each bad argument and what is wrong with it (at
    most ``MAX_PROBLEMS``), without pydantic's echo of the input or its
    documentation links; an unknown argument also lists the ones the tool
    takes.

    Args:
        tool: The tool's name.
        error: The SDK's argument validation failure.
        arguments: The names the tool takes.

    Returns:
        The ``ToolError`` to raise, its text starting ``usage: ``.
    """
    problems: list[str] = []
    unknown = False
    for problem in error.errors(include_url=False, include_context=False, include_input=False):
        where = ".".join(str(part) for part in problem["loc"]) or "arguments"
        if problem["type"] == "extra_forbidden":
            unknown = unknown or len(problem["loc"]) == 1
            said = "unknown argument" if len(problem["loc"]) == 1 else "unknown key"
        elif problem["type"] == "missing":
            said = "required"
        else:
            said = problem["msg"]
        line = f"{where}: {said}"
        if line not in problems:
            problems.append(line)
    shown = "; ".join(problems[:MAX_PROBLEMS])
    if len(problems) > MAX_PROBLEMS:
        shown += f"; and {len(problems) - MAX_PROBLEMS} more"
    takes = f" ({tool} takes {', '.join(arguments)})" if unknown else ""
    logger.info("tool %s refused its arguments: %s", tool, shown)
    return _refusal(f"{USAGE}: {tool}: {_cut(shown, 'message')}{takes}")


def unknown_tool(name: str, known: Iterable[str]) -> ToolError:
    """The error for a call to a tool this server does not have (the SDK's wording, with the code).

    Args:
        name: The name the client asked for.
        known: The tools the server has (for the log).

    Returns:
        The ``ToolError`` to raise, its text starting ``usage: ``.
    """
    logger.info("unknown tool %r (the tools are %s)", name[:200], ", ".join(known))
    return _refusal(f"{USAGE}: Unknown tool: {_cut(name, 'message')}")


def resource_error(exc: BaseException, uri: str) -> ResourceError:
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
        logger.error("reading %s failed unexpectedly", uri, exc_info=exc)
    else:
        logger.info("resource %s: %s", uri, error_text(exc))
    missing = isinstance(exc, mnem_bridge.NotFoundError | mnem_bridge.InvalidRefError)
    return (ResourceNotFoundError if missing else ResourceError)(error_text(exc, bounded=True))
