"""Fuzz: packs another store sends, taken on both backends, are whole or refused with nothing written.

Each input starts from a real pack (a history with a branch, a merge and a
deletion, made by the engine) and is spoiled the way a hostile or broken
peer would: bytes flipped, cut, inserted; commit entries dropped, doubled,
swapped; change rows pointing at other objects or other ids; node objects
dropped, or added with content canonical CBOR holds and JSON does not;
the pack's version and store format changed.  ``transfer.unpack`` takes
each in one write of the receiver.  It must either take it (and then the
store verifies, and no ref moved: a pack moves none) or refuse it as
``corrupt_store`` / ``format_version`` with every row as it was; any other
exception fails the test.

The records a version 2 pack carries get a fuzzer of their own: a real
pack from a store with redactions, its records given wrong types, lengths
past their bounds, ids of commits, states and other nodes' versions,
duplicates, a count past the bound, and the redacted versions' bytes sent
beside them.  Each is taken as a fetch takes it; a clean take must keep no
byte a record names.  The same records spoiled the same ways also go as a
page (a pack of records alone, as a peer that sums its records up sends
them: ``redaction_exchange``), taken as a push's page is
(``peers.receive_records``) or as a fetch's (kept in a ``Spool`` for the
ids it asked for, then applied in an erasing write).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import cbor2
import pytest
from conftest import init_repo, open_repo, store_fingerprint, store_sql
from fuzzing import tried
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mnem_store import porcelain
from mnem_store.backend import KIND_CODES
from mnem_store.cborstream import ARRAY, MAP, head
from mnem_store.errors import CorruptStoreError, FormatVersionError
from mnem_store.objects import MemoryNode, Provenance, encode_object
from mnem_store.peers import receive_records
from mnem_store.redaction import Selection, recorded
from mnem_store.redaction_exchange import Spool
from mnem_store.redaction_travel import MAX_AUTHOR_BYTES, MAX_NODE_ID_BYTES, MAX_REASON_BYTES, MAX_REDACTIONS
from mnem_store.repo import Repo
from mnem_store.transfer import carries_redactions, missing, pack, unpack
from mnem_store.verify import verify

EXAMPLES = 300


def node(name: str, value: Any) -> MemoryNode:
    return MemoryNode(name, value, "note", Provenance(source="fuzz"), None)


@pytest.fixture(scope="module")
def source_pack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[bytes]:
    """The pack of a small history: main with a side branch merged in, a deletion, several nodes per commit."""
    repo: Repo = init_repo(tmp_path_factory.mktemp("fuzz-packs") / "store", "sqlite")
    try:
        porcelain.write(repo, [node("a", 1), node("b", {"x": [1, 2]})], [], "one", "t", 1)
        porcelain.branch_create(repo, "side")
        porcelain.write(repo, [node("c", "side")], [], "side", "t", 2, branch="side")
        porcelain.write(repo, [node("a", 2)], ["b"], "two", "t", 3)
        porcelain.merge(repo, "side", author="t", time_ms=4)
        porcelain.write(repo, [node("d", None)], [], "three", "t", 5)
        out = io.BytesIO()
        with repo.backend.read():
            tips = [tip for tip in (repo.branch_tip("main"), repo.branch_tip("side")) if tip is not None]
            pack(repo, missing(repo, tips, []), out)
        yield out.getvalue()
    finally:
        repo.close()


#: Content canonical CBOR carries and upstream's JSON does not, for planted nodes.
foreign = st.sampled_from([2**64, -(2**64) - 1, b"raw", cbor2.CBORTag(1, 0), {1: "a"}, 1.5, "plain", None])


@st.composite
def spoiled(draw: st.DrawFn, blob: bytes) -> tuple[str, bytes]:
    """One way of spoiling ``blob`` (named, for hypothesis's statistics), and the bytes it gives."""
    how = draw(st.sampled_from(["bytes", "cut", "insert", "entries", "rows", "nodes", "header", "whole"]))
    if how == "whole":
        return how, blob
    if how == "bytes":
        data = bytearray(blob)
        for at in draw(st.lists(st.integers(0, len(blob) - 1), min_size=1, max_size=4)):
            data[at] = draw(st.integers(0, 255))
        return how, bytes(data)
    if how == "cut":
        return how, blob[:draw(st.integers(0, len(blob) - 1))]
    if how == "insert":
        at = draw(st.integers(0, len(blob)))
        return how, blob[:at] + draw(st.binary(min_size=1, max_size=16)) + blob[at:]
    doc = cbor2.loads(blob)
    commits, nodes = doc["commits"], doc["nodes"]
    objects = [entry[0] for entry in commits] + nodes
    if how == "entries":
        change = draw(st.sampled_from(["drop", "double", "swap", "reverse", "node-for-commit"]))
        i = draw(st.integers(0, len(commits) - 1))
        j = draw(st.integers(0, len(commits) - 1))
        if change == "drop":
            del commits[i]
        elif change == "double":
            commits.insert(j, commits[i])
        elif change == "swap":
            commits[i], commits[j] = commits[j], commits[i]
        elif change == "reverse":
            commits.reverse()
        else:
            commits[i] = [draw(st.sampled_from(nodes)), commits[i][1]]
    elif how == "rows":
        rows = draw(st.sampled_from([entry[1] for entry in commits]))
        target = draw(st.one_of(st.none(), st.sampled_from([encode_object(MemoryNode("z", 0))[0]]),
                                st.binary(min_size=32, max_size=32), st.binary(max_size=40)))
        rows.append([draw(st.one_of(st.text(max_size=8), st.integers())), target])
    elif how == "nodes":
        if draw(st.booleans()) and nodes:
            del nodes[draw(st.integers(0, len(nodes) - 1))]
        else:
            nodes.append(encode_object(node(draw(st.text(max_size=8)), draw(foreign)))[1])
    else:
        key = draw(st.sampled_from(["pack", "format"]))
        doc[key] = draw(st.one_of(st.integers(-2, 2**70), st.text(max_size=4), st.none()))
    del objects
    return how, cbor2.dumps(doc)


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_a_spoiled_pack_is_taken_whole_or_refused_with_nothing_written(source_pack: bytes, store: Path,
                                                                       data: st.DataObject) -> None:
    how, blob = data.draw(spoiled(source_pack))
    tried("packs")
    repo = open_repo(store)
    try:
        take(repo, store, how, blob)
    finally:
        repo.close()


def take(repo: Repo, store: Path, how: str, blob: bytes) -> bool:
    """Take the pack ``blob`` into ``repo`` (at ``store``) as a fetch takes it; whether it was taken.

    A version 2 pack goes in an erasing write, any other in a plain one.  A
    refusal must be ``corrupt_store`` or ``format_version`` and leave every
    row as it was; a take must move no ref and leave a store that verifies.
    """
    before = store_fingerprint(store)
    with repo.backend.read():
        refs = dict(repo.branches()), repo.head()
    stream = io.BytesIO(blob)
    try:
        with repo.backend.erasing() if carries_redactions(stream) else repo.backend.write():
            unpack(repo, stream)
    except (CorruptStoreError, FormatVersionError) as refused:
        event(f"{how}: refused")
        assert "Traceback" not in str(refused)
        assert store_fingerprint(store) == before
        return False
    event(f"{how}: taken")
    with repo.backend.read():
        assert (dict(repo.branches()), repo.head()) == refs  # a pack moves no ref
        report = verify(repo)
    assert not report.problems, report.problems
    return True


# ------------------------------------------------------------------ the records a version 2 pack carries
#: Examples per backend of the records fuzzer (each clean take costs a fresh receiver, so fewer than above).
RECORD_EXAMPLES = 75


class RecordPacks(NamedTuple):
    """A sender's history as packs, and what a hostile sender may put in a record.

    ``base`` carries the first commit as it was before any redaction (each
    receiver starts from it); ``pack`` the two commits after it, a version 2
    pack whose records name a version the receiver holds with its bytes and
    one the commits set, which the pack carries as its record alone.
    """

    base: bytes
    pack: bytes
    #: The redacted versions' bytes: the sender no longer has them, and a hostile one sends them anyway.
    redacted: tuple[bytes, ...]
    #: Objects no record may name: the commits (the receiver's and the pack's) and their states.
    histories: tuple[bytes, ...]
    #: Versions by object id, with their node ids: those every receiver holds with their bytes, and those sent.
    held: dict[bytes, str]
    sent: dict[bytes, str]


@pytest.fixture(scope="module")
def record_packs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordPacks]:
    repo: Repo = init_repo(tmp_path_factory.mktemp("fuzz-records") / "store", "sqlite")
    first, second = node("a", 1), node("c", "sk-live-7e2d")
    others = [node("b", "beta"), node("a", 2), node("c", "kept"), node("d", [4])]
    versions = {encode_object(version)[0]: version.id for version in (first, *others)}
    try:
        porcelain.write(repo, [first, others[0]], [], "one", "t", 1)
        porcelain.write(repo, [others[1], second], [], "two", "t", 2)
        porcelain.write(repo, others[2:], [], "three", "t", 3)
        base, rest = io.BytesIO(), io.BytesIO()
        with repo.backend.read():
            commits = missing(repo, [repo.branch_tip("main") or b""], [])
            pack(repo, commits[:1], base)
        redacted = (encode_object(first)[0], encode_object(second)[0])
        porcelain.redact(repo, Selection(objects=redacted), reason="leaked", author="dpo")
        with repo.backend.read():
            pack(repo, commits[1:], rest, asked=redacted[:1])
        yield RecordPacks(base.getvalue(), rest.getvalue(), (encode_object(first)[1], encode_object(second)[1]),
                          tuple(raw for commit, body in commits for raw in (commit, body.state)),
                          dict(list(versions.items())[:2]), dict(list(versions.items())[2:]))
    finally:
        repo.close()


