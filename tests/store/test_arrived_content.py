"""A node another store sends must hold what a write would store: JSON, every integer within 64 bits.

Canonical CBOR carries more than upstream's JSON content model: a bignum,
a tagged date, a byte string, a map keyed by a number.  Such a node decodes
and encodes back to its own bytes, so its id checks out; a pack carrying
one is still refused (``corrupt_store``, nothing written), and ``mnem
verify`` names one found in a store.  The sending store here is made by the
engine's own write with no check in front, as a hostile peer would make it.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import cbor2
import pytest
from conftest import init_repo, open_repo, run_mnem, store_fingerprint

from mnem_store import porcelain
from mnem_store.errors import CorruptStoreError
from mnem_store.objects import MemoryNode, Provenance, encode_object
from mnem_store.transfer import missing, pack, unpack

#: Contents canonical CBOR holds and JSON does not.
FOREIGN = [
    pytest.param(2**64, id="bignum"),
    pytest.param(-(2**64) - 1, id="negative-bignum"),
    pytest.param(b"bytes", id="byte-string"),
    pytest.param(cbor2.CBORTag(1, 1_700_000_000), id="tagged-date"),
    pytest.param({1: "a"}, id="number-key"),
]


def planted(folder: Path, content: Any) -> tuple[bytes, bytes]:
    """A store holding one commit of a node with ``content``; the node's object id and the pack of main."""
    repo = init_repo(folder, "sqlite")
    try:
        node = MemoryNode("planted", {"value": content}, "note", Provenance(source="peer"), None)
        porcelain.write(repo, [node], [], "plant", "mallory", 1_000)
        out = io.BytesIO()
        with repo.backend.read():
            tip = repo.branch_tip("main")
            assert tip is not None
            pack(repo, missing(repo, [tip], []), out)
        return encode_object(node)[0], out.getvalue()
    finally:
        repo.close()


@pytest.mark.parametrize("content", FOREIGN)
def test_a_pack_carrying_content_no_write_would_store_is_refused(content: Any, store: Path, tmp_path: Path) -> None:
    object_id, blob = planted(tmp_path / "sender", content)
    before = store_fingerprint(store)
    repo = open_repo(store)
    try:
        with pytest.raises(CorruptStoreError) as refused, repo.backend.write():
            unpack(repo, io.BytesIO(blob))
    finally:
        repo.close()
    assert object_id.hex()[:12] in str(refused.value) and "nothing was written" in str(refused.value)
    assert store_fingerprint(store) == before


@pytest.mark.parametrize("content", FOREIGN)
def test_verify_names_a_node_whose_content_is_not_json(content: Any, tmp_path: Path) -> None:
    object_id, _ = planted(tmp_path / "store", content)
    found = run_mnem("--json", "verify", cwd=tmp_path / "store")
    assert found.code != 0
    problems = found.json["error"]["problems"]
    assert [(p["what"], p["id"]) for p in problems] == [("object", object_id.hex())], problems
    assert "not JSON" in problems[0]["message"]
