"""Every index option of LangGraph's stores is honoured as that store honours it, or refused when the store opens.

A config written for ``InMemoryStore`` (``fields``), ``SqliteStore``
(``text_fields``, ``distance_type``) or ``PostgresStore`` (``fields``,
``distance_type``, ``ann_index_config``) must either work here as it works
there or fail at once with a ``UsageError`` naming the option: an option
silently ignored would rank a user's memories by a rule they did not choose.
Scores follow PostgresStore's definitions (docs/langgraph.md, "Embedding
index"), checked here on vectors that are not unit length, where the three
distances disagree.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from conftest import MNEM
from langchain_core.embeddings import Embeddings
from langgraph.store.memory import InMemoryStore

from mnem_bridge import UsageError
from mnem_langgraph import MnemosyneStore

pytest_plugins = ["langgraph_fixtures"]

NS = ("docs",)
#: Hand-picked vectors: "far" points the query's way but is long, "two" has a second, closer field.
VECTORS = {"q": [1.0, 0.0], "a": [1.0, 0.0], "far": [3.0, 0.5], "side": [0.0, 1.0], "near": [0.8, 0.1],
           "tenth": [0.1, 0.0], "huge": [1e6, 0.0]}


def lookup(texts: list[str]) -> list[list[float]]:
    """Each text's hand-picked vector (a text is a key of VECTORS)."""
    return [VECTORS[text] for text in texts]


def config(**options: object) -> dict[str, object]:
    return {"dims": 2, "embed": lookup, **options}


def fill(store: MnemosyneStore) -> None:
    store.put(NS, "a", {"text": "a"})
    store.put(NS, "far", {"text": "far"})
    store.put(NS, "side", {"text": "side"})
    store.put(NS, "two", {"text": "side", "extra": "near"}, index=["text", "extra"])


def ranked(store: MnemosyneStore, **options: object) -> list[tuple[str, float | None]]:
    return [(i.key, i.score) for i in store.search(NS, query="q", **options)]


@pytest.mark.parametrize(("distance", "expected"), [
    # 1 - cosine distance; the default when distance_type is absent.
    (None, [("a", 1.0), ("two", 0.8 / 0.65 ** 0.5), ("far", 3 / 9.25 ** 0.5), ("side", 0.0)]),
    # minus the Euclidean distance: the nearest first, an exact match scores 0.
    ("l2", [("a", 0.0), ("two", -(0.05 ** 0.5)), ("side", -(2 ** 0.5)), ("far", -(4.25 ** 0.5))]),
    # the plain dot product of the vectors as embedded: a long vector outranks an exact match.
    ("inner_product", [("far", 3.0), ("a", 1.0), ("two", 0.8), ("side", 0.0)]),
])
def test_each_distance_type_scores_and_orders_as_postgresstore_does(store_root: Path, distance, expected):
    options = {} if distance is None else {"distance_type": distance}
    with MnemosyneStore(store_root, mnem=MNEM, index=config(fields=["text"], **options)) as store:
        fill(store)
        found = ranked(store)
        assert [key for key, _ in found] == [key for key, _ in expected]
        assert [score for _, score in found] == pytest.approx([score for _, score in expected], abs=1e-6)
        assert ranked(store, limit=2, offset=1) == found[1:3]  # paged after ranking
        assert ranked(store.at("main")) == found  # the past is ranked the same way
        whole = store.search((), query="q", limit=2)  # a query over the whole store reads only its page
        assert [(i.key, i.score) for i in whole] == found[:2]


def test_cosine_scores_equal_inmemorystores(store_root: Path):
    oracle = InMemoryStore(index=config(fields=["text"]))  # type: ignore[arg-type]
    with MnemosyneStore(store_root, mnem=MNEM, index=config(fields=["text"])) as store:
        for target in (oracle, store):
            for key in ("a", "far", "side"):
                target.put(NS, key, {"text": key})
        want = sorted(((i.key, i.score) for i in oracle.search(NS, query="q")), key=lambda pair: -(pair[1] or 0))
        found = ranked(store)
        assert [key for key, _ in found] == [key for key, _ in want]
        assert [score for _, score in found] == pytest.approx([score for _, score in want], abs=1e-6)


@pytest.mark.parametrize("paths", [{"text_fields": ["text"]}, {"text_fields": "text"}, {"fields": "text"},
                                   {"fields": ["text"], "text_fields": ["text"]}])
def test_text_fields_is_sqlitestores_name_for_fields_and_a_single_path_may_be_a_string(store_root, paths):
    with MnemosyneStore(store_root, mnem=MNEM, index=config(**paths)) as store:
        assert store.index_config == config(**paths)  # kept as given, as LangGraph's stores keep it
        store.put(NS, "a", {"text": "a", "other": "far"})  # only "text" is embedded
        assert ranked(store) == [("a", pytest.approx(1.0))]
        store.put(NS, "b", {"text": "side"}, index=["other"])  # a put's own paths still win; "other" is absent
        assert ranked(store)[1] == ("b", None)


