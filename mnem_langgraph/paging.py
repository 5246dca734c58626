"""The paging arguments of a search or a namespace listing, checked before anything is read.

``BaseStore.search`` and ``list_namespaces`` take ``limit`` and ``offset``
(and ``max_depth``) as plain ints, and ``InMemoryStore`` does not check
them: it slices with whatever it is given, so ``offset=-1`` counts from the
end and ``max_depth=0`` lists the empty namespace.  Here each is checked
once, for every op of a batch, and a value out of range is a
``mnem_bridge.UsageError`` (a ``ValueError``, what ``batch`` documents for a
bad op) naming the argument and its range: never an error from deep inside
a ranking or an ``islice``.

The ranges: ``limit`` and ``offset`` are whole numbers from 0 (``limit=0``
asks for nothing and gets nothing, as in LangGraph's stores) up to
``MAX_PAGING`` (2**62, so ``offset + limit`` is still an index Python
slices by: ``islice`` refuses one past ``sys.maxsize``);
``max_depth`` is ``None`` or from 1 up (a namespace of no labels is not a
namespace).  A ``bool`` is not a count.
"""

from __future__ import annotations

from typing import Final

from langgraph.store.base import ListNamespacesOp, Op, SearchOp

import mnem_bridge

__all__ = ["MAX_PAGING", "check_paging"]

#: The largest ``limit``, ``offset`` or ``max_depth`` accepted, far beyond any store's size.
MAX_PAGING: Final = 2**62


def check_paging(op: Op) -> None:
    """Refuse a search's or a listing's ``limit``, ``offset`` or ``max_depth`` outside its range.

    Args:
        op: One op of a batch; only ``SearchOp`` and ``ListNamespacesOp`` have paging.

    Raises:
        mnem_bridge.UsageError: An argument out of range or not a whole number, named with its range.
    """
    if isinstance(op, (SearchOp, ListNamespacesOp)):
        _check("limit", op.limit, 0)
        _check("offset", op.offset, 0)
    if isinstance(op, ListNamespacesOp) and op.max_depth is not None:
        _check("max_depth", op.max_depth, 1)


def _check(name: str, value: object, least: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not least <= value <= MAX_PAGING:
        shown = repr(value) if len(repr(value)) <= 80 else f"{repr(value)[:80]}..."
        raise mnem_bridge.UsageError(f"{name} must be a whole number from {least} to {MAX_PAGING}, got {shown}")
