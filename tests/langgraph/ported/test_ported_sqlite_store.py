"""LangGraph's SqliteStore suite, run against MnemosyneStore on a SQLite-backed store.

Ported from langgraph's ``libs/checkpoint-sqlite/tests/test_store.py``: each
test is named after the upstream test it restates, with the same checks.
Upstream's ``store`` fixture (an in-memory and a file database) becomes one
MnemosyneStore: a store shared by the module where the checks stay inside the
test's namespaces (upstream's first label ``"test"`` becomes the test's own
``root``), a fresh one where they look at the whole store.  Upstream's
``create_vector_store`` becomes a fresh store opened with upstream's own
``index`` config (``text_fields``, ``distance_type``); ``test_scores``'
queries share one store holding its single item.
``test_vector_search_ranks_closest_first`` is from a later upstream commit
(0234064), which settled SqliteStore's distance types on PostgresStore's
meaning.  What was left out or changed, and why: docs/langgraph-ported.md.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterator

import pytest
import shared_checks as shared
from fake_embeddings import CharacterEmbeddings, sqlite_index
from langchain_core.embeddings import Embeddings
from langgraph.store.base import Item
from manual_clock import ManualClock
from store_support import StoreFactory

from mnem_langgraph import MnemosyneStore

pytest_plugins = ["ported_stores"]


# ----------------------------------------------------------------- batches


def test_batch_order(lite_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_batch_order.

    On a fresh store: its namespace listing (the first 10 of the whole store) must hold the test's own.
    """
    store, root = lite_store, "test"
    store.put((root, "foo"), "key1", {"data": "value1"})
    store.put((root, "bar"), "key2", {"data": "value2"})

    results = store.batch(shared.order_first_ops(root))
    assert len(results) == 5
    got = results[0]
    assert isinstance(got, Item) and isinstance(got.value, dict)
    assert (got.value, got.key, got.namespace) == ({"data": "value1"}, "key1", (root, "foo"))
    assert results[1] is None
    assert isinstance(results[2], list) and len(results[2]) == 1
    assert results[2][0].key == "key1" and results[2][0].value == {"data": "value1"}
    assert isinstance(results[3], list) and len(results[3]) > 0
    assert (root, "foo") in results[3] and (root, "bar") in results[3]
    assert results[4] is None

    results = store.batch(shared.order_second_ops(root))
    assert len(results) == 5
    assert isinstance(results[0], list) and len(results[0]) >= 2
    got = results[1]
    assert isinstance(got, Item)
    assert (got.value, got.key, got.namespace) == ({"data": "value2"}, "key2", (root, "bar"))
    assert isinstance(results[2], list) and len(results[2]) > 0
    assert results[3] is None
    got = results[4]
    assert isinstance(got, Item)
    assert (got.value, got.key, got.namespace) == ({"data": "value1"}, "key1", (root, "foo"))

    written = store.get((root,), "key3")
    assert written is not None and written.value == {"data": "value3"}


