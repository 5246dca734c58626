"""LangGraph's SqliteStore suite, run against MnemosyneStore on a SQLite-backed store.

Ported from langgraph's ``libs/checkpoint-sqlite/tests/test_store.py``: each
test is named after the upstream test it restates, with the same checks.
Upstream's ``store`` fixture (an in-memory and a file database) becomes one
MnemosyneStore: a store shared by the module where the checks stay inside the
test's namespaces (upstream's first label ``"test"`` becomes the test's own
``root``), a fresh one where they look at the whole store.  Upstream's
``create_vector_store`` becomes a fresh store opened with ``index=...``
(SqliteStore's ``text_fields`` is BaseStore's ``fields``); ``test_scores``'
queries share one store holding its single item.  What was left out
or changed, and why: docs/langgraph-ported.md.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from fake_embeddings import CharacterEmbeddings, cosine, index_config
from langgraph.store.base import GetOp, Item, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from store_support import StoreFactory, shared_store

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

    results = store.batch([
        GetOp((root, "foo"), "key1"),
        PutOp((root, "bar"), "key2", {"data": "value2"}),
        SearchOp((root,), filter={"data": "value1"}, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        GetOp((root,), "key3"),
    ])
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

    results = store.batch([
        SearchOp((root,), filter=None, limit=5, offset=0),
        GetOp((root, "bar"), "key2"),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
        PutOp((root,), "key3", {"data": "value3"}),
        GetOp((root, "foo"), "key1"),
    ])
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
    store = shared_lite_store
    store.put((root,), "key1", {"data": "value1"})
    store.put((root,), "key2", {"data": "value2"})
    results = store.batch([GetOp((root,), "key1"), GetOp((root,), "key2"), GetOp((root,), "key3")])
    assert len(results) == 3
    assert results[0] is not None and results[1] is not None and results[2] is None
    assert results[0].key == "key1" and results[1].key == "key2"


def test_batch_put_ops(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_batch_put_ops."""
    store = shared_lite_store
    results = store.batch([
        PutOp((root,), "key1", {"data": "value1"}),
        PutOp((root,), "key2", {"data": "value2"}),
        PutOp((root,), "key3", None),  # a delete
    ])
    assert results == [None, None, None]
    first, second, third = (store.get((root,), key) for key in ("key1", "key2", "key3"))
    assert first and first.value == {"data": "value1"}
    assert second and second.value == {"data": "value2"}
    assert third is None


def test_batch_search_ops(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_batch_search_ops."""
    store = shared_lite_store
    for ns, key, value in [((root, "foo"), "key1", {"data": "value1", "tag": "a"}),
                           ((root, "bar"), "key2", {"data": "value2", "tag": "a"}),
                           ((root, "baz"), "key3", {"data": "value3", "tag": "b"})]:
        store.put(ns, key, value)
    results = store.batch([
        SearchOp((root,), filter={"tag": "a"}, limit=10, offset=0),
        SearchOp((root,), filter=None, limit=2, offset=0),
        SearchOp((root, "foo"), filter=None, limit=10, offset=0),
    ])
    assert len(results) == 3
    assert len(results[0]) == 2 and all(item.value["tag"] == "a" for item in results[0])
    assert len(results[1]) == 2
    assert len(results[2]) == 1 and results[2][0].namespace == (root, "foo")


def test_batch_list_namespaces_ops(lite_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_batch_list_namespaces_ops."""
    data = [
        (("test", "documents", "public"), "doc1", {"content": "public doc"}),
        (("test", "documents", "private"), "doc2", {"content": "private doc"}),
        (("test", "images", "public"), "img1", {"content": "public image"}),
        (("prod", "documents", "public"), "doc3", {"content": "prod doc"}),
    ]
    for ns, key, value in data:
        lite_store.put(ns, key, value)
    results = lite_store.batch([
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=2, limit=10, offset=0),
        ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("public",)),), max_depth=None, limit=10,
                         offset=0),
    ])
    assert len(results) == 3
    assert len(results[0]) == len(data)
    assert all(len(ns) <= 2 for ns in results[1])
    assert all(ns[-1] == "public" for ns in results[2])


