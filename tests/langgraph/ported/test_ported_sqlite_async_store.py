"""LangGraph's AsyncSqliteStore suite, run against MnemosyneStore's async methods on a SQLite-backed store.

Ported from langgraph's ``libs/checkpoint-sqlite/tests/test_async_store.py``:
each test is named after the upstream test it restates, with the same checks,
through ``aput`` / ``aget`` / ``asearch`` / ``alist_namespaces`` / ``abatch``.
Stores are chosen as in test_ported_sqlite_store.py (a shared store and a
``root`` label where the checks stay in the test's namespaces).  What was left
out or changed, and why: docs/langgraph-ported.md.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from fake_embeddings import CharacterEmbeddings, index_config
from langgraph.store.base import GetOp, Item, ListNamespacesOp, PutOp, SearchOp
from store_support import StoreFactory

from mnem_langgraph import MnemosyneStore

pytest_plugins = ["ported_stores"]

#: Upstream runs 100 keys x 10 rounds (6000 calls); each of our writes is a commit, so the calls are scaled
#: down: the check (every call returns) is the same.
LARGE_N, LARGE_M = 25, 4


@pytest.mark.anyio
async def test_large_batches_async(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_large_batches_async (scaled down)."""
    store = shared_lite_store
    calls = []
    for m in range(LARGE_M):
        ns = (root, "foo", "bar", "baz", str(m % 2))
        for i in range(LARGE_N):
            calls += [
                store.aput(ns, f"key{i}", value={"foo": "bar" + str(i)}),
                asyncio.create_task(store.aget(ns, f"key{i}")),
                asyncio.create_task(store.alist_namespaces(prefix=None, max_depth=m + 1)),
                asyncio.create_task(store.asearch((root,))),
                store.aput(ns, f"key{i}", value={"foo": "bar" + str(i)}),
                store.adelete(ns, f"key{i}"),
            ]
    results = await asyncio.gather(*calls)
    assert len(results) == LARGE_M * LARGE_N * 6


