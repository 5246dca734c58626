"""``query_mode="hybrid"``: BM25 (stemmed, query stopwords dropped, over the index's fields) fused with vectors.

What a user relies on: a memory found by either ranking comes back (one
with no shared word but a close vector, one with the rare word but a far
vector), the index's ``fields`` bound what BM25 reads, nothing is hidden
(unfound items follow with score 0.0 in key order), the mode needs an
index, and ``at(rev)`` searches the past the same way.  How the engine stems,
drops stopwords and fuses is tested where it lives (tests/store/test_search.py's
hybrid tests).
"""

from __future__ import annotations

import pytest
from conftest import MNEM
from langgraph.store.base import PutOp

from mnem_bridge import UsageError
from mnem_langgraph import MnemosyneStore

pytest_plugins = ["langgraph_fixtures"]

NS = ("memories", "u1")
TOPICS = ("food", "travel", "work")


def embed(texts: list[str]) -> list[list[float]]:
    """Topic vectors by hand: "sushi" and "ramen" are food without saying so, as a real model would place them."""
    marks = {"food": ("food", "sushi", "ramen", "eat"), "travel": ("travel", "trip", "lyon"), "work": ("work", "job")}
    return [[float(sum(text.lower().count(w) for w in marks[t])) + 0.01 for t in TOPICS] for text in texts]


def index(fields=("text",)):
    return {"dims": len(TOPICS), "embed": embed, "fields": list(fields)}


def test_a_hybrid_store_finds_a_memory_by_its_words_or_by_its_meaning(store_root):
    with MnemosyneStore(store_root, mnem=MNEM, index=index(), query_mode="hybrid") as store:
        assert store.query_mode == "hybrid"
        store.batch([PutOp(NS, "sushi", {"text": "Loves sushi and ramen"}),
                     PutOp(NS, "lyon", {"text": "Moved to Lyon for a job", "note": "sushi"}),
                     PutOp(NS, "plan", {"text": "Pays for the pro plan"}),
                     PutOp(NS, "bare", {"text": "no vector here"}, index=False)])
        by_meaning = store.search(NS, query="What food does the user like?")
        assert by_meaning[0].key == "sushi"  # no word shared: the vector ranking found it
        by_word = [item.key for item in store.search(NS, query="which plans are paid for?")]
        assert by_word[0] == "plan"  # stemmed: "plans" finds "plan"
        assert sorted(by_word) == ["bare", "lyon", "plan", "sushi"]  # ranking hides nothing
        # fields bound BM25 too: "note" is not an indexed field, so its "sushi" does not make "lyon" a match
        found = store.search(NS, query="sushi")
        assert [item.key for item in found][:1] == ["sushi"] and found[-1].score == 0.0
        assert {item.key for item in found if item.score == 0.0} == {"bare"}
        past = store.at(store.history(limit=1)[0].id)
        assert [item.key for item in past.search(NS, query="What food does the user like?")][:1] == ["sushi"]


def test_the_whole_value_is_read_when_the_index_has_no_fields(store_root):
    with MnemosyneStore(store_root, mnem=MNEM, index={"dims": len(TOPICS), "embed": embed},
                        query_mode="hybrid") as store:
        store.batch([PutOp(NS, "a", {"text": "a trip", "date": "8 May, 2023"}),
                     PutOp(NS, "b", {"text": "a trip", "date": "9 June, 2023"})])
        assert store.search(NS, query="What happened in June?")[0].key == "b"  # the date is a field it reads


def test_hybrid_needs_an_index(store_root):
    with pytest.raises(UsageError, match="query_mode='hybrid' ranks by embeddings: also pass index="):
        MnemosyneStore(store_root, mnem=MNEM, query_mode="hybrid")


def test_async_search_ranks_as_sync_search_does(store_root):
    import asyncio

    with MnemosyneStore(store_root, mnem=MNEM, index=index(), query_mode="hybrid") as store:
        store.batch([PutOp(NS, "sushi", {"text": "Loves sushi and ramen"}),
                     PutOp(NS, "plan", {"text": "Pays for the pro plan"})])
        found = asyncio.run(store.asearch(NS, query="What food does the user like?"))
        assert [(i.key, i.score) for i in found] == [
            (i.key, i.score) for i in store.search(NS, query="What food does the user like?")]
        assert found[0].key == "sushi"
