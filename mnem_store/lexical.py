r"""What a value is to a text search: its texts for the substring filter, its words for BM25, stemmed for hybrid.

``mnem search`` answers a query in one of four modes (``mnem_store.search``);
three read words:

* ``substring`` (ADR-0016's plain filter): the query occurs, ignoring case
  (``str.casefold``: "STRASSE" finds "Straße"), in the node id, in the
  value's JSON text written as is (``ensure_ascii=False``: "Zürich", not
  ``Z\u00fcrich``), or in one of its strings as written (so a quote or a
  backslash is found without JSON's escapes).
* ``bm25``: Okapi BM25 over each value's words: runs of Unicode letters and
  digits, case-folded, from every string, key and number of the value.
  Statistics are those of the items ranked (the search's candidates), which
  is what "relevant among these" means and costs nothing to keep true.
* ``hybrid``'s lexical side: BM25 over the words of the index's fields,
  stemmed with Snowball's English stemmer (``snowballstemmer``), the
  query's stopwords dropped (the query's only: a memory's own words keep
  their counts, so lengths stay comparable).  The field ``"$"`` is the
  whole value, read as ``bm25`` reads it.

What a value contributes depends on the value alone, so it is found once per
value object and kept with it (``Known``, on the store's shelves: the value's
object id names it for good, ``mnem_store.cache``).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

from .errors import UsageError
from .fieldpaths import texts_at, tokens

__all__ = ["K1", "STOPWORDS", "WHOLE", "B", "Known", "Postings", "bm25", "query_terms", "require_stemmer", "words"]

#: BM25's term-frequency saturation and length normalisation, at their usual values.
K1 = 1.2
B = 0.75
_WORD = re.compile(r"[^\W_]+")
#: What joins a value's folded texts: a query without it can only match within one of them.
_JOIN = "\x00"
#: The index field that is the whole value.
WHOLE = "$"

#: Snowball's English stopword list (snowballstem.org), folded as ``words`` folds text: dropped from queries.
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


def require_stemmer() -> None:
    """Refuse hybrid's ranking at once where snowballstemmer, of the ``langgraph`` extra, is missing."""
    try:
        import snowballstemmer  # type: ignore[import-untyped]  # noqa: F401  (no stubs)
    except ImportError as missing:
        from .install import pip_install

        raise UsageError(f"mnem search --mode hybrid stems words with snowballstemmer, which is not installed here "
                         f"({missing}): {pip_install('langgraph')}") from None


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A word's Snowball stem; memory holds the same words again and again, so each is stemmed once."""
    return str(_stemmer().stemWord(word))


def words(value: Any) -> list[str]:
    """The case-folded words of a JSON value: its strings, keys and numbers, depth first."""
    return [word for text in _texts(value) for word in _WORD.findall(text.casefold())]


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from _texts(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _texts(inner)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield str(value)


def query_terms(query: str, *, stemmed: bool) -> list[str]:
    """The query's distinct words in order; ``stemmed`` (hybrid): stopwords out (unless only those), stemmed."""
    found = words(query)
    if stemmed:
        kept = [word for word in found if word not in STOPWORDS] or found
        found = words(" ".join(_stem(word) for word in kept))
    return list(dict.fromkeys(found))


class Known:
    """What one value contributes to searches, found on first use: its folded texts, its words, its fields' stems.

    Args:
        value: The item value (``search.item_value``); never changed.
    """

    __slots__ = ("_analysed", "_bag", "_folded", "value")

    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value
        self._folded: tuple[str, ...] | None = None
        self._bag: tuple[Counter[str], int] | None = None
        self._analysed: dict[tuple[str, ...], tuple[Counter[str], int]] = {}

    def contains(self, wanted: str) -> bool:
        """Whether the case-folded ``wanted`` is in the value's JSON text or one of its strings (``substring``)."""
        if self._folded is None:
            texts = [json.dumps(self.value, ensure_ascii=False), *_texts(self.value)]
            folded = [text.casefold() for text in texts]
            self._folded = (_JOIN.join(folded), *folded)
        if _JOIN not in wanted:
            return wanted in self._folded[0]
        return any(wanted in text for text in self._folded[1:])

    def bag(self) -> tuple[Counter[str], int]:
        """The value's words with their counts, and how many words it has (``bm25``)."""
        if self._bag is None:
            self._bag = _bag(words(self.value))
        return self._bag

    def analysed(self, fields: tuple[str, ...]) -> tuple[Counter[str], int]:
        """The stemmed words of the index's ``fields`` of the value, counted (``hybrid``)."""
        found = self._analysed.get(fields)
        if found is None:
            texts: list[Any] = []
            for path in fields:
                texts += [self.value] if path == WHOLE else texts_at(self.value, tokens(path))
            found = self._analysed[fields] = _bag([stem for word in words(texts) if (stem := _stem(word))])
        return found


def _bag(found: list[str]) -> tuple[Counter[str], int]:
    bag = Counter(found)
    return bag, sum(bag.values())


def bm25(terms: Sequence[str], bags: Sequence[tuple[Counter[str], int]]) -> list[float]:
    """Each document's Okapi BM25 score for the query words ``terms`` among ``bags`` (0.0: no word shared).

    Each document adds its terms' parts in the order of ``terms``, so a
    score does not depend on how a process orders a set.
    """
    count = len(bags)
    scores = [0.0] * count
    if not terms or not count:
        return scores
    average = sum(length for _, length in bags) / count or 1.0
    for term in terms:
        having = [(i, frequency) for i, (bag, _) in enumerate(bags) if (frequency := bag.get(term, 0))]
        if not having:
            continue
        idf = math.log(1 + (count - len(having) + 0.5) / (len(having) + 0.5))
        for i, frequency in having:
            length = bags[i][1]
            scores[i] += idf * frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * length / average))
    return scores


class Postings:
    """Documents' words inverted (each word: the documents holding it, how often), to score them again and again.

    ``bm25`` looks every document up for every query word; a candidate set
    searched again ranks from these instead, each query word costing only
    the documents that hold it.  The scores are ``bm25``'s to the last bit:
    the same operations, each document adding its terms in the query's order.

    Args:
        bags: Each document's words with their counts, and its length (``Known.bag``, ``Known.analysed``).
    """

    __slots__ = ("_average", "_lengths", "_words", "count")

    def __init__(self, bags: Sequence[tuple[Counter[str], int]]) -> None:
        self.count = len(bags)
        self._lengths = [length for _, length in bags]
        self._average = (sum(self._lengths) / self.count or 1.0) if self.count else 1.0
        self._words: dict[str, tuple[list[int], list[int]]] = {}
        for i, (bag, _) in enumerate(bags):
            for word, frequency in bag.items():
                found = self._words.get(word)
                if found is None:
                    found = self._words[word] = ([], [])
                found[0].append(i)
                found[1].append(frequency)

    def scores(self, terms: Sequence[str]) -> list[float]:
        """Each document's BM25 score for the query words ``terms``, as ``bm25`` gives it."""
        scores = [0.0] * self.count
        lengths, average = self._lengths, self._average
        for term in terms:
            found = self._words.get(term)
            if found is None:
                continue
            having, frequencies = found
            idf = math.log(1 + (self.count - len(having) + 0.5) / (len(having) + 0.5))
            for i, frequency in zip(having, frequencies, strict=True):
                scores[i] += idf * frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * lengths[i] / average))
        return scores
