"""``query_mode="hybrid"``: BM25 and embedding rankings fused by reciprocal rank.

Neither ranking alone answers an agent's questions well: BM25 misses a
memory phrased in other words, a small embedding model misses the rare
name or noun that BM25 finds at once.  Reciprocal-rank fusion (Cormack,
Clarke and Büttcher, SIGIR 2009) adds, for each item, ``weight / (RRF_K +
rank)`` from each ranking it appears in, so it needs no calibration between
BM25's unbounded scores and a cosine; an item found by one ranking only
still ranks.

The lexical side is ``ranking.bm25_scores`` over *analysed* words, which
measured on LoCoMo's development half (``benchmarks/locomo.py``) is where
most of the gain lies:

* words are stemmed (Snowball's English stemmer, ``snowballstemmer``), on
  both sides, so "adopting" finds "adoption";
* the query's stopwords (``STOPWORDS``, Snowball's English list) are
  dropped, and only the query's: a question is mostly "what", "did", "the",
  which match every memory and push the content words down, while a
  memory's own words keep their counts, so lengths stay comparable;
* the text is that of the index's ``fields`` (``"$"``, the default, is
  every string, key and number of the value, as in ``"bm25"`` mode), so
  both rankings read the same part of a memory; a field holding a date
  lets a question that names the date match it.

The stemmer and stopword list are English; other languages' words pass
through nearly unchanged (a suffix may be stripped, the same way on both
sides), so they still match, only without the gain.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import snowballstemmer  # type: ignore[import-untyped]  # (no stubs; two calls used)
from langgraph.store.base.embed import get_text_at_path

from .ranking import Postings, bm25_scores, words

__all__ = ["LEXICAL_WEIGHT", "RRF_K", "STOPWORDS", "WHOLE", "analysed", "fuse", "query_terms"]

#: The fields of an index without ``fields``: the whole value (``EmbeddingIndex.fields``' shape).
WHOLE: tuple[tuple[str, Any], ...] = (("$", "$"),)

#: RRF's rank constant: smaller trusts each ranking's top places more.  On LoCoMo's development half (with
#: ``LEXICAL_WEIGHT``) 5 and 20 gave recall@10 0.762 and 0.761, the paper's 60 gave 0.729.
RRF_K = 20
#: The BM25 ranking's weight against the embedding ranking's 1.  With a small local model (wordllama) the
#: lexical ranking is the better one, and equal weights lost recall there; a weight of 2 still lets a memory
#: that only the embedding finds come up.
LEXICAL_WEIGHT = 2.0

#: Snowball's English stopword list (snowballstem.org), folded as ``ranking.words`` folds text: dropped from queries.
STOPWORDS = frozenset((
    "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself", "yourselves",
    "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself", "they", "them", "their",
    "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "these", "those", "am", "is", "are",
    "was", "were", "be", "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "would",
    "should", "could", "ought", "a", "an", "the", "and", "but", "if", "or", "because", "as", "until", "while", "of",
    "at", "by", "for", "with", "about", "against", "between", "into", "through", "during", "before", "after",
    "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over", "under", "again", "further",
    "then", "once", "here", "there", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more",
    "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too", "very", "s",
    "t", "d", "ll", "m", "re", "ve", "can", "will", "just", "don",
))

_STEMMER = snowballstemmer.stemmer("english")
#: Analysed values kept (``analysed``), the least recently used dropped first.
CACHE_ANALYSED = 100_000
_ANALYSED: OrderedDict[tuple[str, tuple[str, ...]], str] = OrderedDict()
#: Inverted candidates kept (``_lexical``), by their object ids and the fields read.
CACHE_POSTINGS = 8
_POSTINGS: OrderedDict[tuple[tuple[str, ...], tuple[str, ...]], Postings] = OrderedDict()
_LOCK = threading.Lock()  # stores on several threads share it


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A word's Snowball stem; memory holds the same words again and again, so each is stemmed once."""
    return str(_STEMMER.stemWord(word))


def query_terms(query: str) -> str:
    """The query as the lexical ranking reads it: its stemmed words, stopwords left out (all of them if only those)."""
    found = words(query)
    kept = [word for word in found if word not in STOPWORDS] or found
    return " ".join(_stem(word) for word in kept)


