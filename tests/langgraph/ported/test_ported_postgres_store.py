"""LangGraph's PostgresStore suite, run against MnemosyneStore on a PostgreSQL-backed store.

Ported from langgraph's ``libs/checkpoint-postgres/tests/test_store.py``:
each test is named after the upstream test it restates, with the same checks.
Stores are on the tests' PostgreSQL server (tests/pg_stores.py).  Upstream's
``store`` fixture (three connection modes, each with a 6-second default TTL
and a sweeper running) becomes one plain MnemosyneStore: shared by the module
where the checks stay inside the test's namespaces (upstream's first label
``"test"`` becomes the test's own ``root``), fresh where they look at the
whole store; ``test_store_ttl`` gets a store with upstream's TTL settings.
Upstream's ``vector_store`` (fresh per test, for each pgvector type and
distance metric) becomes one store per module opened with ``index=...``
(cosine, BaseStore's only metric), each test writing under its own ``root``;
``test_scores``' queries share one store holding its single item.  What was
left out or changed, and why: docs/langgraph-ported.md.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fake_embeddings import CharacterEmbeddings, cosine, index_config
from langgraph.store.base import GetOp, Item, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from store_support import StoreFactory, shared_store

from mnem_langgraph import MnemosyneStore

pytest_plugins = ["ported_stores"]

#: Upstream's TTL of 6 s, and every sleep of test_store_ttl, are quartered here.
QUARTER = 0.25
TTL_SECONDS = 6 * QUARTER
TTL_MINUTES = TTL_SECONDS / 60


# ----------------------------------------------------------------- batches


def test_batch_order(pg_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_batch_order."""
    store = pg_store
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})

    results = store.batch([
        GetOp(("test", "foo"), "key1"),
        PutOp(("test", "bar"), "key2", {"data": "value2"}),
        SearchOp(("test",), filter={"data": "value1"}, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        GetOp(("test",), "key3"),
    ])
    assert len(results) == 5
    got = results[0]
    assert isinstance(got, Item) and isinstance(got.value, dict)
    assert (got.value, got.key) == ({"data": "value1"}, "key1")
    assert results[1] is None
    assert isinstance(results[2], list) and len(results[2]) == 1
    assert isinstance(results[3], list) and len(results[3]) > 0
    assert results[4] is None

    results = store.batch([
        SearchOp(("test",), filter=None, limit=5, offset=0),
        GetOp(("test", "bar"), "key2"),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
        PutOp(("test",), "key3", {"data": "value3"}),
        GetOp(("test", "foo"), "key1"),
    ])
    assert len(results) == 5
    assert isinstance(results[0], list) and len(results[0]) >= 2
    got = results[1]
    assert isinstance(got, Item) and (got.value, got.key) == ({"data": "value2"}, "key2")
    assert isinstance(results[2], list) and len(results[2]) > 0
    assert results[3] is None
    got = results[4]
    assert isinstance(got, Item) and (got.value, got.key) == ({"data": "value1"}, "key1")


def test_batch_get_ops(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_batch_get_ops."""
    store = shared_pg_store
    store.put((root,), "key1", {"data": "value1"})
    store.put((root,), "key2", {"data": "value2"})
    results = store.batch([GetOp((root,), "key1"), GetOp((root,), "key2"), GetOp((root,), "key3")])
    assert len(results) == 3
    assert results[0] is not None and results[1] is not None and results[2] is None
    assert results[0].key == "key1" and results[1].key == "key2"


def test_batch_put_ops(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_batch_put_ops."""
    store = shared_pg_store
    results = store.batch([
        PutOp((root,), "key1", {"data": "value1"}),
        PutOp((root,), "key2", {"data": "value2"}),
        PutOp((root,), "key3", None),
    ])
    assert results == [None, None, None]
    first, second, third = (store.get((root,), key) for key in ("key1", "key2", "key3"))
    assert first and first.value == {"data": "value1"}
    assert second and second.value == {"data": "value2"}
    assert third is None


def test_batch_search_ops(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_batch_search_ops."""
    store = shared_pg_store
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


def test_batch_list_namespaces_ops(pg_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_batch_list_namespaces_ops."""
    data = [
        (("test", "documents", "public"), "doc1", {"content": "public doc"}),
        (("test", "documents", "private"), "doc2", {"content": "private doc"}),
        (("test", "images", "public"), "img1", {"content": "public image"}),
        (("prod", "documents", "public"), "doc3", {"content": "prod doc"}),
    ]
    for ns, key, value in data:
        pg_store.put(ns, key, value)
    results = pg_store.batch([
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=2, limit=10, offset=0),
        # Upstream's path here is the bare string "public", not a tuple: kept as it is.
        ListNamespacesOp(match_conditions=(MatchCondition("suffix", "public"),),  # type: ignore[arg-type]
                         max_depth=None, limit=10, offset=0),
    ])
    assert len(results) == 3
    assert len(results[0]) == len(data)
    assert all(len(ns) <= 2 for ns in results[1])
    assert all(ns[-1] == "public" for ns in results[2])


def test_basic_store_ops(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_basic_store_ops.

    Upstream updates at once; here 2 ms pass first, as item times are commit
    times in milliseconds (two commits in one millisecond share a time).
    """
    store = shared_pg_store
    ns, key = (root, "documents"), "doc1"
    value = {"title": "Test Document", "content": "Hello, World!"}
    store.put(ns, key, value)
    item = store.get(ns, key)
    assert item
    assert (item.namespace, item.key, item.value) == (ns, key, value)

    time.sleep(0.002)
    updated = {"title": "Updated Document", "content": "Hello, Updated!"}
    store.put(ns, key, updated)
    again = store.get(ns, key)
    assert again.value == updated  # type: ignore[union-attr]
    assert again.updated_at > item.updated_at  # type: ignore[union-attr]
    assert store.get((root, "other_documents"), key) is None
    store.delete(ns, key)
    assert store.get(ns, key) is None


def test_list_namespaces(pg_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_list_namespaces."""
    namespaces = [
        ("test", "documents", "public"), ("test", "documents", "private"),
        ("test", "images", "public"), ("test", "images", "private"),
        ("prod", "documents", "public"), ("prod", "documents", "private"),
    ]
    for ns in namespaces:
        pg_store.put(ns, "dummy", {"content": "dummy"})
    assert len(pg_store.list_namespaces()) == len(namespaces)
    under_test = pg_store.list_namespaces(prefix=["test"])  # type: ignore[arg-type]  # a list, as upstream
    assert len(under_test) == 4 and all(ns[0] == "test" for ns in under_test)
    public = pg_store.list_namespaces(suffix=["public"])  # type: ignore[arg-type]
    assert len(public) == 3 and all(ns[-1] == "public" for ns in public)
    assert all(len(ns) <= 2 for ns in pg_store.list_namespaces(max_depth=2))
    assert len(pg_store.list_namespaces(limit=3)) == 3
    for ns in namespaces:
        pg_store.delete(ns, "dummy")


def test_search(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_search."""
    store = shared_pg_store
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


@pytest.fixture(scope="module")
def vector_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MnemosyneStore]:
    """One PostgreSQL-backed store embedding whole values with the toy model, shared by the module's vector tests.

    Upstream's is fresh per test and they write under ``("test",)``; here each writes under its own ``root``.
    """
    yield from shared_store(tmp_path_factory, "postgresql", index=index_config(CharacterEmbeddings()))


def test_vector_store_initialization(vector_store: MnemosyneStore, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_vector_store_initialization."""
    assert vector_store.index_config is not None  # type: ignore[attr-defined]
    assert vector_store.index_config["dims"] == fake_embeddings.dims  # type: ignore[attr-defined]
    assert vector_store.index_config["embed"] == fake_embeddings  # type: ignore[attr-defined]


def test_vector_insert_with_auto_embedding(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_vector_insert_with_auto_embedding."""
    for key, value in [("doc1", {"text": "short text"}), ("doc2", {"text": "longer text document"}),
                       ("doc3", {"text": "longest text document here"}),
                       ("doc4", {"description": "text in description field"}),
                       ("doc5", {"content": "text in content field"}), ("doc6", {"body": "text in body field"})]:
        vector_store.put((root,), key, value)
    keys = [r.key for r in vector_store.search((root,), query="long text")]
    assert keys
    assert "doc2" in keys and "doc3" in keys


def test_vector_update_with_embedding(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_vector_update_with_embedding."""
    store = vector_store
    store.put((root,), "doc1", {"text": "zany zebra Xerxes"})
    store.put((root,), "doc2", {"text": "something about dogs"})
    store.put((root,), "doc3", {"text": "text about birds"})
    before = store.search((root,), query="Zany Xerxes")
    assert before and before[0].key == "doc1"
    first_score = before[0].score

    store.put((root,), "doc1", {"text": "new text about dogs"})
    after = next((r.score for r in store.search((root,), query="Zany Xerxes") if r.key == "doc1"), 0.0)
    assert after < first_score  # type: ignore[operator]
    for r in store.search((root,), query="new text about dogs"):
        if r.key == "doc1":
            assert r.score > after  # type: ignore[operator]

    store.put((root,), "doc4", {"text": "new text about dogs"}, index=False)
    assert all(r.key != "doc4" for r in store.search((root,), query="new text about dogs", limit=3))


@pytest.mark.parametrize("refresh_ttl", [True, False])
def test_vector_search_with_filters(vector_store: MnemosyneStore, root: str, refresh_ttl: bool) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_vector_search_with_filters."""
    store = vector_store
    for key, value in [("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
                       ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
                       ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
                       ("doc4", {"text": "blue car", "color": "blue", "score": 3.5})]:
        store.put((root,), key, value)
    results = store.search((root,), query="apple", filter={"color": "red"}, refresh_ttl=refresh_ttl)
    assert len(results) == 2 and results[0].key == "doc1"
    results = store.search((root,), query="car", filter={"color": "red"}, refresh_ttl=refresh_ttl)
    assert len(results) == 2 and results[0].key == "doc2"
    results = store.search((root,), query="bbbbluuu", filter={"score": {"$gt": 3.2}}, refresh_ttl=refresh_ttl)
    assert len(results) == 3 and results[0].key == "doc4"
    results = store.search((root,), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    assert len(results) == 1 and results[0].key == "doc3"


def test_vector_search_pagination(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_vector_search_pagination."""
    for i in range(5):
        vector_store.put((root,), f"doc{i}", {"text": f"test document number {i}"})
    first = vector_store.search((root,), query="test", limit=2)
    second = vector_store.search((root,), query="test", limit=2, offset=2)
    assert len(first) == 2 and len(second) == 2
    assert first[0].key != second[0].key
    assert len(vector_store.search((root,), query="test", limit=10)) == 5


def test_vector_search_edge_cases(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_vector_search_edge_cases."""
    vector_store.put((root,), "doc1", {"text": "test document"})
    for query in ["", None, "test " * 100, "test!@#$%^&*()"]:
        assert len(vector_store.search((root,), query=query)) == 1, query


def test_embed_with_path_sync(new_pg_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_embed_with_path_sync (its cosine case)."""
    store = new_pg_store(index=index_config(fake_embeddings, ["key0", "key1", "key3"]))
    store.put(("test",), "doc1", {"key1": "xxx", "key2": "yyy", "key3": "zzz"})
    store.put(("test",), "doc2", {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"})

    results = store.search(("test",), query="xxx")
    assert len(results) == 2 and results[0].key != results[1].key
    top, other = results[0].score, results[1].score
    assert top == pytest.approx(other, abs=1e-3)

    results = store.search(("test",), query="uuu")
    assert len(results) == 2 and results[0].key != results[1].key
    assert results[0].key == "doc2" and results[0].score > results[1].score  # type: ignore[operator]
    assert top == pytest.approx(results[0].score, abs=1e-3)

    results = store.search(("test",), query="zzz")
    assert len(results) == 2 and results[0].key != results[1].key
    assert results[0].key == "doc1" and results[0].score > results[1].score  # type: ignore[operator]
    assert top == pytest.approx(results[0].score, abs=1e-3)

    results = store.search(("test",), query="www")
    assert len(results) == 2 and results[0].key != results[1].key
    assert results[0].score < top and results[1].score < top  # type: ignore[operator]


def test_embed_with_path_operation_config(new_pg_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_embed_with_path_operation_config (cosine)."""
    store = new_pg_store(index=index_config(fake_embeddings, ["key17"]))
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
    assert results[0].score == pytest.approx(results[1].score, abs=1e-3)

    results = store.search(("test",), query="ccc")
    assert len(results) == 2 and all(r.score < 0.9 for r in results)  # type: ignore[operator]

    store.put(("test",), "doc5", {"key0": "hhh", "key1": "iii"}, index=False)
    results = store.search(("test",))
    assert len(results) == 3
    assert all(r.score is None for r in results), f"{results}"
    assert any(r.key == "doc5" for r in results)


#: The one item upstream's test_scores stores, with its index settings.
SCORED_DOC = {"key0": "aaa"}


@pytest.fixture(scope="module")
def scored_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MnemosyneStore]:
    """A store holding only SCORED_DOC, shared by test_scores' queries (each only searches)."""
    yield from shared_store(
        tmp_path_factory, "postgresql", index=index_config(CharacterEmbeddings(), ["key0"]),
        seed=lambda store: store.put(("test",), "doc", SCORED_DOC, index=["key0", "key1"]))


@pytest.mark.parametrize("query", ["aaa", "bbb", "ccc", "abcd", "poisson"])
def test_scores(scored_store: MnemosyneStore, fake_embeddings: CharacterEmbeddings, query: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_scores (its cosine case)."""
    results = scored_store.search((), query=query)
    expected = cosine(fake_embeddings.embed_query(query), fake_embeddings.embed_query(SCORED_DOC["key0"]))
    assert len(results) == 1
    assert results[0].score == pytest.approx(expected, abs=1e-3)


def test_store_ttl(new_pg_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_store_ttl (durations quartered).

    Reads with ``refresh_ttl=True`` keep an item alive; once nothing refreshes
    it, the running sweeper removes it within a TTL and a half.
    """
    store = new_pg_store(ttl={"default_ttl": TTL_MINUTES, "refresh_on_read": True,
                              "sweep_interval_minutes": TTL_MINUTES / 2})
    store.start_ttl_sweeper()  # type: ignore[attr-defined]
    ns = ("foo",)
    store.put(ns, key="item1", value={"foo": "bar"}, ttl=TTL_MINUTES)
    time.sleep((6 - 2) * QUARTER)
    assert store.get(ns, key="item1", refresh_ttl=True) is not None
    time.sleep((6 - 2) * QUARTER)
    assert len(store.search(ns, query="foo", refresh_ttl=True)) == 1
    time.sleep((6 - 2) * QUARTER)
    assert store.get(ns, key="item1", refresh_ttl=False) is not None
    time.sleep((6 - 1) * QUARTER)  # since the last refresh: more than a TTL and a sweep interval
    assert len(store.search(ns, query="bar", refresh_ttl=False)) == 0
    store.stop_ttl_sweeper()  # type: ignore[attr-defined]


NON_ASCII = {"1": "这是中文", "2": "これは日本語です", "3": "이건 한국어야", "4": "Это русский", "5": "यह रूसी है"}


def test_non_ascii(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_non_ascii (its cosine case)."""
    ns = (root, "memories")
    for key, text in NON_ASCII.items():
        vector_store.put(ns, key, {"text": text})
    for key, text in NON_ASCII.items():
        assert vector_store.search(ns, query=text)[0].key == key
