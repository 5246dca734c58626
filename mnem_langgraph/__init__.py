"""``mnem_langgraph``: LangGraph's long-term memory store on Mnemosyne.

It runs the ``mnem`` binary through ``mnem_bridge`` and never imports the
engine.  See docs/langgraph.md.
"""

from __future__ import annotations

import logging

from .keys import node_id, parse_node_id

__all__ = ["node_id", "parse_node_id"]

logging.getLogger(__name__).addHandler(logging.NullHandler())