class TestSqliteStore:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::TestSqliteStore."""

    def test_basic_store_ops(self, shared_lite_store: MnemosyneStore, root: str) -> None:
        """Upstream: libs/checkpoint-sqlite/tests/test_store.py::TestSqliteStore::test_basic_store_ops."""
        store = shared_lite_store
        ns, key = (root, "documents"), "doc1"
        value = {"title": "Test Document", "content": "Hello, World!"}
        store.put(ns, key, value)
        item = store.get(ns, key)
        assert item
        assert (item.namespace, item.key, item.value) == (ns, key, value)

        time.sleep(0.01)
        updated = {"title": "Updated Document", "content": "Hello, Updated!"}
        store.put(ns, key, updated)
        assert store.get(ns, key).value == updated  # type: ignore[union-attr]
        assert store.get((root, "other_documents"), key) is None
        store.delete(ns, key)
        assert store.get(ns, key) is None

    def test_list_namespaces(self, lite_store: MnemosyneStore) -> None:
        """Upstream: libs/checkpoint-sqlite/tests/test_store.py::TestSqliteStore::test_list_namespaces."""
        namespaces = [
            ("test", "documents", "public"), ("test", "documents", "private"),
            ("test", "images", "public"), ("test", "images", "private"),
            ("prod", "documents", "public"), ("prod", "documents", "private"),
        ]
        for ns in namespaces:
            lite_store.put(ns, "dummy", {"content": "dummy"})
        assert len(lite_store.list_namespaces()) == len(namespaces)
        under_test = lite_store.list_namespaces(prefix=["test"])  # type: ignore[arg-type]  # a list, as upstream
        assert len(under_test) == 4 and all(ns[0] == "test" for ns in under_test)
        public = lite_store.list_namespaces(suffix=["public"])  # type: ignore[arg-type]
        assert len(public) == 3 and all(ns[-1] == "public" for ns in public)
        assert all(len(ns) <= 2 for ns in lite_store.list_namespaces(max_depth=2))
        assert len(lite_store.list_namespaces(limit=3)) == 3
        for ns in namespaces:
            lite_store.delete(ns, "dummy")

    def test_search(self, shared_lite_store: MnemosyneStore, root: str) -> None:
        """Upstream: libs/checkpoint-sqlite/tests/test_store.py::TestSqliteStore::test_search."""
        store = shared_lite_store
        data = [
            ((root, "docs"), "doc1", {"title": "First Doc", "author": "Alice", "tags": ["important"]}),
            ((root, "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["draft"]}),
            ((root, "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["final"]}),
        ]
        for ns, key, value in data:
            store.put(ns, key, value)
        assert len(store.search([root])) == 3  # type: ignore[arg-type]  # a list, as upstream
        docs = store.search([root, "docs"])  # type: ignore[arg-type]
        assert len(docs) == 2 and all(item.namespace == (root, "docs") for item in docs)
        alice = store.search([root], filter={"author": "Alice"})  # type: ignore[arg-type]
        assert len(alice) == 2 and all(item.value["author"] == "Alice" for item in alice)
        assert len(store.search([root], limit=2)) == 2  # type: ignore[arg-type]
        assert len(store.search([root], offset=2)) == 1  # type: ignore[arg-type]
        for ns, key, _ in data:
            store.delete(ns, key)


# ----------------------------------------------------------------- vector search (index=...)


def test_vector_store_initialization(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_vector_store_initialization."""
    store = new_lite_store(index=index_config(fake_embeddings))
    assert store.index_config is not None  # type: ignore[attr-defined]
    assert store.embeddings == fake_embeddings  # type: ignore[attr-defined]
    assert store.index_config["dims"] == fake_embeddings.dims  # type: ignore[attr-defined]
    assert store.index_config.get("fields") is None  # type: ignore[attr-defined]

    fields = ["content", "title"]
    store = new_lite_store(index=index_config(fake_embeddings, fields))
    assert store.index_config is not None  # type: ignore[attr-defined]
    assert store.embeddings == fake_embeddings  # type: ignore[attr-defined]
    assert store.index_config["dims"] == fake_embeddings.dims  # type: ignore[attr-defined]
    assert store.index_config["fields"] == fields  # type: ignore[attr-defined]


