"""LangGraph's items in node ids: ``(namespace, key)`` as ``label:label:key``, the engine's one copy of that layout.

``mnem search`` and ``mnem namespaces`` answer ``MnemosyneStore``'s reads
where the values are, so they must know which node ids are items, which
namespace each lies in and in which order items come.  That knowledge lives
here alone; ``tests/store/test_items.py`` holds it equal to the adapter's
(``mnem_langgraph.keys``) on generated ids.

A node id is its labels and key, each escaped as any part of an id is
(``mnem_ids.encode_part``) and joined with ``:``.  An id is an item only if a put could have
written it: it has a ``:``, every part is its own escape's image (no stray
``%``), and no label is empty or holds ``.`` or NUL (BaseStore refuses those
labels).  LangGraph's checkpoints (``mnem_ids.checkpoints``) fail the last rule,
so no item is ever a checkpoint's node.  A node whose content is not a dict
(written by ``mnem add`` or an MCP ``remember``) is the item value
``{"value": content}``.
"""

from __future__ import annotations

from typing import Any

from mnem_ids import ESCAPE, SEPARATOR, decode_part, encode_part

__all__ = ["SEPARATOR", "id_prefix", "item_value", "node_id", "parse_id"]


def node_id(namespace: tuple[str, ...], key: str) -> str:
    """The node id of ``key`` in ``namespace``."""
    return SEPARATOR.join(encode_part(part) for part in (*namespace, key))


def id_prefix(labels: tuple[str, ...]) -> str:
    """What the id of every item under the namespace prefix ``labels`` starts with (``""``: every item)."""
    return "".join(encode_part(label) + SEPARATOR for label in labels)


def parse_id(text: str) -> tuple[tuple[str, ...], str] | None:
    """``(namespace, key)`` of an item's node id, or None for an id no put could have written."""
    parts = text.split(SEPARATOR)
    if len(parts) < 2:
        return None
    if ESCAPE in text:
        decoded = []
        for part in parts:
            plain = decode_part(part)
            if plain is None:
                return None
            decoded.append(plain)
        parts = decoded
    *labels, key = parts
    if any(not label or "." in label or "\x00" in label for label in labels):
        return None
    return tuple(labels), key


def item_value(content: Any) -> dict[str, Any]:
    """The item value a node's content is: a dict as it is, anything else as ``{"value": content}``."""
    return content if isinstance(content, dict) else {"value": content}
