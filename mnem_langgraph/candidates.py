"""A query search answered from what a process keeps by content id: only new values, and the page, are read.

A ``search(namespace, query=...)`` ranks (or filters) every item of the
namespace but returns a page of them.  Reading the namespace's items with
their times (``mnem stamps --prefix``) sends every value across the process
boundary and decodes it again for every query: at ten thousand items that
was most of a search.  Here a search asks instead which values the
candidates hold (``mnem ls --objects``: HEAD's commit, its node ids under
the prefix with the object ids of their values, and those expired), and:

* takes the values it already knows from ``VALUES`` (by object id) and
  reads only the others, at that commit, so a value read belongs to the
  object listed even if the branch has moved on;
* prepares the candidates once per commit and prefix (a ``Snapshot`` with
  the values' object ids: ``_PREPARED``), and next time sends that commit
  as ``--unless``, so while HEAD stays there only the ids expired since
  cross the boundary;
* ranks them exactly as a full snapshot does (``Snapshot.answer``), the
  words and texts of each value found once (``ranking.LEXICON``, by
  object id), and reads the page's items with their times (``mnem stamps --node``).

Every cache here is keyed by a content id: an object id names one value for
good, and a commit's nodes never change.  So nothing kept goes stale and
nothing is ever invalidated: the one rule of ``mnem_store.cache`` (what a
content id names stays true; the generation decides the rest, and here
there is no rest) holds unchanged, and the caches are only bounded, the
least recently used dropped first.  Leases are not content: the expired
ids come with every listing.  Like ``index.ranked_page``, a write landing
between the listing and the page's read can leave the page an item short,
or show an item's newer value at the place its older one ranked.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from langgraph.store.base import SearchItem, SearchOp

from mnem_bridge import Store

from .convert import Entry, value_of
from .hybrid import WHOLE
from .keys import id_prefix, node_id, parse_node_id
from .ranking import QueryMode
from .snapshot import Snapshot

__all__ = ["VALUES", "Values", "search"]

#: Values kept by object id, at most this many (a namespace of 10k short values is a few megabytes).
CACHE_VALUES = 100_000


class Values:
    """Item values by object id, the least recently used dropped first past ``size``."""

    def __init__(self, size: int = CACHE_VALUES) -> None:
        self.size = size
        self._kept: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()  # stores on several threads share it

    def get(self, obj: str) -> dict[str, Any] | None:
        """The value of object ``obj``, if kept (not to be changed: it is shared)."""
        return self._kept.get(obj)

    def keep(self, obj: str, value: dict[str, Any]) -> None:
        """Keep ``value`` as the value of object ``obj``."""
        with self._lock:
            self._kept[obj] = value
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)


#: The process's values: an object id names the same value in every store, so one cache serves them all.
VALUES = Values()


#: Namespaces' candidates a process keeps prepared, by the commit listed and the id prefix: a commit's never change.
CACHE_LISTINGS = 8


class _Prepared(OrderedDict[tuple[str, str], Snapshot]):
    """Candidates (every item under a prefix at a commit, expired or not) ranked from, least recently used dropped."""

    def __init__(self) -> None:
        super().__init__()
        self.latest: dict[tuple[str, str], str] = {}  # (store, prefix) -> the commit last listed there
        self.lock = threading.Lock()

    def keep(self, where: tuple[str, str], commit: str, snapshot: Snapshot) -> None:
        with self.lock:
            self[commit, where[1]] = snapshot
            self.move_to_end((commit, where[1]))
            self.latest[where] = commit
            while len(self) > CACHE_LISTINGS:
                self.popitem(last=False)


_PREPARED = _Prepared()


def search(
    store: Store, op: SearchOp, similarity: dict[str, float] | None, mode: QueryMode,
    fields: Sequence[tuple[str, Any]] = WHOLE,
) -> tuple[list[SearchItem], Snapshot]:
    """``Snapshot.answer(op, similarity, mode)`` on HEAD's live memory, reading only unknown values and the page.

    Args:
        store: HEAD's branch (leases are read there: ``--live``).
        op: A search.
        similarity: Its candidates' vector scores, for a mode that ranks by vectors (``index.similarity``).
        mode: The store's query mode.
        fields: The index's fields, which ``"hybrid"``'s BM25 reads (``Snapshot.answer``).

    Returns:
        The page, and the snapshot of its items (their times and TTLs, for refreshing).
    """
    prefix = id_prefix(tuple(op.namespace_prefix))
    where = (str(store.root), prefix)
    snapshot, expired = _candidates(store, prefix, where, _PREPARED.latest.get(where))
    if expired:
        gone = {place for nid in expired if (place := parse_node_id(nid)) is not None}
        kept = [e for e in snapshot.entries if (e.namespace, e.key) not in gone]
        snapshot = Snapshot(kept, objects=snapshot.objects)
    ranked = snapshot.answer(op, similarity, mode, fields)
    assert isinstance(ranked, list)
    wanted = [node_id(item.namespace, item.key) for item in ranked if isinstance(item, SearchItem)]
    page = Snapshot.of(store.node_times(wanted, live=True)) if wanted else Snapshot(())
    results = []
    for item in ranked:
        if isinstance(item, SearchItem) and (entry := page.entry(tuple(item.namespace), item.key)) is not None:
            results.append(entry.search_item(item.score))
    return results, page


def _candidates(
    store: Store, prefix: str, where: tuple[str, str], held: str | None,
) -> tuple[Snapshot, list[str]]:
    """Every item under ``prefix`` at HEAD's commit (prepared once per commit) and the ids expired there."""
    commit, listing, expired = store.node_objects(prefixes=[prefix] if prefix else None, live=True, unless=held)
    if listing is None and commit is not None:
        found = _PREPARED.get((commit, prefix))
        if found is not None:
            with _PREPARED.lock:
                _PREPARED.latest[where] = commit
            return found, expired
        commit, listing, expired = store.node_objects(prefixes=[prefix] if prefix else None, live=True)
    if commit is None or not listing:
        return Snapshot(()), []
    places: dict[str, tuple[tuple[str, ...], str]] = {}
    for nid in listing:
        parsed = parse_node_id(nid)
        if parsed is not None:
            places[nid] = parsed
    values = {listing[nid]: VALUES.get(listing[nid]) for nid in places}
    unknown = [nid for nid in places if values[listing[nid]] is None]
    if unknown:
        for nid, timed in store.node_times(unknown, at=commit).items():
            value = values[listing[nid]] = value_of(timed.node.content)
            VALUES.keep(listing[nid], value)
    entries = []  # times are the page's to read: ranking never looks at them
    objects: dict[tuple[tuple[str, ...], str], str] = {}
    for nid, place in places.items():
        known = values[listing[nid]]
        if known is not None:  # every node the commit holds is read
            entries.append(Entry(*place, known, 0, 0))
            objects[place] = listing[nid]
    snapshot = Snapshot(entries, objects=objects)
    _PREPARED.keep(where, commit, snapshot)
    return snapshot, expired
