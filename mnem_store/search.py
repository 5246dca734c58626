"""``mnem search`` and ``mnem namespaces``: LangGraph's store reads answered where the values are, in one read.

``MnemosyneStore.search`` ranks or filters every item of a namespace and
returns a page of them; ``list_namespaces`` lists the namespaces under some
conditions.  Both run here, inside the caller's read snapshot
(``porcelain.search``, ``porcelain.namespaces``), so only the page crosses
the process boundary.

The candidates of a search are the items (``mnem_ids.items``: node ids a put could
have written) under its namespace prefix at one commit, in ``(namespace,
key)`` order, less those whose lease has run out (a live read of HEAD's
branch).  A filter (``filters``) keeps some; then the query, by mode:

* none: the candidates in order, without a score;
* ``substring``: those whose id or value holds the query (``lexical``), in
  order, without a score;
* ``bm25``: every candidate, those sharing a word with the query first,
  best first, ties and the score-0 rest in order;
* ``vector``: the candidates with a vector under the model, best first,
  ties by node id (as ``mnem similar`` ranks), then the others in order,
  without a score;
* ``hybrid``: every candidate, by reciprocal-rank fusion (Cormack, Clarke
  and Büttcher, SIGIR 2009) of the BM25 ranking of the index fields'
  stemmed words (``LEXICAL_WEIGHT``) and the vector ranking (weight 1),
  each ranking's ties in order; items neither ranking found score 0 and
  follow in order.

What is kept between reads is fixed by content ids, on the store's shelves
(``mnem_store.cache``): a commit's candidates under a prefix (``CACHE_SETS``;
a commit's nodes never change) and what each value contributes to a search
(``lexical.Known``, by its object id, ``CACHE_VALUES``), so a search after
a write decodes only the values that write made; a set searched by BM25 a
second time keeps its words inverted (``lexical.Postings``), and a set filtered
twice by equality on a field keeps its items indexed by that field's values
(``_Set.narrowed``).  Leases are not content:
expired ids are read afresh by every search.
"""

from __future__ import annotations

import heapq
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any, Literal, NamedTuple

from mnem_ids import SEPARATOR
from mnem_ids.items import parse_id

from .filters import by_value, equality, matches
from .lexical import Known, Postings, bm25, query_terms
from .repo import Nodes, Repo

__all__ = ["CACHE_SETS", "CACHE_VALUES", "FIELDS_INDEXED", "LEXICAL_WEIGHT", "MODES", "RRF_K", "Condition", "Hit",
           "Mode", "Query", "list_namespaces", "namespace_sizes", "rank"]

Mode = Literal["substring", "bm25", "vector", "hybrid"]
#: How a query is answered; the first is the default.
MODES: tuple[Mode, ...] = ("substring", "bm25", "vector", "hybrid")
#: RRF's rank constant: smaller trusts each ranking's top places more (LoCoMo's development half: 20 gave recall@10
#: 0.761, the paper's 60 gave 0.729; benchmarks/locomo.py).
RRF_K = 20
#: The BM25 ranking's weight against the vector ranking's 1: with a small local model the lexical ranking is the
#: better one, and a weight of 2 still lets a memory only the embedding finds come up.
LEXICAL_WEIGHT = 2.0
#: Candidate sets (a commit's items under a prefix) a store keeps.
CACHE_SETS = 8
#: Fields a candidate set keeps its items' values indexed by, for filters (``_Set.narrowed``).
FIELDS_INDEXED = 8
#: Values a store keeps with what they contribute to a search (a namespace of 10k short values is a few MB).
CACHE_VALUES = 100_000


def item_value(content: Any) -> dict[str, Any]:
    """The item value of a node's content: a dict as it is, anything else as ``{"value": content}``.

    A node ``mnem add`` or an MCP ``remember`` wrote may hold any JSON; LangGraph's items are dicts.
    """
    return content if isinstance(content, dict) else {"value": content}


class Query(NamedTuple):
    """One search: where, what, and which page."""

    namespace: tuple[str, ...] = ()
    query: str | None = None
    mode: Mode = "substring"
    filter: Mapping[str, Any] | None = None
    limit: int = 10
    offset: int = 0
    #: The index fields hybrid's BM25 reads (``"$"``: the whole value).
    fields: tuple[str, ...] = ("$",)


