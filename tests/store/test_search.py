"""``mnem search`` and ``mnem namespaces``: LangGraph's store reads answered in one read, on every backend.

What ``MnemosyneStore`` will rely on: the candidates are the items under a
namespace (ids no put could write left out, expired ones too with
``--live``), LangGraph's filter keeps some, each query mode orders them as
the adapter does today, only the page is sent, a revision is read as
committed, and a bad argument is a usage error that changes nothing.
tests/langgraph/test_search_differential.py holds the answers equal to the
adapter's own functions on generated items.
"""

from __future__ import annotations

import base64
import json
import struct

from conftest import run_mnem, store_fingerprint
from hypothesis import example, given
from hypothesis import strategies as st

HOUR = 3_600_000
NOW = 1_767_225_600_000


def j(*args, cwd, code=0, now=NOW, input=None, env=None):
    result = run_mnem("--json", f"--now={now}", *args, cwd=cwd, input=input, env=env)
    assert result.code == code, result.out + result.err
    return result.json


def write(store, puts, when=NOW):
    return j("write", "-m", "w", cwd=store, now=when, input=json.dumps({"put": puts}))["commit"]


def vector(*values):
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def search(store, *args, now=NOW):
    return j("search", *args, cwd=store, now=now)["items"]


def ids(items):
    return [item["id"] for item in items]


ITEMS = [
    {"id": "memories:u1:b", "content": {"text": "pizza pizza night", "tier": "free", "n": 7}},
    {"id": "memories:u1:a", "content": {"text": "I like pizza", "tier": "pro", "n": 3}},
    {"id": "memories:u1:c", "content": {"text": "green tea", "tier": "pro", "n": "12"}},
    {"id": "memories:u2:d", "content": "a bare string about pizza"},
    {"id": "memories:u10:e", "content": {"text": "pizza"}},
    {"id": "no-colon", "content": {"text": "pizza"}},
    {"id": "memories:bad%label:f", "content": {"text": "pizza"}},
    {"id": "memo.ries:u1:g", "content": {"text": "pizza"}},
]


def test_no_query_lists_the_items_under_a_namespace_in_order_with_values_times_and_no_score(store):
    commit = write(store, ITEMS)
    found = search(store, "--namespace", '["memories"]')
    assert ids(found) == ["memories:u1:a", "memories:u1:b", "memories:u1:c", "memories:u10:e", "memories:u2:d"]
    first = found[0]
    assert first == {"id": "memories:u1:a", "namespace": ["memories", "u1"], "key": "a",
                     "value": {"text": "I like pizza", "tier": "pro", "n": 3}, "created": commit["time"],
                     "updated": commit["time"], "score": None, "expires": None}
    assert found[4]["value"] == {"value": "a bare string about pizza"}  # a value that is not a dict
    assert ids(search(store, "--namespace", '["memories", "u1"]', "--offset", "1", "--limit", "1")) == [
        "memories:u1:b"]
    assert ids(search(store)) == [*ids(found)]  # the whole store: ids no put could write are not items
    assert search(store, "--namespace", '["nobody"]') == []


def test_filters_are_langgraphs_operators(store):
    write(store, ITEMS)
    u1 = ("--namespace", '["memories", "u1"]')
    assert ids(search(store, *u1, "--filter", '{"tier": "pro"}')) == ["memories:u1:a", "memories:u1:c"]
    assert ids(search(store, *u1, "--filter", '{"n": {"$gt": 4}}')) == ["memories:u1:b", "memories:u1:c"]  # "12"
    assert ids(search(store, *u1, "--filter", '{"n": {"$gte": 3, "$lt": 7}, "tier": {"$ne": "free"}}')) == [
        "memories:u1:a"]
    assert ids(search(store, "--filter", '{"value": {"$eq": "a bare string about pizza"}}')) == ["memories:u2:d"]