def test_vector_insert_with_auto_embedding(new_lite_store: StoreFactory,
                                           fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_vector_insert_with_auto_embedding."""
    store = new_lite_store(index=index_config(fake_embeddings))
    for key, value in [("doc1", {"text": "short text"}), ("doc2", {"text": "longer text document"}),
                       ("doc3", {"text": "longest text document here"}),
                       ("doc4", {"description": "text in description field"}),
                       ("doc5", {"content": "text in content field"}), ("doc6", {"body": "text in body field"})]:
        store.put(("test",), key, value)
    keys = [r.key for r in store.search(("test",), query="long text")]
    assert keys
    assert "doc2" in keys and "doc3" in keys


def test_vector_update_with_embedding(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_vector_update_with_embedding."""
    store = new_lite_store(index=index_config(fake_embeddings))
    store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("test",), "doc2", {"text": "something about dogs"})
    store.put(("test",), "doc3", {"text": "text about birds"})
    before = store.search(("test",), query="Zany Xerxes")
    assert before and before[0].key == "doc1"
    first_score = before[0].score

    store.put(("test",), "doc1", {"text": "new text about dogs"})
    after = next((r.score for r in store.search(("test",), query="Zany Xerxes") if r.key == "doc1"), 0.0)
    assert after < first_score  # type: ignore[operator]
    for r in store.search(("test",), query="new text about dogs"):
        if r.key == "doc1":
            assert r.score > after  # type: ignore[operator]

    store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    assert all(r.key != "doc4" for r in store.search(("test",), query="new text about dogs", limit=3))