class Hit(NamedTuple):
    """One item of a page: its node id, where it lies, its value and its score (None: unscored)."""

    id: str
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    score: float | None


class _Set:
    """A commit's items under a prefix, in ``(namespace, key)`` order, with what each value contributes."""

    __slots__ = ("_folded", "by_field", "ids", "inverted", "known", "places")

    def __init__(self, ids: list[str], places: list[tuple[tuple[str, ...], str]], known: list[Known]) -> None:
        self.ids = ids
        self.places = places
        self.known = known
        #: BM25's postings of every item, by the fields read (None: the whole value unstemmed); True: asked once.
        self.inverted: dict[tuple[str, ...] | None, Postings | bool] = {}
        #: The items' positions by their scalar at a filter's field (``filters.by_value``); True: asked once.
        self.by_field: dict[str, dict[Any, list[int]] | bool] = {}
        self._folded: list[str] | None = None

    def narrowed(self, conditions: Mapping[str, Any]) -> tuple[Sequence[int], Mapping[str, Any]]:
        """The positions that may pass a filter, ascending, and the conditions left to check on them.

        A plain equality condition (``filters.equality``) on a field this
        set was filtered by before is answered by the field's values,
        indexed on the second such filter and kept with the set (at most
        ``FIELDS_INDEXED`` fields), as ``lexical`` keeps postings: a filter
        of ten thousand items then checks only those holding the value.
        """
        every = range(len(self.ids))
        found = equality(conditions)
        if found is None:
            return every, conditions
        path, wanted = found
        index = self.by_field.get(path)
        if not isinstance(index, dict):
            if index is None:
                if len(self.by_field) < FIELDS_INDEXED:
                    self.by_field[path] = True
                return every, conditions
            index = self.by_field[path] = by_value((known.value for known in self.known), path)
        return index.get(wanted, ()), {other: held for other, held in conditions.items() if other != path}

    def folded_ids(self) -> list[str]:
        """The items' ids case-folded (``substring`` matches the query in them), found once per set."""
        if self._folded is None:
            self._folded = [node_id.casefold() for node_id in self.ids]
        return self._folded

    def lexical(self, hits: list[int], terms: list[str], fields: tuple[str, ...] | None) -> list[float]:
        """Each hit's BM25 score over its words (``fields``' stemmed words, or the whole value's).

        When the hits are every item (no filter, nothing expired), the set's
        words are inverted on its second such search and kept with it, so
        the next ones cost the items holding the query's words; inverting
        costs a few searches' worth, which a set searched once never earns back.
        """
        def bag(i: int) -> tuple[Counter[str], int]:
            return self.known[i].bag() if fields is None else self.known[i].analysed(fields)

        if len(hits) != len(self.ids):
            return bm25(terms, [bag(i) for i in hits])
        found = self.inverted.get(fields)
        if not isinstance(found, Postings):
            if found is None:
                self.inverted[fields] = True
                return bm25(terms, [bag(i) for i in hits])
            found = self.inverted[fields] = Postings([bag(i) for i in hits])
        return found.scores(terms)


#: What the values shelf keeps for a redacted version: it has no value to list, filter, match or rank.
_REDACTED = Known({})


def _candidates(repo: Repo, start: bytes, prefix: str, nodes: Nodes, valid_at: int | None) -> _Set:
    """The items among ``nodes``, kept by where they come from, and their values by object id.

    An item whose version was redacted is left out: it has no value to list,
    filter, match or rank (a search answers values), though its id stays.

    ``nodes`` are commit ``start``'s under ``prefix``, or those valid at
    ``valid_at`` along its history: a commit's history never changes, so
    the three name one set for good.
    """
    sets = repo.backend.kept.shelf("search sets", CACHE_SETS)
    found: _Set | None = sets.find((start, prefix, valid_at))
    if found is not None:
        return found
    values = repo.backend.kept.shelf("search values", CACHE_VALUES)
    items = sorted((place, node_id) for node_id in nodes if (place := parse_id(node_id)) is not None)
    missing = [raw for raw in dict.fromkeys(nodes[node_id] for _, node_id in items) if raw not in values]
    repo.objects.prefetch(missing)
    for raw in missing:
        node = repo.node(raw)
        values.keep(raw, _REDACTED if node.redacted is not None else Known(item_value(node.content)))
    items = [(place, node_id) for place, node_id in items if values.find(nodes[node_id]) is not _REDACTED]
    known = [values.find(nodes[node_id]) for _, node_id in items]
    found = _Set([node_id for _, node_id in items], [place for place, _ in items], known)
    sets.keep((start, prefix, valid_at), found)
    return found