def test_each_mode_orders_as_the_adapter_does(store):
    write(store, [
        {"id": "m:a", "content": {"text": "tea"}, "vectors": {"model": "e", "fields": {"text": vector(0, 1)}}},
        {"id": "m:b", "content": {"text": "pizza pizza"}, "vectors": {"model": "e", "fields": {"text": vector(1, 0)}}},
        {"id": "m:c", "content": {"text": "cold pizza"}},
        {"id": "m:d", "content": {"text": "Pizzas were adopted"},
         "vectors": {"model": "e", "fields": {"text": vector(1, 0)}}},
    ])
    m = ("--namespace", '["m"]')
    substring = search(store, *m, "--query", "PIZZA")
    assert [(i["id"], i["score"]) for i in substring] == [("m:b", None), ("m:c", None), ("m:d", None)]
    bm25 = search(store, *m, "--query", "pizza", "--mode", "bm25")
    assert ids(bm25) == ["m:b", "m:c", "m:a", "m:d"]  # "Pizzas" is another word; score 0 keeps key order
    assert bm25[0]["score"] > bm25[1]["score"] > 0 and bm25[2]["score"] == bm25[3]["score"] == 0.0
    ranked = ("--model", "e", "--vector", vector(1, 0))
    by_vector = search(store, *m, "--query", "pizza", "--mode", "vector", *ranked)
    assert [(i["id"], i["score"]) for i in by_vector] == [("m:b", 1.0), ("m:d", 1.0), ("m:a", 0.0), ("m:c", None)]
    hybrid = search(store, *m, "--query", "adopting pizza", "--mode", "hybrid", *ranked, "--field", "text")
    # BM25 over stems ("adopt", "pizza"): d first (both stems), then b, c; vectors: b, d (tied), a.
    assert ids(hybrid) == ["m:d", "m:b", "m:c", "m:a"]
    assert hybrid[0]["score"] == 2 / 21 + 1 / 22 and hybrid[3]["score"] == 1 / 23


def test_hybrid_reads_a_querys_stemmed_content_words_and_a_values_stemmed_field_words():
    """Moved from tests/langgraph/test_hybrid.py with the lexical side it tested (``mnem_store.lexical``)."""
    from collections import Counter

    from mnem_store.lexical import Known, query_terms

    assert query_terms("What did Caroline realize after her charity races?", stemmed=True) == [
        "carolin", "realiz", "chariti", "race"]
    assert query_terms("what is it?", stemmed=True) == ["what", "is", "it"]  # only stopwords: kept, still matching
    value = Known({"text": "Adopting a dog", "date": "8 May, 2023", "n": 3})
    assert value.analysed(("$",))[0] == Counter(["text", "adopt", "a", "dog", "date", "8", "may", "2023", "n", "3"])
    assert value.analysed(("text",)) == (Counter(["adopt", "a", "dog"]), 3)


@given(st.lists(st.dictionaries(st.sampled_from(["text", "n", "tags"]), st.one_of(
    st.text(alphabet="ab cdé1 ", max_size=12), st.integers(0, 3), st.lists(st.sampled_from(["a", "b b", "c"])))),
    max_size=12), st.text(alphabet="ab cdé1 ", max_size=8), st.booleans())
def test_inverted_words_score_as_bm25_does_to_the_last_bit(documents, query, stemmed):
    """A candidate set searched again ranks from its words inverted (``lexical.Postings``): the same scores, exactly.

    (Moved from tests/langgraph/test_search_candidates.py with the inverted words it tested.)
    """
    from mnem_store.lexical import Known, Postings, bm25, query_terms

    known = [Known(document) for document in documents]
    bags = [value.analysed(("$",)) if stemmed else value.bag() for value in known]
    terms = query_terms(query, stemmed=stemmed)
    assert Postings(bags).scores(terms) == bm25(terms, bags)


def test_hybrid_fusion_ranks_what_either_ranking_found_and_keeps_the_rest_in_order(store):
    """Moved from tests/langgraph/test_hybrid.py (``fuse``): BM25's only hit, then the vectors' order, then the rest."""
    def unit(cos):
        return {"model": "e", "fields": {"text": vector(cos, (1 - cos * cos) ** 0.5)}}

    write(store, [{"id": "h:0", "content": {"text": "nothing relevant"}, "vectors": unit(0.1)},
                  {"id": "h:1", "content": {"text": "the charity race"}, "vectors": unit(0.2)},
                  {"id": "h:2", "content": {"text": "close in meaning"}, "vectors": unit(0.9)},
                  {"id": "h:3", "content": {"text": "unrelated"}}])
    args = ("--namespace", '["h"]', "--query", "the charity race?", "--mode", "hybrid", "--model", "e",
            "--vector", vector(1, 0))
    fused = search(store, *args)
    assert ids(fused) == ["h:1", "h:2", "h:0", "h:3"] and fused[-1]["score"] == 0.0
    assert [i["score"] for i in fused] == sorted((i["score"] for i in fused), reverse=True)
    assert search(store, *args) == fused  # again, from what the store kept: the same answer


def test_expired_items_leave_live_searches_and_a_revision_reads_as_committed(store):
    write(store, [{"id": "m:gone", "content": {"t": "x"}, "ttl": HOUR}, {"id": "m:kept", "content": {"t": "x"}},
                  {"id": "m:leased", "content": {"t": "x"}, "ttl": 3 * HOUR}], when=NOW - 2 * HOUR)
    live = search(store, "--live", "--query", "x")
    assert ids(live) == ["m:kept", "m:leased"]
    assert live[1]["expires"] == NOW + HOUR and live[0]["expires"] is None
    assert ids(search(store, "--query", "x")) == ["m:gone", "m:kept", "m:leased"]  # leases are --live's
    first = write(store, [{"id": "m:later", "content": {"t": "x"}}])
    assert ids(search(store, "main~1")) == ["m:gone", "m:kept", "m:leased"]
    assert ids(search(store, first["id"], "--namespace", '["m"]', "--limit", "1", "--offset", "2")) == ["m:later"]
    refused = j("search", "--live", "main", cwd=store, code=2)["error"]
    assert refused["code"] == "usage" and "revision" in refused["message"]


