"""MnemosyneStore's TTL and embedding index, as a LangGraph user relies on them, beyond LangGraph's own suites.

TTL: expired items vanish from every read at once, a sweep records their
removal as one commit (history keeps the trail), reads that refresh keep
an item alive.  A ``ManualClock`` moves time, so nothing sleeps and each
TTL runs out exactly where the test says.  Index: values are embedded by
the caller's embedder when written, a search ranks by similarity, and a
past commit is searched with the vectors of the values it held.
"""

from __future__ import annotations

import pytest
from conftest import MNEM
from langgraph.store.base import PutOp, SearchOp
from manual_clock import ManualClock, eventually

from mnem_langgraph import MnemosyneStore

pytest_plugins = ["langgraph_fixtures"]

NS = ("memories", "u1")
WORDS = ("pizza", "hiking", "cheese", "mountain", "tea", "plan")


def embed(texts: list[str]) -> list[list[float]]:
    """A deterministic bag-of-known-words embedder: similar texts share words."""
    return [[float(text.lower().count(word)) for word in WORDS] for text in texts]


async def aembed(texts: list[str]) -> list[list[float]]:
    return embed(texts)


def index(fn=embed, fields=("text",)):
    return {"dims": len(WORDS), "embed": fn, "fields": list(fields)}


def messages(store):
    return [c.message for c in store.history(limit=50)]


def test_expired_items_vanish_at_once_and_a_sweep_records_them_as_one_commit(store_root):
    clock = ManualClock()
    with MnemosyneStore(store_root, author="agent-7", mnem=MNEM, clock=clock) as store:
        store.put(NS, "brief", {"text": "short lived"}, ttl=1)
        store.put(NS, "kept", {"text": "stays"})
        store.put(("other",), "brief", {"text": "short lived"}, ttl=1)
        clock.advance(seconds=59.999)
        assert store.get(NS, "brief") is not None
        assert store.sweep_ttl() == 0
        clock.advance(seconds=0.001)  # a minute after the puts: the TTL has run out
        assert store.get(NS, "brief") is None
        assert [i.key for i in store.search(NS)] == ["kept"]
        assert store.list_namespaces() == [NS]
        assert store.sweep_ttl() == 2
        history = store.history(limit=1)[0]
        assert (history.author, history.message) == ("agent-7", "expire memories:u1:brief, other:brief (TTL ran out)")
        assert history.time == clock.ms
        assert store.sweep_ttl() == 0 and len(messages(store)) == 4
        # The removed value is still in history: the commit before the sweep has it.
        assert store.at(store.history(limit=2)[1].id).get(NS, "brief").value == {"text": "short lived"}


def test_a_read_that_refreshes_keeps_an_item_alive_and_one_that_does_not_lets_it_go(store_root):
    clock = ManualClock()
    with MnemosyneStore(store_root, mnem=MNEM, clock=clock, ttl={"default_ttl": 1, "refresh_on_read": True}) as store:
        store.put(NS, "read", {"v": 1})
        store.put(NS, "unread", {"v": 2})
        store.put(NS, "forever", {"v": 3}, ttl=None)
        for _ in range(3):
            clock.advance(seconds=40)
            assert store.get(NS, "read") is not None  # refreshed each time: two minutes on, past its first TTL
        assert store.get(NS, "unread", refresh_ttl=False) is None
        assert [i.key for i in store.search(NS)] == ["forever", "read"]  # a refreshing search: "read" again
        clock.advance(seconds=59.999)
        assert store.get(NS, "read", refresh_ttl=False) is not None
        clock.advance(seconds=0.001)  # a TTL after the last refresh, to the millisecond
        assert store.get(NS, "read", refresh_ttl=False) is None
        assert [i.key for i in store.search(NS)] == ["forever"]


def test_the_configured_sweeper_commits_expirations_until_the_store_closes(store_root):
    clock = ManualClock()
    with MnemosyneStore(store_root, mnem=MNEM, clock=clock, ttl={"sweep_interval_minutes": 0.05 / 60}) as store:
        store.put(NS, "brief", {"v": 1}, ttl=1)
        clock.advance(minutes=1)
        eventually(lambda: "expire memories:u1:brief (TTL ran out)" in messages(store), "the sweeper's commit")
        assert store.history(limit=1)[0].time == clock.ms
    assert store.stop_ttl_sweeper(timeout=1)