class Receivers:
    """The store a fuzz run's packs go to: ``base`` taken in; a clean take spends it, and the next is a new one."""

    def __init__(self, backend: str, folder: Path, base: bytes) -> None:
        self.backend, self.folder, self.base, self.made = backend, folder, base, 0
        self.store = self.spend()

    def spend(self) -> Path:
        """A new receiving store, from now on the one packs go to."""
        self.made += 1
        self.store = self.folder / f"receiver{self.made}"
        repo: Repo = init_repo(self.store, self.backend)
        try:
            with repo.backend.write():
                unpack(repo, io.BytesIO(self.base))
        finally:
            repo.close()
        return self.store


@pytest.fixture
def receivers(backend: str, tmp_path: Path, record_packs: RecordPacks) -> Receivers:
    return Receivers(backend, tmp_path, record_packs.base)


def over(limit: int) -> st.SearchStrategy[str]:
    """Texts past a byte bound: one character too many, or within the bound in characters and past it in bytes."""
    return st.sampled_from(["x" * (limit + 1), "\u00e9" * (limit // 2 + 1)])


#: Values a hostile sender puts in each field of a record ``[object, node id, at, author, reason]``.
FIELDS = (
    st.one_of(st.binary(max_size=40).filter(lambda raw: len(raw) != 32), st.text(max_size=4), st.integers(),
              st.none(), st.just([bytes(32)])),
    st.one_of(st.binary(max_size=4), st.integers(), st.none(), over(MAX_NODE_ID_BYTES), st.text(max_size=8)),
    st.one_of(st.integers(-(2**70), -1), st.just(2**64), st.floats(), st.text(max_size=3), st.none(),
              st.booleans()),
    st.one_of(st.binary(max_size=4), st.integers(), st.none(), over(MAX_AUTHOR_BYTES)),
    st.one_of(st.binary(max_size=4), st.integers(), st.none(), over(MAX_REASON_BYTES)),
)
#: Values a duplicate of a record may differ by, each of its field's type.
AGAIN = (st.just(bytes(32)), st.text(max_size=8), st.integers(0, 2**63), st.text(max_size=8), st.text(max_size=8))


def encoded(doc: dict[str, Any], count: int | None = None) -> bytes:
    """``doc`` as CBOR; with ``count``, its records array says it holds ``count`` (its items are those it has)."""
    if count is None:
        return bytes(cbor2.dumps(doc))
    return head(MAP, len(doc)) + b"".join(
        cbor2.dumps(key) + (head(ARRAY, count) + b"".join(map(cbor2.dumps, value)) if key == "redactions"
                            else cbor2.dumps(value)) for key, value in doc.items())


#: What is done to a pack's records, the commonest (a record naming what it may not) drawn most often.
SPOILS = ("names", "names", "names", "names", "field", "field", "shape", "again", "beside", "drop", "bound", "keys",
          "whole")


@st.composite
def hostile_records(draw: st.DrawFn, packs: RecordPacks, paged: bool = False) -> tuple[str, bytes]:
    """The version 2 pack with one thing done to its records (named, for hypothesis's statistics), as bytes.

    ``paged``: its records alone, as a page of them travels (no commits, no nodes).
    """
    doc = cbor2.loads(packs.pack)
    if paged:
        doc["commits"], doc["nodes"] = [], []
    records, nodes = doc["redactions"], doc["nodes"]
    how = draw(st.sampled_from(SPOILS))
    i = draw(st.integers(0, len(records) - 1))
    if how == "field":
        field = draw(st.integers(0, 4))
        records[i][field] = draw(FIELDS[field])
    elif how == "shape":
        records[i] = draw(st.one_of(st.lists(st.sampled_from(records[i]), max_size=7).filter(lambda r: len(r) != 5),
                                    st.binary(max_size=4), st.integers(), st.just({"object": records[i][0]})))
    elif how == "names":  # a commit or state, a version held or sent (under its own id or another), or none
        named = {"held": list(packs.held), "history": packs.histories, "sent": list(packs.sent),
                 "absent": [draw(st.binary(min_size=32, max_size=32))]}
        records[i][0] = draw(st.sampled_from(named[draw(st.sampled_from(list(named)))]))
        ids = [*packs.held.values(), *packs.sent.values()]
        records[i][1] = draw(st.sampled_from([records[i][1], *ids, draw(st.text(max_size=8))]))
    elif how == "again":
        copy = list(records[i])
        if draw(st.booleans()):
            field = draw(st.integers(1, 4))
            copy[field] = draw(AGAIN[field])
        records.insert(draw(st.integers(0, len(records))), copy)
    elif how == "beside":
        for data in draw(st.lists(st.sampled_from(packs.redacted), min_size=1, max_size=2)):
            nodes.insert(draw(st.integers(0, len(nodes))), data)
    elif how == "drop":
        del records[i]
    elif how == "bound":
        return how, encoded(doc, MAX_REDACTIONS + draw(st.integers(1, 2**32)))
    elif how == "keys":
        change = draw(st.sampled_from(["missing", "version 1", "before the nodes", "not an array"]))
        if change == "missing":
            del doc["redactions"]
        elif change == "version 1":
            doc["pack"] = 1
        elif change == "before the nodes":
            doc = {key: doc[key] for key in ("pack", "format", "commits", "redactions", "nodes")}
        else:
            doc["redactions"] = draw(st.one_of(st.none(), st.text(max_size=4), st.just({"a": records})))
    return how, encoded(doc)


@settings(max_examples=RECORD_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_hostile_records_in_a_pack_are_taken_cleanly_or_refused_and_no_bytes_they_name_are_kept(
        record_packs: RecordPacks, receivers: Receivers, data: st.DataObject) -> None:
    """Taken as a fetch takes a pack (an erasing write when it is version 2): a typed refusal writing nothing,
    or a take after which the store verifies, every record the pack carried is kept, none names a commit, a
    state or a version of another node than the one its commits set, and no object a record names holds
    bytes, the redacted versions a hostile sender sends beside their records among them."""
    how, blob = data.draw(hostile_records(record_packs))
    tried("pack records")
    store = receivers.store
    repo = open_repo(store)
    try:
        if not take(repo, store, how, blob):
            return
        receivers.spend()  # the next input goes to a store as this one was before
        kept_cleanly(repo, store, blob)
    except AssertionError:
        if receivers.store == store:
            receivers.spend()  # a take that failed its checks wrote: hypothesis's replay of it starts afresh too
        raise
    finally:
        repo.close()


def kept_cleanly(repo: Repo, store: Path, blob: bytes) -> None:
    """After a clean take: every record sent is kept, none names a commit or a state the store holds (those a
    page's sender named and never sent are objects it lacks, recorded as such) or a version of another node
    than the one its commits set, and no object a record names holds bytes."""
    with repo.backend.read():
        kept = recorded(repo)
        set_to = {raw: node_id for _, node_id, raw in repo.backend.states.versions(None, None)}
    assert {bytes(entry[0]) for entry in cbor2.loads(blob)["redactions"]} <= kept.keys()
    assert store_sql(store, "SELECT count(*) FROM objects WHERE kind <> ? AND id IN (SELECT object FROM redactions)",
                     KIND_CODES["memory_node"]) == [(0,)]  # no record for a commit or a state
    assert all(record.node_id == set_to[raw] for raw, record in kept.items() if raw in set_to)
    assert store_sql(store, "SELECT count(*) FROM objects WHERE data IS NOT NULL AND id IN "
                            "(SELECT object FROM redactions)") == [(0,)]


def take_page(repo: Repo, store: Path, how: str, blob: bytes, asked: list[bytes] | None) -> bool:
    """Take a page of records as a push's page is taken (``asked`` None) or as a fetch's is (kept for the ids it
    asked for, then applied in an erasing write); whether it was taken.  A refusal is ``corrupt_store`` or
    ``format_version`` with every row as it was, a take leaves a store that verifies, with its refs as they were."""
    before = store_fingerprint(store)
    with repo.backend.read():
        refs = dict(repo.branches()), repo.head()
    try:
        if asked is None:
            receive_records(repo, io.BytesIO(blob))
        else:
            with Spool(None) as spool:
                spool.add(io.BytesIO(blob), asked, "the fuzzed peer")
                with repo.backend.erasing():
                    spool.take(repo, 7, "the fuzzed peer")
    except (CorruptStoreError, FormatVersionError) as refused:
        event(f"page {how}: refused")
        assert "Traceback" not in str(refused)
        assert store_fingerprint(store) == before
        return False
    event(f"page {how}: taken")
    with repo.backend.read():
        assert (dict(repo.branches()), repo.head()) == refs
        report = verify(repo)
    assert not report.problems, report.problems
    return True


@settings(max_examples=RECORD_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_hostile_records_in_a_page_are_taken_cleanly_or_refused_before_any_row_moves(
        record_packs: RecordPacks, receivers: Receivers, data: st.DataObject) -> None:
    """A page of records alone, spoiled as a pack's records are, taken as a push's or a fetch's page: a typed
    refusal writing nothing (a page that carries nodes or commits, more records than the fetch asked for, or one
    it did not ask for, among them), or a take that keeps every record cleanly (``kept_cleanly``)."""
    how, blob = data.draw(hostile_records(record_packs, paged=True))
    pushed = data.draw(st.booleans())
    asked = None if pushed else [bytes(entry[0]) for entry in cbor2.loads(record_packs.pack)["redactions"]]
    tried("pack records")
    store = receivers.store
    repo = open_repo(store)
    try:
        if not take_page(repo, store, how, blob, asked):
            return
        receivers.spend()
        kept_cleanly(repo, store, blob)
    except AssertionError:
        if receivers.store == store:
            receivers.spend()
        raise
    finally:
        repo.close()
