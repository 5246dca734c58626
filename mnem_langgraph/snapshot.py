"""The store's items at one commit, answering BaseStore's read ops.

A batch reads through exactly one ``mnem stamps`` invocation (the bridge's
``Store.node_times``), whatever mix of gets, searches and namespace
listings it holds, so every read in the batch sees one consistent state and
item times come from the same snapshot as item values.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from langgraph.store.base import GetOp, ListNamespacesOp, Op, Result, SearchOp

from mnem_bridge import Store, TimedNode

from .convert import Entry, matches_namespace
from .filters import matches_filter
from .hybrid import WHOLE, fuse
from .keys import ESCAPE, SEPARATOR, decode_part, id_prefix, node_id, parse_node_id
from .ranking import LEXICON, Postings, QueryMode, bm25_scores, contains, haystacks, matching

__all__ = ["Snapshot"]

logger = logging.getLogger(__name__)


class Snapshot:
    """Items in ``(namespace, key)`` order, the order ``search`` returns them in.

    Args:
        entries: The items; node ids no put could have written are already left out.
        spaces: The namespaces, when the snapshot holds no items (``listing``); else the items'.
        objects: The object id of each item's value, by ``(namespace, key)``, where known
            (``candidates``): a lexical search then finds each value's words once (``ranking.LEXICON``).
    """

    def __init__(self, entries: Iterable[Entry], spaces: Iterable[tuple[str, ...]] | None = None,
                 objects: Mapping[tuple[tuple[str, ...], str], str] | None = None) -> None:
        self._entries = sorted(entries, key=lambda e: (e.namespace, e.key))
        self._by_key = {(e.namespace, e.key): e for e in self._entries}
        self._spaces = set(spaces) if spaces is not None else {e.namespace for e in self._entries}
        self._objects = objects or {}
        self._hits: dict[tuple[str, ...], list[Entry]] = {}
        self._ids: dict[tuple[tuple[str, ...], str], str] = {}
        self._hit_ids: dict[tuple[str, ...], list[str]] = {}
        self._hit_objects: dict[tuple[str, ...], list[str | None] | None] = {}
        self._stacks: dict[tuple[str, ...], list[str]] = {}
        self._inverted: dict[tuple[str, ...], Postings | bool] = {}

    @property
    def entries(self) -> list[Entry]:
        """The items, in ``(namespace, key)`` order."""
        return list(self._entries)

    @classmethod
    def listing(cls, ids: Iterable[str]) -> Snapshot:
        """The namespaces the ids lie in, and no items: answers namespace listings only.

        A store of many items has few namespaces, so each distinct namespace
        part of an id is parsed once; the key part is only checked to be one
        a put could have written (``parse_node_id``'s rule).
        """
        spaces: dict[str, tuple[str, ...] | None] = {}
        found = set()
        for nid in ids:
            head, _, key = nid.rpartition(SEPARATOR)
            if head not in spaces:
                parsed = parse_node_id(f"{head}{SEPARATOR}k") if head else None
                spaces[head] = parsed[0] if parsed is not None else None
            namespace = spaces[head]
            if namespace is not None and (ESCAPE not in key or decode_part(key) is not None):
                found.add(namespace)
        return cls((), found)

    @classmethod
    def of(cls, timed: Mapping[str, TimedNode]) -> Snapshot:
        """Items for stamped nodes (``{node_id: TimedNode}``), skipping ids that are not ``namespace:key``."""
        return cls(Entry.of(*parsed, stamped) for nid, stamped in timed.items()
                   if (parsed := parse_node_id(nid)) is not None)

    @classmethod
    def load(cls, store: Store, reads: Sequence[Op]) -> Snapshot:
        """The current branch's live memory (expired items left out) as ``reads`` need it, in one invocation.

        On a coupled step's view of a replay branch (``Store.on``) the branch
        is read as committed: ``mnem`` applies TTL leases to HEAD's branch only.

        Gets fetch only their own nodes (a short history walk each); a
        search only the namespace under its prefix, a listing only what is
        under its prefix condition up to the first wildcard (``mnem stamps
        --prefix``), so a read costs what its namespace holds, not the
        store.  Only a search of the whole store, or a listing without a
        prefix, reads every node.  A batch of listings alone reads ids and
        no node at all (``mnem ls``).
        """
        ids = [node_id(op.namespace, op.key) for op in reads if isinstance(op, GetOp) and op.namespace]
        prefixes: list[str] | None = []
        for op in reads:
            if isinstance(op, (SearchOp, ListNamespacesOp)):
                prefix = id_prefix(_labels(op))
                if not prefix:
                    prefixes = None  # the whole store: gets are in it too
                    break
                if prefixes is not None:
                    prefixes.append(prefix)
        live = store.view_branch is None
        if all(isinstance(op, ListNamespacesOp) for op in reads):  # ids alone: no node is read (``mnem ls``)
            return cls.listing(store.node_ids(prefixes=prefixes, live=live))
        if prefixes is None:
            return cls.of(store.node_times(live=live))
        return cls.of(store.node_times(ids, prefixes=prefixes, live=live))

    def entry(self, namespace: tuple[str, ...], key: str) -> Entry | None:
        """The item at ``(namespace, key)``, if the snapshot holds it."""
        return self._by_key.get((tuple(namespace), key))

    def expiring(self, namespace: tuple[str, ...], key: str) -> bool:
        """Whether the item has a TTL (so a read that refreshes TTLs must touch it)."""
        entry = self._by_key.get((tuple(namespace), key))
        return entry is not None and entry.expires is not None

    def answer(
        self, op: Op, similarity: Mapping[str, float] | None = None, mode: QueryMode = "substring",
        fields: Sequence[tuple[str, Any]] = WHOLE,
    ) -> Result:
        """The result of one read op.

        Args:
            op: A ``GetOp``, ``SearchOp`` or ``ListNamespacesOp``.
            similarity: For a search with a query in ``"vector"`` mode:
                ``{node id: score}`` of the candidates that have vectors
                (``Store.similar``).  They come first, best first (ties by
                node id, as ``mnem similar`` orders them); the rest follow
                without a score, in key order, as in InMemoryStore.
            mode: How a search's query is answered (``ranking``): the
                substring filter (ADR-0016), BM25 ranking, ``similarity``,
                or both fused (``hybrid``: ``similarity`` then holds the
                vector scores).
            fields: The index's fields (``EmbeddingIndex.fields``), which
                ``"hybrid"``'s BM25 reads; the whole value by default.

        Returns:
            What InMemoryStore would return for it, with the documented differences.

        Raises:
            TypeError: A ``PutOp``: writes are the caller's to apply.
        """
        if isinstance(op, GetOp):
            entry = self._by_key.get((tuple(op.namespace), op.key))
            return None if entry is None else entry.item()
        if isinstance(op, SearchOp):
            prefix = tuple(op.namespace_prefix)
            hits = self._under(prefix) if not op.filter else [
                e for e in self._under(prefix) if matches_filter(e.value, op.filter)
            ]
            page = slice(op.offset, op.offset + op.limit)
            query = op.query
            if not query:
                return [e.search_item() for e in hits[page]]
            if mode == "vector":
                scores = similarity or {}
                ids = [node_id(e.namespace, e.key) for e in hits]
                scored = sorted((i for i in ids if i in scores), key=lambda i: (-scores[i], i))  # as mnem ranks
                rest = [i for i in ids if i not in scores]  # in key order, after every scored item
                by_id = dict(zip(ids, hits, strict=True))
                return [by_id[i].search_item(scores.get(i)) for i in [*scored, *rest][page]]
            if mode == "hybrid":
                scores = similarity or {}
                ids, objects = (self._ids_under(prefix), self._known_under(prefix)) if not op.filter else (
                    [self._id(e) for e in hits], self._known(hits))
                fused = fuse(query, [e.value for e in hits], list(map(scores.get, ids)), fields, objects, page)
                return [hits[n].search_item(score) for n, score in fused]
            if mode == "bm25":
                postings = self._postings(prefix) if not op.filter else None
                if postings is not None:  # searched again: ranked from the words inverted, as bm25_scores ranks
                    import numpy as np

                    scored = postings.scores(query)
                    ranks = np.argsort(-scored, kind="stable")[op.offset : op.offset + op.limit]
                    return [hits[n].search_item(float(scored[n])) for n in ranks.tolist()]
                bm25 = bm25_scores(query, [e.value for e in hits], self._known(hits))
                # Best first, ties in key order (a stable sort by score); a score is 0 exactly when the item
                # shares no word with the query, and those keep their key order after the others.
                best = sorted((n for n, score in enumerate(bm25) if score), key=lambda n: -bm25[n])
                order = [*best, *(n for n, score in enumerate(bm25) if not score)][page]
                return [hits[n].search_item(bm25[n]) for n in order]
            stacks = self._haystacks(prefix) if not op.filter else None
            positions = matching(query, stacks) if stacks is not None else None
            if positions is not None:  # the items' texts, joined once per snapshot: one ``in`` per item
                found: Iterator[Entry] = (hits[n] for n in positions)
            else:
                objects = self._known(hits) or [None] * len(hits)
                found = (e for e, obj in zip(hits, objects, strict=True)
                         if contains(query, self._id(e), e.value, obj))
            return [e.search_item() for e in itertools.islice(found, op.offset, op.offset + op.limit)]
        if isinstance(op, ListNamespacesOp):
            spaces = {ns for ns in self._spaces if all(matches_namespace(c, ns) for c in op.match_conditions or ())}
            if op.max_depth is not None:
                spaces = {ns[: op.max_depth] for ns in spaces}
            return sorted(spaces)[op.offset : op.offset + op.limit]
        raise TypeError(f"not a read op: {type(op).__name__}")

    @property
    def objects(self) -> Mapping[tuple[tuple[str, ...], str], str]:
        """The object ids of the items' values known, by ``(namespace, key)``."""
        return self._objects

    def _under(self, prefix: tuple[str, ...]) -> list[Entry]:
        """The items under a namespace prefix, in order (kept: a snapshot never changes, and may be searched again)."""
        found = self._hits.get(prefix)
        if found is None:
            found = self._hits[prefix] = [e for e in self._entries if e.namespace[: len(prefix)] == prefix]
        return found

    def _postings(self, prefix: tuple[str, ...]) -> Postings | None:
        """``ranking.Postings`` of the items under ``prefix`` from their second BM25 search on, all objects known.

        Built on the second search, not the first: inverting costs a few
        searches' worth, which a snapshot searched once (a batch's) would never earn back.
        """
        found = self._inverted.get(prefix)
        if isinstance(found, Postings):
            return found
        hits = self._under(prefix)
        objects = [obj for obj in self._known(hits) or () if obj is not None]
        if len(objects) != len(hits) or not hits:
            return None
        if found is None:  # the first search: counted, answered without
            self._inverted[prefix] = False
            return None
        built = self._inverted[prefix] = Postings([LEXICON.bag(obj, e.value) for obj, e in zip(
            objects, hits, strict=True)])
        return built

    def _haystacks(self, prefix: tuple[str, ...]) -> list[str] | None:
        """``ranking.haystacks`` of the items under ``prefix`` (kept), when every value's object id is known."""
        found = self._stacks.get(prefix)
        if found is None:
            hits = self._under(prefix)
            objects = [obj for obj in self._known(hits) or () if obj is not None]
            if len(objects) != len(hits) or not hits:
                return None
            found = self._stacks[prefix] = haystacks([self._id(e) for e in hits], [e.value for e in hits], objects)
        return found

    def _ids_under(self, prefix: tuple[str, ...]) -> list[str]:
        """The node ids of the items under ``prefix``, in order (kept, as ``_under``)."""
        found = self._hit_ids.get(prefix)
        if found is None:
            found = self._hit_ids[prefix] = [self._id(e) for e in self._under(prefix)]
        return found

    def _known_under(self, prefix: tuple[str, ...]) -> list[str | None] | None:
        """``_known`` of the items under ``prefix`` (kept, as ``_under``)."""
        if prefix not in self._hit_objects:
            self._hit_objects[prefix] = self._known(self._under(prefix))
        return self._hit_objects[prefix]

    def _id(self, entry: Entry) -> str:
        """An item's node id (kept: a snapshot searched again by substring needs them all again)."""
        found = self._ids.get((entry.namespace, entry.key))
        if found is None:
            found = self._ids[entry.namespace, entry.key] = node_id(entry.namespace, entry.key)
        return found

    def _known(self, entries: list[Entry]) -> list[str | None] | None:
        """The object ids of ``entries``' values (None where unknown), or None when the snapshot knows none."""
        if not self._objects:
            return None
        return [self._objects.get((e.namespace, e.key)) for e in entries]


def _labels(op: SearchOp | ListNamespacesOp) -> tuple[str, ...]:
    """The namespace labels every item an op can return lies under (``()`` when it can be anywhere)."""
    if isinstance(op, SearchOp):
        return tuple(op.namespace_prefix)
    for condition in op.match_conditions or ():
        if condition.match_type == "prefix":
            path = tuple(condition.path)
            return path[: path.index("*")] if "*" in path else path
    return ()