def test_search_ranks_by_embedding_and_unembedded_items_follow_without_score(store_root):
    with MnemosyneStore(store_root, mnem=MNEM, index=index()) as store:
        store.put(NS, "food", {"text": "pizza with cheese and tea"})
        store.put(NS, "trip", {"text": "hiking up a mountain"})
        store.put(NS, "raw", {"text": "hiking mountain hiking"}, index=False)
        store.put(NS, "notes", {"note": "mountain hiking"}, index=["note"])
        found = store.search(NS, query="a mountain hiking plan")
        assert [i.key for i in found][:2] in (["notes", "trip"], ["trip", "notes"])
        assert found[2].key == "food" and found[2].score == pytest.approx(0.0, abs=1e-6)
        assert (found[3].key, found[3].score) == ("raw", None)
        assert found[0].score == pytest.approx(found[1].score) and found[0].score > 0.5
        assert [i.key for i in store.search(NS, query="cheese", limit=1, offset=1)] != ["food"]
        assert [i.key for i in store.search(NS, query="cheese", filter={"text": "hiking up a mountain"})] == ["trip"]


def test_a_past_commit_is_searched_with_the_vectors_of_its_values(store_root):
    with MnemosyneStore(store_root, mnem=MNEM, index=index()) as store:
        store.put(NS, "plan", {"text": "pizza"})
        then = store.history(limit=1)[0].id
        store.put(NS, "plan", {"text": "mountain"})
        assert store.search(NS, query="pizza")[0].score == pytest.approx(0.0, abs=1e-6)
        assert store.at(then).search(NS, query="pizza")[0].score == pytest.approx(1.0)


@pytest.mark.anyio
async def test_an_async_embedder_serves_abatch(store_root):
    with MnemosyneStore(store_root, mnem=MNEM, index=index(aembed)) as store:
        await store.abatch([PutOp(NS, "a", {"text": "tea"}), PutOp(NS, "b", {"text": "cheese"})])
        [found] = await store.abatch([SearchOp(NS, query="cheese please")])
        assert [(i.key, round(i.score, 3)) for i in found] == [("b", 1.0), ("a", 0.0)]


def test_a_new_embedder_starts_an_empty_index_that_rebuild_fills(store_root):
    with MnemosyneStore(store_root, mnem=MNEM) as plain:
        plain.put(NS, "a", {"text": "tea and cheese"})
        plain.put(NS, "b", {"text": "mountain"})
        commits = len(plain.history())
    with MnemosyneStore(store_root, mnem=MNEM, index=index()) as store:
        assert {i.score for i in store.search(NS, query="tea")} == {None}
        assert store.rebuild_index() == 2
        assert [i.key for i in store.search(NS, query="tea")] == ["a", "b"]
        assert store.search(NS, query="tea")[0].score == pytest.approx(0.7071, abs=1e-3)
        assert len(store.history()) == commits  # vectors are beside history, never in it


def test_an_index_whose_embedder_disagrees_with_dims_is_a_clear_error(store_root):
    with MnemosyneStore(store_root, mnem=MNEM, index={"dims": 3, "embed": embed}) as store:
        with pytest.raises(ValueError, match="returned 6 dimensions where the index says dims=3"):
            store.put(NS, "a", {"text": "tea"})
        assert store.history() == []
    with pytest.raises(ValueError, match="dims must be a positive integer"):
        MnemosyneStore(store_root, mnem=MNEM, index={"embed": embed})


def test_a_query_is_one_search_call_and_answers_as_the_commit_view_does(store_root, caplog):
    import logging

    with MnemosyneStore(store_root, mnem=MNEM, index=index()) as store:
        texts = ["pizza", "pizza tea", "tea", "mountain", "hiking mountain", "cheese", "pizza", "plan plan"]
        store.batch([PutOp(NS, f"k{n}", {"text": t}) for n, t in enumerate(texts)]
                    + [PutOp(NS, "raw", {"text": "pizza"}, index=False), PutOp(("elsewhere",), "x", {"text": "tea"})])
        head = store.at("main")  # a view reads whole snapshots: the reference answer
        for prefix in (NS, ("memories",), ()):
            for offset in range(0, 11, 3):
                for limit in (1, 4, 20):
                    got = store.search(prefix, query="pizza tea", limit=limit, offset=offset)
                    want = head.search(prefix, query="pizza tea", limit=limit, offset=offset)
                    assert [(i.key, i.score) for i in got] == [(i.key, i.score) for i in want], (prefix, offset, limit)
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger="mnem_bridge"):
            store.search((), query="pizza", limit=2)
        lines = [r.getMessage() for r in caplog.records if " --json " in r.getMessage()]
        assert [line.split(" --json ")[1].split()[0] for line in lines] == ["search"]
