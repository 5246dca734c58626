r"""How ``search(query=...)`` answers: the store's query mode, checked when the store opens.

ADR-0016 makes a store's search "a plain substring filter over node ids and
stringified content within the namespace": by default (``query_mode`` None
and no index, or ``"substring"``) a query keeps the items whose node id or
value contains it, ignoring case, in ``(namespace, key)`` order, without a
score.  LangGraph's memory tools (langmem's search tool, its
``MemoryStoreManager``) send natural-language questions such as "what does
the user like to eat?", which a substring filter answers with nothing, so
``query_mode="bm25"`` ranks by Okapi BM25 over each value's words instead.
With an embedding index, a query ranks by vectors (``index``): the default
then, or ``query_mode="vector"``; ``query_mode="hybrid"`` fuses that
ranking with BM25's over the index's fields, stemmed.

The engine answers every mode (``mnem search``; docs/cli-json.md says how
each orders, what a word is and what the substring filter matches); this
module only names the modes and picks the store's.
"""

from __future__ import annotations

from typing import Literal

from mnem_bridge import UsageError

__all__ = ["QUERY_MODES", "QueryMode", "resolve_query_mode"]

#: How a store answers ``search(query=...)``: ADR-0016's substring filter, BM25 ranking, embedding ranking, or both
#: fused (``hybrid``).
QueryMode = Literal["substring", "bm25", "vector", "hybrid"]
QUERY_MODES: tuple[QueryMode, ...] = ("substring", "bm25", "vector", "hybrid")


def resolve_query_mode(chosen: str | None, indexed: bool) -> QueryMode:
    """The mode a store answers queries in: ``chosen``, else ``"vector"`` with an index, else ``"substring"``.

    Raises:
        UsageError: ``chosen`` is not a mode, or is ``"vector"`` or ``"hybrid"`` on a store without an index.
    """
    if chosen is None:
        return "vector" if indexed else "substring"
    mode = next((mode for mode in QUERY_MODES if mode == chosen), None)
    if mode is None:
        raise UsageError(
            f"query_mode must be one of {', '.join(map(repr, QUERY_MODES))}, or None (vector ranking with an "
            f"index, else the substring filter), got {chosen!r}"
        )
    if mode in ("vector", "hybrid") and not indexed:
        raise UsageError(f"query_mode={mode!r} ranks by embeddings: also pass index={{'dims': ..., 'embed': ...}}, "
                         "or choose 'substring' or 'bm25'")
    return mode
