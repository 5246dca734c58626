"""``mnem_mcp``: an agent's version-controlled memory as MCP tools and resources.

``mnem-mcp`` (``cli``) serves one store over stdio; ``build_server``
(``server``) gives the same server for an in-process client.  Each tool is
declared once, as a typed method of ``tools.MemoryTools`` over the bridge;
the resources are plain functions over a ``mnem_bridge.Store``
(``resources``).  This package never touches the store engine itself, only
the bridge.  Module map: ``binding`` (which store, opened per call),
``models`` (argument and result shapes), ``answers`` (results on the wire),
``errors`` (coded error texts), ``stdio`` and ``http`` (the transports),
``operations`` (what each tool does, over an open store: also upstream's
``do_<tool>`` functions, exported here and by ``server`` as upstream's are),
``client`` (the SDK's client for a remote server, whose refusals say why).
"""

from __future__ import annotations

import logging
from typing import Any

from .binding import StoreBinding, default_store_path, locate_store, resolve_store_path

__all__ = [
    "TOOLS", "StoreBinding", "build_server", "default_store_path", "do_branch", "do_commit_view", "do_forget",
    "do_history", "do_merge", "do_recall", "do_recall_at", "do_remember", "do_remember_many", "do_revert",
    "do_switch", "do_whats_new", "do_when_did", "do_why", "error_code", "locate_store", "resolve_store_path",
]

logging.getLogger(__name__).addHandler(logging.NullHandler())


def __getattr__(name: str) -> Any:
    """``TOOLS``, ``build_server``, ``error_code`` and the ``do_*`` functions load the MCP SDK on first use.

    ``mnem-mcp`` starts ``mnem`` first.
    """
    if name == "TOOLS":
        from . import tools

        return tools.TOOLS
    if name == "build_server":
        from . import server

        return server.build_server
    if name == "error_code":
        from . import errors

        return errors.error_code
    if name.startswith("do_"):  # upstream's operations
        from . import operations

        if name in operations.__all__:
            return getattr(operations, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
