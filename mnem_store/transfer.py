"""Packs: the commits one store sends another, as one self-checking blob, and how a receiver takes them in.

Ids are content addresses, so two stores agree on every id.  The receiver
names what it has (*haves*: its branch tips, and where it last saw the
sender's), and ``missing`` walks back from what it wants and stops at every
commit a have already holds, so a transfer reads the difference, not the
history.  ``pack`` writes those commits parents first as one CBOR blob:
each commit's canonical bytes with its change rows against its first
parent, and the node objects those changes set.  States travel as what
they are here, change rows: ``unpack`` applies them to the first parent's
state and checks the result against the commit's state id
(``Repo.index_changes``), so a commit costs its changes, not its state.

The blob is the same whether the other store is a folder, a PostgreSQL
store or an HTTP server (``peers``), and the receiver trusts none of it:
every object is re-hashed and must decode to an object that encodes back to
the same bytes, every parent must be there, every state must rebuild to its
id, else ``corrupt_store``; a pack of a newer store format is
``format_version``.  ``unpack`` runs inside the receiver's one write
transaction, so a refused pack or a kill leaves the receiver as it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import cbor2

from .canonical import hex_id, object_id
from .errors import CorruptStoreError, FormatVersionError
from .graph import Graph
from .layout import FORMAT_VERSION
from .objects import Commit, MemoryNode, StoredObject, decode_object, encode_object
from .repo import Repo

__all__ = ["PACK_VERSION", "Sent", "check_tips", "missing", "pack", "unpack"]

#: The layout of a pack blob (its ``"pack"`` key); a receiver refuses any other.
PACK_VERSION = 1


class Sent(NamedTuple):
    """What one transfer wrote on the receiver: commits, objects of every kind (commits among them), and ids.

    ``ids`` are the commits written, parents first: what a push brought, which ``pushed`` records.
    """

    commits: int
    objects: int
    ids: tuple[bytes, ...] = ()


def missing(src: Repo, wants: Iterable[bytes], haves: Iterable[bytes]) -> list[tuple[bytes, Commit]]:
    """The commits reachable from ``wants`` and not from ``haves``, parents before children (a read of ``src``).

    A have ``src`` does not hold is ignored (the receiver has commits of its
    own).  A commit stops the walk when it is a have or an ancestor of one;
    ``Graph.is_ancestor`` reads only the commits dated between the two, so
    the walk costs the difference.
    """
    from graphlib import TopologicalSorter

    graph = Graph(src)
    held = {raw for raw in haves if src.states.graph(raw) is not None}
    found: dict[bytes, Commit] = {}
    stack = list(wants)
    while stack:
        raw = stack.pop()
        if raw in found or raw in held or any(graph.is_ancestor(raw, have) for have in held):
            continue
        if src.states.graph(raw) is None:
            raise CorruptStoreError(f"commit {hex_id(raw)}, which the sending store's history names, is not in its "
                                    "commit graph (run `mnem verify` there)")
        commit = src.commit_obj(raw)
        found[raw] = commit
        stack.extend(commit.parents)
    order = TopologicalSorter({raw: [p for p in c.parents if p in found] for raw, c in sorted(found.items())})
    return [(raw, found[raw]) for raw in order.static_order()]


def pack(src: Repo, commits: list[tuple[bytes, Commit]]) -> bytes:
    """The blob carrying ``commits`` (from ``missing``) and the node objects their changes set (a read of ``src``)."""
    entries: list[list[Any]] = []
    nodes: dict[bytes, bytes] = {}
    for raw, _ in commits:
        row = src.states.graph(raw)
        found = src.objects.row(raw)
        if row is None or found is None or found[2] is None:
            raise CorruptStoreError(f"commit {hex_id(raw)} is not in the sending store (run `mnem verify` there)")
        changes = sorted((node_id, new) for node_id, (_, new) in src.states.change_set(row.key).items())
        for _, new in changes:
            if new is not None and new not in nodes:
                node = src.objects.row(new)
                if node is None or node[2] is None:
                    raise CorruptStoreError(f"the sending store lacks object {hex_id(new)}, which commit "
                                            f"{hex_id(raw)} sets (run `mnem verify` there)")
                nodes[new] = node[2]
        entries.append([found[2], [[node_id, new] for node_id, new in changes]])
    return cbor2.dumps({"pack": PACK_VERSION, "format": FORMAT_VERSION, "commits": entries,
                        "nodes": list(nodes.values())})


def _refused(what: str) -> CorruptStoreError:
    return CorruptStoreError(f"the pack from the sending store {what}; nothing was written (run `mnem verify` on "
                             "the sending store)")


def _canonical(data: Any, kind: type[StoredObject]) -> tuple[bytes, StoredObject]:
    """An object's id and value from its bytes, as they arrive: canonical, of ``kind``, hashing to the id."""
    if not isinstance(data, bytes):
        raise _refused("holds an object that is not bytes")
    raw = object_id(data)
    try:
        obj = decode_object(data)
        same = encode_object(obj)[0] == raw
    except Exception:  # any decoding failure is the object's, and refused as corrupt
        same, obj = False, None
    if not same or not isinstance(obj, kind):
        raise _refused(f"holds object {hex_id(raw)}, which is not a canonical {kind.__name__}")
    return raw, obj


