"""Packs: the commits one store sends another, as one self-checking blob, and how a receiver takes them in.

Ids are content addresses, so two stores agree on every id.  The receiver
names what it has (*haves*: its branch tips, and where it last saw the
sender's), and ``missing`` walks back from what it wants and stops at every
commit a have already holds, so a transfer reads the difference, not the
history.  ``pack`` writes those commits parents first as one CBOR map
(``{"pack": 1, "format", "commits": [[commit bytes, change rows], ...],
"nodes": [node bytes, ...]}``): each commit's canonical bytes with its
change rows against its first parent, and the node objects those changes
set.  States travel as what they are here, change rows: ``unpack`` applies
them to the first parent's state and checks the result against the
commit's state id (``Repo.index_changes``), so a commit costs its changes,
not its state.

A pack lives in a file (a temporary one, or the body an HTTP server
spooled), never whole in memory: ``pack`` writes it entry by entry and
``unpack`` reads it value by value (``cborstream``), so either side holds
one object or one commit's changes at a time, however long the history.
The layout is the one older senders write and older receivers read
whole (``cbor2.loads``), so it needs no new version.

A pack from a store that has redacted node versions (``redaction``) is a
version 2 pack when it carries their records: the same map with a fifth
key, ``"redactions"``, after the nodes, holding the records
(``redaction_travel.to_entry``) of every redacted version the commits set,
whose bytes the sender no longer has and so leaves out of ``nodes``, and of
any others the receiver asked for.  The receiver reads the records
before it stores a node, checks and applies them (``redaction_travel.take``),
and then stores no bytes for an object it has a record for, whether the
pack carries them or not: a version a record names is accepted without its
bytes (it cannot be re-hashed; the states that name it still rebuild to
their ids), and bytes a record names are dropped, so no pack restores them.
An older receiver refuses a version 2 pack rather than keep bytes it was
told to remove.

The blob is the same whether the other store is a folder, a PostgreSQL
store or an HTTP server (``peers``), and the receiver trusts none of it:
every object is re-hashed and must decode to an object that encodes back to
the same bytes, every parent must be there, every state must rebuild to its
id, else ``corrupt_store``; a pack of a newer store format is
``format_version``.  ``unpack`` runs inside the receiver's one write
transaction, so a refused pack or a kill leaves the receiver as it was.
"""

from __future__ import annotations

import heapq
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO, NamedTuple

import cbor2

from .canonical import hex_id, object_id
from .cborstream import ARRAY, MAP, MalformedError, Reader, head
from .errors import CommandError, CorruptStoreError, FormatVersionError, printable
from .graph import Graph
from .layout import FORMAT_VERSION
from .objects import Commit, MemoryNode, Redaction, StoredObject, check_arrived, decode_object, encode_object
from .redaction_ranges import Summary, summary
from .redaction_travel import MAX_REDACTIONS, read_entries, take, to_entry
from .repo import Repo

__all__ = [
    "MAX_CHANGES", "PACK_VERSION", "REDACTED_PACK_VERSION", "Sent", "carries_redactions", "check_tips", "missing",
    "pack", "records_only", "spooled", "unpack",
]

#: The layout of a pack blob (its ``"pack"`` key); a receiver refuses any other than these two.
PACK_VERSION = 1
#: The layout of a pack from a store with redactions: version 1's keys and ``"redactions"`` after them.
REDACTED_PACK_VERSION = 2
#: How many keys the map of each pack version holds.
_KEYS = {PACK_VERSION: 4, REDACTED_PACK_VERSION: 5}
#: The most change rows one commit of a received pack may carry.  A commit's rows are held in memory while its
#: state is rebuilt (about 140 bytes each), so without a bound one commit of a pack could cost the receiver many
#: times the pack's size; a million facts changed in one commit is far past what an agent's commit changes.
MAX_CHANGES = 1_000_000
#: An unpack sheds its write's memo of rows (``Kept.shed``) each time it has written this many objects or bytes.
SHED_OBJECTS = 2_000
SHED_BYTES = 1 << 20


class Sent(NamedTuple):
    """What one transfer wrote on the receiver: commits, objects of every kind (commits among them), ids, records.

    ``ids`` are the commits written, parents first: what a push brought, which ``pushed`` records.
    ``redactions`` counts the redaction records new to the receiver, which it applied.
    """

    commits: int
    objects: int
    ids: tuple[bytes, ...] = ()
    redactions: int = 0