def rank(
    repo: Repo, start: bytes | None, prefix: str, nodes: Nodes, expired: set[str], query: Query,
    vectors: Mapping[str, float] | None, valid_at: int | None = None,
) -> list[Hit]:
    """The page of ``query`` over commit ``start``'s items under ``prefix`` (``nodes``), less ``expired``.

    ``valid_at``: ``nodes`` are those valid at that time along ``start``'s history (what they are kept by).

    ``vectors`` are the candidates' vector scores (``mnem similar``'s
    answer) for ``vector`` and ``hybrid``; call inside one read snapshot.
    """
    if start is None or not nodes:
        return []
    found = _candidates(repo, start, prefix, nodes, valid_at)
    positions: Sequence[int] = range(len(found.ids))
    conditions = query.filter
    if conditions:
        positions, conditions = found.narrowed(conditions)
    kept: Iterator[int] = (i for i in positions if found.ids[i] not in expired) if expired else iter(positions)
    if conditions:
        kept = (i for i in kept if matches(found.known[i].value, conditions))
    end = min(query.offset + query.limit, sys.maxsize)  # two pages at MAX_PAGING pass islice's bound
    text = query.query
    scored: list[tuple[int, float | None]]
    if not text:
        scored = [(i, None) for i in islice(kept, query.offset, end)]
    elif query.mode == "substring":
        wanted = text.casefold()
        ids = found.folded_ids()
        hits = (i for i in kept if wanted in ids[i] or found.known[i].contains(wanted))
        scored = [(i, None) for i in islice(hits, query.offset, end)]
    else:
        scored = _ranked(found, list(kept), text, query, vectors or {}, end)[query.offset :]
    return [Hit(found.ids[i], *found.places[i], found.known[i].value, score) for i, score in scored]


def _ranked(found: _Set, hits: list[int], text: str, query: Query,
            vectors: Mapping[str, float], end: int) -> list[tuple[int, float | None]]:
    """The first ``end`` candidates of a ranking mode, best first, with their scores (module docstring).

    Only the first ``end`` places are ordered (``_best_first``): a page of
    ten does not sort ten thousand candidates.
    """
    if query.mode == "vector":
        ids = found.ids
        with_vector = heapq.nsmallest(end, (i for i in hits if ids[i] in vectors),
                                      key=lambda i: (-vectors[ids[i]], ids[i]))
        rest = islice((i for i in hits if ids[i] not in vectors), end - len(with_vector))
        return [*((i, vectors[ids[i]]) for i in with_vector), *((i, None) for i in rest)]
    if query.mode == "bm25":
        scores = found.lexical(hits, query_terms(text, stemmed=False), None)
        return [(hits[n], scores[n]) for n in _best_first(scores, end)]
    lexical = found.lexical(hits, query_terms(text, stemmed=True), query.fields)
    ids = found.ids
    return [(hits[n], score) for n, score in _fused(lexical, [vectors.get(ids[i]) for i in hits], end)]


def _fused(lexical: Sequence[float], vector: Sequence[float | None], end: int) -> list[tuple[int, float]]:
    """The first ``end`` positions by hybrid's fusion, best first, with their fused scores (module docstring).

    ``lexical`` ranks its positive scores (weight ``LEXICAL_WEIGHT``),
    ``vector`` its scores (None: no vector), each best first with ties in
    position order; place ``p`` in a ranking adds ``weight / (RRF_K + p)``.
    numpy does it: sorting ten thousand candidates three times by key
    functions in Python was most of a hybrid search.  Each position's sum
    is the same floating-point operations in the same order as a loop's,
    so the scores are the same bits.  numpy is there: hybrid ranks by
    vectors (``similarity.require_numpy``).
    """
    import numpy as np

    fused = np.zeros(len(lexical))
    vectors = np.array([np.nan if score is None else score for score in vector], dtype=float)
    for weight, scores, ranked in ((LEXICAL_WEIGHT, np.array(lexical, dtype=float), None),
                                   (1.0, vectors, ~np.isnan(vectors))):
        places = np.flatnonzero(scores > 0 if ranked is None else ranked)
        places = places[np.argsort(-scores[places], kind="stable")]
        fused[places] += weight / (RRF_K + np.arange(1, len(places) + 1))
    if end <= 0:
        return []
    first = np.arange(len(fused))
    if end < len(fused):  # only the first end places are ordered: those at least as good as the end-th
        first = np.flatnonzero(fused >= -np.partition(-fused, end - 1)[end - 1])
    first = first[np.argsort(-fused[first], kind="stable")][:end]
    return list(zip(first.tolist(), fused[first].tolist(), strict=True))


