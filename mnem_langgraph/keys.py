"""Node ids for namespaced keys, with an escape so every label and key round-trips.

ADR-0016 maps ``(namespace, key)`` to the node id ``":".join((*namespace,
key))``.  Upstream's adapter splits ids on every ``:`` again, so a label or
key containing ``:`` comes back as different labels.  Here each part is
escaped before joining, as ``mnem_ids.encode_part`` escapes any part of an
id (percent-encoding of ``%`` and ``:`` alone).  Parts without either
character are unchanged, so ``("memories", "u1")`` + ``"plan"`` is
``memories:u1:plan`` exactly as upstream writes it.

Decoding is strict: a part is read back only if encoding the result gives
the part again.  Node ids that no put could have produced (no ``:`` at all,
a stray ``%``, a label BaseStore would refuse) are not items of the store:
search and list_namespaces skip them, so every item they return can be
fetched again by ``get`` with the namespace and key it reports.
"""

from __future__ import annotations

import logging

from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    Op,
    PutOp,
    SearchOp,
    validate_op_namespace,
)

import mnem_bridge
from mnem_bridge.reserved import is_reserved
from mnem_bridge.text import is_utf8, shown
from mnem_ids import ESCAPE, SEPARATOR, decode_part, encode_part

from .paging import check_paging

__all__ = [
    "ESCAPE", "SEPARATOR", "check_op", "decode_part", "encode_part", "id_prefix", "node_id", "parse_node_id",
]

logger = logging.getLogger(__name__)

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


def parse_node_id(text: str) -> tuple[tuple[str, ...], str] | None:
    """Split a node id back into ``(namespace, key)``.

    Args:
        text: A node id from the store.

    Returns:
        The namespace and key, or ``None`` when the id is not one a put
        could have written: no ``:``, a part that is not a valid escape, or
        a label BaseStore refuses (empty, or containing ``.`` or NUL), or
        a reserved id (``mnem_bridge.reserved``: a checkpoint's nodes).
    """
    if is_reserved(text):  # a checkpoint's node (MnemosyneSaver): graph state, never an item
        return None
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


def _check_nameable(namespace: tuple[str, ...], key: object) -> None:
    for label in namespace:
        if not is_utf8(label):
            raise InvalidNamespaceError(f"Invalid namespace label {label!r} found in {namespace!r}. Namespace labels "
                                        "must be text: this one holds a lone surrogate, which has no UTF-8 encoding.")
    if not isinstance(key, str):
        raise mnem_bridge.UsageError(f"the key must be a string, got {type(key).__name__} {key!r}")
    if "\0" in key:
        raise mnem_bridge.UsageError(f"the key {shown(key)} holds NUL, which no mnem command line can carry")
    if not is_utf8(key):
        raise mnem_bridge.UsageError(f"the key {shown(key)} holds a lone surrogate, which has no UTF-8 encoding")


def check_op(op: Op) -> None:
    """BaseStore's namespace rules, applied to an op that reached ``batch`` directly.

    The public methods (``put``, ``get``, ...) validate before they build an
    op, but ``batch`` is public too and upstream's own tests feed it ops
    the methods would refuse.  Every op gets ``validate_op_namespace``'s
    label checks; a put (not a delete) must also have at least one label.
    The reserved ``"langgraph"`` root is ``put``'s rule alone: LangGraph's
    stores accept it from ``batch`` (their own tests write it that way).

    A get, put or delete must also name a node ``mnem`` can address: its
    labels and key must be text (no lone surrogates) and the key may not
    hold NUL (no command line can carry it; labels with NUL are refused
    above).  Without this the op failed deep in the bridge, with a message
    about an argument or a payload rather than about the key.

    Args:
        op: One op of a batch.

    A search's or a listing's paging must be in range (``paging``).

    Raises:
        InvalidNamespaceError: The namespace breaks a rule above.
        mnem_bridge.UsageError: The key is not a string, holds NUL, or is not text; or a paging argument is out
            of range (a ``ValueError``, like every refusal of ``batch``).
        ValueError: Not one of BaseStore's four op types.
    """
    if not isinstance(op, (GetOp, SearchOp, PutOp, ListNamespacesOp)):
        raise ValueError(f"Unknown operation type: {type(op)}")
    check_paging(op)
    validate_op_namespace(op)
    if isinstance(op, (GetOp, PutOp)):
        _check_nameable(op.namespace, op.key)
    if isinstance(op, PutOp) and op.value is not None and not op.namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")
