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
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cbor2
import pytest
from conftest import init_repo, open_repo, store_fingerprint
from fuzzing import tried
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mnem_store import porcelain
from mnem_store.errors import CorruptStoreError, FormatVersionError
from mnem_store.objects import MemoryNode, Provenance, encode_object
from mnem_store.repo import Repo
from mnem_store.transfer import missing, pack, unpack
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
    before = store_fingerprint(store)
    repo = open_repo(store)
    try:
        with repo.backend.read():
            refs = dict(repo.branches()), repo.head()
        try:
            with repo.backend.write():
                unpack(repo, io.BytesIO(blob))
        except (CorruptStoreError, FormatVersionError) as refused:
            event(f"{how}: refused")
            assert "Traceback" not in str(refused)
            assert store_fingerprint(store) == before
            return
        event(f"{how}: taken")
        with repo.backend.read():
            assert (dict(repo.branches()), repo.head()) == refs  # a pack moves no ref
            report = verify(repo)
        assert not report.problems, report.problems
    finally:
        repo.close()