def test_valid_at_searches_and_lists_what_held_then_along_the_revisions_history(store):
    write(store, [{"id": "m:a", "content": {"t": "old"}}, {"id": "g:b", "content": {"t": "x"}}], when=NOW - 2 * HOUR)
    j("write", "-m", "w", cwd=store, now=NOW, input=json.dumps({"put": [{"id": "m:a", "content": {"t": "new"}}],
                                                                "delete": ["g:b"]}))
    then = str(NOW - HOUR)
    found = search(store, "--valid-at", then)
    assert [(i["id"], i["value"], i["updated"]) for i in found] == [("g:b", {"t": "x"}, NOW - 2 * HOUR),
                                                                    ("m:a", {"t": "old"}, NOW - 2 * HOUR)]
    assert ids(search(store, "--valid-at", then, "--query", "OLD")) == ["m:a"]
    assert [(i["id"], i["value"]) for i in search(store)] == [("m:a", {"t": "new"})]  # the memory now
    assert j("namespaces", "--valid-at", then, cwd=store)["namespaces"] == [["g"], ["m"]]
    assert j("namespaces", "--valid-at", then, "main~1", cwd=store)["namespaces"] == [["g"], ["m"]]
    assert j("namespaces", "--valid-at", str(NOW - 3 * HOUR), cwd=store)["namespaces"] == []
    for verb in ("search", "namespaces"):
        refused = j(verb, "--valid-at", then, "--live", cwd=store, code=2)["error"]
        assert refused["code"] == "usage" and "--valid-at" in refused["message"]


def test_only_the_page_is_sent(store):
    write(store, [{"id": f"m:{i:03}", "content": {"text": "x" * 1000}} for i in range(200)])
    result = run_mnem("--json", "search", "--query", "x", "--limit", "2", cwd=store)
    assert result.code == 0 and len(result.out) < 3000 and len(result.json["items"]) == 2


def test_namespaces_answers_list_namespaces(store):
    write(store, [{"id": f"users:u{i}:k", "content": 1} for i in range(3)]
          + [{"id": "users:u1:profile:k", "content": 1}, {"id": "docs:x:k", "content": 1},
             {"id": "users:bad%:k", "content": 1}, {"id": "users:u9:bad%", "content": 1}])

    def listed(*args):
        return j("namespaces", *args, cwd=store)["namespaces"]

    assert listed() == [["docs", "x"], ["users", "u0"], ["users", "u1"], ["users", "u1", "profile"], ["users", "u2"]]
    assert listed("--prefix", '["users", "*"]', "--max-depth", "2") == [["users", "u0"], ["users", "u1"],
                                                                        ["users", "u2"]]
    assert listed("--suffix", '["profile"]') == [["users", "u1", "profile"]]
    assert listed("--prefix", '["users"]', "--suffix", '["*", "u1"]') == [["users", "u1"]]
    assert listed("--limit", "2", "--offset", "1") == [["users", "u0"], ["users", "u1"]]


def test_live_namespaces_leave_out_a_namespace_whose_every_item_expired(store):
    write(store, [{"id": "m1:a", "content": 1, "ttl": HOUR}, {"id": "m1:b", "content": 1},
                  {"id": "m2:c", "content": 1, "ttl": HOUR}, {"id": "m3:d", "content": 1, "ttl": 3 * HOUR}],
          when=NOW - 2 * HOUR)
    assert j("namespaces", "--live", cwd=store)["namespaces"] == [["m1"], ["m3"]]
    assert j("namespaces", cwd=store)["namespaces"] == [["m1"], ["m2"], ["m3"]]  # leases are --live's
    refused = j("namespaces", "--live", "main", cwd=store, code=2)["error"]
    assert refused["code"] == "usage" and refused["message"].startswith("namespaces --live")