def missing(src: Repo, wants: Iterable[bytes], haves: Iterable[bytes]) -> list[tuple[bytes, Commit]]:
    """The commits reachable from ``wants`` and not from ``haves``, parents before children (a read of ``src``).

    A have ``src`` does not hold is ignored (the receiver has commits of its
    own).  The asker chooses both lists, so the cost must not multiply
    them: one walk visits each commit at most once, newest first by
    corrected time (which grows along every parent link, so a commit comes
    after all its children).  A commit reached from a have is marked
    *held*, and so are its parents; one reached only from wants is sent.
    When it comes out of the walk, every child has passed it its marks, so
    it is sent only if no have reaches it.  The walk ends once nothing but
    held commits is left in it: it reads the difference, and the held
    commits dated above the oldest commit sent, whatever the number of haves
    (git's ``rev-list WANTS --not HAVES``).

    Raises:
        CorruptStoreError: A wanted commit, or a parent the walk reaches, is not in ``src``'s commit graph.
    """
    held: dict[bytes, bool] = {}  # every commit the walk has reached: whether a have reaches it
    queue: list[tuple[int, bytes]] = []
    sent_left = 0  # commits in the queue not (yet) known to be held: the walk ends when there are none

    def reach(raw: bytes, from_have: bool) -> None:
        nonlocal sent_left
        known = held.get(raw)
        if known is None:
            row = src.states.graph(raw)
            if row is None:
                if from_have:
                    return
                raise CorruptStoreError(f"commit {hex_id(raw)}, which the sending store's history names, is not in "
                                        "its commit graph (run `mnem verify` there)")
            held[raw] = from_have
            sent_left += not from_have
            heapq.heappush(queue, (-row.corrected, raw))
        elif from_have and not known:
            held[raw] = True
            sent_left -= 1

    for have in haves:
        reach(have, True)
    for want in wants:
        reach(want, False)
    graph = Graph(src)
    found: list[tuple[bytes, Commit]] = []
    while queue and sent_left:
        _, raw = heapq.heappop(queue)
        is_held = held[raw]
        if not is_held:
            sent_left -= 1
            found.append((raw, graph.commit(raw)))
        for parent in graph.parents(raw):
            reach(parent, is_held)
    found.reverse()  # oldest first: a commit's parents came out of the walk after it
    return found


