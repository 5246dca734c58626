"""LangGraph's AsyncPostgresStore suite, run against MnemosyneStore's async methods on a PostgreSQL-backed store.

Ported from langgraph's ``libs/checkpoint-postgres/tests/test_async_store.py``:
each test is named after the upstream test it restates, with the same checks.
Stores are chosen as in test_ported_postgres_store.py (a shared store and a
``root`` label where the checks stay in the test's namespaces; one cosine
vector store per module, each test under its own ``root``, where upstream
made a fresh store for every pgvector type and metric).  What was
left out or changed, and why: docs/langgraph-ported.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from fake_embeddings import CharacterEmbeddings, index_config
from langchain_core.embeddings import Embeddings
from langgraph.store.base import GetOp, Item, ListNamespacesOp, PutOp, SearchOp
from store_support import StoreFactory, shared_store

from mnem_langgraph import MnemosyneStore

pytest_plugins = ["ported_stores"]

#: Upstream's TTL of 6 s, and every sleep of test_store_ttl, are quartered here.
QUARTER = 0.25
TTL_SECONDS = 6 * QUARTER
TTL_MINUTES = TTL_SECONDS / 60

#: Upstream runs 100 (threads) and 1000 (asyncio) keys x 10 rounds; each of our writes is a commit, so the calls
#: are scaled down: the check (every call returns) is the same.
LARGE_N, LARGE_M = 10, 4


# ----------------------------------------------------------------- many calls at once


@pytest.mark.anyio
async def test_large_batches(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_large_batches (scaled down).

    The sync methods, called from 10 threads while the event loop waits on them.
    """
    store = shared_pg_store
    with ThreadPoolExecutor(max_workers=10) as pool:
        futures = []
        for m in range(LARGE_M):
            ns = (root, "foo", "bar", "baz", str(m % 2))
            for i in range(LARGE_N):
                futures += [
                    pool.submit(store.put, ns, f"key{i}", value={"foo": "bar" + str(i)}),
                    pool.submit(store.get, ns, f"key{i}"),
                    pool.submit(store.list_namespaces, prefix=None, max_depth=m + 1),
                    pool.submit(store.search, (root,)),
                    pool.submit(store.put, ns, f"key{i}", value={"foo": "bar" + str(i)}),
                    pool.submit(store.put, ns, f"key{i}", None),
                ]
        results = await asyncio.gather(*(asyncio.wrap_future(future) for future in futures))
    assert len(results) == LARGE_M * LARGE_N * 6


