"""``search(query=...)`` without an index: ranked by BM25, never hiding what InMemoryStore returns."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from langgraph.store.base import PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from mnem_langgraph.convert import Entry
from mnem_langgraph.ranking import bm25_scores, words
from mnem_langgraph.snapshot import Snapshot

#: The ``store_root`` and ``mstore`` fixtures (tests/langgraph has no conftest.py: see that module).
pytest_plugins = ["langgraph_fixtures"]

FOODS = ("memories", "u1")


def test_words_are_the_casefolded_text_of_every_string_key_and_number():
    assert words({"Plan": "Enterprise tier", "seats": 40, "ok": True, "tags": ["Zürich", None]}) == [
        "plan", "enterprise", "tier", "seats", "40", "ok", "tags", "zürich"]
    assert words("snake_case and kebab-case") == ["snake", "case", "and", "kebab", "case"]


def test_rarer_shared_words_score_higher_and_unrelated_values_score_zero():
    documents = [
        {"text": "the user likes pizza"},
        {"text": "the user likes the colour blue"},
        {"text": "meeting moved to friday"},
    ]
    pizza, blue, meeting = bm25_scores("what food does the user like? pizza?", documents)
    assert pizza > blue > 0  # both share "the user", only one shares the rare "pizza"
    assert meeting == 0.0
    assert bm25_scores("", documents) == [0.0, 0.0, 0.0]
    assert bm25_scores("pizza", []) == []


def test_a_repeated_word_in_a_short_value_outranks_one_mention_in_a_long_one():
    short, long = bm25_scores("pizza", [{"t": "pizza pizza"}, {"t": "pizza " + "filler " * 40}])
    assert short > long > 0


items = st.lists(
    st.tuples(st.sampled_from([("a",), ("a", "b"), ("c",)]), st.sampled_from(["k1", "k2", "k3"]),
              st.fixed_dictionaries({"text": st.sampled_from(["red apple", "green apple pie", "blue sky", ""])})),
    max_size=8,
)


@given(items, st.sampled_from(["apple", "blue apple", "sky!", "nothing here", ""]), st.sampled_from([(), ("a",)]))
def test_a_query_never_hides_an_item_inmemorystore_returns(puts, query, prefix):
    oracle = InMemoryStore()
    oracle.batch([PutOp(ns, k, v) for ns, k, v in puts])
    latest = {(ns, k): v for ns, k, v in puts}
    snapshot = Snapshot(Entry(ns, k, v, 0, 0) for (ns, k), v in latest.items())
    found = snapshot.answer(SearchOp(prefix, None, 100, 0, query))
    expected = oracle.search(prefix, query=query, limit=100)
    assert {(i.namespace, i.key) for i in found} == {(i.namespace, i.key) for i in expected}
    scores = [i.score for i in found]
    if query:
        assert scores == sorted(scores, reverse=True)
        zero = [(i.namespace, i.key) for i in found if i.score == 0]
        assert zero == sorted(zero)  # the unranked keep the store's order
    else:
        assert all(score is None for score in scores)


def test_langmem_style_questions_find_the_memory_first(mstore):
    mstore.batch([
        PutOp(FOODS, "m1", {"content": "User's favourite food is sushi"}),
        PutOp(FOODS, "m2", {"content": "User works at a bakery in Lyon"}),
        PutOp(FOODS, "m3", {"content": "User prefers short answers"}),
        PutOp(("memories", "u2"), "m1", {"content": "Another user loves sushi"}),
    ])
    found = mstore.search(FOODS, query="What food does the user like? sushi?")
    assert found[0].key == "m1"
    assert len(found) == 3 and found[0].score > found[-1].score >= 0
    page = mstore.search(FOODS, query="where does the user work? bakery", limit=1, offset=0)
    assert [(i.key, i.score > 0) for i in page] == [("m2", True)]