def pack(src: Repo, commits: list[tuple[bytes, Commit]], out: BinaryIO, asked: Iterable[bytes] = (),
         held: Summary | None = None) -> None:
    """Write the pack carrying ``commits`` (from ``missing``) and the node objects their changes set to ``out``.

    A read of ``src``.  Each commit entry is written as soon as it is made
    and each node object is read from the store as it is written, so what
    is held meanwhile is one commit's change rows and the ids of the nodes
    still to send, never the pack.  The bytes are those of ``cbor2.dumps``
    of the whole map (module's docstring), so any receiver reads them.

    A pack that carries redaction records is a version 2 pack: those of
    the objects in ``asked`` that ``src`` has (the ones the receiver lacks,
    from ``src``'s advertisement) and those of the redacted versions the
    commits set, which go as their records instead of their bytes.  Only a
    store with records looks for them, before the header is written.

    With ``held`` (a receiver that exchanged ranges of records with ``src``,
    ``redaction_exchange``, and so holds, or takes first, every record
    ``src`` had when its records summed up to ``held``), the records of the
    versions the commits set stay out while ``src``'s still sum up to it: the
    receiver has each, and a long history's records are not all in one pack.

    Raises:
        CommandError: ``usage``: the pack would carry more than ``MAX_REDACTIONS`` records.
    """
    records = src.backend.redactions
    kept: dict[bytes, Redaction] = {}
    carried: dict[bytes, Redaction] = {}
    if records.count():
        wanted = list(dict.fromkeys(asked))
        known = records.of(wanted)
        carried = {raw: known[raw] for raw in wanted if raw in known}
        set_by = list(dict.fromkeys(_set_by(src, commits)))
        known = records.of(set_by)
        kept = {raw: known[raw] for raw in set_by if raw in known}
        if held is None or summary(src) != held:
            carried.update(kept)
    if len(carried) > MAX_REDACTIONS:
        raise CommandError(f"this pack would carry {len(carried)} redaction records, more than the {MAX_REDACTIONS} "
                           "a receiver takes in one transfer; push or fetch a shorter stretch of history at a time",
                           "usage")
    out.write(head(MAP, _KEYS[REDACTED_PACK_VERSION] if carried else _KEYS[PACK_VERSION]) + cbor2.dumps("pack")
              + cbor2.dumps(REDACTED_PACK_VERSION if carried else PACK_VERSION) + cbor2.dumps("format")
              + cbor2.dumps(FORMAT_VERSION) + cbor2.dumps("commits") + head(ARRAY, len(commits)))
    nodes: dict[bytes, bytes] = {}  # node object id -> the first commit that sets it, in the order they are sent
    for raw, _ in commits:
        row = src.states.graph(raw)
        found = src.objects.row(raw)
        if row is None or found is None or found[2] is None:
            raise CorruptStoreError(f"commit {hex_id(raw)} is not in the sending store (run `mnem verify` there)")
        changes = sorted((node_id, new) for node_id, (_, new) in src.states.change_set(row.key).items())
        for _, new in changes:
            if new is not None:
                nodes.setdefault(new, raw)
        out.write(cbor2.dumps([found[2], [[node_id, new] for node_id, new in changes]]))
    out.write(cbor2.dumps("nodes") + head(ARRAY, len(nodes) - sum(raw in kept for raw in nodes)))
    for new, setter in nodes.items():
        if new in kept:
            continue
        node = src.objects.row(new)
        if node is None or node[2] is None:
            raise CorruptStoreError(f"the sending store lacks object {hex_id(new)}, which commit {hex_id(setter)} "
                                    "sets (run `mnem verify` there)")
        out.write(cbor2.dumps(node[2]))
    if carried:
        out.write(cbor2.dumps("redactions") + head(ARRAY, len(carried)))
        for record in carried.values():
            out.write(cbor2.dumps(to_entry(record)))


def _set_by(src: Repo, commits: list[tuple[bytes, Commit]]) -> Iterator[bytes]:
    """The node objects the change rows of ``commits`` set (a read of ``src``)."""
    for raw, _ in commits:
        row = src.states.graph(raw)
        if row is not None:  # a missing row is refused, naming the commit, as the pack is written
            yield from (new for _, new in src.states.change_set(row.key).values() if new is not None)


def spooled(write: Callable[[BinaryIO], object]) -> BinaryIO:
    """What ``write`` writes (a pack), in an unnamed temporary file, rewound: held on disk rather than in memory.

    The caller closes it; the file has no name, so nothing is left behind even if this process is killed.
    """
    out = tempfile.TemporaryFile()  # noqa: SIM115 - handed to the caller, who closes it
    try:
        write(out)
    except BaseException:
        out.close()
        raise
    out.seek(0)
    return out


def _refused(what: str) -> CorruptStoreError:
    return CorruptStoreError(f"the pack from the sending store {what}; nothing was written (run `mnem verify` on "
                             "the sending store)")


def _canonical(data: bytes, kind: type[StoredObject]) -> tuple[bytes, StoredObject]:
    """An object's id and value from its bytes, as they arrive: canonical, of ``kind``, hashing to the id."""
    raw = object_id(data)
    try:
        obj = decode_object(data)
        same = encode_object(obj)[0] == raw
    except Exception:  # any decoding failure is the object's, and refused as corrupt
        same, obj = False, None
    if not same or not isinstance(obj, kind):
        raise _refused(f"holds object {hex_id(raw)}, which is not a canonical {kind.__name__}")
    try:
        check_arrived(obj)
    except CorruptStoreError as exc:
        raise _refused(f"holds object {hex_id(raw)}, whose content no write would store ({exc})") from None
    return raw, obj


def _key(reader: Reader, name: str) -> None:
    if reader.text() != name:
        raise MalformedError('its keys are not "pack", "format", "commits", "nodes" (and "redactions"), in that '
                             "order")


