"""``mnem_langgraph``: LangGraph's long-term memory store on Mnemosyne.

``MnemosyneStore`` is a ``BaseStore`` where every batch of writes is one
commit with provenance, and which adds ``branch`` / ``switch`` / ``merge``
/ ``why`` / ``history`` / ``at`` for graph nodes to call.
``MnemosyneSaver`` is a checkpointer that keeps a graph's per-step state in
the same store, under ids that memory reads never show.  It runs the
``mnem`` binary through ``mnem_bridge`` and never imports the engine.  See
docs/langgraph.md.

LangGraph is the ``langgraph`` extra: without it, importing this package
raises an ImportError whose message is the install that fixes it, rather
than the bare ``No module named 'langgraph'`` of a module deep inside.
"""

from __future__ import annotations

import logging

try:
    import langchain_core  # noqa: F401  (checked before the modules below import them)
    import langgraph.store.base  # noqa: F401
except ImportError as missing:
    from mnem_bridge.install import pip_install

    raise ImportError(f"mnem_langgraph needs LangGraph, which is not installed here ({missing}): "
                      f"{pip_install('langgraph')}", name=missing.name) from missing

from .checkpoint import MemoryPin, MnemosyneSaver, UnreadableCheckpointError
from .keys import node_id, parse_node_id
from .store import MnemosyneStore, Resolution
from .view import MemoryView, ReadOnlyError

__all__ = ["MemoryPin", "MemoryView", "MnemosyneSaver", "MnemosyneStore", "ReadOnlyError", "Resolution",
           "UnreadableCheckpointError", "node_id", "parse_node_id"]

logging.getLogger(__name__).addHandler(logging.NullHandler())
