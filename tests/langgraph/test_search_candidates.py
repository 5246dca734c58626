"""A live search answers as the same commit read at a revision does, in every mode, and is one ``mnem`` call.

``store.search`` reads HEAD's branch live (leases applied) and
``store.at(rev)`` one commit; both are one ``mnem search``, whose engine
keeps candidates and values by content id between calls.  So the answers
must agree for every query mode, offset, limit and filter, on both
backends, after writes, deletes and TTL expiry, whatever the engine kept
from the searches before.  And an embedded value's vectors are stored once,
by object: a branch that keeps a value neither re-embeds nor re-stores it.
"""

from __future__ import annotations

import logging

import pg_stores
import pytest
from conftest import BACKENDS, MNEM, new_store
from langgraph.store.base import PutOp
from manual_clock import ManualClock

from mnem_langgraph import MnemosyneStore

pytest_plugins = ["langgraph_fixtures"]

NS = ("memories", "u1")
WORDS = ("pizza", "hiking", "cheese", "mountain", "tea", "plan")
QUERIES = ("pizza", "hiking plan", "TEA", "Straße", "zürich", "no such words", "u1:k", '"', "40")


def embed(texts: list[str]) -> list[list[float]]:
    return [[float(text.lower().count(word)) + 0.01 * n for n, word in enumerate(WORDS)] for text in texts]


INDEX = {"dims": len(WORDS), "embed": embed, "fields": ["text"]}
VALUES = [
    {"text": "pizza with cheese and tea"}, {"text": "hiking up a mountain", "plan": "tea"},
    {"text": "STRASSE in Zürich"}, {"text": "a \"quoted\" pizza plan"}, {"text": "tea tea tea", "seats": 40},
    {"text": "mountain hiking plan, pizza after"}, {"text": "nothing much"}, {"text": "cheese"},
]


def fill(store: MnemosyneStore) -> None:
    store.batch([PutOp(NS, f"k{n}", value) for n, value in enumerate(VALUES)]
                + [PutOp(NS, "odd:key%", {"text": "pizza tea"}), PutOp((*NS, "deeper"), "x", {"text": "pizza"}),
                   PutOp(("memories", "u2"), "k0", {"text": "pizza"}), PutOp(NS, "raw", {"text": "tea"}, index=False)])


def same_answers(store: MnemosyneStore) -> None:
    """Every search answers as ``at("main")`` does (scores and order)."""
    reference = store.at("main")
    for prefix in (NS, ("memories",)):
        for query in QUERIES:
            for offset, limit in ((0, 10), (2, 3), (0, 1), (5, 20)):
                for where in (None, {"plan": "tea"}):
                    got = store.search(prefix, query=query, limit=limit, offset=offset, filter=where)
                    want = reference.search(prefix, query=query, limit=limit, offset=offset, filter=where)
                    assert [(i.namespace, i.key, i.score, i.value) for i in got] == [
                        (i.namespace, i.key, i.score, i.value) for i in want], (prefix, query, offset, limit, where)
                    assert [(i.created_at, i.updated_at) for i in got] == [
                        (i.created_at, i.updated_at) for i in want]


@pytest.fixture(params=BACKENDS)
def root(request, tmp_path):
    return pg_stores.address(new_store(tmp_path / "memory", request.param))


@pytest.mark.parametrize("mode", ["substring", "bm25", "vector", "hybrid"])
def test_a_search_answers_as_a_full_snapshot_in_every_mode_after_writes_and_deletes(root, mode):
    with MnemosyneStore(root, mnem=MNEM, index=INDEX, query_mode=mode) as store:
        fill(store)
        same_answers(store)
        store.put(NS, "k1", {"text": "tea on the mountain", "plan": "tea"})  # a new commit, one new value
        store.delete(NS, "k4")
        same_answers(store)


def test_a_search_is_one_call_again_and_after_a_write(store_root, caplog):
    with MnemosyneStore(store_root, mnem=MNEM, query_mode="bm25") as store:
        fill(store)
        store.search(NS, query="pizza")
        for change in (lambda: None, lambda: store.put(NS, "k9", {"text": "pizza again"})):
            change()
            with caplog.at_level(logging.DEBUG, logger="mnem_bridge"):
                caplog.clear()
                found = store.search(NS, query="pizza", limit=2)
                lines = [r.getMessage().split(" --json ")[1] for r in caplog.records if " --json " in r.getMessage()]
            assert [line.split()[0] for line in lines] == ["search"] and len(found) == 2


def test_expired_items_leave_the_search_at_once(store_root):
    clock = ManualClock()
    with MnemosyneStore(store_root, mnem=MNEM, clock=clock, query_mode="bm25") as store:
        fill(store)
        store.put(NS, "brief", {"text": "pizza for a minute"}, ttl=1)
        assert "brief" in [i.key for i in store.search(NS, query="pizza")]
        clock.advance(seconds=61)
        found = store.search(NS, query="pizza")
        assert "brief" not in [i.key for i in found]
        assert store.sweep_ttl() == 1  # now the commit lacks it too: the commit's answer is the reference
        assert [(i.key, i.score) for i in found] == [(i.key, i.score) for i in store.at("main").search(
            NS, query="pizza")]  # ranked among the live items alone


def test_a_branch_that_keeps_a_value_neither_embeds_nor_stores_its_vectors_again(store_root):
    texts: list[str] = []

    def counting(batch: list[str]) -> list[list[float]]:
        texts.extend(batch)
        return embed(batch)

    def vector_rows() -> int:
        from mnem_store.repo import Repo

        with Repo.open(store_root) as repo, repo.backend.read():
            return int(repo.backend.vectors.session.execute(  # type: ignore[attr-defined]
                "SELECT count(*) FROM vectors").fetchone()[0])

    with MnemosyneStore(store_root, mnem=MNEM, index={**INDEX, "embed": counting}) as store:
        store.put(NS, "kept", {"text": "pizza and tea"})
        stored = vector_rows()
        embedded = list(texts)
        store.branch("idea")
        store.switch("idea")
        store.put(NS, "other", {"text": "mountain"})  # a commit on the branch that keeps "kept"
        assert texts == [*embedded, "mountain"]  # only the new value was embedded
        assert vector_rows() == stored + 1  # and only its vector stored
        scored = {i.key: i.score for i in store.search(NS, query="pizza tea")}
        store.switch("main")
        assert {i.key: i.score for i in store.search(NS, query="pizza tea")} == {"kept": scored["kept"]}
        assert texts == [*embedded, "mountain", "pizza tea", "pizza tea"]  # queries, never a stored value again