@pytest.mark.anyio
async def test_large_batches_async(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_large_batches_async (scaled down)."""
    store = shared_pg_store
    calls = []
    for m in range(LARGE_M):
        ns = (root, "foo", "bar", "baz", str(m % 2))
        for i in range(LARGE_N):
            calls += [
                store.aput(ns, f"key{i}", value={"foo": "bar" + str(i)}),
                store.aget(ns, f"key{i}"),
                store.alist_namespaces(prefix=None, max_depth=m + 1),
                store.asearch((root,)),
                store.aput(ns, f"key{i}", value={"foo": "bar" + str(i)}),
                store.adelete(ns, f"key{i}"),
            ]
    results = await asyncio.gather(*calls)
    assert len(results) == LARGE_M * LARGE_N * 6


# ----------------------------------------------------------------- batches


@pytest.mark.anyio
async def test_abatch_order(pg_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_abatch_order."""
    store = pg_store
    await store.aput(("test", "foo"), "key1", {"data": "value1"})
    await store.aput(("test", "bar"), "key2", {"data": "value2"})

    results = await store.abatch([
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
    assert isinstance(results[3], list)
    assert ("test", "foo") in results[3] and ("test", "bar") in results[3]
    assert results[4] is None

    results = await store.abatch([
        SearchOp(("test",), filter=None, limit=5, offset=0),
        GetOp(("test", "bar"), "key2"),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
        PutOp(("test",), "key3", {"data": "value3"}),
        GetOp(("test", "foo"), "key1"),
    ])
    assert len(results) == 5
    assert isinstance(results[0], list) and len(results[0]) == 2
    got = results[1]
    assert isinstance(got, Item) and (got.value, got.key) == ({"data": "value2"}, "key2")
    assert isinstance(results[2], list)
    assert ("test", "foo") in results[2] and ("test", "bar") in results[2]
    assert results[3] is None
    got = results[4]
    assert isinstance(got, Item) and (got.value, got.key) == ({"data": "value1"}, "key1")


@pytest.mark.anyio
async def test_batch_get_ops(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_batch_get_ops."""
    store = shared_pg_store
    await store.aput((root,), "key1", {"data": "value1"})
    await store.aput((root,), "key2", {"data": "value2"})
    results = await store.abatch([GetOp((root,), "key1"), GetOp((root,), "key2"), GetOp((root,), "key3")])
    assert len(results) == 3
    assert results[0] is not None and results[1] is not None and results[2] is None
    assert results[0].key == "key1" and results[1].key == "key2"


@pytest.mark.anyio
async def test_batch_put_ops(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_batch_put_ops."""
    store = shared_pg_store
    results = await store.abatch([
        PutOp((root,), "key1", {"data": "value1"}),
        PutOp((root,), "key2", {"data": "value2"}),
        PutOp((root,), "key3", None),
    ])
    assert results == [None, None, None]
    assert len(await store.asearch([root], limit=10)) == 2  # type: ignore[arg-type]  # a list, as upstream


@pytest.mark.anyio
async def test_batch_search_ops(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_batch_search_ops."""
    store = shared_pg_store
    await store.aput((root, "foo"), "key1", {"data": "value1"})
    await store.aput((root, "bar"), "key2", {"data": "value2"})
    results = await store.abatch([
        SearchOp((root,), filter={"data": "value1"}, limit=10, offset=0),
        SearchOp((root,), filter=None, limit=5, offset=0),
    ])
    assert len(results) == 2
    assert len(results[0]) == 1  # the filtered search
    assert len(results[1]) == 2  # everything


@pytest.mark.anyio
async def test_batch_list_namespaces_ops(pg_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_batch_list_namespaces_ops."""
    await pg_store.aput(("test", "namespace1"), "key1", {"data": "value1"})
    await pg_store.aput(("test", "namespace2"), "key2", {"data": "value2"})
    results = await pg_store.abatch([ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0)])
    assert len(results) == 1
    assert len(results[0]) == 2
    assert ("test", "namespace1") in results[0] and ("test", "namespace2") in results[0]


# ----------------------------------------------------------------- vector search (index=...)


@pytest.fixture(scope="module")
def vector_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MnemosyneStore]:
    """One PostgreSQL-backed store embedding whole values with the toy model, shared by the module's vector tests.

    Upstream's is fresh per test and they write under ``("test",)``; here each writes under its own ``root``.
    """
    yield from shared_store(tmp_path_factory, "postgresql", index=index_config(CharacterEmbeddings()))


@pytest.mark.anyio
async def test_vector_store_initialization(vector_store: MnemosyneStore, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_vector_store_initialization."""
    assert vector_store.index_config is not None  # type: ignore[attr-defined]
    assert vector_store.index_config["dims"] == fake_embeddings.dims  # type: ignore[attr-defined]
    if isinstance(vector_store.index_config["embed"], Embeddings):  # type: ignore[attr-defined]
        assert vector_store.index_config["embed"] == fake_embeddings  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_vector_insert_with_auto_embedding(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_vector_insert_with_auto_embedding."""
    for key, value in [("doc1", {"text": "short text"}), ("doc2", {"text": "longer text document"}),
                       ("doc3", {"text": "longest text document here"}),
                       ("doc4", {"description": "text in description field"}),
                       ("doc5", {"content": "text in content field"}), ("doc6", {"body": "text in body field"})]:
        await vector_store.aput((root,), key, value)
    keys = [r.key for r in await vector_store.asearch((root,), query="long text")]
    assert keys
    assert "doc2" in keys and "doc3" in keys


@pytest.mark.anyio
async def test_vector_update_with_embedding(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_vector_update_with_embedding."""
    store = vector_store
    await store.aput((root,), "doc1", {"text": "zany zebra Xerxes"})
    await store.aput((root,), "doc2", {"text": "something about dogs"})
    await store.aput((root,), "doc3", {"text": "text about birds"})
    before = await store.asearch((root,), query="Zany Xerxes")
    assert before and before[0].key == "doc1"
    first_score = before[0].score

    await store.aput((root,), "doc1", {"text": "new text about dogs"})
    after = next((r.score for r in await store.asearch((root,), query="Zany Xerxes") if r.key == "doc1"), 0.0)
    assert after < first_score  # type: ignore[operator]
    for r in await store.asearch((root,), query="new text about dogs"):
        if r.key == "doc1":
            assert r.score > after  # type: ignore[operator]

    await store.aput((root,), "doc4", {"text": "new text about dogs"}, index=False)
    assert all(r.key != "doc4" for r in await store.asearch((root,), query="new text about dogs", limit=3))


@pytest.mark.anyio
async def test_vector_search_with_filters(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_vector_search_with_filters."""
    store = vector_store
    for key, value in [("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
                       ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
                       ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
                       ("doc4", {"text": "blue car", "color": "blue", "score": 3.5})]:
        await store.aput((root,), key, value)
    results = await store.asearch((root,), query="apple", filter={"color": "red"})
    assert len(results) == 2 and results[0].key == "doc1"
    results = await store.asearch((root,), query="car", filter={"color": "red"})
    assert len(results) == 2 and results[0].key == "doc2"
    results = await store.asearch((root,), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
    assert len(results) == 3 and results[0].key == "doc4"
    results = await store.asearch((root,), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    assert len(results) == 1 and results[0].key == "doc3"


@pytest.mark.anyio
async def test_vector_search_pagination(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_vector_search_pagination."""
    for i in range(5):
        await vector_store.aput((root,), f"doc{i}", {"text": f"test document number {i}"})
    first = await vector_store.asearch((root,), query="test", limit=2)
    second = await vector_store.asearch((root,), query="test", limit=2, offset=2)
    assert len(first) == 2 and len(second) == 2
    assert first[0].key != second[0].key
    assert len(await vector_store.asearch((root,), query="test", limit=10)) == 5


@pytest.mark.anyio
async def test_vector_search_edge_cases(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_vector_search_edge_cases.

    No query (empty or None) means no score; any real query scores below the best match.
    """
    await vector_store.aput((root,), "doc1", {"text": "test document"})
    perfect = (await vector_store.asearch((root,), query="text test document"))[0].score

    for query in ["", None]:
        results = await vector_store.asearch((root,), query=query)
        assert len(results) == 1 and results[0].score is None, query
    for query in ["foo " * 100, "test!@#$%^&*()"]:
        results = await vector_store.asearch((root,), query=query)
        assert len(results) == 1 and results[0].score < perfect, query  # type: ignore[operator]


@pytest.mark.anyio
async def test_embed_with_path(new_pg_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_embed_with_path (its cosine case)."""
    store = new_pg_store(index=index_config(fake_embeddings, ["key0", "key1", "key3"]))
    await store.aput(("test",), "doc1", {"key1": "xxx", "key2": "yyy", "key3": "zzz"})
    await store.aput(("test",), "doc2", {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"})

    results = await store.asearch(("test",), query="xxx")
    assert len(results) == 2 and results[0].key != results[1].key
    top, other = results[0].score, results[1].score
    assert top == pytest.approx(other, abs=1e-3)

    results = await store.asearch(("test",), query="uuu")
    assert len(results) == 2 and results[0].key != results[1].key
    assert results[0].key == "doc2" and results[0].score > results[1].score  # type: ignore[operator]
    assert top == pytest.approx(results[0].score, abs=1e-3)

    results = await store.asearch(("test",), query="www")
    assert len(results) == 2
    assert results[0].score < top and results[1].score < top  # type: ignore[operator]


@pytest.mark.anyio
async def test_search_sorting(new_pg_store: StoreFactory, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_search_sorting (its cosine case).

    The one match ranks first among 200 non-matches on both sides of it in namespace order.
    """
    store = new_pg_store(index=index_config(fake_embeddings, ["key1"]))
    await store.aput(("test", "M"), "M", {"key1": "mmm"})
    for i in range(100):
        await store.aput(("test", "A"), f"A{i}", {"key1": "no"})
    for i in range(100):
        await store.aput(("test", "Z"), f"Z{i}", {"key1": "no"})
    results = await store.asearch(("test",), query="mmm", limit=10)
    assert len(results) == 10
    assert len({r.key for r in results}) == 10
    assert results[0].key == "M"
    assert results[0].score > results[1].score  # type: ignore[operator]


@pytest.mark.anyio
async def test_store_ttl(new_pg_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_store_ttl (durations quartered)."""
    store = new_pg_store(ttl={"default_ttl": TTL_MINUTES, "refresh_on_read": True,
                              "sweep_interval_minutes": TTL_MINUTES / 2})
    ns = ("foo",)
    store.start_ttl_sweeper()  # type: ignore[attr-defined]
    await store.aput(ns, key="item1", value={"foo": "bar"}, ttl=TTL_MINUTES)
    await asyncio.sleep((6 - 2) * QUARTER)
    assert await store.aget(ns, key="item1", refresh_ttl=True) is not None
    await asyncio.sleep((6 - 2) * QUARTER)
    assert len(await store.asearch(ns, query="foo", refresh_ttl=True)) == 1
    await asyncio.sleep((6 - 2) * QUARTER)
    assert await store.aget(ns, key="item1", refresh_ttl=False) is not None
    await asyncio.sleep((6 - 1) * QUARTER)
    assert len(await store.asearch(ns, query="bar", refresh_ttl=False)) == 0
    store.stop_ttl_sweeper()  # type: ignore[attr-defined]
