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

What a value contributes (its words counted, its texts case-folded) depends
on the value alone, so a search that knows each candidate's object id (the
id of the value's node object, which names that value for good:
``candidates``) passes it, and the words are found once per object, not once
per query (``Lexicon``): a search over ten thousand items spent most of its
time finding the same words again.  An object id never names another value,
so nothing kept here goes stale; the cache is bounded and forgets the least
recently used.

With an embedding index, a query ranks by vectors (``index``): the default
then, or ``query_mode="vector"``; ``query_mode="hybrid"`` fuses that ranking
with BM25's (``hybrid``).
"""

from __future__ import annotations

import itertools
import json
import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, Literal

from mnem_bridge import UsageError

__all__ = ["K1", "LEXICON", "QUERY_MODES", "B", "Lexicon", "Postings", "QueryMode", "bm25_scores", "contains",
           "resolve_query_mode", "words"]

#: How a store answers ``search(query=...)``: ADR-0016's substring filter, BM25 ranking, embedding ranking, or both
#: fused (``hybrid``).
QueryMode = Literal["substring", "bm25", "vector", "hybrid"]
QUERY_MODES: tuple[QueryMode, ...] = ("substring", "bm25", "vector", "hybrid")

#: BM25's term-frequency saturation and length normalisation, at their usual values.
K1 = 1.2
B = 0.75
_WORD = re.compile(r"[^\W_]+")


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


def contains(query: str, node_id: str, value: Any, obj: str | None = None) -> bool:
    """Whether ``query`` occurs, ignoring case, in the node id, the value's JSON text or one of its strings.

    ADR-0016's search filter; see the module docstring for what is matched.
    ``obj``, the value's object id when known, lets the case-folded texts be found once per value (``LEXICON``).
    """
    wanted = query.casefold()
    if obj is not None:
        return wanted in node_id.casefold() or LEXICON.contains(obj, value, wanted)
    texts = itertools.chain((node_id, json.dumps(value, ensure_ascii=False)), _texts(value))
    return any(wanted in text.casefold() for text in texts)


#: What joins a value's texts in ``Lexicon``: a query holding it is matched text by text instead.
_JOIN = "\x00"


def haystacks(ids: Sequence[str], values: Sequence[Any], objects: Sequence[str]) -> list[str]:
    """Each item's node id and texts, case-folded and joined by NUL into one string, for ``matching``."""
    return [f"{nid.casefold()}{_JOIN}{LEXICON.joined(obj, value)}" for nid, value, obj in zip(
        ids, values, objects, strict=True)]


def matching(query: str, stacks: Sequence[str]) -> Iterator[int] | None:
    """The positions of the ``haystacks`` whose items ``contains`` matches, in order; None for a query holding NUL.

    A query without NUL can only match within one of the joined texts, so
    one ``in`` per item answers what ``contains`` answers text by text.
    """
    if _JOIN in query:
        return None
    wanted = query.casefold()
    return (n for n, stack in enumerate(stacks) if wanted in stack)


def _folded(value: Any) -> tuple[str, ...]:
    """The value's texts joined (``Lexicon.contains``), then its JSON text and each of its strings, case-folded."""
    texts = [text.casefold() for text in itertools.chain((json.dumps(value, ensure_ascii=False),), _texts(value))]
    return (_JOIN.join(texts), *texts)


class Lexicon:
    """What values contribute to a lexical search, kept by object id: their words counted, their texts folded.

    Args:
        size: How many objects' entries are kept, the least recently used dropped first.
    """

    def __init__(self, size: int = 100_000) -> None:
        self.size = size
        self._bags: OrderedDict[Hashable, tuple[Counter[str], int]] = OrderedDict()
        self._texts: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()  # stores on several threads share it

    def bag(self, obj: str, value: Any, analyse: Callable[[Any], Any] | None = None,
            kind: Hashable = None) -> tuple[Counter[str], int]:
        """The value's words with their counts, and how many words it has.

        ``analyse`` (with ``kind``, which names it) reads the value another
        way first (say, some fields' stemmed words): the bag is then that of
        ``words(analyse(value))``, kept under ``(obj, kind)``, what
        ``bm25_scores`` counts for the document ``analyse(value)``.
        """
        key = obj if analyse is None else (obj, kind)
        found = self._bags.get(key)
        if found is None:
            bag = Counter(words(value if analyse is None else analyse(value)))
            found = self._keep(self._bags, key, (bag, sum(bag.values())))
        return found

    def contains(self, obj: str, value: Any, wanted: str) -> bool:
        """Whether the case-folded ``wanted`` occurs in the value's JSON text or one of its strings (``contains``).

        The texts are kept joined by NUL: a query without NUL can only
        match within one of them, so one ``in`` tests them all.
        """
        found = self._texts.get(obj)
        if found is None:
            found = self._keep(self._texts, obj, _folded(value))
        if _JOIN not in wanted:
            return wanted in found[0]
        return any(wanted in text for text in found[1:])

    def joined(self, obj: str, value: Any) -> str:
        """The value's case-folded texts joined by NUL (``haystacks``)."""
        found = self._texts.get(obj)
        if found is None:
            found = self._keep(self._texts, obj, _folded(value))
        return str(found[0])

    def _keep(self, kept: OrderedDict[Any, Any], obj: Hashable, entry: Any) -> Any:
        with self._lock:
            kept[obj] = entry
            while len(kept) > self.size:
                kept.popitem(last=False)
        return entry