def _best_first(scores: Sequence[float], end: int) -> list[int]:
    """The first ``end`` positions by score, best first; ties and the 0.0 rest in their given order.

    ``heapq.nsmallest`` gives what a stable sort's first ``end`` would: the position breaks ties.
    """
    return heapq.nsmallest(end, range(len(scores)), key=lambda n: (-scores[n], n))


class Condition(NamedTuple):
    """One of ``list_namespaces``' match conditions: a namespace starts (or ends) with ``path``, ``"*"`` any label."""

    kind: Literal["prefix", "suffix"]
    path: tuple[str, ...]

    def holds(self, namespace: tuple[str, ...]) -> bool:
        """Whether ``namespace`` meets the condition (InMemoryStore's rule)."""
        if len(namespace) < len(self.path):
            return False
        labels = namespace if self.kind == "prefix" else namespace[len(namespace) - len(self.path):]
        return all(wanted == "*" or label == wanted for label, wanted in zip(labels, self.path, strict=False))

    def id_prefix_labels(self) -> tuple[str, ...]:
        """The labels every namespace meeting a prefix condition starts with: the path up to its first ``"*"``."""
        return self.path[: self.path.index("*")] if "*" in self.path else self.path


def namespace_sizes(repo: Repo, start: bytes, prefix: str, nodes: Nodes,
                    valid_at: int | None = None) -> dict[tuple[str, ...], int]:
    """How many items each namespace holds among ``nodes`` (commit ``start``'s under ``prefix``), kept by both.

    ``valid_at``: ``nodes`` are those valid at that time along ``start``'s history, kept by all three.

    A store of many items has few namespaces, so each distinct namespace
    part of an id is parsed once, and the key part only checked to be one a
    put could have written.  A commit's nodes never change: a listing at the
    same commit reads the sizes off the shelf instead of every id.
    """
    shelf = repo.backend.kept.shelf("namespace sizes", CACHE_SETS)
    found: dict[tuple[str, ...], int] | None = shelf.find((start, prefix, valid_at))
    if found is not None:
        return found
    heads: dict[str, tuple[str, ...] | None] = {}
    found = {}
    for node_id in nodes:
        head, _, key = node_id.rpartition(SEPARATOR)
        if head not in heads:
            parsed = parse_id(f"{head}{SEPARATOR}k") if head else None
            heads[head] = parsed[0] if parsed is not None else None
        namespace = heads[head]
        if namespace is not None and parse_id(f"x{SEPARATOR}{key}") is not None:
            found[namespace] = found.get(namespace, 0) + 1
    return shelf.keep((start, prefix, valid_at), found)  # type: ignore[no-any-return]  # (the dict just kept)


def list_namespaces(
    sizes: Mapping[tuple[str, ...], int], expired: Iterable[str], conditions: Sequence[Condition],
    max_depth: int | None, limit: int, offset: int,
) -> list[tuple[str, ...]]:
    """The namespaces holding items (``sizes``, less the ``expired`` ids among them) that meet every condition.

    Each is cut to ``max_depth``; the answer is sorted and paged.
    """
    left = dict(sizes)
    for node_id in expired:  # few: only a live read's run-out leases
        place = parse_id(node_id)
        if place is not None and place[0] in left:
            left[place[0]] -= 1
    spaces = {namespace for namespace, size in left.items()
              if size > 0 and all(condition.holds(namespace) for condition in conditions)}
    if max_depth is not None:
        spaces = {namespace[:max_depth] for namespace in spaces}
    return sorted(spaces)[offset : offset + limit]