def test_batch_get_ops(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_batch_get_ops."""
    shared.batch_get_ops(shared_lite_store, root)


def test_batch_put_ops(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_batch_put_ops."""
    shared.batch_put_ops(shared_lite_store, root)


def test_batch_search_ops(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_batch_search_ops."""
    shared.batch_search_ops(shared_lite_store, root)


def test_batch_list_namespaces_ops(lite_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_batch_list_namespaces_ops."""
    shared.batch_list_namespaces_ops(lite_store, ("public",))


class TestSqliteStore:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::TestSqliteStore."""

    def test_basic_store_ops(self, new_lite_store: StoreFactory, root: str) -> None:
        """Upstream: libs/checkpoint-sqlite/tests/test_store.py::TestSqliteStore::test_basic_store_ops.

        Upstream sleeps 0.01 s and leaves ``updated_at`` unchecked ("SQLite
        execution might be too fast"); the store's clock moves on 0.01 s, so
        ``updated_at`` is checked to grow.
        """
        clock = ManualClock()
        shared.basic_store_ops(new_lite_store(clock=clock), root, clock, pause=0.01)

    def test_list_namespaces(self, lite_store: MnemosyneStore) -> None:
        """Upstream: libs/checkpoint-sqlite/tests/test_store.py::TestSqliteStore::test_list_namespaces."""
        shared.list_namespaces(lite_store)

    def test_search(self, shared_lite_store: MnemosyneStore, root: str) -> None:
        """Upstream: libs/checkpoint-sqlite/tests/test_store.py::TestSqliteStore::test_search."""
        shared.search(shared_lite_store, root)


# ----------------------------------------------------------------- vector search (index=...)


def vector_index(embed: CharacterEmbeddings, text_fields: list[str] | None = None) -> dict[str, object]:
    """Upstream's ``create_vector_store`` config: ``text_fields`` (None included) and the cosine distance."""
    return sqlite_index(embed, text_fields, distance_type="cosine")


def test_vector_store_initialization(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_vector_store_initialization."""
    store = new_lite_store(index=vector_index(fake_embeddings))
    assert store.index_config is not None  # type: ignore[attr-defined]
    assert store.embeddings == fake_embeddings  # type: ignore[attr-defined]
    assert store.index_config["dims"] == fake_embeddings.dims  # type: ignore[attr-defined]
    assert store.index_config.get("text_fields") is None  # type: ignore[attr-defined]

    text_fields = ["content", "title"]
    store = new_lite_store(index=vector_index(fake_embeddings, text_fields))
    assert store.index_config is not None  # type: ignore[attr-defined]
    assert store.embeddings == fake_embeddings  # type: ignore[attr-defined]
    assert store.index_config["dims"] == fake_embeddings.dims  # type: ignore[attr-defined]
    assert store.index_config["text_fields"] == text_fields  # type: ignore[attr-defined]


def test_vector_insert_with_auto_embedding(new_lite_store: StoreFactory,
                                           fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_vector_insert_with_auto_embedding."""
    shared.vector_insert_with_auto_embedding(new_lite_store(index=vector_index(fake_embeddings)), ("test",))


def test_vector_update_with_embedding(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_vector_update_with_embedding."""
    shared.vector_update_with_embedding(new_lite_store(index=vector_index(fake_embeddings)), ("test",))


def test_vector_search_with_filters(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_vector_search_with_filters."""
    store = new_lite_store(index=vector_index(fake_embeddings))
    for key, value in shared.FILTER_DOCS:
        store.put(("test",), key, value)

    results = store.search(("test",), query="apple", filter={"color": "red"})
    assert len(results) == 2 and results[0].key == "doc1"
    results = store.search(("test",), query="car", filter={"color": "red"})
    assert len(results) > 0 and results[0].key == "doc2"
    results = store.search(("test",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
    assert len(results) == 3 and results[0].key == "doc4"  # the blue car is closest to "bbbbluuu"
    keys = [r.key for r in results]
    assert "doc1" in keys and "doc3" in keys
    results = store.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    assert len(results) > 0 and results[0].key == "doc3"


def test_vector_search_pagination(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_vector_search_pagination."""
    store = new_lite_store(index=vector_index(fake_embeddings))
    shared.put_numbered(store, ("test",))
    first = store.search(("test",), query="test", limit=2)
    second = store.search(("test",), query="test", limit=2, offset=2)
    assert len(first) == 2 and len(second) == 2
    assert {r.key for r in first}.isdisjoint(r.key for r in second)  # no key on both pages
    assert first[0].score >= first[1].score  # type: ignore[operator]
    assert second[0].score >= second[1].score  # type: ignore[operator]
    everything = store.search(("test",), query="test", limit=10)
    assert len(everything) == 5
    assert everything[0].score >= everything[2].score  # type: ignore[operator]


def test_vector_search_edge_cases(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_vector_search_edge_cases."""
    shared.vector_search_edge_cases(new_lite_store(index=vector_index(fake_embeddings)), ("test",))


def test_embed_with_path(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_embed_with_path."""
    store = new_lite_store(index=vector_index(fake_embeddings, shared.PATH_FIELDS))
    for key, value in shared.PATH_DOCS:
        store.put(("test",), key, value)

    results = store.search(("test",), query="xxx")  # doc1.key1 and doc2.key3 both match exactly
    assert len(results) == 2 and results[0].key != results[1].key
    assert results[0].score > 0.9 and results[1].score > 0.9  # type: ignore[operator]

    results = store.search(("test",), query="uuu")  # only doc2 has it
    assert len(results) == 2 and results[0].key != results[1].key
    assert results[0].key == "doc2" and results[0].score > results[1].score  # type: ignore[operator]

    results = store.search(("test",), query="zzz")  # only doc1 has it
    assert len(results) == 2 and results[0].key != results[1].key
    assert results[0].key == "doc1" and results[0].score > results[1].score  # type: ignore[operator]

    results = store.search(("test",), query="www")  # key2 is not embedded: both score low
    assert len(results) == 2 and results[0].key != results[1].key
    assert results[0].score < 0.9 and results[1].score < 0.9  # type: ignore[operator]


def test_embed_with_path_operation_config(new_lite_store: StoreFactory,
                                          fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_embed_with_path_operation_config."""
    store = new_lite_store(index=vector_index(fake_embeddings, ["key17"]))
    for key, value, fields in shared.PER_PUT_DOCS:
        store.put(("test",), key, value, index=fields)

    results = store.search(("test",), query="aaa")
    assert len(results) == 2 and results[0].key == "doc3"
    assert len({r.key for r in results}) == 2
    assert results[0].score > results[1].score  # type: ignore[operator]

    results = store.search(("test",), query="ggg")
    assert len(results) == 2 and results[0].key == "doc4"
    assert results[0].score > results[1].score  # type: ignore[operator]

    results = store.search(("test",), query="bbb")
    assert len(results) == 2 and results[0].key != results[1].key
    assert abs(results[0].score - results[1].score) < 0.1  # type: ignore[operator]

    results = store.search(("test",), query="ccc")  # key2 is embedded for neither
    assert len(results) == 2 and all(r.score < 0.9 for r in results)  # type: ignore[operator]

    store.put(("test",), "doc5", {"key0": "hhh", "key1": "iii"}, index=False)
    results = store.search(("test",))
    assert len(results) == 3 and any(r.key == "doc5" for r in results)


@pytest.fixture(scope="module")
def scored_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MnemosyneStore]:
    """A store holding only shared_checks.SCORED_DOC, shared by test_scores' queries (each only searches)."""
    yield from shared.scored_store(tmp_path_factory, "sqlite", vector_index(CharacterEmbeddings(), ["key0"]))


@pytest.mark.parametrize("query", shared.SCORED_QUERIES)
def test_scores(scored_store: MnemosyneStore, fake_embeddings: CharacterEmbeddings, query: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_scores.

    A search's score is the cosine similarity of the query and the embedded field.
    """
    shared.scores(scored_store, fake_embeddings, query)


def test_basic_store_operations(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_basic_store_operations."""
    store = new_lite_store(index=vector_index(fake_embeddings, shared.PATH_FIELDS))
    uid = uuid.uuid4().hex
    ns, key = (uid, "test", "documents"), "doc1"
    value = {"title": "Test Document", "content": "Hello, World!"}
    assert len(store.search((uid,))) == 0

    store.put(ns, key, value)
    item = store.get(ns, key)
    assert item is not None
    assert (item.namespace, item.key, item.value) == (ns, key, value)
    assert item.created_at is not None and item.updated_at is not None

    updated = {"title": "Updated Test Document", "content": "Hello, LangGraph!"}
    store.put(ns, key, updated)
    again = store.get(ns, key)
    assert again is not None
    assert again.value == updated
    assert again.updated_at >= item.updated_at
    assert store.get((uid, "test", "other_documents"), key) is None

    store.put(ns, "doc2", {"title": "Another Document", "content": "Greetings!"})
    items = store.search((uid, "test"), limit=10)
    assert len(items) == 2
    assert any(i.key == key for i in items) and any(i.key == "doc2" for i in items)
    assert (uid, "test", "documents") in store.list_namespaces(prefix=(uid, "test"))

    store.delete(ns, key)
    store.delete(ns, "doc2")
    assert store.get(ns, key) is None
    assert store.get(ns, "doc2") is None
    assert len(store.search((uid, "test"), limit=10)) == 0


def test_list_namespaces_operations(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_list_namespaces_operations."""
    store = new_lite_store(index=vector_index(fake_embeddings, shared.PATH_FIELDS))
    check_list_namespaces_operations(store)


def check_list_namespaces_operations(store: MnemosyneStore) -> None:
    """Upstream's checks of list_namespaces under one unique first (and last) label."""
    p = str(uuid.uuid4())
    namespaces = shared.nested_namespaces(p)
    for ns in namespaces:
        store.put(ns, "dummy", {"content": "dummy"})
    found = {name: store.list_namespaces(**query) for name, query in shared.nested_queries(p).items()}
    shared.check_nested_listings(p, found)
    for ns in namespaces:
        store.delete(ns, "dummy")


def check_search_items(store: MnemosyneStore) -> None:
    """Upstream's search checks: by namespace, by page, by filter (a list value matches equal lists)."""
    for ns, value in shared.SEARCH_ITEMS:
        store.put(ns, f"item_{ns[-1]}", value)
    shared.check_search_items({name: store.search(prefix, **query)
                               for name, (prefix, query) in shared.SEARCH_ITEMS_QUERIES.items()})
    for ns, _ in shared.SEARCH_ITEMS:
        store.delete(ns, f"item_{ns[-1]}")


def test_search_items(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_search_items."""
    check_search_items(new_lite_store(index=vector_index(fake_embeddings, shared.PATH_FIELDS)))


def test_sql_injection_vulnerability(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_sql_injection_vulnerability.

    A filter key written to break out of SqliteStore's SQL reveals nothing:
    upstream expects SqliteStore to refuse the key (ValueError "Invalid
    filter key"); MnemosyneStore builds no SQL from filters, so the key is
    just a field no item has and matches nothing.
    """
    store = shared_lite_store
    store.put((root,), "public", {"access": "public", "data": "public info"})
    store.put((root,), "private", {"access": "private", "data": "secret", "password": "123"})
    normal = store.search((root,), filter={"access": "public"})
    assert len(normal) == 1 and normal[0].value["access"] == "public"
    malicious = "access') = 'public' OR '1'='1' OR json_extract(value, '$."
    assert store.search((root,), filter={malicious: "dummy"}) == []


def test_non_ascii(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_non_ascii."""
    shared.non_ascii(new_lite_store(index=vector_index(fake_embeddings)), ("user_123", "memories"))


FIXED_VECTORS = {"a": [1.0, 0.0, 0.0], "b": [2.0, 0.1, 0.0], "c": [0.0, 0.0, 1.0]}


class FixedVectorEmbeddings(Embeddings):
    """Upstream's hand-picked vectors (FIXED_VECTORS) for the texts "a", "b", "c"; a stored value arrives as its
    JSON (the whole value is embedded)."""

    dims = 3

    def vector(self, text: str) -> list[float]:
        return list(FIXED_VECTORS[json.loads(text)["text"] if text.startswith("{") else text])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vector(text)


#: The ranking, with scores, a query for "a" gets under each distance: the closest first, as PostgresStore ranks.
CLOSEST_FIRST = {
    "cosine": [("a", 1.0), ("b", 2.0 / math.sqrt(4.01)), ("c", 0.0)],
    "l2": [("a", 0.0), ("b", -math.sqrt(1.01)), ("c", -math.sqrt(2.0))],
    "inner_product": [("b", 2.0), ("a", 1.0), ("c", 0.0)],
}


@pytest.mark.parametrize("distance_type", ["cosine", "l2", "inner_product"])
def test_vector_search_ranks_closest_first(new_lite_store: StoreFactory, distance_type: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_vector_search_ranks_closest_first (0234064).

    Not in the commit the rest of this suite was ported from: upstream added it when it gave SqliteStore's
    ``l2`` and ``inner_product`` PostgresStore's meaning, which MnemosyneStore follows (docs/langgraph.md).
    """
    store = new_lite_store(index={"dims": FixedVectorEmbeddings.dims, "embed": FixedVectorEmbeddings(),
                                  "distance_type": distance_type})
    for key in ("a", "b", "c"):
        store.put(("docs",), key, {"text": key})
    results = store.search(("docs",), query="a")
    assert [r.key for r in results] == [key for key, _ in CLOSEST_FIRST[distance_type]]
    for result, (_, score) in zip(results, CLOSEST_FIRST[distance_type], strict=True):
        assert result.score == pytest.approx(score, abs=1e-5)
