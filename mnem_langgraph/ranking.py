"""Lexical ranking for ``search(query=...)`` when the store has no embedding index.

LangGraph's memory tools (langmem's search tool, its ``MemoryStoreManager``)
send natural-language queries such as "what does the user like to eat?".
A substring filter answers those with nothing, and the manager, seeing no
memories, writes duplicates.  ``InMemoryStore`` without an index ignores
the query and returns the namespace; so does this store, in the order of
relevance: Okapi BM25 over the words of each value, so the items sharing
the query's rarer words come first.  Ranking never drops an item the
filter and namespace kept; an item sharing no word with the query scores 0
and keeps its ``(namespace, key)`` place after the scored ones.

Words are runs of Unicode letters and digits, compared case-folded; every
string in the value counts (dict keys and numbers too, so a query for
"seats 40" finds ``{"seats": 40}``).  Statistics are those of the items
being ranked (the search's candidates), which is what "relevant among these"
means and costs nothing to keep up to date.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["K1", "B", "bm25_scores", "words"]

#: BM25's term-frequency saturation and length normalisation, at their usual values.
K1 = 1.2
B = 0.75
_WORD = re.compile(r"[^\W_]+")


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
