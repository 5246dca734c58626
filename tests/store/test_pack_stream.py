"""Packs are written and read a value at a time, in the layout older engines write and read whole.

A pack is the bytes another store sends, so the receiver trusts none of
them: it reads one object or one commit's change rows at a time
(``transfer.unpack`` over ``cborstream``), so a pack of any size costs it
about what its largest object costs, and a commit of more change rows than
``transfer.MAX_CHANGES`` is refused before its rows are read.  Memory is
measured with ``tracemalloc`` (what Python allocates, deterministic for a
given input), against bounds with a wide margin.  Every refusal leaves the
store as it was, on both backends.
"""

from __future__ import annotations

import io
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import cbor2
import pytest
from conftest import init_repo, open_repo, store_fingerprint
from mnem_history import ok

from mnem_store import porcelain, transfer
from mnem_store.cborstream import ARRAY, MAP, head
from mnem_store.errors import CorruptStoreError, FormatVersionError
from mnem_store.layout import FORMAT_VERSION
from mnem_store.objects import Commit, MemoryNode, Provenance, encode_object
from mnem_store.repo import Repo
from mnem_store.transfer import MAX_CHANGES, missing, pack, spooled, unpack


def history(folder: Path, commits: int, value: str = "") -> Repo:
    """A store of ``commits`` one-fact commits over 50 fact ids, each value ``value`` and the commit's number."""
    repo: Repo = init_repo(folder, "sqlite")
    for n in range(commits):
        node = MemoryNode(f"fact-{n % 50}", {"n": n, "text": f"{n}{value}"}, "note", Provenance(source="test"), None)
        porcelain.write(repo, [node], [], f"commit {n}", "tester", 1_000_000 + n)
    return repo


def whole_pack(repo: Repo) -> bytes:
    """The pack of ``repo``'s whole main, as ``pack`` writes it."""
    with repo.backend.read():
        tip = repo.branch_tip("main")
        assert tip is not None
        out = io.BytesIO()
        pack(repo, missing(repo, [tip], []), out)
    return out.getvalue()


def taken(folder: Path, blob: bytes | io.BufferedIOBase) -> Any:
    """``unpack`` into the store at ``folder`` in one write; the result, or the refusal raised."""
    repo = open_repo(folder)
    try:
        with repo.backend.write():
            return unpack(repo, io.BytesIO(blob) if isinstance(blob, bytes) else blob)
    finally:
        repo.close()


@contextmanager
def allocation_peak() -> Iterator[list[int]]:
    """The most Python held at once (bytes, beyond what it held at the start) while the block ran."""
    found: list[int] = []
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        yield found
        found.append(tracemalloc.get_traced_memory()[1] - start)
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Repo]:
    repo = history(tmp_path_factory.mktemp("source") / "store", 12)
    yield repo
    repo.close()


def test_a_pack_is_the_whole_map_older_receivers_read_with_cbor2_loads(source: Repo) -> None:
    blob = whole_pack(source)
    doc = cbor2.loads(blob)
    assert list(doc) == ["pack", "format", "commits", "nodes"] and doc["pack"] == 1
    assert len(doc["commits"]) == 12 and len(doc["nodes"]) == 12
    assert cbor2.dumps(doc) == blob  # byte for byte what the engine wrote as one map before packs were streamed


def test_a_pack_an_older_sender_wrote_whole_is_taken_on_both_backends(source: Repo, store: Path) -> None:
    blob = whole_pack(source)
    older = cbor2.dumps(cbor2.loads(blob))  # an older engine: cbor2.dumps of the map it built in memory
    sent = taken(store, older)
    assert (sent.commits, sent.objects) == (12, 36)  # a commit, its state and its node, each
    repo = open_repo(store)
    try:
        with repo.backend.read(), source.backend.read():
            sent_ids = [raw for raw, _ in missing(source, [source.branch_tip("main")], [])]
            assert all(repo.states.graph(raw) is not None for raw in sent_ids)
    finally:
        repo.close()