def _header(reader: Reader) -> int:
    """Read a pack's map header and its ``pack`` and ``format`` keys; stop before the commits; the pack's version."""
    try:
        size = reader.map()
        _key(reader, "pack")
        version = reader.uint()
        if _KEYS.get(version) != size:
            raise MalformedError(f"it is not a version {PACK_VERSION} or {REDACTED_PACK_VERSION} pack, or its map "
                                 "does not hold that version's keys")
        _key(reader, "format")
        fmt = reader.uint()
    except MalformedError as exc:
        raise _refused(f"is not a pack ({exc})") from None
    if fmt > FORMAT_VERSION:
        raise FormatVersionError(fmt, FORMAT_VERSION)
    return version


def carries_redactions(blob: BinaryIO) -> bool:
    """Whether the pack in ``blob`` is a version 2 pack (it may carry redaction records); ``blob`` is left as it was.

    Its receiver takes it in an erasing write (``Backend.erasing``), so bytes
    its records remove are in no file of the store afterwards.  Bytes that
    are not a pack read as False here and are refused by ``unpack``.
    """
    start = blob.tell()
    try:
        reader = Reader(blob)
        return reader.map() == _KEYS[REDACTED_PACK_VERSION] and reader.text() == "pack" \
            and reader.uint() == REDACTED_PACK_VERSION
    except MalformedError:
        return False
    finally:
        blob.seek(start)


def _entry(reader: Reader) -> tuple[bytes, dict[str, bytes | None]]:
    """One commit entry ``[commit bytes, [[node id, object id or null], ...]]``: the bytes and the change rows."""
    if reader.array() != 2:
        raise MalformedError("a commit entry is not a pair")
    data = reader.bytes_()
    count = reader.array()
    if count > MAX_CHANGES:
        raise _refused(f"has a commit changing {count} facts, more than the {MAX_CHANGES} one commit of a pack may "
                       "change; split such a change into several commits")
    changes: dict[str, bytes | None] = {}
    for _ in range(count):
        if reader.array() != 2:
            raise MalformedError("a change row is not a pair")
        node_id = reader.text()
        new = reader.bytes_or_null()
        if new is not None and len(new) != 32:
            raise MalformedError("a change row names an object id that is not 32 bytes")
        changes[node_id] = new
    return data, changes


class _Recorded:
    """The receiver's records, looked up one object at a time: a store may keep more than memory holds."""

    def __init__(self, dst: Repo) -> None:
        self.records = dst.backend.redactions
        self.some = self.records.count() > 0

    def get(self, raw: bytes) -> Redaction | None:
        """The record of ``raw``, if the receiver keeps one."""
        return self.records.of([raw]).get(raw) if self.some else None


def records_only(blob: BinaryIO, most: int) -> list[Redaction]:
    """The records of a pack that carries nothing else (a page of records, ``redaction_exchange``), at most ``most``.

    Raises:
        CorruptStoreError: The bytes are not such a pack, or it carries more than ``most`` records.
        FormatVersionError: The pack comes from a newer store format.
    """
    reader = Reader(blob)
    version = _header(reader)
    records: list[Redaction] = []
    try:
        for key in ("commits", "nodes"):
            _key(reader, key)
            if reader.array():
                raise MalformedError(f"a page of redaction records carries {key}")
        if version == REDACTED_PACK_VERSION:
            _key(reader, "redactions")
            records = read_entries(reader, most)
        if not reader.at_end():
            raise MalformedError("bytes follow its last redaction record")
    except MalformedError as exc:
        raise _refused(f"is not a page of redaction records ({exc})") from None
    return records


class _Shedding:
    """Counts what an unpack writes and sheds the write's memo of rows (``Kept.shed``) every so often."""

    def __init__(self, dst: Repo) -> None:
        self.kept = dst.backend.kept
        self.objects = self.bytes = 0

    def wrote(self, size: int) -> None:
        self.objects += 1
        self.bytes += size
        if self.objects >= SHED_OBJECTS or self.bytes >= SHED_BYTES:
            self.kept.shed()
            self.objects = self.bytes = 0


