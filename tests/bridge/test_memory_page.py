"""``Store.memory_page`` and ``Store.whole_memory``: ``mnem show``, its bytes kept for callers that forward them."""

from __future__ import annotations

import orjson
import pytest
from conftest import run_mnem

import mnem_bridge
from mnem_bridge import MemoryNode, Store


def test_a_page_is_the_binarys_bytes_and_their_typed_nodes(bstore: Store) -> None:
    first, _ = bstore.write([{"id": f"n{i}", "content": {"i": i}, "source": "s"} for i in range(5)],
                            message="m", time_ms=100)
    page = bstore.memory_page(limit=2)
    assert page.json == run_mnem("--json", "show", "--limit=2", cwd=bstore.root).out.encode()
    assert page.document == orjson.loads(page.json) and page.next_cursor == "n1"
    assert page.memory == {f"n{i}": bstore.working_memory()[f"n{i}"] for i in range(2)}
    assert list(bstore.memory_page(limit=9, cursor="n3").memory) == ["n4"]
    assert bstore.memory_page(limit=9, cursor="n3").next_cursor is None
    bstore.write([{"id": "--prefix=x", "content": 1}], message="m", time_ms=200)
    assert list(bstore.memory_page(limit=9, prefixes=["--prefix"]).memory) == ["--prefix=x"]  # a prefix like a flag
    assert list(bstore.memory_page(limit=9, at=first.id).memory) == [f"n{i}" for i in range(5)]
    assert bstore.working_node("n4", at=first.id) == MemoryNode("n4", {"i": 4}, provenance=page.memory["n0"].provenance)


def test_bad_pages_raise_typed_errors(bstore: Store) -> None:
    with pytest.raises(mnem_bridge.UsageError):
        bstore.memory_page(limit=0)
    with pytest.raises(mnem_bridge.InvalidRefError):
        bstore.memory_page(limit=1, at="nope")


def test_the_whole_memory_is_the_binarys_bytes_and_their_typed_nodes(bstore: Store) -> None:
    first, _ = bstore.write([{"id": f"n{i}", "content": {"i": i / 3}, "source": "s"} for i in range(3)],
                            message="m", time_ms=100)
    assert first is not None
    bstore.write([{"id": "n3", "content": "later"}], message="m", time_ms=200)
    whole = bstore.whole_memory()
    assert whole.json == run_mnem("--json", "show", cwd=bstore.root).out.encode()
    assert whole.document == orjson.loads(whole.json) and whole.memory == bstore.working_memory()
    assert bstore.whole_memory(at=first.id).memory == bstore.state_at(first.id)
    with pytest.raises(mnem_bridge.InvalidRefError):
        bstore.whole_memory(at="nope")
