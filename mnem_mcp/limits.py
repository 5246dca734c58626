"""How large a request body each route of the HTTP transport takes: the defaults, and a route's ``Limit``.

``bodies.BodyLimits`` enforces them (module docstring there); ``cli`` reads
the defaults for ``--max-body`` and ``--max-pack`` before the HTTP stack
loads, so this module imports nothing of it.
"""

from __future__ import annotations

from typing import Final, NamedTuple

__all__ = [
    "DEFAULT_BODY_TIMEOUT", "DEFAULT_MAX_BODY", "DEFAULT_MAX_PACK", "DEFAULT_MAX_REQUESTS", "NO_BODY", "Limit", "shown",
]

#: ``--max-body``: one JSON-RPC message to the MCP endpoint (a ``remember_many`` of thousands of facts fits).
DEFAULT_MAX_BODY: Final = 16 << 20
#: ``--max-pack``: one push's pack (about 3.8 million one-fact commits, at 277 bytes each: BENCHMARKS.md).
DEFAULT_MAX_PACK: Final = 1 << 30
#: ``--body-timeout``: seconds a request's whole body may take to arrive (a 1 GiB pack at 1.8 MB/s fits).
DEFAULT_BODY_TIMEOUT: Final = 600.0
#: ``--max-requests``: requests with a body served at once, so bodies held in memory stay under 64 x ``--max-body``.
DEFAULT_MAX_REQUESTS: Final = 64


class Limit(NamedTuple):
    """The most a route takes: ``size`` bytes of ``what``; ``option`` raises it (``None``: a fixed bound).

    ``streamed``: the route reads its body as it arrives (``bodies``); else the body is read for it first.
    """

    size: int
    what: str
    option: str | None = None
    streamed: bool = False


#: What a method without a body may send.
NO_BODY: Final = Limit(0, "a request of this method")


def shown(size: int) -> str:
    """A byte count as people read it: ``16777216 bytes (16 MiB)``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{size} bytes ({size / (1 << shift):.4g} {unit})"
    return f"{size} bytes"
