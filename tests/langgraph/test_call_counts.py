"""What a batch costs in ``mnem`` calls, as docs/langgraph.md ("What a batch does") promises it.

Each call is counted from the bridge's echo log (``mnem_bridge.echo``, one
line per invocation, as a user sees it with ``MNEM_ECHO=1``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conftest import MNEM
from langgraph.store.base import GetOp, ListNamespacesOp, Op, PutOp, SearchOp
from langgraph_fixtures import Verbs

from mnem_langgraph import MnemosyneStore

pytest_plugins = ["langgraph_fixtures"]

def calls(store: MnemosyneStore, verbs: Verbs, ops: Sequence[Op]) -> list[str]:
    verbs.seen.clear()
    store.batch(ops)
    return list(verbs.seen)


def many_ops() -> list[Op]:
    """Gets, searches and listings of every kind, then several puts and a delete."""
    reads: list[Op] = [GetOp(("a",), f"k{i}") for i in range(5)]
    reads += [SearchOp(("a",), None, 10, 0), SearchOp(("a",), {"x": 1}, 10, 0, "one"), ListNamespacesOp(None, None)]
    return [*reads, *(PutOp(("a",), f"n{i}", {"x": i}) for i in range(5)), PutOp(("a",), "k0", None)]


def test_a_batch_costs_one_stamps_for_its_gets_one_call_per_other_read_and_one_write(
        mstore: MnemosyneStore, verbs: Verbs) -> None:
    mstore.put(("a",), "k0", {"x": 1})
    assert calls(mstore, verbs, many_ops()) == ["stamps", "search", "search", "namespaces", "write"]
    assert calls(mstore, verbs, many_ops()[:5]) == ["stamps"]
    assert calls(mstore, verbs, many_ops()[8:]) == ["write"]


def test_refresh_on_read_adds_one_touch_to_a_batch_that_reads(store_root: Path, verbs: Verbs) -> None:
    with MnemosyneStore(store_root, mnem=MNEM, ttl={"default_ttl": 10, "refresh_on_read": True}) as store:
        store.put(("a",), "k0", {"x": 1})
        assert calls(store, verbs, many_ops()) == ["stamps", "search", "search", "namespaces", "touch", "write"]


def test_a_ranked_query_is_one_search_call(store_root: Path, verbs: Verbs) -> None:
    def embed(texts: Sequence[str]) -> list[list[float]]:
        return [[float(len(text)), 1.0] for text in texts]

    index: Any = {"dims": 2, "embed": embed}
    for mode in ("vector", "hybrid"):
        with MnemosyneStore(store_root, mnem=MNEM, index=index, query_mode=mode) as store:  # type: ignore[arg-type]
            store.put(("a",), "k0", {"x": "hello"})
            assert calls(store, verbs, [*many_ops()[:5], SearchOp(("a",), None, 10, 0, "hi"), *many_ops()[8:]]) == [
                "stamps", "search", "write"]