def test_vector_search_with_filters(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_vector_search_with_filters."""
    store = new_lite_store(index=index_config(fake_embeddings))
    for key, value in [("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
                       ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
                       ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
                       ("doc4", {"text": "blue car", "color": "blue", "score": 3.5})]:
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
    store = new_lite_store(index=index_config(fake_embeddings))
    for i in range(5):
        store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
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
    store = new_lite_store(index=index_config(fake_embeddings))
    store.put(("test",), "doc1", {"text": "test document"})
    for query in ["", None, "test " * 100, "test!@#$%^&*()"]:
        assert len(store.search(("test",), query=query)) == 1, query


def test_embed_with_path(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_embed_with_path."""
    store = new_lite_store(index=index_config(fake_embeddings, ["key0", "key1", "key3"]))
    store.put(("test",), "doc1", {"key1": "xxx", "key2": "yyy", "key3": "zzz"})  # no key0: no error
    store.put(("test",), "doc2", {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"})

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
    store = new_lite_store(index=index_config(fake_embeddings, ["key17"]))
    store.put(("test",), "doc3", {"key0": "aaa", "key1": "bbb", "key2": "ccc", "key3": "ddd"}, index=["key0", "key1"])
    store.put(("test",), "doc4", {"key0": "eee", "key1": "bbb", "key2": "fff", "key3": "ggg"}, index=["key1", "key3"])

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


#: The one item upstream's test_scores stores, with its index settings.
SCORED_DOC = {"key0": "aaa"}


@pytest.fixture(scope="module")
def scored_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MnemosyneStore]:
    """A store holding only SCORED_DOC, shared by test_scores' queries (each only searches)."""
    yield from shared_store(
        tmp_path_factory, "sqlite", index=index_config(CharacterEmbeddings(), ["key0"]),
        seed=lambda store: store.put(("test",), "doc", SCORED_DOC, index=["key0", "key1"]))


@pytest.mark.parametrize("query", ["aaa", "bbb", "ccc", "abcd", "poisson"])
def test_scores(scored_store: MnemosyneStore, fake_embeddings: CharacterEmbeddings, query: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_scores.

    A search's score is the cosine similarity of the query and the embedded field.
    """
    results = scored_store.search((), query=query)
    expected = cosine(fake_embeddings.embed_query(query), fake_embeddings.embed_query(SCORED_DOC["key0"]))
    assert len(results) == 1
    assert results[0].score == pytest.approx(expected, abs=1e-3)


def test_basic_store_operations(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_basic_store_operations."""
    store = new_lite_store(index=index_config(fake_embeddings, ["key0", "key1", "key3"]))
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
    store = new_lite_store(index=index_config(fake_embeddings, ["key0", "key1", "key3"]))
    check_list_namespaces_operations(store)


def check_list_namespaces_operations(store: MnemosyneStore) -> None:
    """Upstream's checks of list_namespaces under one unique first (and last) label."""
    p = str(uuid.uuid4())
    namespaces = [
        (p, "test", "documents", "public", p),
        (p, "test", "documents", "private", p),
        (p, "test", "images", "public", p),
        (p, "test", "images", "private", p),
        (p, "prod", "documents", "public", p),
        (p, "prod", "documents", "some", "nesting", "public", p),
        (p, "prod", "documents", "private", p),
    ]
    for ns in namespaces:
        store.put(ns, "dummy", {"content": "dummy"})

    found = store.list_namespaces(prefix=(p, "test"))
    assert len(found) == 4 and all(ns[1] == "test" for ns in found)
    found = store.list_namespaces(prefix=(p, "test", "documents"))
    assert len(found) == 2 and all(ns[1:3] == ("test", "documents") for ns in found)
    found = store.list_namespaces(suffix=("public", p))
    assert len(found) == 4 and all(ns[-2] == "public" for ns in found)
    found = store.list_namespaces(prefix=(p, "test"), suffix=("public", p))
    assert len(found) == 2 and all(ns[1] == "test" and ns[-2] == "public" for ns in found)
    found = store.list_namespaces(prefix=(p, "*", "documents"))
    assert len(found) == 5 and all(ns[2] == "documents" for ns in found)
    found = store.list_namespaces(suffix=("*", "public", p))
    assert len(found) == 4 and all(ns[-2] == "public" for ns in found)
    assert store.list_namespaces(suffix=("some", "*", "public", p)) == [
        (p, "prod", "documents", "some", "nesting", "public", p)]
    assert all(len(ns) <= 3 for ns in store.list_namespaces(max_depth=3))
    found = store.list_namespaces(max_depth=4, prefix=(p, "*", "documents"))
    assert len(set(found)) == len(found) == 5
    assert len(store.list_namespaces(prefix=(p,), limit=3)) == 3
    assert len(store.list_namespaces(prefix=(p,), offset=3)) == len(namespaces) - 3
    found = store.list_namespaces(prefix=(p,))
    assert len(found) == len(namespaces) and set(found) == set(namespaces)
    for ns in namespaces:
        store.delete(ns, "dummy")


SEARCH_ITEMS_BASE = "test_search_items"
SEARCH_ITEMS = [
    ((SEARCH_ITEMS_BASE, "documents", "user1"), {"title": "Doc 1", "author": "John Doe", "tags": ["important"]}),
    ((SEARCH_ITEMS_BASE, "documents", "user2"), {"title": "Doc 2", "author": "Jane Smith", "tags": ["draft"]}),
    ((SEARCH_ITEMS_BASE, "reports", "department1"), {"title": "Report A", "author": "John Doe", "tags": ["final"]}),
    ((SEARCH_ITEMS_BASE, "reports", "department2"),
     {"title": "Report B", "author": "Alice Johnson", "tags": ["draft"]}),
]


def check_search_items(store: MnemosyneStore) -> None:
    """Upstream's search checks: by namespace, by page, by filter (a list value matches equal lists)."""
    base = SEARCH_ITEMS_BASE
    for ns, value in SEARCH_ITEMS:
        store.put(ns, f"item_{ns[-1]}", value)
    docs = store.search((base, "documents"))
    assert len(docs) == 2 and all(i.namespace[1] == "documents" for i in docs)
    reports = store.search((base, "reports"))
    assert len(reports) == 2 and all(i.namespace[1] == "reports" for i in reports)
    first = store.search((base,), limit=2, offset=0)
    second = store.search((base,), limit=2, offset=2)
    assert len(first) == 2 and len(second) == 2
    assert {i.key for i in first}.isdisjoint({i.key for i in second})
    assert len(store.search((base,))) == 4
    john = store.search((base,), filter={"author": "John Doe"})
    assert len(john) == 2 and all(i.value["author"] == "John Doe" for i in john)
    drafts = store.search((base,), filter={"tags": ["draft"]})
    assert len(drafts) == 2 and all("draft" in i.value["tags"] for i in drafts)
    for ns, _ in SEARCH_ITEMS:
        store.delete(ns, f"item_{ns[-1]}")


def test_search_items(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_search_items."""
    check_search_items(new_lite_store(index=index_config(fake_embeddings, ["key0", "key1", "key3"])))


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


NON_ASCII = {"1": "这是中文", "2": "これは日本語です", "3": "이건 한국어야", "4": "Это русский", "5": "यह रूसी है"}


def test_non_ascii(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_store.py::test_non_ascii."""
    store = new_lite_store(index=index_config(fake_embeddings))
    ns = ("user_123", "memories")
    for key, text in NON_ASCII.items():
        store.put(ns, key, {"text": text})
    for key, text in NON_ASCII.items():
        assert store.search(ns, query=text)[0].key == key
