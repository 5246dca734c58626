"""How ``MnemosyneStore`` lays out LangGraph's items in node ids: the one spelling of that layout (see the package).

ADR-0016 maps ``(namespace, key)`` to the node id ``":".join((*namespace,
key))``.  Upstream's adapter splits ids on every ``:`` again, so a label or
key holding ``:`` comes back as other labels; here each part is escaped
first (``mnem_ids.encode_part``), and a plain id is exactly upstream's.

The adapter builds ids with ``node_id`` and reads answers back with
``parse_id``; the engine (``mnem search``, ``mnem namespaces``) uses the
same functions to decide which nodes are items and where each lies, so the
two can never disagree.

An id is an item only if a put could have written it: it has a ``:``,
every part is its own escape's image (no stray ``%``), and no label is
empty or holds ``.`` or NUL (BaseStore refuses those labels).  A
checkpoint's nodes (``mnem_ids.checkpoints``) start with a ``.`` label, so
no item is ever one of them.
"""

from __future__ import annotations

from . import ESCAPE, SEPARATOR, decode_part, encode_part

__all__ = ["id_prefix", "node_id", "parse_id"]


def node_id(namespace: tuple[str, ...], key: str) -> str:
    """The node id of a key in a namespace.

    Args:
        namespace: The namespace labels.
        key: The key within the namespace.

    Returns:
        The escaped parts joined with ``:``.
    """
    return SEPARATOR.join(encode_part(part) for part in (*namespace, key))


def id_prefix(labels: tuple[str, ...]) -> str:
    """What the node id of every item under a namespace prefix starts with (``""`` for all).

    Each label is followed by the separator, so ``("memories", "u1")`` gives
    ``memories:u1:``, which ``("memories", "u10")`` and a key ``u1`` of
    ``("memories",)`` do not start with.
    """
    return "".join(encode_part(label) + SEPARATOR for label in labels)


def parse_id(text: str) -> tuple[tuple[str, ...], str] | None:
    """Split a node id back into ``(namespace, key)``.

    Args:
        text: A node id from the store.

    Returns:
        The namespace and key, or ``None`` when the id is not one a put
        could have written: no ``:``, a part that is not a valid escape, or
        a label BaseStore refuses (empty, or holding ``.`` or NUL), which
        leaves out a checkpoint's nodes.
    """
    parts = text.split(SEPARATOR)
    if len(parts) < 2:
        return None
    if ESCAPE in text:
        decoded: list[str] = []
        for part in parts:
            plain = decode_part(part)
            if plain is None:
                return None
            decoded.append(plain)
    else:  # the usual id: with neither character, every part is its own encoding (a search reads thousands)
        decoded = parts
    *labels, key = decoded
    if any(not label or "." in label or "\x00" in label for label in labels):
        return None
    return tuple(labels), key