#: The process's lexicon: an object id names the same value in every store, so one serves them all.
LEXICON = Lexicon()


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


def bm25_scores(
    query: str, documents: Sequence[Any], objects: Sequence[str | None] | None = None,
    analyse: Callable[[Any], Any] | None = None, kind: Hashable = None,
) -> list[float]:
    """Each document's Okapi BM25 score for ``query``, among ``documents``.

    Args:
        query: The query text; a word repeated in it counts once.
        documents: JSON values (item values).
        objects: Each document's object id, or None where unknown: the
            words of a known one are counted once per process (``LEXICON``).
        analyse: What each document is read as, if not as it is: the scores
            are those of the documents ``analyse(document)``, each analysed
            once per object when known.
        kind: What names ``analyse`` in ``LEXICON`` (say, the fields it reads).

    Returns:
        One score per document, in order: 0.0 when it shares no word with the query.
    """
    terms = set(words(query))
    if not terms or not documents:
        return [0.0] * len(documents)
    if objects is None:
        bags = [_bag(document if analyse is None else analyse(document)) for document in documents]
    else:
        bags = [LEXICON.bag(obj, document, analyse, kind) if obj is not None
                else _bag(document if analyse is None else analyse(document))
                for obj, document in zip(objects, documents, strict=True)]
    count = len(bags)
    average = sum(length for _, length in bags) / count or 1.0
    scores = [0.0] * count
    for term in terms:  # per term, then per document: each score adds its terms in the same order as before
        having = [(i, frequency) for i, (bag, _) in enumerate(bags) if (frequency := bag.get(term, 0))]
        if not having:
            continue
        idf = math.log(1 + (count - len(having) + 0.5) / (len(having) + 0.5))
        for i, frequency in having:
            length = bags[i][1]
            scores[i] += idf * frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * length / average))
    return scores


class Postings:
    """Candidates' words inverted (for each word, the candidates holding it and how often), for ranking them again.

    ``bm25_scores`` looks every candidate up for every query word; a
    namespace searched again at the same commit (``candidates``) ranks
    from these instead, with numpy: each query word costs the candidates
    that hold it, as array operations.  The scores are ``bm25_scores``'
    to the last bit: the same IEEE operations in the same order, each
    candidate's terms added in the query's word order.

    Args:
        bags: Each candidate's words with their counts, and its length (``Lexicon.bag``).
    """

    def __init__(self, bags: Sequence[tuple[Counter[str], int]]) -> None:
        import numpy as np

        self.count = len(bags)
        self.average = sum(length for _, length in bags) / self.count if self.count else 0.0
        self._lengths = np.array([length for _, length in bags], dtype=np.float64)
        inverted: dict[str, tuple[list[int], list[int]]] = {}
        for i, (bag, _) in enumerate(bags):
            for word, frequency in bag.items():
                found = inverted.get(word)
                if found is None:
                    found = inverted[word] = ([], [])
                found[0].append(i)
                found[1].append(frequency)
        self._words = {word: (np.array(at, dtype=np.intp), np.array(counts, dtype=np.float64))
                       for word, (at, counts) in inverted.items()}

    def scores(self, query: str) -> Any:
        """Each candidate's BM25 score for ``query``, as ``bm25_scores`` gives it, in a numpy array."""
        import numpy as np

        scores = np.zeros(self.count, dtype=np.float64)
        terms = set(words(query))
        average = self.average or 1.0
        for term in terms:  # the order ``bm25_scores`` adds them in
            found = self._words.get(term)
            if found is None:
                continue
            at, frequency = found
            idf = math.log(1 + (self.count - len(at) + 0.5) / (len(at) + 0.5))
            scores[at] += idf * frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * self._lengths[at] / average))
        return scores


def _bag(document: Any) -> tuple[Counter[str], int]:
    bag = Counter(words(document))
    return bag, sum(bag.values())
