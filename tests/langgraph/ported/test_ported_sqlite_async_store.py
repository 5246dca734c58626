"""LangGraph's AsyncSqliteStore suite, run against MnemosyneStore's async methods on a SQLite-backed store.

Ported from langgraph's ``libs/checkpoint-sqlite/tests/test_async_store.py``:
each test is named after the upstream test it restates, with the same checks,
through ``aput`` / ``aget`` / ``asearch`` / ``alist_namespaces`` / ``abatch``.
Stores are chosen as in test_ported_sqlite_store.py (a shared store and a
``root`` label where the checks stay in the test's namespaces; a fresh store
opened with upstream's ``index`` config, ``text_fields`` included, where
upstream made a vector store).  What was left out or changed, and why:
docs/langgraph-ported.md.
"""

from __future__ import annotations

import uuid

import pytest
import shared_checks as shared
from fake_embeddings import CharacterEmbeddings, sqlite_index
from manual_clock import ManualClock
from store_support import StoreFactory

from mnem_langgraph import MnemosyneStore

pytest_plugins = ["ported_stores"]

#: Upstream runs 100 keys x 10 rounds (6000 calls); each of our writes is a commit, so the calls are scaled
#: down: the check (every call returns) is the same.
LARGE_N, LARGE_M = 25, 4


@pytest.mark.anyio
async def test_large_batches_async(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_large_batches_async (scaled down)."""
    await shared.alarge_batches_async(shared_lite_store, root, LARGE_N, LARGE_M, tasks=True)


@pytest.mark.anyio
async def test_abatch_order(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_abatch_order."""
    store = shared_lite_store
    await store.aput((root, "foo"), "key1", {"data": "value1"})
    await store.aput((root, "bar"), "key2", {"data": "value2"})

    results = await store.abatch(shared.order_first_ops(root))
    shared.check_order_first_head(results)
    assert isinstance(results[2], list)
    assert isinstance(results[3], list) and len(results[3]) > 0
    assert results[4] is None

    shared.check_order_second(await store.abatch(shared.order_second_ops(root)))


@pytest.mark.anyio
async def test_batch_get_ops(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_batch_get_ops."""
    await shared.abatch_get_ops(shared_lite_store, root)


@pytest.mark.anyio
async def test_batch_put_ops(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_batch_put_ops."""
    await shared.abatch_put_ops(shared_lite_store, root, (root,))


@pytest.mark.anyio
async def test_batch_search_ops(shared_lite_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_batch_search_ops."""
    results = await shared.abatch_search(shared_lite_store, root)
    assert isinstance(results[0], list) and isinstance(results[1], list)
    assert len(results[1]) >= 1


@pytest.mark.anyio
async def test_batch_list_namespaces_ops(lite_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_batch_list_namespaces_ops."""
    results = await shared.alist_two_namespaces(lite_store)
    assert isinstance(results[0], list)  # upstream checks the listing only when it is one
    assert len(results[0]) == 2
    assert ("test", "namespace1") in results[0] and ("test", "namespace2") in results[0]


# ----------------------------------------------------------------- vector search (index=...)


@pytest.mark.anyio
async def test_vector_store_initialization(new_lite_store: StoreFactory,
                                           fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_vector_store_initialization."""
    store = new_lite_store(index=sqlite_index(fake_embeddings))
    assert store.index_config is not None  # type: ignore[attr-defined]
    assert store.index_config["dims"] == fake_embeddings.dims  # type: ignore[attr-defined]
    if hasattr(store.index_config.get("embed"), "embed_documents"):  # type: ignore[attr-defined]
        assert store.index_config["embed"] == fake_embeddings  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_vector_insert_with_auto_embedding(new_lite_store: StoreFactory,
                                                 fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_vector_insert_with_auto_embedding."""
    await shared.avector_insert_with_auto_embedding(new_lite_store(index=sqlite_index(fake_embeddings)), ("test",))


@pytest.mark.anyio
async def test_vector_update_with_embedding(new_lite_store: StoreFactory,
                                            fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_vector_update_with_embedding."""
    await shared.avector_update_with_embedding(new_lite_store(index=sqlite_index(fake_embeddings)), ("test",))


@pytest.mark.anyio
async def test_vector_search_with_filters(new_lite_store: StoreFactory,
                                          fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_vector_search_with_filters.

    Upstream checks nothing of the answers here (the sync suite does): the
    four query+filter searches must run.
    """
    store = new_lite_store(index=sqlite_index(fake_embeddings))
    for key, value in shared.FILTER_DOCS:
        await store.aput(("test",), key, value)
    await store.asearch(("test",), query="apple", filter={"color": "red"})
    await store.asearch(("test",), query="car", filter={"color": "red"})
    await store.asearch(("test",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
    await store.asearch(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})


@pytest.mark.anyio
async def test_vector_search_pagination(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_vector_search_pagination."""
    await shared.avector_search_pagination(new_lite_store(index=sqlite_index(fake_embeddings)), ("test",))


@pytest.mark.anyio
async def test_vector_search_edge_cases(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_vector_search_edge_cases."""
    await shared.avector_search_edge_cases(new_lite_store(index=sqlite_index(fake_embeddings)), ("test",))


@pytest.mark.anyio
async def test_embed_with_path(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_embed_with_path."""
    store = new_lite_store(index=sqlite_index(fake_embeddings, shared.PATH_FIELDS))
    exact, _, unembedded = await shared.asearch_by_path(store)
    assert exact[0].score > 0.9 and exact[1].score > 0.9  # type: ignore[operator]
    assert unembedded[0].score < 0.9 and unembedded[1].score < 0.9  # type: ignore[operator]


@pytest.mark.anyio
async def test_basic_store_ops(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_basic_store_ops."""
    clock = ManualClock()
    store = new_lite_store(index=sqlite_index(fake_embeddings, shared.PATH_FIELDS), clock=clock)
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
    clock.advance(seconds=1.01)  # where upstream sleeps out SQLite's whole-second CURRENT_TIMESTAMP
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
    store = new_lite_store(index=sqlite_index(fake_embeddings, shared.PATH_FIELDS))
    p = str(uuid.uuid4())
    namespaces = shared.nested_namespaces(p)
    for ns in namespaces:
        await store.aput(ns, "dummy", {"content": "dummy"})
    found = {name: await store.alist_namespaces(**query) for name, query in shared.nested_queries(p).items()}
    shared.check_nested_listings(p, found)
    for ns in namespaces:
        await store.adelete(ns, "dummy")


@pytest.mark.anyio
async def test_search_items(new_lite_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-sqlite/tests/test_async_store.py::test_search_items."""
    store = new_lite_store(index=sqlite_index(fake_embeddings, shared.PATH_FIELDS))
    for ns, value in shared.SEARCH_ITEMS:
        await store.aput(ns, f"item_{ns[-1]}", value)
    shared.check_search_items({name: await store.asearch(prefix, **query)
                               for name, (prefix, query) in shared.SEARCH_ITEMS_QUERIES.items()})
    for ns, _ in shared.SEARCH_ITEMS:
        await store.adelete(ns, f"item_{ns[-1]}")
