"""A search or a namespace listing as one engine read: ``mnem search``, ``mnem namespaces``.

The engine finds the candidates, applies the filter, ranks by the store's
``query_mode`` and cuts the page in one read transaction (docs/cli-json.md
says how each mode orders); only the page's items cross the process
boundary.  So the adapter keeps nothing of the store's data between calls:
what it sends is the op as LangGraph gave it, plus, for a mode that ranks by
vectors, the query's embedding and the name the vectors are stored under.

``MnemosyneStore`` reads the live memory (leases applied) of HEAD's branch,
or a coupled step's branch as committed (``Store.on``: ``mnem`` applies
leases to HEAD's branch only); ``MemoryView`` reads one commit (``at``).
"""

from __future__ import annotations

from datetime import datetime

from langgraph.store.base import ListNamespacesOp, SearchItem, SearchOp

from mnem_bridge import SearchHit, Store

from .convert import from_ms
from .index import Embedded, EmbeddingIndex
from .ranking import QueryMode

__all__ = ["namespaces", "search", "search_items"]


def search(store: Store, op: SearchOp, mode: QueryMode, index: EmbeddingIndex | None, embedded: Embedded,
           at: str | None = None, valid_at: int | None = None) -> list[SearchHit]:
    """The page ``op`` asks for, answered as ``mode`` says, in one ``mnem search``.

    Args:
        store: The bridge store, or a view on a coupled step's branch.
        op: A checked search.
        mode: The store's query mode.
        index: The index a ``"vector"`` or ``"hybrid"`` query ranks by (None in the other modes).
        embedded: The batch's vectors; it holds the query's when ``index`` is given.
        at: The commit to read (a ``MemoryView``'s), else the live memory.
        valid_at: With ``at``: the items valid at this time (Unix ms) along its history instead.

    Raises:
        UsageError: A filter operator outside LangGraph's six (a ``ValueError``); nothing is read.
    """
    ranked = index is not None and bool(op.query)
    return store.search(
        op.namespace_prefix, query=op.query, mode=mode, filter=op.filter, limit=op.limit, offset=op.offset,
        fields=[path for path, _ in index.fields] if index is not None else None,
        model=index.model if ranked and index is not None else None,
        vector=embedded.queries[op.query or ""] if ranked else None,
        distance=index.distance if index is not None else "cosine",
        at=at, live=at is None and store.view_branch is None, valid_at=valid_at,
    )


def search_items(hits: list[SearchHit]) -> list[SearchItem]:
    """LangGraph's items for a page of hits (each value the hit's own, fresh from the engine's answer).

    A page's items often share their times (written by one commit, or
    never updated), so each time is converted once per page.
    """
    times: dict[int, datetime] = {}

    def when(ms: int) -> datetime:
        found = times.get(ms)
        if found is None:
            found = times[ms] = from_ms(ms)
        return found

    return [SearchItem(hit.namespace, hit.key, hit.value, when(hit.created), when(hit.updated), score=hit.score)
            for hit in hits]


def namespaces(store: Store, op: ListNamespacesOp, at: str | None = None,
               valid_at: int | None = None) -> list[tuple[str, ...]]:
    """``list_namespaces``' answer to ``op`` in one ``mnem namespaces`` (``at`` and ``valid_at`` as ``search``'s).

    Raises:
        ValueError: A match condition that is neither ``prefix`` nor ``suffix`` (InMemoryStore's refusal).
    """
    conditions = []
    for condition in op.match_conditions or ():
        if condition.match_type not in ("prefix", "suffix"):
            raise ValueError(f"Unsupported match type: {condition.match_type}")
        conditions.append((condition.match_type, tuple(condition.path)))
    return store.namespaces(conditions=conditions, max_depth=op.max_depth, limit=op.limit, offset=op.offset,
                            at=at, live=at is None and store.view_branch is None, valid_at=valid_at)