def unpack(dst: Repo, blob: BinaryIO, *, redactions_allowed: bool = True) -> Sent:
    """Write the pack in the file ``blob`` into ``dst``: the commits it lacks and the objects they need.

    Inside ``dst``'s write, so a refusal or a kill writes nothing.  The pack
    is read item by item (``cborstream``) in passes, because its node
    objects come after the commits that set them and its redaction records
    after the nodes: the first checks every commit entry's and node's shape
    and reads the records, which are checked and applied before any object
    is stored (``redaction_travel.take``); the second stores each node object
    ``dst`` lacks once it has verified it, except those a record names, and
    the third takes the commits, parents first.  Memory holds one object or
    one commit's change rows at a time, whatever the pack's size, besides
    the records (bounded): the rows the write learns are shed as it goes
    (``_Shedding``).

    Args:
        dst: The receiving store, inside its write.
        blob: The pack's file.
        redactions_allowed: False for a push whose sender may not redact here: a record ``dst`` lacks is refused.

    Raises:
        CorruptStoreError: The bytes are not a pack, an object did not
            verify, a parent or a node is neither in ``dst`` nor in the pack
            (nor named by a redaction record), a record names a commit or a
            state, or a state did not rebuild to its id.
        FormatVersionError: The pack comes from a newer store format.
        CommandError: ``usage``: a record ``dst`` lacks, and ``redactions_allowed`` is False.
    """
    reader = Reader(blob)
    version = _header(reader)
    shedding = _Shedding(dst)
    commits = objects = 0
    written: list[bytes] = []
    try:
        _key(reader, "commits")
        start = reader.tell()
        for _ in range(reader.array()):
            _entry(reader)
        _key(reader, "nodes")
        nodes_start = reader.tell()
        for _ in range(reader.array()):
            reader.bytes_()
        records: list[Redaction] = []
        if version == REDACTED_PACK_VERSION:
            _key(reader, "redactions")
            records = read_entries(reader)
        if not reader.at_end():
            raise MalformedError("bytes follow its last node object" if version == PACK_VERSION
                                 else "bytes follow its last redaction record")
        new = take(dst, records, "the pack from the sending store", new_allowed=redactions_allowed)
        redacted = _Recorded(dst)  # the pack's records among them, now applied
        carried = {record.object for record in records}
        reader.seek(nodes_start)
        for _ in range(reader.array()):
            data = reader.bytes_()
            raw, _ = _canonical(data, MemoryNode)
            if dst.objects.key(raw) is None and redacted.get(raw) is None:
                dst.objects.insert(raw, "memory_node", data)
                objects += 1
                shedding.wrote(len(data))
        reader.seek(start)
        for _ in range(reader.array()):
            data, changes = _entry(reader)
            raw, commit = _canonical(data, Commit)
            assert isinstance(commit, Commit)
            if dst.states.graph(raw) is not None:
                continue
            for parent in commit.parents:
                if dst.states.graph(parent) is None:
                    raise _refused(f"sends commit {hex_id(raw)} without its parent {hex_id(parent)}")
            disproved = [named for named in (raw, commit.state) if redacted.get(named) is not None]
            if carried.intersection(disproved):
                raise _refused(f"holds commit {hex_id(raw)}, which its own redaction record says is a node version")
            if disproved:  # recorded before, by a party that guessed the id: the commit that verifies wins
                dst.backend.redactions.forget_disproved(disproved)
            for node_id, changed in changes.items():
                if changed is None or dst.objects.key(changed) is not None:
                    continue
                record = redacted.get(changed)
                if record is None:
                    raise _refused(f"sends commit {hex_id(raw)} without node object {hex_id(changed)}")
                if record.node_id != node_id:  # the record is all a read will show of the version: it must fit
                    raise _refused(f"sends commit {hex_id(raw)} setting {printable(node_id)!r} to {hex_id(changed)}, "
                                   f"which a redaction record says is a version of {printable(record.node_id)!r}")
                dst.objects.insert(changed, "memory_node", None)  # a redacted version: its id and record, no bytes
                objects += 1
            objects += 1 if dst.objects.key(commit.state) is None else 0
            if dst.index_changes(commit, changes) != raw:
                raise _refused(f"holds commit {hex_id(raw)}, which did not encode back to its id")
            commits += 1
            objects += 1
            written.append(raw)
            shedding.wrote(len(data))
    except MalformedError as exc:
        raise _refused(f"is not a pack ({exc})") from None
    return Sent(commits, objects, tuple(written), len(new))


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
