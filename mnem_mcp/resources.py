"""The MCP resources: memory a client can keep in context without a tool call.

Plain functions over an open bridge ``Store`` return the JSON each resource
serves, plus the caching policy for the 2026-07-28 protocol (``ttlMs`` /
``cacheScope`` on ``resources/read``): memory and the log change with every
write, so their hints are a few seconds; a commit named by its full id can
never change, so its hint is a day (the SDK client's cap).  Every hint is
``private``: a store is one agent's memory.  A commit named by a branch or a
prefix gets the short hint, since a branch moves.  Handshake-era sessions
(2025-11-25 and earlier) have no cache hints; the SDK drops them there.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from mcp.server import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

import mnem_bridge
from mnem_bridge import reserved

from .models import logged

__all__ = [
    "COMMIT_URI",
    "IMMUTABLE",
    "LIVE",
    "LOG_LIMIT",
    "LOG_URI",
    "MEMORY_URI",
    "NODE_URI",
    "ResourceCacheHints",
    "cache_hint",
    "commit",
    "log",
    "memory",
    "node",
    "node_uri",
    "stale_after_write",
]

logger = logging.getLogger(__name__)

MEMORY_URI = "mnem://memory"
NODE_URI = "mnem://memory/{node_id}"
LOG_URI = "mnem://log"
COMMIT_URI = "mnem://commit/{id}"

#: How many commits ``mnem://log`` shows (the ``history`` tool pages further).
LOG_LIMIT = 20

#: Memory and the log: fresh for a few seconds (a write makes them stale at once).
LIVE = CacheHint(ttl_ms=3_000, scope="private")
#: A commit by full id: immutable; a day is the longest the SDK client keeps anything.
IMMUTABLE = CacheHint(ttl_ms=86_400_000, scope="private")

_FULL_COMMIT_URI = re.compile(r"^mnem://commit/[0-9a-f]{64}$")


def memory(store: mnem_bridge.Store) -> dict[str, Any]:
    """``mnem://memory``: the current memory, ``{node id: node}``, without checkpoints (``mnem_bridge.reserved``)."""
    return dict(reserved.visible_whole(store.whole_memory()).document)


def node(store: mnem_bridge.Store, node_id: str) -> dict[str, Any] | None:
    """``mnem://memory/{node_id}``: one node of the current memory, or ``None`` (JSON ``null``) when it is absent.

    ADR-0016 backs it by ``working_node``, which answers nothing for an
    absent node; upstream's server serves that as ``null``, so a client can
    poll a fact that does not exist yet without handling an error.
    """
    found = None if reserved.is_reserved(node_id) else store.working_node(node_id)
    return None if found is None else found.to_dict()


def log(store: mnem_bridge.Store) -> list[dict[str, Any]]:
    """``mnem://log``: the latest ``LOG_LIMIT`` commits, newest first, as ``history`` lists them (``models.logged``)."""
    return [dict(logged(commit, pusher)) for commit, pusher in store.log_attributed(limit=LOG_LIMIT)]


def commit(store: mnem_bridge.Store, id: str) -> dict[str, Any]:
    """``mnem://commit/{id}``: what the commit changed and the memory it recorded.

    Returns:
        ``{"changed": {node id: "added" | "modified" | "removed"}, "state": {node id: node}}``.
    """
    changed = reserved.visible(store.changed_by(id))
    return {"changed": changed, "state": dict(reserved.visible_whole(store.whole_memory(at=id)).document)}


def cache_hint(uri: str) -> CacheHint:
    """The freshness hint for one resource read.

    Args:
        uri: The URI that was read.

    Returns:
        ``IMMUTABLE`` for a commit named by its full id, else ``LIVE``.
    """
    return IMMUTABLE if _FULL_COMMIT_URI.match(uri) else LIVE


def stale_after_write(node_ids: Iterable[str]) -> list[str]:
    """The resource URIs a write makes stale: memory, the log, and each written node.

    Args:
        node_ids: The nodes the write touched (may be empty, e.g. for a merge).

    Returns:
        URIs to announce as updated.
    """
    return [MEMORY_URI, LOG_URI, *(node_uri(node_id) for node_id in node_ids)]


def node_uri(node_id: str) -> str:
    """The URI of one node, percent-encoding what a URI path segment cannot hold (``/``, ``?``, ``#``, ...)."""
    return NODE_URI.format(node_id=quote(node_id, safe=":@!$&'()*+,;="))


class ResourceCacheHints:
    """Server middleware: set each ``resources/read`` result's hint from ``cache_hint(uri)``.

    ``MCPServer``'s ``cache_hints`` apply one hint per method, and its resource
    decorator has no per-resource hint.  The server-wide ``resources/read``
    hint makes the SDK put ``ttlMs``/``cacheScope`` on every read result of a
    2026-07-28 session (and leave them off handshake-era ones); this rewrites
    those two keys per URI on the way out, so it never adds them where the
    SDK left them off.
    """

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Pass the request on; retune the read result's hint for its URI."""
        result = await call_next(ctx)
        if ctx.method == "resources/read" and isinstance(result, dict) and "ttlMs" in result:
            hint = cache_hint(str((ctx.params or {}).get("uri", "")))
            result = {**result, "ttlMs": hint.ttl_ms, "cacheScope": hint.scope}
        return result
