"""``search(query=...)`` without vectors: ADR-0016's substring filter by default, BM25 ranking on request.

The substring filter keeps the items whose node id or value contains the
query, ignoring case, in key order and without a score; ``query_mode="bm25"``
ranks instead and never hides what InMemoryStore (which ignores the query)
returns.
"""

from __future__ import annotations

import json

import pytest
from conftest import MNEM
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from mnem_bridge import UsageError
from mnem_langgraph import MnemosyneStore, node_id
from mnem_store.lexical import Known, bm25, query_terms, words

#: The ``store_root``, ``mstore`` and ``ranked_store`` fixtures (tests/langgraph has no conftest.py: see that module).
pytest_plugins = ["langgraph_fixtures"]

FOODS = ("memories", "u1")
MEMORIES = [
    PutOp(FOODS, "m1", {"content": "User's favourite food is sushi"}),
    PutOp(FOODS, "m2", {"content": "User works at a bakery in Lyon"}),
    PutOp(FOODS, "m3", {"content": "User prefers short answers"}),
    PutOp(("memories", "u2"), "m1", {"content": "Another user loves sushi"}),
]


def test_the_substring_filter_keeps_items_whose_id_or_value_holds_the_query_in_key_order(mstore):
    mstore.batch([*MEMORIES, PutOp(FOODS, "city", {"name": "Zürich", "quote": 'say "hi"', "path": "C:\\tmp"}),
                  PutOp(FOODS, "straße", {"seats": 40, "on": True})])
    assert mstore.query_mode == "substring"

    def keys(query, prefix=FOODS, **options):
        found = mstore.search(prefix, query=query, **options)
        assert all(i.score is None for i in found)
        return [(i.namespace, i.key) for i in found]

    assert keys("SUSHI") == [(FOODS, "m1")]  # within the namespace only; case ignored
    assert keys("sushi", ("memories",)) == [(FOODS, "m1"), (("memories", "u2"), "m1")]  # (namespace, key) order
    assert keys("user") == [(FOODS, "m1"), (FOODS, "m2"), (FOODS, "m3")]
    assert keys("user", limit=1, offset=1) == [(FOODS, "m2")]  # paged after filtering
    assert keys("u1:m2") == [(FOODS, "m2")]  # the node id, memories:u1:m2
    assert keys('"content": "user works') == [(FOODS, "m2")]  # the stringified content, keys and all
    assert keys("zürich") == keys("ZÜRICH") == [(FOODS, "city")]  # non-ASCII as written, not \u-escaped
    assert keys("u00fc") == []
    assert keys('say "hi"') == keys("c:\\TMP") == [(FOODS, "city")]  # a quote or backslash as written
    assert keys("STRASSE") == keys('"seats": 40') == keys("true") == [(FOODS, "straße")]  # casefolded; JSON text
    assert keys("what food does the user like?") == []  # a plain filter: no ranking, no partial match
    assert keys("sushi", filter={"content": "User works at a bakery in Lyon"}) == []
    assert len(mstore.search(FOODS, query="")) == 5  # no query lists the namespace


ASCII = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=5)


@given(ASCII, st.sampled_from([("a",), ("a", "b:c"), ("Mem", "%")]), ASCII,
       st.dictionaries(ASCII, ASCII | st.integers() | st.booleans() | st.none(), max_size=3))
def test_every_item_upstreams_adapter_finds_is_found_and_so_is_its_node_id(query, namespace, key, value):
    """Upstream's rule: ``query.lower() in json.dumps(value).lower()``; ours adds the node id and strings as written."""
    nid = node_id(namespace, key)
    if query.lower() in json.dumps(value, default=str).lower() or query.lower() in nid.lower():
        assert query.casefold() in nid.casefold() or Known(value).contains(query.casefold())  # the engine's test


def test_query_mode_is_checked_when_the_store_opens(store_root):
    with pytest.raises(UsageError, match=r"query_mode must be one of 'substring', 'bm25', 'vector'.*got 'fuzzy'"):
        MnemosyneStore(store_root, mnem=MNEM, query_mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="query_mode='vector' ranks by embeddings: also pass index="):
        MnemosyneStore(store_root, mnem=MNEM, query_mode="vector")
    with MnemosyneStore(store_root, mnem=MNEM, query_mode="bm25") as store:
        assert store.query_mode == "bm25" and store.history() == []


def bm25_scores(query, documents):
    """The engine's BM25 scores of ``documents`` for ``query`` (``mnem_store.lexical``, what ``"bm25"`` ranks by)."""
    return bm25(query_terms(query, stemmed=False), [Known(document).bag() for document in documents])


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


TAGS = iter(range(10**9))


@given(items, st.sampled_from(["apple", "blue apple", "sky!", "nothing here", ""]), st.sampled_from([(), ("a",)]))
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_query_never_hides_an_item_inmemorystore_returns(ranked_store, puts, query, prefix):
    tag = f"t{next(TAGS)}"  # each example in namespaces of its own
    oracle = InMemoryStore()
    oracle.batch([PutOp(ns, k, v) for ns, k, v in puts])
    ranked_store.batch([PutOp((tag, *ns), k, v) for ns, k, v in puts])
    found = ranked_store.search((tag, *prefix), query=query, limit=100)
    expected = oracle.search(prefix, query=query, limit=100)
    assert {(i.namespace[1:], i.key) for i in found} == {(i.namespace, i.key) for i in expected}
    scores = [i.score for i in found]
    if query:
        assert scores == sorted(scores, reverse=True)
        zero = [(i.namespace, i.key) for i in found if i.score == 0]
        assert zero == sorted(zero)  # the unranked keep the store's order
    else:
        assert all(score is None for score in scores)


def test_langmem_style_questions_find_the_memory_first_with_bm25(ranked_store):
    ranked_store.batch(MEMORIES)
    found = ranked_store.search(FOODS, query="What food does the user like? sushi?")
    assert found[0].key == "m1"
    assert len(found) == 3 and found[0].score > found[-1].score >= 0
    page = ranked_store.search(FOODS, query="where does the user work? bakery", limit=1, offset=0)
    assert [(i.key, i.score > 0) for i in page] == [("m2", True)]
    assert [i.key for i in ranked_store.at("main").search(FOODS, query="bakery?")][:1] == ["m2"]  # the past too