@pytest.mark.anyio
async def test_abatch_order(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_abatch_order."""
    store = shared_lite_store
    await store.aput((root, "foo"), "key1", {"data": "value1"})
    await store.aput((root, "bar"), "key2", {"data": "value2"})

    results = await store.abatch([
        GetOp((root, "foo"), "key1"),
        PutOp((root, "bar"), "key2", {"data": "value2"}),
        SearchOp((root,), filter={"data": "value1"}, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        GetOp((root,), "key3"),
    ])
    assert len(results) == 5
    got = results[0]
    assert isinstance(got, Item) and isinstance(got.value, dict)
    assert (got.value, got.key) == ({"data": "value1"}, "key1")
    assert results[1] is None
    assert isinstance(results[2], list)
    assert isinstance(results[3], list) and len(results[3]) > 0
    assert results[4] is None

    results = await store.abatch([
        SearchOp((root,), filter=None, limit=5, offset=0),
        GetOp((root, "bar"), "key2"),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
        PutOp((root,), "key3", {"data": "value3"}),
        GetOp((root, "foo"), "key1"),
    ])
    assert len(results) == 5
    assert isinstance(results[0], list) and len(results[0]) >= 2
    got = results[1]
    assert isinstance(got, Item) and (got.value, got.key) == ({"data": "value2"}, "key2")
    assert isinstance(results[2], list) and len(results[2]) > 0
    assert results[3] is None
    got = results[4]
    assert isinstance(got, Item) and (got.value, got.key) == ({"data": "value1"}, "key1")


@pytest.mark.anyio
async def test_batch_get_ops(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_batch_get_ops."""
    store = shared_lite_store
    await store.aput((root,), "key1", {"data": "value1"})
    await store.aput((root,), "key2", {"data": "value2"})
    results = await store.abatch([GetOp((root,), "key1"), GetOp((root,), "key2"), GetOp((root,), "key3")])
    assert len(results) == 3
    assert results[0] is not None and results[1] is not None and results[2] is None
    assert results[0].key == "key1" and results[1].key == "key2"


@pytest.mark.anyio
async def test_batch_put_ops(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_batch_put_ops."""
    store = shared_lite_store
    results = await store.abatch([
        PutOp((root,), "key1", {"data": "value1"}),
        PutOp((root,), "key2", {"data": "value2"}),
        PutOp((root,), "key3", None),
    ])
    assert results == [None, None, None]
    assert len(await store.asearch((root,), limit=10)) == 2  # key3's None stored nothing


@pytest.mark.anyio
async def test_batch_search_ops(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_batch_search_ops."""
    store = shared_lite_store
    await store.aput((root, "foo"), "key1", {"data": "value1"})
    await store.aput((root, "bar"), "key2", {"data": "value2"})
    results = await store.abatch([
        SearchOp((root,), filter={"data": "value1"}, limit=10, offset=0),
        SearchOp((root,), filter=None, limit=5, offset=0),
    ])
    assert len(results) == 2
    assert isinstance(results[0], list) and isinstance(results[1], list)
    assert len(results[1]) >= 1


@pytest.mark.anyio
async def test_batch_list_namespaces_ops(lite_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_batch_list_namespaces_ops."""
    await lite_store.aput(("test", "namespace1"), "key1", {"data": "value1"})
    await lite_store.aput(("test", "namespace2"), "key2", {"data": "value2"})
    results = await lite_store.abatch([ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0)])
    assert len(results) == 1
    assert isinstance(results[0], list)  # upstream checks the listing only when it is one
    assert len(results[0]) == 2
    assert ("test", "namespace1") in results[0] and ("test", "namespace2") in results[0]


# ----------------------------------------------------------------- vector search (index=...)


@pytest.mark.anyio
async def test_vector_store_initialization(new_lite_store: StoreFactory,
                                           fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_vector_store_initialization."""
    store = new_lite_store(index=index_config(fake_embeddings))
    assert store.index_config is not None  # type: ignore[attr-defined]
    assert store.index_config["dims"] == fake_embeddings.dims  # type: ignore[attr-defined]
    if hasattr(store.index_config.get("embed"), "embed_documents"):  # type: ignore[attr-defined]
        assert store.index_config["embed"] == fake_embeddings  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_vector_insert_with_auto_embedding(new_lite_store: StoreFactory,
                                                 fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_vector_insert_with_auto_embedding."""
    store = new_lite_store(index=index_config(fake_embeddings))
    for key, value in [("doc1", {"text": "short text"}), ("doc2", {"text": "longer text document"}),
                       ("doc3", {"text": "longest text document here"}),
                       ("doc4", {"description": "text in description field"}),
                       ("doc5", {"content": "text in content field"}), ("doc6", {"body": "text in body field"})]:
        await store.aput(("test",), key, value)
    keys = [r.key for r in await store.asearch(("test",), query="long text")]
    assert keys
    assert "doc2" in keys and "doc3" in keys


@pytest.mark.anyio
async def test_vector_update_with_embedding(new_lite_store: StoreFactory,
                                            fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_vector_update_with_embedding."""
    store = new_lite_store(index=index_config(fake_embeddings))
    await store.aput(("test",), "doc1", {"text": "zany zebra Xerxes"})
    await store.aput(("test",), "doc2", {"text": "something about dogs"})
    await store.aput(("test",), "doc3", {"text": "text about birds"})
    before = await store.asearch(("test",), query="Zany Xerxes")
    assert before and before[0].score is not None and before[0].key == "doc1"
    first_score = before[0].score

    await store.aput(("test",), "doc1", {"text": "new text about dogs"})
    after = next((r.score for r in await store.asearch(("test",), query="Zany Xerxes") if r.key == "doc1"), 0.0)
    assert after is not None and after < first_score
    for r in await store.asearch(("test",), query="new text about dogs"):
        if r.key == "doc1":
            assert r.score is not None and r.score > after

    await store.aput(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    assert all(r.key != "doc4" for r in await store.asearch(("test",), query="new text about dogs", limit=3))


@pytest.mark.anyio
async def test_vector_search_with_filters(new_lite_store: StoreFactory,
                                          fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_vector_search_with_filters.

    Upstream checks nothing of the answers here (the sync suite does): the
    four query+filter searches must run.
    """
    store = new_lite_store(index=index_config(fake_embeddings))
    for key, value in [("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
                       ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
                       ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
                       ("doc4", {"text": "blue car", "color": "blue", "score": 3.5})]:
        await store.aput(("test",), key, value)
    await store.asearch(("test",), query="apple", filter={"color": "red"})
    await store.asearch(("test",), query="car", filter={"color": "red"})
    await store.asearch(("test",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
    await store.asearch(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})


@pytest.mark.anyio
async def test_vector_search_pagination(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_vector_search_pagination."""
    store = new_lite_store(index=index_config(fake_embeddings))
    for i in range(5):
        await store.aput(("test",), f"doc{i}", {"text": f"test document number {i}"})
    first = await store.asearch(("test",), query="test", limit=2)
    second = await store.asearch(("test",), query="test", limit=2, offset=2)
    assert len(first) == 2 and len(second) == 2
    assert first[0].key != second[0].key
    assert len(await store.asearch(("test",), query="test", limit=10)) == 5


@pytest.mark.anyio
async def test_vector_search_edge_cases(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_vector_search_edge_cases."""
    store = new_lite_store(index=index_config(fake_embeddings))
    await store.aput(("test",), "doc1", {"text": "test document"})
    for query in ["", None, "test " * 100, "test!@#$%^&*()"]:
        assert len(await store.asearch(("test",), query=query)) == 1, query


@pytest.mark.anyio
async def test_embed_with_path(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_embed_with_path."""
    store = new_lite_store(index=index_config(fake_embeddings, ["key0", "key1", "key3"]))
    await store.aput(("test",), "doc1", {"key1": "xxx", "key2": "yyy", "key3": "zzz"})
    await store.aput(("test",), "doc2", {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"})

    results = await store.asearch(("test",), query="xxx")
    assert len(results) == 2 and results[0].key != results[1].key
    assert results[0].score > 0.9 and results[1].score > 0.9  # type: ignore[operator]

    results = await store.asearch(("test",), query="uuu")
    assert len(results) == 2 and results[0].key != results[1].key
    assert results[0].key == "doc2" and results[0].score > results[1].score  # type: ignore[operator]

    results = await store.asearch(("test",), query="www")
    assert len(results) == 2
    assert results[0].score < 0.9 and results[1].score < 0.9  # type: ignore[operator]


@pytest.mark.anyio
async def test_basic_store_ops(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_basic_store_ops."""
    store = new_lite_store(index=index_config(fake_embeddings, ["key0", "key1", "key3"]))
    uid = uuid.uuid4().hex
    ns, key = (uid, "test", "documents"), "doc1"
    value = {"title": "Test Document", "content": "Hello, World!"}
    assert len(await store.asearch((uid,))) == 0

    await store.aput(ns, key, value)
    item = await store.aget(ns, key)
    assert item is not None
    assert (item.namespace, item.key, item.value) == (ns, key, value)
    assert item.created_at is not None and item.updated_at is not None

    updated = {"title": "Updated Test Document", "content": "Hello, LangGraph!"}
    await asyncio.sleep(0.01)  # upstream: 1.01 s, SQLite's CURRENT_TIMESTAMP having whole seconds
    await store.aput(ns, key, updated)
    again = await store.aget(ns, key)
    assert again is not None
    assert again.value == updated
    assert again.updated_at > item.updated_at
    assert await store.aget((uid, "test", "other_documents"), key) is None

    await store.aput(ns, "doc2", {"title": "Another Document", "content": "Greetings!"})
    items = await store.asearch((uid, "test"), limit=10)
    assert len(items) == 2
    assert any(i.key == key for i in items) and any(i.key == "doc2" for i in items)
    assert (uid, "test", "documents") in await store.alist_namespaces(prefix=(uid, "test"))

    await store.adelete(ns, key)
    await store.adelete(ns, "doc2")
    assert await store.aget(ns, key) is None
    assert await store.aget(ns, "doc2") is None
    assert len(await store.asearch((uid, "test"), limit=10)) == 0


@pytest.mark.anyio
async def test_list_namespaces(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_list_namespaces."""
    store = new_lite_store(index=index_config(fake_embeddings, ["key0", "key1", "key3"]))
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
        await store.aput(ns, "dummy", {"content": "dummy"})

    found = await store.alist_namespaces(prefix=(p, "test"))
    assert len(found) == 4 and all(ns[1] == "test" for ns in found)
    found = await store.alist_namespaces(prefix=(p, "test", "documents"))
    assert len(found) == 2 and all(ns[1:3] == ("test", "documents") for ns in found)
    found = await store.alist_namespaces(suffix=("public", p))
    assert len(found) == 4 and all(ns[-2] == "public" for ns in found)
    found = await store.alist_namespaces(prefix=(p, "test"), suffix=("public", p))
    assert len(found) == 2 and all(ns[1] == "test" and ns[-2] == "public" for ns in found)
    found = await store.alist_namespaces(prefix=(p, "*", "documents"))
    assert len(found) == 5 and all(ns[2] == "documents" for ns in found)
    found = await store.alist_namespaces(suffix=("*", "public", p))
    assert len(found) == 4 and all(ns[-2] == "public" for ns in found)
    assert await store.alist_namespaces(suffix=("some", "*", "public", p)) == [
        (p, "prod", "documents", "some", "nesting", "public", p)]
    assert all(len(ns) <= 3 for ns in await store.alist_namespaces(max_depth=3))
    found = await store.alist_namespaces(max_depth=4, prefix=(p, "*", "documents"))
    assert len(set(found)) == len(found) == 5
    assert len(await store.alist_namespaces(prefix=(p,), limit=3)) == 3
    assert len(await store.alist_namespaces(prefix=(p,), offset=3)) == len(namespaces) - 3
    found = await store.alist_namespaces(prefix=(p,))
    assert len(found) == len(namespaces) and set(found) == set(namespaces)
    for ns in namespaces:
        await store.adelete(ns, "dummy")


@pytest.mark.anyio
async def test_search_items(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_search_items."""
    store = new_lite_store(index=index_config(fake_embeddings, ["key0", "key1", "key3"]))
    base = "test_search_items"
    data = [
        ((base, "documents", "user1"), {"title": "Doc 1", "author": "John Doe", "tags": ["important"]}),
        ((base, "documents", "user2"), {"title": "Doc 2", "author": "Jane Smith", "tags": ["draft"]}),
        ((base, "reports", "department1"), {"title": "Report A", "author": "John Doe", "tags": ["final"]}),
        ((base, "reports", "department2"), {"title": "Report B", "author": "Alice Johnson", "tags": ["draft"]}),
    ]
    for ns, value in data:
        await store.aput(ns, f"item_{ns[-1]}", value)
    docs = await store.asearch((base, "documents"))
    assert len(docs) == 2 and all(i.namespace[1] == "documents" for i in docs)
    reports = await store.asearch((base, "reports"))
    assert len(reports) == 2 and all(i.namespace[1] == "reports" for i in reports)
    first = await store.asearch((base,), limit=2, offset=0)
    second = await store.asearch((base,), limit=2, offset=2)
    assert len(first) == 2 and len(second) == 2
    assert {i.key for i in first}.isdisjoint({i.key for i in second})
    assert len(await store.asearch((base,))) == 4
    john = await store.asearch((base,), filter={"author": "John Doe"})
    assert len(john) == 2 and all(i.value["author"] == "John Doe" for i in john)
    drafts = await store.asearch((base,), filter={"tags": ["draft"]})
    assert len(drafts) == 2 and all("draft" in i.value["tags"] for i in drafts)
    for ns, _ in data:
        await store.adelete(ns, f"item_{ns[-1]}")

