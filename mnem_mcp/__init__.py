"""``mnem_mcp``: an agent's version-controlled memory as MCP tools and resources.

The tools are plain functions over a ``mnem_bridge.Store`` (``tools``); this
package never touches the store engine itself, only the bridge.  Module map:
``binding`` (which store, opened per call), ``models`` (argument and result
shapes), ``tools`` (what each tool does).
"""

from __future__ import annotations

import logging

from .binding import StoreBinding, default_store_path, locate_store

__all__ = ["StoreBinding", "default_store_path", "locate_store"]

logging.getLogger(__name__).addHandler(logging.NullHandler())
