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

A remote client (over HTTP) is told less (``Redaction``): the code and a
message, never a ``rerun:`` line, a path, a PostgreSQL URL or the binary,
which would show every client the server's layout (with ``--store-per``,
where every tenant's store lies).  A failure whose cause is the server's own
(``SERVER_SIDE``: its store missing, its disk, database or processes) is
told in words of the client's, with an incident id; the server's log has
the whole text under the same id.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable, Iterable
from typing import Any, Final

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, METHOD_NOT_FOUND
from pydantic import ValidationError

import mnem_bridge

from .tenants import TenantRefusedError

__all__ = [
    "MAX_PART",
    "SERVER_SIDE",
    "UNEXPECTED",
    "USAGE",
    "Redaction",
    "ToolUsageError",
    "coded_refusals",
    "error_code",
    "error_text",
    "resource_error",
    "scope_error",
    "told",
    "tool_error",
    "unknown_resource",
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
#: Code for a thing asked for that does not exist (a resource no URI of the server names).
NOT_FOUND = mnem_bridge.NotFoundError.code

#: How many argument problems one ``usage`` text lists (pydantic reports each union arm separately).
MAX_PROBLEMS = 3


class ToolUsageError(mnem_bridge.UsageError, ToolError):
    """Arguments a tool refuses after the schema's check: the bridge's ``UsageError`` and the SDK's ``ToolError``.

    A client is answered ``usage: ...`` (``error_code`` reads the bridge's
    code); a direct caller of upstream's ``do_when_did`` catches the
    ``ToolError`` upstream raises there (``operations``).
    """


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
#: context without explaining anything; the server log keeps more (``LOG_PART``).
MAX_PART = 2000
#: The longest message, and rerun line, the server's log keeps of one failure: enough to rerun any ordinary
#: call, while a client that sends megabytes (an id, a value) cannot make each refusal write megabytes to it.
LOG_PART = 64 * 1024


def _message(exc: BaseException) -> str:
    """The failure's message; a bridge error's without the Display prefix that only repeats its code."""
    return exc.detail if isinstance(exc, mnem_bridge.MnemError) else str(exc)


def error_text(exc: BaseException, *, bounded: bool = False) -> str:
    """``<code>: <message>``, then the command that reproduces it when one ran.

    Args:
        exc: What a tool or resource raised.
        bounded: Cut the message and the rerun line to ``MAX_PART`` characters each (what a client is sent);
            else to ``LOG_PART`` (what the log keeps).

    Returns:
        The text.
    """
    message = _message(exc)
    command = exc.command if isinstance(exc, mnem_bridge.MnemError) else None
    cut = _cut if bounded else _logged
    message = cut(message, "message")
    command = None if command is None else cut(command, "command line")
    text = f"{error_code(exc)}: {message}"
    return text if command is None else f"{text}\nrerun: {command}"


def _cut(text: str, what: str) -> str:
    """``text`` as a client is sent it: at most ``MAX_PART`` characters, saying how many more there were."""
    if len(text) <= MAX_PART:
        return text
    return (f"{text[:MAX_PART]}... ({len(text) - MAX_PART} more characters; the server log has the first "
            f"{LOG_PART} of the {what})")


def _logged(text: str, what: str) -> str:
    """``text`` as the log keeps it: at most ``LOG_PART`` characters, saying how many more there were."""
    if len(text) <= LOG_PART:
        return text
    return f"{text[:LOG_PART]}... ({len(text) - LOG_PART} more characters of the {what}, not logged)"


#: What a remote client is told of a failure whose cause is the server's own, by code: the fix is its operator's.
SERVER_SIDE: Final = {
    "no_store": "the store this request maps to does not exist here and was not created",
    "store_io": "the server could not use its store (its disk, database or processes failed, not this request); "
                "try again later",
    "store_exists": "the server could not create the store this request maps to",
    UNEXPECTED: "the server failed unexpectedly",
}
#: A PostgreSQL URL in a message (up to a space, a quote, or punctuation that ends it).
_URL: Final = re.compile(r"postgres(?:ql)?://[^\s'\"`]*[^\s'\"`.,;:)]")


class Redaction:
    """How failures are told to remote clients: the code and a message, without the server's internals.

    ``text`` leaves out the ``rerun:`` line; replaces each of ``hidden()``
    (where the server keeps its stores and its binary: ``Binding.internals``)
    and any PostgreSQL URL in the message with a neutral word; and tells a
    failure of the server's own (``SERVER_SIDE``) in the client's words,
    with an incident id the server's log names too.

    Args:
        hidden: Called for each failure told: the texts to leave out, asked then (a store per tenant, a
            binary found on first use).
    """

    def __init__(self, hidden: Callable[[], Iterable[str]]) -> None:
        self.hidden = hidden

    def text(self, exc: BaseException) -> tuple[str, str | None]:
        """What a remote client is told of ``exc``, and the incident id the log must name (``None``: none).

        Args:
            exc: What a tool, resource or route raised.

        Returns:
            ``<code>: <message>``, and the incident id of a ``SERVER_SIDE`` failure.
        """
        code = error_code(exc)
        told = SERVER_SIDE.get(code)
        if told is not None:
            incident = secrets.token_hex(4)
            return f"{code}: {told}; if it persists, tell the server's operator (incident {incident})", incident
        message = _URL.sub("the store's database", _message(exc))
        for secret in sorted({text for text in self.hidden() if text}, key=len, reverse=True):
            message = message.replace(secret, "the store")
        return f"{code}: {_cut(message, 'message')}", None


def told(exc: BaseException, redaction: Redaction | None) -> tuple[str, str]:
    """What a client is told of a failure, and what the server's log says of it.

    Args:
        exc: What a tool, resource or route raised.
        redaction: How a remote client is told (``None``: the local user, over stdio, gets the whole text).

    Returns:
        The client's text (``error_text``, bounded, for the local user), and the log's: the whole
        ``error_text``, followed by the incident id when the client was given one.
    """
    if redaction is None:
        return error_text(exc, bounded=True), error_text(exc)
    text, incident = redaction.text(exc)
    return text, error_text(exc) + ("" if incident is None else f"\n(incident {incident})")


def _refusal(text: str) -> ToolError:
    """The ``ToolError`` to raise: the SDK answers a session's call with it as an ``isError`` result of this text."""
    return ToolError(text)


def tool_error(exc: BaseException, tool: str, redaction: Redaction | None = None) -> ToolError:
    """The error for a failed tool call, logged the way the failure deserves.

    Args:
        exc: What the tool raised.
        tool: The tool's name, for the log.
        redaction: How a remote client is told (``None``: the local user gets the whole text).

    Returns:
        The ``ToolError`` to raise, its text starting with the code.
    """
    if error_code(exc) == UNEXPECTED:
        logger.error("tool %s failed unexpectedly", tool, exc_info=exc)
        return _refusal(f"{UNEXPECTED}: {tool} failed unexpectedly ({type(exc).__name__}); "
                       "the server log has the details")
    text, logged = told(exc, redaction)
    logger.info("tool %s: %s", tool, logged)
    return _refusal(text)


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
    shown, unknown = _problems(error, "arguments")
    takes = f" ({tool} takes {', '.join(arguments)})" if unknown else ""
    logger.info("tool %s refused its arguments: %s", tool, shown)
    return _refusal(f"{USAGE}: {tool}: {_cut(shown, 'message')}{takes}")


def _problems(error: ValidationError, whole: str) -> tuple[str, bool]:
    """Each problem of ``error`` as ``where: what`` (at most ``MAX_PROBLEMS``), and whether a top-level key is unknown.

    ``whole`` names the value itself, for a problem with no location.
    """
    problems: list[str] = []
    unknown = False
    for problem in error.errors(include_url=False, include_context=False, include_input=False):
        where = ".".join(str(part) for part in problem["loc"]) or whole
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
    return shown, unknown


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


def unknown_resource(uri: str, known: Iterable[str]) -> ResourceNotFoundError:
    """The error for a read of a URI that names no resource of this server, naming the ones it has.

    The SDK's own answer (``Unknown resource: URI``, JSON-RPC -32602) carries
    no code; this one is ``resource_error``'s kind: the same -32602, its text
    starting ``not_found: ``.

    Args:
        uri: The URI the client asked for.
        known: The resources' URIs and URI templates.

    Returns:
        The ``ResourceNotFoundError`` to raise.
    """
    logger.info("unknown resource %r", uri[:200])
    return ResourceNotFoundError(f"{NOT_FOUND}: no resource {_cut(uri, 'message')}; the resources are "
                                 f"{', '.join(known)}")


async def coded_refusals(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: the SDK's own refusals of a request, with a code like every other refusal.

    The SDK answers a method it does not serve with ``Method not found``
    (-32601) and parameters that break a method's schema with ``Invalid
    request parameters`` (-32602, saying nothing of which), neither with a
    code.  The JSON-RPC codes stay; the message becomes ``usage: `` and what
    was wrong, as a refused tool argument is told (``usage_error``).  Every
    other outcome passes through unchanged.

    Args:
        ctx: The request's context.
        call_next: The rest of the chain.

    Returns:
        The rest of the chain's result.

    Raises:
        MCPError: The request was refused.
    """
    try:
        return await call_next(ctx)
    except ValidationError as exc:  # the params broke the method's schema
        shown, _ = _problems(exc, "params")
        logger.info("%s refused its params: %s", ctx.method, shown)
        raise MCPError(code=INVALID_PARAMS, message=f"{USAGE}: {_cut(ctx.method, 'message')}: "
                       f"{_cut(shown, 'message')}", data="") from exc
    except MCPError as exc:
        if exc.error.code != METHOD_NOT_FOUND:
            raise
        logger.info("unknown method %r", ctx.method[:200])
        raise MCPError(code=METHOD_NOT_FOUND, message=f"{USAGE}: this server has no method "
                       f"{_cut(ctx.method, 'message')}", data=exc.error.data) from exc


def resource_error(exc: BaseException, uri: str, redaction: Redaction | None = None) -> ResourceError:
    """The SDK error to raise for a failed resource read.

    Args:
        exc: What reading the resource raised.
        uri: The resource, for the log.
        redaction: How a remote client is told (``None``: the local user gets the whole text).

    Returns:
        ``ResourceNotFoundError`` (JSON-RPC -32602) when the thing named does
        not exist (``not_found``, ``invalid_ref``), else ``ResourceError``
        (-32603); the message is what ``told`` tells the client.
    """
    text, logged = told(exc, redaction)
    if error_code(exc) == UNEXPECTED:
        logger.error("reading %s failed unexpectedly: %s", uri, logged, exc_info=exc)
    else:
        logger.info("resource %s: %s", uri, logged)
    missing = isinstance(exc, mnem_bridge.NotFoundError | mnem_bridge.InvalidRefError)
    return (ResourceNotFoundError if missing else ResourceError)(text)