def test_halfvec_scores_the_vectors_as_pgvector_stores_them_in_an_index_of_their_own(store_root: Path):
    half = config(fields=["text"], distance_type="inner_product", ann_index_config={"vector_type": "halfvec"})
    with MnemosyneStore(store_root, mnem=MNEM, index=half) as store:
        store.put(NS, "tenth", {"text": "tenth"})
        rounded = struct.unpack("<e", struct.pack("<e", 0.1))[0]  # 0.0999755859375
        assert ranked(store) == [("tenth", pytest.approx(rounded, abs=1e-9))]
        with pytest.raises(UsageError, match="half precision cannot hold"):
            store.put(NS, "huge", {"text": "huge"})
        assert [i.key for i in store.search(NS)] == ["tenth"]  # the refused put wrote nothing
    full = config(fields=["text"], distance_type="inner_product")
    with MnemosyneStore(store_root, mnem=MNEM, index=full) as store:
        assert ranked(store) == [("tenth", None)]  # float32 vectors are another index: rebuild it
        assert store.rebuild_index() == 1
        assert ranked(store) == [("tenth", pytest.approx(0.1, abs=1e-8))]


@pytest.mark.parametrize("ann", [{"kind": "hnsw", "m": 16, "ef_construction": 64}, {"kind": "ivfflat", "lists": 10},
                                 {"kind": "flat", "nlist": 3, "vector_type": "vector"}, {}, None])
def test_an_approximate_index_setting_is_accepted_and_the_search_stays_exact(store_root: Path, ann):
    with MnemosyneStore(store_root, mnem=MNEM, index=config(fields=["text"], ann_index_config=ann)) as store:
        fill(store)
        assert [key for key, _ in ranked(store)] == ["a", "two", "far", "side"]


@pytest.mark.parametrize(("options", "message"), [
    ({"field": ["text"]}, "index option 'field' is not one MnemosyneStore knows (did you mean 'fields'?); "
                          "the options are dims, embed, fields, text_fields, distance_type, ann_index_config"),
    ({"distance_type": "dot"}, "index distance_type must be one of 'cosine', 'l2', 'inner_product', got 'dot'"),
    ({"distance_type": "hamming"}, "index distance_type must be one of 'cosine', 'l2', 'inner_product'"),
    ({"fields": 5}, "index fields must be a JSON path or a list of them, such as ['text'], got 5"),
    ({"text_fields": ["text", 1]}, "index text_fields must be a JSON path or a list of them"),
    ({"fields": ["a"], "text_fields": ["b"]}, "index fields ['a'] and text_fields ['b'] differ: they are one option"),
    ({"ann_index_config": "hnsw"}, "index ann_index_config must be a dict (kind, vector_type, ...), got str"),
    ({"ann_index_config": {"kind": "annoy"}},
     "ann_index_config kind must be one of 'hnsw', 'ivfflat', 'flat', got 'annoy'"),
    ({"ann_index_config": {"vector_type": "bit"}},
     "ann_index_config vector_type must be one of 'vector', 'halfvec', got 'bit'"),
    ({"ann_index_config": {"lists": 4}}, "ann_index_config 'lists' is not a setting of a hnsw index; its settings "
                                         "are kind, vector_type, m, ef_construction"),
    ({"ann_index_config": {"kind": "ivfflat", "lists": 0}}, "ann_index_config lists must be a positive integer, got 0"),
    ({"embed": 5}, "index embed must be an Embeddings object, a function of a list of texts, or a 'provider:model' "
                   "string, got int"),
    ({"embed": None}, "index embed is required"),
    ({"embed": "nosuchprovider:model"}, "index embed 'nosuchprovider:model' could not be loaded: Provider "
                                        "'nosuchprovider' is not supported"),
    ({"dims": 0}, "index dims must be a positive integer, got 0"),
])
def test_an_option_that_cannot_be_honoured_is_refused_before_anything_is_created(tmp_path: Path, options, message):
    where = tmp_path / "new-store"
    with pytest.raises(UsageError) as refused:
        MnemosyneStore(where, mnem=MNEM, index=config(**options))
    assert isinstance(refused.value, ValueError) and message in str(refused.value)
    assert not where.exists()  # refused before the store was created


def test_a_provider_model_string_is_resolved_as_langgraph_resolves_it(store_root: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-used")  # building the client needs a key; nothing is sent
    with MnemosyneStore(store_root, mnem=MNEM, index={"dims": 1536, "embed": "openai:text-embedding-3-small"}) as store:
        assert type(store.embeddings).__name__ == "OpenAIEmbeddings"
        assert store.embeddings.model == "text-embedding-3-small"  # type: ignore[union-attr]
        assert isinstance(store.embeddings, Embeddings)


class Counting(Embeddings):
    """The hand-picked vectors, counting the texts embedded (a query embedding may cost an API call)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return lookup(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


@pytest.mark.parametrize("mode", ["substring", "bm25"])
def test_a_lexical_query_mode_on_an_indexed_store_embeds_puts_but_never_a_query(store_root: Path, mode):
    embedder = Counting()
    with MnemosyneStore(store_root, mnem=MNEM, index={"dims": 2, "embed": embedder, "fields": ["text"]},
                        query_mode=mode) as store:
        store.put(NS, "a", {"text": "a", "note": "first"})
        store.put(NS, "side", {"text": "side"})
        assert embedder.texts == ["a", "side"]
        found = store.search(NS, query="first")
        assert [i.key for i in found][:1] == ["a"] and embedder.texts == ["a", "side"]
        if mode == "substring":
            assert [(i.key, i.score) for i in found] == [("a", None)]
        else:
            assert len(found) == 2 and found[0].score > 0 == found[1].score
        assert [i.key for i in store.at("main").search(NS, query="first")][:1] == ["a"]
    with MnemosyneStore(store_root, mnem=MNEM, index={"dims": 2, "embed": embedder, "fields": ["text"]}) as store:
        assert store.query_mode == "vector" and ranked(store)[0] == ("a", pytest.approx(1.0))
        assert embedder.texts[-1] == "q"