def test_a_pack_is_taken_whole_while_its_write_sheds_what_it_learns_on_both_backends(
        source: Repo, store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shedding the write's memo of rows every 3 objects (``Kept.shed``) loses nothing a write holds (its locks)."""
    monkeypatch.setattr(transfer, "SHED_OBJECTS", 3)
    sent = taken(store, whole_pack(source))
    assert (sent.commits, sent.objects) == (12, 36)
    ok("verify", cwd=store)
    with source.backend.read():
        tip = source.branch_tip("main")
    repo = open_repo(store)
    try:
        with repo.backend.read():
            assert repo.states.graph(tip) is not None
    finally:
        repo.close()


def test_unpacking_holds_one_object_at_a_time_not_the_pack(tmp_path: Path) -> None:
    """A 16 MB pack of 10 KB objects is taken holding a few MB of Python memory at most, not the pack."""
    source = history(tmp_path / "big", 1600, "x" * 10_000)
    try:
        with source.backend.read():
            tip = source.branch_tip("main")
            assert tip is not None
            blob = spooled(lambda out: pack(source, missing(source, [tip], []), out))
    finally:
        source.close()
    size = blob.seek(0, 2)
    blob.seek(0)
    assert size > 16_000_000
    receiver: Repo = init_repo(tmp_path / "receiver", "sqlite")
    try:
        with allocation_peak() as peak, receiver.backend.write():
            sent = unpack(receiver, blob)
    finally:
        receiver.close()
        blob.close()
    assert sent.commits == 1600
    assert peak[0] < size // 4, f"unpacking a {size}-byte pack held {peak[0]} bytes at once"


def rows_pack(rows: int) -> bytes:
    """A pack of one root commit carrying ``rows`` deletion rows (a state id no rows rebuild)."""
    _, data = encode_object(Commit((), b"\x11" * 32, "many rows", "tester", 1_000_000))
    return b"".join([head(MAP, 4), cbor2.dumps("pack"), cbor2.dumps(1), cbor2.dumps("format"),
                     cbor2.dumps(FORMAT_VERSION), cbor2.dumps("commits"), head(ARRAY, 1), head(ARRAY, 2),
                     cbor2.dumps(data), head(ARRAY, rows), cbor2.dumps(["x", None]) * rows, cbor2.dumps("nodes"),
                     head(ARRAY, 0)])


def test_a_commit_of_more_rows_than_max_changes_is_refused_before_its_rows_are_read(store: Path) -> None:
    blob = rows_pack(MAX_CHANGES + 1)
    before = store_fingerprint(store)
    with allocation_peak() as peak, pytest.raises(CorruptStoreError, match=f"more than the {MAX_CHANGES}"):
        taken(store, blob)
    assert peak[0] < 1_000_000  # its rows (a million dict entries would be over 100 MB) were never read
    assert store_fingerprint(store) == before


def hostile(blob: bytes) -> list[tuple[str, bytes]]:
    """Packs that are not packs, made from a real one: each must be refused as ``corrupt_store``."""
    doc = cbor2.loads(blob)
    header = head(MAP, 4) + cbor2.dumps("pack") + cbor2.dumps(1) + cbor2.dumps("format") + cbor2.dumps(1)
    commits = header + cbor2.dumps("commits")
    nodes_at = blob.index(cbor2.dumps("nodes"))
    return [
        *((f"cut at {n}", blob[:n]) for n in range(0, len(blob), 7)),
        ("a byte after it", blob + b"\x00"),
        ("keys out of order", cbor2.dumps({"format": 1, "pack": 1, "commits": doc["commits"], "nodes": doc["nodes"]})),
        ("a fifth key", cbor2.dumps({**doc, "extra": 1})),
        ("commits of indefinite length", commits + b"\x9f\xff" + cbor2.dumps("nodes") + b"\x80"),
        ("a byte string past the end", commits + b"\x81\x82\x5b" + (1 << 40).to_bytes(8, "big")),
        ("a float for the format", head(MAP, 4) + cbor2.dumps("pack") + cbor2.dumps(1) + cbor2.dumps("format")
         + cbor2.dumps(1.0) + blob[blob.index(cbor2.dumps("commits")):]),
        ("a node that is not canonical", blob[:nodes_at] + cbor2.dumps("nodes") + b"\x81" + cbor2.dumps(b"\xa0")),
        ("version 2", cbor2.dumps({**doc, "pack": 2})),
        ("a text where the nodes' bytes belong", blob[:nodes_at] + cbor2.dumps("nodes") + b"\x81" + cbor2.dumps("x")),
        ("an array of a billion items in a few bytes", commits + b"\x9a\x40\x00\x00\x00"),
    ]


def test_whatever_is_not_a_pack_is_refused_and_nothing_is_written(source: Repo, store: Path) -> None:
    before = store_fingerprint(store)
    for name, blob in hostile(whole_pack(source)):
        with pytest.raises(CorruptStoreError, match="nothing was written") as refused:
            taken(store, blob)
        assert "Traceback" not in str(refused.value), name
        assert store_fingerprint(store) == before, name


def test_a_pack_of_a_newer_store_format_is_format_version(source: Repo, store: Path) -> None:
    doc = cbor2.loads(whole_pack(source))
    with pytest.raises(FormatVersionError):
        taken(store, cbor2.dumps({**doc, "format": FORMAT_VERSION + 1}))


def test_a_pack_written_to_a_file_by_the_binary_is_taken_from_the_file(source: Repo, tmp_path: Path) -> None:
    """``mnem upload-pack --pack-file`` / ``receive-pack --pack-file`` (feature ``pack-file``): no base64, no JSON."""
    root = Path(source.location)
    tip = ok("resolve", "main", cwd=root).out.strip()
    path = tmp_path / "main.pack"
    answer = ok("--json", "upload-pack", f"--pack-file={path}", cwd=root, input=f'{{"want": ["{tip}"], "have": []}}')
    assert answer.json == {"commits": 12, "bytes": path.stat().st_size}
    assert path.read_bytes() == whole_pack(source)
    target = tmp_path / "target"
    init_repo(target, "sqlite").close()
    request = f'{{"branch": "main", "old": null, "new": "{tip}"}}'
    received = ok("--json", "receive-pack", f"--pack-file={path}", cwd=target, input=request).json
    assert (received["status"], received["commits"]) == ("created", 12)
    assert "pack-file" in ok("--version", "--json", cwd=tmp_path).json["features"]
