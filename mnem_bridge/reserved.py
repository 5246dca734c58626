"""Node ids reserved for what adapters keep in a store beside memory, which agents never see.

LangGraph's checkpoints (``mnem_langgraph.MnemosyneSaver``) live in the same
store as long-term memory, so that a checkpoint and the memory it ran with
share one history.  They are graph execution state, not beliefs: the MCP
tools and resources (``recall``, ``mnem://memory``) and ``MnemosyneStore``'s
reads leave every node under ``CHECKPOINT_PREFIX`` out.  The prefix starts
with ``.``, which no LangGraph namespace label may hold, so no
``MnemosyneStore.put`` can write under it.

Nor may any other writer: a checkpoint's values are LangGraph's serializer's
bytes, read back by the saver, so whoever writes one chooses what the saver
loads.  ``agents`` (and so every MCP write tool) refuses a reserved id with
``refuse_reserved`` before anything is written, and ``mnem write`` refuses
one unless given ``--allow-reserved`` (``Store.write(allow_reserved=True)``,
which only the saver passes).

The prefix, like the rest of the checkpoint layout, is ``mnem_ids``'s
(``mnem_ids.checkpoints``): the engine refuses the same ids by the same
spelling.  It is named here too, where the bridge's users have always found it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

import orjson

from mnem_ids.checkpoints import CHECKPOINT_PREFIX

from .errors import UsageError
from .models import MemoryPage, WholeMemory
from .text import shown

__all__ = ["CHECKPOINT_PREFIX", "is_reserved", "refuse_reserved", "visible", "visible_page", "visible_whole"]

V = TypeVar("V")


def is_reserved(node_id: str) -> bool:
    """Whether a node id is one of the reserved ones agents are not shown."""
    return node_id.startswith(CHECKPOINT_PREFIX)


def refuse_reserved(node_ids: Iterable[object], writer: str) -> None:
    """Refuse a write that names a reserved id: only ``MnemosyneSaver`` writes under ``CHECKPOINT_PREFIX``.

    Args:
        node_ids: The ids a write puts or deletes (ids that are not text are
            left to the checks that refuse them).
        writer: What is writing, to start the message (``remember``, ``forget``, ...).

    Raises:
        UsageError: One of ``node_ids`` is reserved; nothing has been written.
    """
    for node_id in node_ids:
        if isinstance(node_id, str) and node_id.startswith(CHECKPOINT_PREFIX):
            raise UsageError(f"{writer}: the node id {shown(node_id)} is reserved: ids starting "
                             f"{CHECKPOINT_PREFIX!r} hold LangGraph checkpoints, which only MnemosyneSaver writes; "
                             f"choose an id that does not start with {CHECKPOINT_PREFIX!r}")


def visible(memory: Mapping[str, V]) -> dict[str, V]:
    """A memory map (``{node id: node}``) without its reserved nodes, in the same order."""
    return {node_id: node for node_id, node in memory.items() if not node_id.startswith(CHECKPOINT_PREFIX)}


def visible_page(page: MemoryPage) -> MemoryPage:
    """A page of memory (``Store.memory_page``) without its reserved nodes; its cursor still reads on.

    The page keeps the binary's bytes when it holds no reserved node, the usual case.
    """
    if not _holds_reserved(page.document["memory"]):
        return page
    document = {**page.document, "memory": visible(page.document["memory"])}
    return MemoryPage(orjson.dumps(document), document)


def visible_whole(memory: WholeMemory) -> WholeMemory:
    """The whole memory (``Store.whole_memory``) without its reserved nodes.

    It keeps the binary's bytes when it holds no reserved node, the usual case.
    """
    if not _holds_reserved(memory.document):
        return memory
    document = visible(memory.document)
    return WholeMemory(orjson.dumps(document), document)


def _holds_reserved(memory: Mapping[str, Any]) -> bool:
    """Whether a memory map holds a reserved node: only then is it encoded again (as the binary encodes, by orjson)."""
    return any(node_id.startswith(CHECKPOINT_PREFIX) for node_id in memory)
