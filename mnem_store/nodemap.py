"""A state's node map that a commit can change without copying it.

A state of 100k nodes is a 100k-entry dict.  Copying it for each commit
(and later freeing the copy when the image cache lets the parent go) cost
about 2.7 ms per commit, most of a commit's time at that size.  A
``NodeMap`` is a shared base dict that is never mutated, plus the changes
made since it was built: deriving a child map copies only those changes.
When they grow past ``FOLD_AT`` they are folded into a new base, once, so
a lookup stays two dict probes and the folding cost is spread over
thousands of commits.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

__all__ = ["FOLD_AT", "NodeMap"]

#: Changes kept beside the base before they are folded into a new one: a copy of this many entries
#: per commit is a few microseconds, a fold of 100k entries is a few milliseconds once in this many.
FOLD_AT = 2048

#: The value of a removed id in ``_changes`` (ids are mapped to 32-byte object ids, never to this).
_GONE = b""


class NodeMap(Mapping[str, bytes]):
    """Node id -> object id of one state; immutable, cheap to derive from.

    Iteration yields the base's ids in the base's order, then ids added
    since; callers that need an order sort, as they did with a dict.
    """

    __slots__ = ("_base", "_changes", "_len")

    def __init__(self, base: dict[str, bytes], changes: dict[str, bytes] | None = None, length: int | None = None):
        self._base = base
        self._changes = changes or {}
        self._len = len(base) if length is None else length

    def __getitem__(self, node_id: str) -> bytes:
        raw = self._changes.get(node_id)
        if raw is None:
            return self._base[node_id]
        if raw is _GONE:
            raise KeyError(node_id)
        return raw

    def get(self, node_id: str, default: bytes | None = None) -> bytes | None:  # type: ignore[override]
        """The object id under ``node_id``, or ``default`` (the hot path of every lookup)."""
        raw = self._changes.get(node_id)
        if raw is None:
            return self._base.get(node_id, default)
        return default if raw is _GONE else raw

    def __contains__(self, node_id: object) -> bool:
        raw = self._changes.get(node_id)  # type: ignore[call-overload]
        return node_id in self._base if raw is None else raw is not _GONE

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[str]:
        changes = self._changes
        if not changes:
            yield from self._base
            return
        for node_id in self._base:
            if changes.get(node_id) is not _GONE:
                yield node_id
        for node_id, raw in changes.items():
            if raw is not _GONE and node_id not in self._base:
                yield node_id

    def changed(self, changes: Mapping[str, bytes | None]) -> tuple[NodeMap, dict[str, bytes | None]]:
        """A new map with ``changes`` applied (None removes), and the changes that took effect.

        Setting an id to the object it already holds, or removing one that
        is absent, is no change.  This map is left as it was.
        """
        effective: dict[str, bytes | None] = {}
        mine = dict(self._changes)
        length = self._len
        for node_id, raw in changes.items():
            held = self.get(node_id)
            if raw == held:
                continue
            effective[node_id] = raw
            length += (held is None) - (raw is None)
            if raw is not None:
                mine[node_id] = raw
            elif node_id in self._base:
                mine[node_id] = _GONE
            else:
                del mine[node_id]
        if not effective:
            return self, effective
        if len(mine) < FOLD_AT:
            return NodeMap(self._base, mine, length), effective
        folded = dict(self._base)
        for node_id, raw in mine.items():
            if raw is _GONE:
                del folded[node_id]
            else:
                folded[node_id] = raw
        return NodeMap(folded), effective
