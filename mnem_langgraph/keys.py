"""The ops a batch may run, by BaseStore's namespace rules, and the item ids they name.

How ``(namespace, key)`` lies in a node id (each part escaped, joined with
``:``, exactly upstream's id where no part holds ``:`` or ``%``) is
``mnem_ids.items``, shared with the engine, which answers searches and
listings over the same ids; this module hands those functions on under the
adapter's names.  Node ids no put could have produced are not items: search
and list_namespaces skip them, so every item they return can be fetched
again by ``get`` with the namespace and key it reports.
"""

from __future__ import annotations

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
from mnem_bridge.text import is_utf8, shown
from mnem_ids import decode_part, encode_part
from mnem_ids.items import id_prefix, node_id
from mnem_ids.items import parse_id as parse_node_id

from .paging import check_paging

__all__ = ["check_op", "decode_part", "encode_part", "id_prefix", "node_id", "parse_node_id"]


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