def test_bad_arguments_are_usage_errors_that_change_nothing(store):
    write(store, ITEMS)
    before = store_fingerprint(store)

    def refused(*args, env=None):
        result = run_mnem("--json", "search", *args, cwd=store, env=env)
        error = result.json["error"]
        assert result.code != 0 and error["code"] == "usage", error
        return error["message"]

    assert "'$in'" in refused("--filter", '{"n": {"$in": [1]}}') and "$gte" in refused("--filter", '{"n": {"$x": 1}}')
    assert "JSON object" in refused("--filter", "[1]")
    assert "not valid JSON" in refused("--filter", "{")
    assert "JSON array of labels" in refused("--namespace", '{"a": 1}')
    assert "--model" in refused("--query", "q", "--mode", "vector")
    assert "--mode vector" in refused("--vector", vector(1.0))
    assert "base64" in refused("--query", "q", "--mode", "vector", "--model", "e", "--vector", "***")
    write(store, [{"id": "m:v", "content": 1, "vectors": {"model": "e", "fields": {"f": vector(1, 0)}}}])
    before = store_fingerprint(store)
    assert "dimensions" in refused("--query", "q", "--mode", "vector", "--model", "e", "--vector", vector(1.0))
    message = refused("--query", "q", "--mode", "vector", "--model", "e", "--vector", vector(*([0.5] * 3000)),
                      env={"MNEM_MAX_VALUE_BYTES": "10000"})
    assert "--vector is 16000 bytes" in message and "MNEM_MAX_VALUE_BYTES" in message
    assert "MNEM_MAX_VALUE_BYTES" in refused("--query", "q" * 2000, env={"MNEM_MAX_VALUE_BYTES": "1000"})
    assert "--limit" in run_mnem("search", "--limit", "-1", cwd=store).err
    assert j("namespaces", "--max-depth", "0", cwd=store, code=2)["error"]["code"] == "usage"
    assert store_fingerprint(store) == before


_SCALARS = st.sampled_from([None, True, False, 0, 1, 2, 0.0, 1.0, 2.5, "pro", ""])
_HELD = st.one_of(_SCALARS, st.fixed_dictionaries({"b": _SCALARS}), st.lists(_SCALARS, max_size=2))


@given(st.lists(st.dictionaries(st.sampled_from(["n", "a", "a.b"]), _HELD), max_size=12),
       st.dictionaries(st.sampled_from(["n", "a", "a.b", "missing"]),
                       st.one_of(_SCALARS, _HELD, st.builds(lambda n: {"$gte": n}, _SCALARS)), max_size=3))
@example([{"a": {"b": 1}}, {"a.b": True, "a": {"b": 2}}, {"a": {"b": [1]}}, {"n": 1}], {"a.b": 1.0, "n": None})
@example([{"n": 2.5}, {"n": 2}, {"n": True}, {"n": "2.5"}], {"n": 2.5})
def test_a_sets_values_indexed_by_a_field_filter_as_checking_every_item_does(values, conditions):
    """A set filtered again by equality on a field answers from its values indexed by that field (``_Set.narrowed``).

    The same items, in the same order, as checking every item against the
    filter, on the first search (nothing kept), the second (the index made)
    and the next (the index read); the index is kept once asked twice.
    """
    from mnem_store.filters import equality, matches
    from mnem_store.lexical import Known
    from mnem_store.search import _Set

    found = _Set([f"m:{n}" for n in range(len(values))], [(("m",), str(n)) for n in range(len(values))],
                 [Known(value) for value in values])
    every = [n for n, value in enumerate(values) if matches(value, conditions)]
    for _ in range(3):
        positions, rest = found.narrowed(conditions)
        assert [n for n in positions if matches(values[n], rest)] == every
    indexed = equality(conditions)
    if indexed is not None:
        assert isinstance(found.by_field[indexed[0]], dict)


_SCORES = st.sampled_from([0.0, -0.0, 0.5, 1.0, 1 / 3, 2.0, -1.0])


@given(st.lists(st.tuples(_SCORES, st.one_of(st.none(), _SCORES)), max_size=30), st.integers(0, 35))
def test_hybrid_fusion_is_reciprocal_rank_fusion_to_the_last_bit(scores, end):
    """Hybrid's fusion (``search._fused``, numpy) is RRF as a loop spells it: same places, ties, order and bits."""
    from mnem_store.search import LEXICAL_WEIGHT, RRF_K, _fused

    lexical, vector = [lexical for lexical, _ in scores], [vector for _, vector in scores]
    fused = [0.0] * len(scores)
    for weight, ranking in ((LEXICAL_WEIGHT, [s if s > 0 else None for s in lexical]), (1.0, vector)):
        ranked = sorted((n for n, score in enumerate(ranking) if score is not None), key=lambda n: -ranking[n])
        for place, n in enumerate(ranked, start=1):
            fused[n] += weight / (RRF_K + place)
    expected = sorted(range(len(fused)), key=lambda n: -fused[n])[:end]
    found = _fused(lexical, vector, end)
    assert [n for n, _ in found] == expected
    assert [score.hex() for _, score in found] == [fused[n].hex() for n in expected]
