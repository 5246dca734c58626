"""LangGraph's AsyncPostgresStore suite, run against MnemosyneStore's async methods on a PostgreSQL-backed store.

Ported from langgraph's ``libs/checkpoint-postgres/tests/test_async_store.py``:
each test is named after the upstream test it restates, with the same checks.
Stores are chosen as in test_ported_postgres_store.py (a shared store and a
``root`` label where the checks stay in the test's namespaces; one vector
store per pgvector type and distance and module, each test under its own
``root``, where upstream made a fresh store per test).  What was left out or
changed, and why: docs/langgraph-ported.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import shared_checks as shared
from fake_embeddings import CharacterEmbeddings, pg_index
from langchain_core.embeddings import Embeddings
from langgraph.store.base import Item
from manual_clock import ManualClock, eventually
from store_support import StoreFactory

from mnem_langgraph import MnemosyneStore

pytest_plugins = ["ported_stores"]

#: Upstream's ``store`` fixture's TTL (6 s, in minutes); test_store_ttl moves the store's clock, never sleeping.
TTL_SECONDS = 6
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
    await shared.alarge_batches_async(shared_pg_store, root, LARGE_N, LARGE_M, tasks=False)


# ----------------------------------------------------------------- batches


@pytest.mark.anyio
async def test_abatch_order(pg_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_abatch_order."""
    store = pg_store
    await store.aput(("test", "foo"), "key1", {"data": "value1"})
    await store.aput(("test", "bar"), "key2", {"data": "value2"})

    results = await store.abatch(shared.order_first_ops("test"))
    shared.check_order_first_head(results)
    assert isinstance(results[2], list) and len(results[2]) == 1
    assert isinstance(results[3], list)
    assert ("test", "foo") in results[3] and ("test", "bar") in results[3]
    assert results[4] is None

    results = await store.abatch(shared.order_second_ops("test"))
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
    await shared.abatch_get_ops(shared_pg_store, root)


@pytest.mark.anyio
async def test_batch_put_ops(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_batch_put_ops."""
    await shared.abatch_put_ops(shared_pg_store, root, [root])  # a list, as upstream


@pytest.mark.anyio
async def test_batch_search_ops(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_batch_search_ops."""
    results = await shared.abatch_search(shared_pg_store, root)
    assert len(results[0]) == 1  # the filtered search
    assert len(results[1]) == 2  # everything


@pytest.mark.anyio
async def test_batch_list_namespaces_ops(pg_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_batch_list_namespaces_ops."""
    results = await shared.alist_two_namespaces(pg_store)
    assert len(results[0]) == 2
    assert ("test", "namespace1") in results[0] and ("test", "namespace2") in results[0]


# ----------------------------------------------------------------- vector search (index=...)


@pytest.fixture(scope="module", params=shared.PG_VARIANTS, ids=shared.variant_id)
def vector_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MnemosyneStore]:
    """The module's vector store of one pgvector type and distance (no TTL, as upstream's async fixture)."""
    yield from shared.pg_vector_store(tmp_path_factory, *request.param)


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
    await shared.avector_insert_with_auto_embedding(vector_store, (root,))


@pytest.mark.anyio
async def test_vector_update_with_embedding(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_vector_update_with_embedding."""
    await shared.avector_update_with_embedding(vector_store, (root,))


@pytest.mark.anyio
async def test_vector_search_with_filters(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_vector_search_with_filters."""
    store = vector_store
    for key, value in shared.FILTER_DOCS:
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
    await shared.avector_search_pagination(vector_store, (root,))


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
@pytest.mark.parametrize(("vector_type", "distance"), shared.PG_VARIANTS, ids=shared.PG_VARIANT_IDS)
async def test_embed_with_path(new_pg_store: StoreFactory, fake_embeddings: CharacterEmbeddings, vector_type: str,
                               distance: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_embed_with_path."""
    store = new_pg_store(index=pg_index(fake_embeddings, vector_type, distance, shared.PATH_FIELDS))
    exact, only_doc2, unembedded = await shared.asearch_by_path(store)
    top, other = exact[0].score, exact[1].score
    assert top == pytest.approx(other, abs=1e-3)
    assert top == pytest.approx(only_doc2[0].score, abs=1e-3)
    assert unembedded[0].score < top and unembedded[1].score < top  # type: ignore[operator]


@pytest.mark.anyio
@pytest.mark.parametrize(("vector_type", "distance"), shared.PG_VARIANTS, ids=shared.PG_VARIANT_IDS)
async def test_search_sorting(new_pg_store: StoreFactory, fake_embeddings: CharacterEmbeddings, vector_type: str,
                              distance: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_search_sorting.

    The one match ranks first among 200 non-matches on both sides of it in namespace order.
    """
    store = new_pg_store(index=pg_index(fake_embeddings, vector_type, distance, ["key1"]))
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
    """Upstream: libs/checkpoint-postgres/tests/test_async_store.py::test_store_ttl.

    Where upstream sleeps, the store's clock moves on as far; the sweeper
    wakes by the real clock, so the test waits for its commit.
    """
    clock = ManualClock()
    store = new_pg_store(ttl={"default_ttl": TTL_MINUTES, "refresh_on_read": True,
                              "sweep_interval_minutes": TTL_MINUTES / 2}, clock=clock)
    ns = ("foo",)
    store.start_ttl_sweeper()  # type: ignore[attr-defined]
    await store.aput(ns, key="item1", value={"foo": "bar"}, ttl=TTL_MINUTES)
    clock.advance(seconds=TTL_SECONDS - 2)
    assert await store.aget(ns, key="item1", refresh_ttl=True) is not None
    clock.advance(seconds=TTL_SECONDS - 2)
    assert len(await store.asearch(ns, query="foo", refresh_ttl=True)) == 1
    clock.advance(seconds=TTL_SECONDS - 2)
    assert await store.aget(ns, key="item1", refresh_ttl=False) is not None
    clock.advance(seconds=TTL_SECONDS - 1)
    assert len(await store.asearch(ns, query="bar", refresh_ttl=False)) == 0
    eventually(lambda: "expire foo:item1 (TTL ran out)" in [c.message for c in store.history(limit=1)],
               "the sweeper's commit")
    store.stop_ttl_sweeper()  # type: ignore[attr-defined]