def analysed(value: Any, fields: Sequence[tuple[str, Any]], obj: str | None = None) -> str:
    """The stemmed words of the index's ``fields`` of ``value`` (``"$"``: every string, key and number), joined.

    Args:
        value: An item's value.
        fields: ``EmbeddingIndex.fields``: ``(path, tokenized path)`` pairs, the path ``"$"`` for the whole value.
        obj: The value's object id, when known: an object id names one value for good, so its words are
            analysed once per process and fields (``_ANALYSED``), not on every search.
    """
    key = (obj, tuple(path for path, _ in fields)) if obj is not None else None
    if key is not None and (found := _ANALYSED.get(key)) is not None:
        return found
    texts: list[Any] = []
    for path, tokens in fields:
        texts += [value] if path == "$" else get_text_at_path(value, tokens)
    joined = " ".join(_stem(word) for word in words(texts))
    if key is not None:
        with _LOCK:
            _ANALYSED[key] = joined
            while len(_ANALYSED) > CACHE_ANALYSED:
                _ANALYSED.popitem(last=False)
    return joined


def _lexical(
    terms: str, values: Sequence[Any], fields: Sequence[tuple[str, Any]], objects: Sequence[str | None] | None,
) -> Sequence[float]:
    """Each value's BM25 score for the analysed query ``terms``, over its analysed ``fields``.

    When every value's object id is known, the candidates are a content-addressed set: their words are
    inverted once (``ranking.Postings``, kept in ``_POSTINGS``) and every later query over the same
    candidates costs only the candidates holding its words; else ``bm25_scores``, which gives the same scores.
    """
    known = objects or [None] * len(values)
    if any(obj is None for obj in known):
        return bm25_scores(terms, [analysed(v, fields, obj) for v, obj in zip(values, known, strict=True)])
    key = (tuple(map(str, known)), tuple(path for path, _ in fields))
    postings = _POSTINGS.get(key)
    if postings is None:
        bags = []
        for value, obj in zip(values, known, strict=True):
            bag = Counter(analysed(value, fields, obj).split())
            bags.append((bag, sum(bag.values())))
        postings = Postings(bags)
        with _LOCK:
            _POSTINGS[key] = postings
            while len(_POSTINGS) > CACHE_POSTINGS:
                _POSTINGS.popitem(last=False)
    scores: list[float] = postings.scores(terms).tolist()
    return scores


def fuse(
    query: str, values: Sequence[Any], vector_scores: Sequence[float | None], fields: Sequence[tuple[str, Any]],
    objects: Sequence[str | None] | None = None, page: slice | None = None,
) -> list[tuple[int, float]]:
    """The items ranked by reciprocal-rank fusion of BM25 (over ``fields``) and their vector scores.

    Args:
        query: The search's query.
        values: The candidates' values, in ``(namespace, key)`` order.
        vector_scores: Each candidate's similarity to the query (higher is
            closer), None for one without a vector.
        fields: The index's fields, which the lexical ranking reads as the embedder did.
        objects: Each value's object id where known (``analysed``).
        page: Only these places of the ranking (a search's ``offset`` and
            ``limit``): a page of ten does not make ten thousand pairs,
            whose allocation woke the garbage collector on every search.

    Returns:
        ``(candidate position, fused score)`` for every candidate, best
        first; those neither ranking found score 0.0 and follow in their
        given order.
    """
    import numpy as np

    lexical = np.asarray(_lexical(query_terms(query), values, fields, objects), dtype=np.float64)
    vector = np.array(vector_scores, dtype=np.float64)  # None is NaN: no vector
    fused = np.zeros(len(values), dtype=np.float64)
    # Each ranking best first, ties in key order (a stable sort), adding weight / (RRF_K + rank) to its items:
    # the same float operations, in the same order, as a loop over the items would make.
    for weight, found in ((LEXICAL_WEIGHT, np.flatnonzero(lexical > 0)), (1.0, np.flatnonzero(~np.isnan(vector)))):
        scores = (lexical if weight == LEXICAL_WEIGHT else vector)[found]
        ranked = found[np.argsort(-scores, kind="stable")]
        fused[ranked] += weight / (RRF_K + np.arange(1, len(ranked) + 1, dtype=np.float64))
    order = np.argsort(-fused, kind="stable")
    if page is not None:
        order = order[page]
    return list(zip(order.tolist(), fused[order].tolist(), strict=True))