def _read(blob: bytes) -> tuple[list[Any], list[Any]]:
    """A pack's commit entries and node objects, its layout and store format checked."""
    try:
        doc = cbor2.loads(blob)
    except Exception:  # cbor2 raises several types for malformed input; all mean the same here
        raise _refused("is not a pack (malformed CBOR)") from None
    if not isinstance(doc, dict) or doc.get("pack") != PACK_VERSION:
        raise _refused(f"is not a version {PACK_VERSION} pack")
    fmt = doc.get("format")
    if not isinstance(fmt, int):
        raise _refused("names no store format")
    if fmt > FORMAT_VERSION:
        raise FormatVersionError(fmt, FORMAT_VERSION)
    commits, nodes = doc.get("commits"), doc.get("nodes")
    if not isinstance(commits, list) or not isinstance(nodes, list):
        raise _refused("lacks its commits or nodes")
    return commits, nodes


def unpack(dst: Repo, blob: bytes) -> Sent:
    """Write a pack's commits and the objects they need into ``dst`` (inside ``dst``'s write).

    Commits ``dst`` already holds are skipped; so are node objects it holds.

    Raises:
        CorruptStoreError: An object did not verify, a parent or a node is
            neither in ``dst`` nor in the pack, or a state did not rebuild to its id.
        FormatVersionError: The pack comes from a newer store format.
    """
    entries, node_list = _read(blob)
    nodes = dict(_node(data) for data in node_list)
    commits = objects = 0
    written: list[bytes] = []
    for entry in entries:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], list)):
            raise _refused("holds a malformed commit entry")
        raw, commit = _canonical(entry[0], Commit)
        assert isinstance(commit, Commit)
        if dst.states.graph(raw) is not None:
            continue
        for parent in commit.parents:
            if dst.states.graph(parent) is None:
                raise _refused(f"sends commit {hex_id(raw)} without its parent {hex_id(parent)}")
        changes = dict(_change(change) for change in entry[1])
        for new in changes.values():
            if new is not None and dst.objects.key(new) is None:
                if new not in nodes:
                    raise _refused(f"sends commit {hex_id(raw)} without node object {hex_id(new)}")
                dst.objects.insert(new, "memory_node", nodes[new])
                objects += 1
        objects += 1 if dst.objects.key(commit.state) is None else 0
        if dst.index_changes(commit, changes) != raw:
            raise _refused(f"holds commit {hex_id(raw)}, which did not encode back to its id")
        commits += 1
        objects += 1
        written.append(raw)
    return Sent(commits, objects, tuple(written))


def _node(data: Any) -> tuple[bytes, bytes]:
    raw, _ = _canonical(data, MemoryNode)
    return raw, data


def _change(change: Any) -> tuple[str, bytes | None]:
    """One change row ``[node id, object id or None]``, its types checked."""
    if (isinstance(change, list) and len(change) == 2 and isinstance(change[0], str)
            and (change[1] is None or (isinstance(change[1], bytes) and len(change[1]) == 32))):
        return change[0], change[1]
    raise _refused("holds a malformed change row")


def check_tips(dst: Repo, tips: Iterable[tuple[str, bytes]], sender: str) -> None:
    """Refuse unless each ``(branch, commit)`` a sender names is a commit ``dst`` holds with its whole history.

    Run inside ``dst``'s write, after ``unpack`` and before any ref moves,
    so a refusal rolls the pack back with the rest: no branch, tracking
    branch or HEAD ever names a commit the store lacks, whatever the sender
    advertised and then sent.  One graph lookup per tip proves the whole
    history is present.  A commit gets its graph row only from ``Repo._index``
    (a commit made here, an import, ``unpack``), which reads every parent's
    row first and fails without one; ``unpack`` also refuses a commit before
    that unless each parent has a row and each node object it sets is
    stored.  So, by induction from the first commit, a commit in the graph
    reaches only commits in the graph, with their states and nodes (the
    store as it was is ``mnem verify``'s to prove).  A tip with no row is a
    commit the pack did not carry, or an object that is not a commit.

    Raises:
        CorruptStoreError: Naming ``sender``, the branch and the commit.
    """
    for branch, tip in tips:
        if dst.states.graph(tip) is None:
            raise CorruptStoreError(f'{sender} names commit {hex_id(tip)} as branch "{branch}" but did not send it '
                                    "(or it is not a commit); nothing was written (run `mnem verify` on the sending "
                                    "store)")
