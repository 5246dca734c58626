"""``mnem_langgraph``: LangGraph's long-term memory store on Mnemosyne.

``MnemosyneStore`` is a ``BaseStore`` where every batch of writes is one
commit with provenance, and which adds ``branch`` / ``switch`` / ``merge``
/ ``why`` / ``history`` / ``at`` for graph nodes to call.  It runs the
``mnem`` binary through ``mnem_bridge`` and never imports the engine.  See
docs/langgraph.md.
"""

from __future__ import annotations

import logging

from .keys import node_id, parse_node_id
from .store import MnemosyneStore, Resolution
from .view import MemoryView, ReadOnlyError

__all__ = ["MemoryView", "MnemosyneStore", "ReadOnlyError", "Resolution", "node_id", "parse_node_id"]

logging.getLogger(__name__).addHandler(logging.NullHandler())
