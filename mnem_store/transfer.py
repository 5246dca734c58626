"""Copying history between two open stores: what the receiver lacks, verified, parents first.

Ids are content addresses, so two stores agree on every id and the
receiver lacks exactly the commits it has no graph row for.  ``missing``
walks from the sender's tips and stops at every commit the receiver
already holds, so it reads the difference, not the history.  ``copy``
sends those commits parents first, each with the node objects its change
set (against its first parent) brings that the receiver does not hold;
states travel as what they are here, change rows: the receiver applies
them to the first parent's state and checks the result against the
commit's state id (``Repo.index_changes``), so a commit costs its changes,
not its state.  Every object is verified on arrival: its canonical bytes must
hash to its id and decode to an object that encodes back to the same bytes,
else ``corrupt_store``.  Both functions run inside the callers'
transactions (a read on the sender, one write on the receiver), so a
refused object or a kill leaves the receiver as it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from .canonical import hex_id, object_id
from .errors import CorruptStoreError
from .objects import Commit, MemoryNode, StoredObject, decode_object, encode_object
from .repo import Repo

__all__ = ["Sent", "copy", "missing"]


class Sent(NamedTuple):
    """What one transfer wrote on the receiver: commits, and objects of every kind (commits among them)."""

    commits: int
    objects: int


def _verified(src: Repo, raw: bytes, kind: type[StoredObject]) -> tuple[StoredObject, bytes]:
    """An object the sender holds, with its canonical bytes, checked against its id as it arrives."""
    row = src.objects.row(raw)
    if row is None or row[2] is None:
        raise CorruptStoreError(f"the sending store lacks object {hex_id(raw)}, which its history names")
    data = row[2]
    if object_id(data) != raw:
        raise CorruptStoreError(f"object {hex_id(raw)} from the sending store does not hash to its id; "
                                "nothing was written (run `mnem verify` on the sending store)")
    try:
        obj = decode_object(data)
        same = encode_object(obj)[0] == raw
    except Exception:  # any decoding failure is the object's, and refused as corrupt
        same, obj = False, None
    if not same or not isinstance(obj, kind):
        raise CorruptStoreError(f"object {hex_id(raw)} from the sending store is not a canonical "
                                f"{kind.__name__}; nothing was written")
    return obj, data


def missing(src: Repo, dst: Repo, tips: Iterable[bytes]) -> list[tuple[bytes, Commit]]:
    """The commits reachable from ``tips`` that ``dst`` lacks, verified, parents before children.

    The walk stops at each commit ``dst`` has indexed (its ancestors are
    there too), so it costs the difference.
    """
    from graphlib import TopologicalSorter

    found: dict[bytes, Commit] = {}
    stack = list(tips)
    while stack:
        raw = stack.pop()
        if raw in found or dst.states.graph(raw) is not None:
            continue
        commit, _ = _verified(src, raw, Commit)
        assert isinstance(commit, Commit)
        found[raw] = commit
        stack.extend(commit.parents)
    order = TopologicalSorter({raw: [p for p in c.parents if p in found] for raw, c in sorted(found.items())})
    return [(raw, found[raw]) for raw in order.static_order()]


def copy(src: Repo, dst: Repo, commits: list[tuple[bytes, Commit]]) -> Sent:
    """Write ``commits`` (from ``missing``) into ``dst`` with the node objects they need (``dst``'s write).

    Raises:
        CorruptStoreError: An object did not verify, or a state did not rebuild to its id.
    """
    objects = 0
    for raw, commit in commits:
        row = src.states.graph(raw)
        if row is None:
            raise CorruptStoreError(f"commit {hex_id(raw)} is not in the sending store's commit graph")
        changes = {node_id: new for node_id, (_, new) in src.states.change_set(row.key).items()}
        for new in changes.values():
            if new is not None and dst.objects.key(new) is None:
                _, data = _verified(src, new, MemoryNode)
                dst.objects.insert(new, "memory_node", data)
                objects += 1
        objects += 1 if dst.objects.key(commit.state) is None else 0
        if dst.index_changes(commit, changes) != raw:
            raise CorruptStoreError(f"commit {hex_id(raw)} did not encode back to its id")
        objects += 1
    return Sent(len(commits), objects)

