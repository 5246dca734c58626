"""The store's items at one commit, answering BaseStore's read ops.

A batch reads through exactly one ``mnem stamps`` invocation (the bridge's
``Store.node_times``), whatever mix of gets, searches and namespace
listings it holds, so every read in the batch sees one consistent state and
item times come from the same snapshot as item values.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

from langgraph.store.base import GetOp, ListNamespacesOp, Op, Result, SearchOp

from mnem_bridge import Store, TimedNode

from .convert import Entry, matches_namespace
from .filters import matches_filter
from .keys import ESCAPE, SEPARATOR, decode_part, id_prefix, node_id, parse_node_id
from .ranking import QueryMode, bm25_scores, contains

__all__ = ["Snapshot"]

logger = logging.getLogger(__name__)


class Snapshot:
    """Items in ``(namespace, key)`` order, the order ``search`` returns them in.

    Args:
        entries: The items; node ids no put could have written are already left out.
    """

    def __init__(self, entries: Iterable[Entry], spaces: Iterable[tuple[str, ...]] | None = None) -> None:
        self._entries = sorted(entries, key=lambda e: (e.namespace, e.key))
        self._by_key = {(e.namespace, e.key): e for e in self._entries}
        self._spaces = set(spaces) if spaces is not None else {e.namespace for e in self._entries}

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
        if all(isinstance(op, ListNamespacesOp) for op in reads):  # ids alone: no node is read (``mnem ls``)
            return cls.listing(store.node_ids(prefixes=prefixes, live=True))
        if prefixes is None:
            return cls.of(store.node_times(live=True))
        return cls.of(store.node_times(ids, prefixes=prefixes, live=True))

    def entry(self, namespace: tuple[str, ...], key: str) -> Entry | None:
        """The item at ``(namespace, key)``, if the snapshot holds it."""
        return self._by_key.get((tuple(namespace), key))

    def expiring(self, namespace: tuple[str, ...], key: str) -> bool:
        """Whether the item has a TTL (so a read that refreshes TTLs must touch it)."""
        entry = self._by_key.get((tuple(namespace), key))
        return entry is not None and entry.expires is not None

    def answer(self, op: Op, similarity: Mapping[str, float] | None = None, mode: QueryMode = "substring") -> Result:
        """The result of one read op.

        Args:
            op: A ``GetOp``, ``SearchOp`` or ``ListNamespacesOp``.
            similarity: For a search with a query in ``"vector"`` mode:
                ``{node id: score}`` of the candidates that have vectors
                (``Store.similar``).  They come first, best first (ties by
                node id, as ``mnem similar`` orders them); the rest follow
                without a score, in key order, as in InMemoryStore.
            mode: How a search's query is answered (``ranking``): the
                substring filter (ADR-0016), BM25 ranking, or ``similarity``.

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
            hits = [
                e for e in self._entries
                if e.namespace[: len(prefix)] == prefix and matches_filter(e.value, op.filter)
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
            if mode == "bm25":
                bm25 = bm25_scores(query, [e.value for e in hits])
                ranked = sorted(zip(bm25, hits, strict=True), key=lambda pair: -pair[0])  # stable: ties keep key order
                return [e.search_item(score) for score, e in ranked[page]]
            found = [e for e in hits if contains(query, node_id(e.namespace, e.key), e.value)]
            return [e.search_item() for e in found[page]]
        if isinstance(op, ListNamespacesOp):
            spaces = {ns for ns in self._spaces if all(matches_namespace(c, ns) for c in op.match_conditions or ())}
            if op.max_depth is not None:
                spaces = {ns[: op.max_depth] for ns in spaces}
            return sorted(spaces)[op.offset : op.offset + op.limit]
        raise TypeError(f"not a read op: {type(op).__name__}")


def _labels(op: SearchOp | ListNamespacesOp) -> tuple[str, ...]:
    """The namespace labels every item an op can return lies under (``()`` when it can be anywhere)."""
    if isinstance(op, SearchOp):
        return tuple(op.namespace_prefix)
    for condition in op.match_conditions or ():
        if condition.match_type == "prefix":
            path = tuple(condition.path)
            return path[: path.index("*")] if "*" in path else path
    return ()
