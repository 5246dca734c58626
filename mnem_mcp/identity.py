"""Who is calling, per request: the commit author a write records, and whether it may write.

Over stdio (and over HTTP with ``--auth none``) nobody is authenticated:
every write records the server's own author, ``mnem-mcp --author NAME``,
else ``$MNEM_AUTHOR``, else ``AUTHOR`` (``default_author``), and
every tool may be called.  Over HTTP with ``--auth jwt`` the SDK's bearer
middleware puts the verified token in a context variable that follows the
request into its tool call (``get_access_token``), so a write records the
token's subject (``sub``, else its client id), whatever the server was
started with; no tool argument names an author, so a client cannot write
as another.  ``history``, ``why`` and ``mnem blame`` then say who made each
commit.  A push (``remote_sync``) is the one way in for commits made
elsewhere, which keep the authors they were made with: the store records
the pusher beside them (``author`` again: the token's subject, else the
server's own author), and ``history`` and ``why`` name it where it differs.

Scopes: ``mnem:read`` lets a token use the server at all (the HTTP layer
answers ``403 insufficient_scope`` without it); the tools that change
memory or its branches also need ``mnem:write``, and a call without it is
answered with a typed tool error (``insufficient_scope: ...``) rather than
an HTTP status, so the model reads why, and a read-only token keeps its
session.
"""

from __future__ import annotations

import os
from typing import Final

from mcp.server.auth.middleware.auth_context import get_access_token

__all__ = [
    "AUTHOR", "AUTHOR_ENV", "READ_SCOPE", "REDACT_SCOPE", "SCOPES", "WRITE_SCOPE", "author", "default_author",
    "missing_write_scope",
]

#: The scope every request needs over HTTP with ``--auth jwt``: tools that read, resources, listings.
READ_SCOPE: Final = "mnem:read"
#: The scope a tool that writes needs besides ``READ_SCOPE``.
WRITE_SCOPE: Final = "mnem:write"
#: The scope an HTTP push that brings redaction records needs besides ``WRITE_SCOPE`` (``remote_sync``): removing
#: bytes from the served store's history is a right of its own, which a token that may only add does not hold.
REDACT_SCOPE: Final = "mnem:redact"
#: Every scope this server understands, as its Protected Resource Metadata lists them.
SCOPES: Final = (READ_SCOPE, WRITE_SCOPE, REDACT_SCOPE)
#: Names the author when ``--author`` is not given: the variable ``mnem commit`` reads too.
AUTHOR_ENV: Final = "MNEM_AUTHOR"
#: The author a write records when neither names one (``mnem_bridge.agents``' default).
AUTHOR: Final = "agent"


def default_author(explicit: str | None = None) -> str:
    """The author of writes that carry no token: ``explicit`` (``--author``), else ``$MNEM_AUTHOR``, else ``AUTHOR``.

    An empty ``$MNEM_AUTHOR`` counts as unset, as an empty variable usually does.

    Args:
        explicit: The author the operator named, if any.

    Returns:
        The author.
    """
    return explicit if explicit is not None else os.environ.get(AUTHOR_ENV) or AUTHOR


def author(default: str) -> str:
    """The author the current request's writes record.

    Args:
        default: The server's own author, for a request that carries no token (``default_author``).

    Returns:
        The token's subject, else its client id; ``default`` when the request carries no token.
    """
    token = get_access_token()
    if token is None:
        return default
    return token.subject or token.client_id


def missing_write_scope(tool: str) -> str | None:
    """Why the current request may not call a tool that writes, if it may not.

    Args:
        tool: The tool's name, for the message.

    Returns:
        The message of the ``insufficient_scope`` error, or ``None`` when the
        request carries no token or its token has ``WRITE_SCOPE``.
    """
    token = get_access_token()
    if token is None or WRITE_SCOPE in token.scopes:
        return None
    held = " ".join(token.scopes) or "no scopes"
    return (f"{tool} changes memory and needs the scope {WRITE_SCOPE}; this token has {held}. "
            f"Ask the issuer for a token with scope \"{READ_SCOPE} {WRITE_SCOPE}\"")
