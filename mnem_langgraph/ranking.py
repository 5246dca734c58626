r"""How ``search(query=...)`` answers without vectors: ADR-0016's substring filter, or BM25 ranking on request.

ADR-0016 makes a store's search "a plain substring filter over node ids and
stringified content within the namespace": by default (``query_mode`` None
and no index, or ``"substring"``) a query keeps the items whose node id or
value contains it, ignoring case, in ``(namespace, key)`` order, without a
score (``contains``).  The value is matched as JSON text written as is
(``ensure_ascii=False``: "Zürich" is found as written, not as
``Z\u00fcrich``), and each of its strings as written too, so a quote or a
backslash in a value is found without JSON's escapes.  Case is folded
(``str.casefold``), so "STRASSE" finds "Straße".

LangGraph's memory tools (langmem's search tool, its ``MemoryStoreManager``)
send natural-language questions such as "what does the user like to eat?",
which a substring filter answers with nothing.  ``query_mode="bm25"`` ranks
instead: Okapi BM25 over the words of each value, so the items sharing the
query's rarer words come first.  Ranking never drops an item the filter and
namespace kept; an item sharing no word with the query scores 0 and keeps
its ``(namespace, key)`` place after the scored ones.  Words are runs of
Unicode letters and digits, compared case-folded; every string in the value
counts (dict keys and numbers too, so a query for "seats 40" finds
``{"seats": 40}``).  Statistics are those of the items being ranked (the
search's candidates), which is what "relevant among these" means and costs
nothing to keep up to date.

With an embedding index, a query ranks by vectors (``index``): the default
then, or ``query_mode="vector"``.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from mnem_bridge import UsageError

__all__ = ["K1", "QUERY_MODES", "B", "QueryMode", "bm25_scores", "contains", "resolve_query_mode", "words"]

#: How a store answers ``search(query=...)``: ADR-0016's substring filter, BM25 ranking, or embedding ranking.
QueryMode = Literal["substring", "bm25", "vector"]
QUERY_MODES: tuple[QueryMode, ...] = ("substring", "bm25", "vector")

#: BM25's term-frequency saturation and length normalisation, at their usual values.
K1 = 1.2
B = 0.75
_WORD = re.compile(r"[^\W_]+")


def resolve_query_mode(chosen: str | None, indexed: bool) -> QueryMode:
    """The mode a store answers queries in: ``chosen``, else ``"vector"`` with an index, else ``"substring"``.

    Raises:
        UsageError: ``chosen`` is not a mode, or is ``"vector"`` on a store without an index.
    """
    if chosen is None:
        return "vector" if indexed else "substring"
    mode = next((mode for mode in QUERY_MODES if mode == chosen), None)
    if mode is None:
        raise UsageError(
            f"query_mode must be one of {', '.join(map(repr, QUERY_MODES))}, or None (vector ranking with an "
            f"index, else the substring filter), got {chosen!r}"
        )
    if mode == "vector" and not indexed:
        raise UsageError("query_mode='vector' ranks by embeddings: also pass index={'dims': ..., 'embed': ...}, "
                         "or choose 'substring' or 'bm25'")
    return mode


def contains(query: str, node_id: str, value: Any) -> bool:
    """Whether ``query`` occurs, ignoring case, in the node id, the value's JSON text or one of its strings.

    ADR-0016's search filter; see the module docstring for what is matched.
    """
    wanted = query.casefold()
    texts = itertools.chain((node_id, json.dumps(value, ensure_ascii=False)), _texts(value))
    return any(wanted in text.casefold() for text in texts)


def words(value: Any) -> list[str]:
    """The case-folded words of a JSON value: its strings, dict keys and numbers, depth first."""
    return [word for text in _texts(value) for word in _WORD.findall(text.casefold())]


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from _texts(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from _texts(inner)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield str(value)


def bm25_scores(query: str, documents: Sequence[Any]) -> list[float]:
    """Each document's Okapi BM25 score for ``query``, among ``documents``.

    Args:
        query: The query text; a word repeated in it counts once.
        documents: JSON values (item values).

    Returns:
        One score per document, in order: 0.0 when it shares no word with the query.
    """
    terms = set(words(query))
    bags = [Counter(words(document)) for document in documents]
    if not terms or not bags:
        return [0.0] * len(bags)
    average = sum(sum(bag.values()) for bag in bags) / len(bags) or 1.0
    count = len(bags)
    idf = {}
    for term in terms:
        having = sum(1 for bag in bags if term in bag)
        idf[term] = math.log(1 + (count - having + 0.5) / (having + 0.5))
    scores = []
    for bag in bags:
        length = sum(bag.values())
        score = 0.0
        for term in terms:
            frequency = bag.get(term, 0)
            if frequency:
                score += idf[term] * frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * length / average))
        scores.append(score)
    return scores
