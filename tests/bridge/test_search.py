"""``Store.search`` and ``Store.namespaces``: typed pages from the real ``mnem``, through its worker and one-shot.

The rules themselves are the engine's (tests/store/test_search.py); here
the bridge sends every argument so the engine reads it, and reads the page
back as ``SearchHit``s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import mnem_bridge
from mnem_bridge import SearchHit, UsageError


@pytest.fixture(params=["worker", "oneshot"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> mnem_bridge.Store:
    client = mnem_bridge.Mnem(mode=request.param)
    opened = mnem_bridge.init(tmp_path / "s", client=client)
    request.addfinalizer(client.close)
    return opened


def test_search_sends_each_argument_and_reads_typed_items(store: mnem_bridge.Store) -> None:
    commit, _ = store.write([
        {"id": "memories:u1:a", "content": {"text": "green tea", "n": 1},
         "vectors": {"model": "e", "fields": {"text": mnem_bridge.store.pack_vector([0.0, 1.0])}}},
        {"id": "memories:u1:b", "content": {"text": "tea and pizza", "n": 5},
         "vectors": {"model": "e", "fields": {"text": mnem_bridge.store.pack_vector([1.0, 0.0])}}},
        {"id": "memories:u2:c", "content": "tea"},
    ], message="w")
    assert commit is not None
    everything = store.search(("memories",))
    assert [hit.id for hit in everything] == ["memories:u1:a", "memories:u1:b", "memories:u2:c"]
    assert everything[2] == SearchHit("memories:u2:c", ("memories", "u2"), "c", {"value": "tea"}, commit.time,
                                      commit.time, None, None)
    assert [hit.key for hit in store.search(("memories", "u1"), filter={"n": {"$gt": 2}})] == ["b"]
    assert [hit.key for hit in store.search(("memories",), query="pizza", mode="bm25", limit=1)] == ["b"]
    ranked = store.search(("memories",), query="x", mode="vector", model="e", vector=[0.0, 1.0], distance="l2")
    assert [(hit.key, hit.score) for hit in ranked] == [("a", 0.0), ("b", pytest.approx(-2 ** 0.5)), ("c", None)]
    hybrid = store.search(("memories",), query="pizzas", mode="hybrid", model="e", vector=[1.0, 0.0],
                          fields=["text"], offset=1)
    assert [hit.key for hit in hybrid] == ["a", "c"]
    assert store.search(("memories",), at=commit.id, query="green")[0].key == "a"
    assert store.namespaces() == [("memories", "u1"), ("memories", "u2")]
    assert store.namespaces(prefix=("memories", "*"), suffix=("u2",), max_depth=2) == [("memories", "u2")]
    with pytest.raises(UsageError, match=r"\$in"):
        store.search(filter={"n": {"$in": [1]}})
