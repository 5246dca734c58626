"""Test bodies that more than one ported LangGraph suite restates, written once.

Upstream's SQLite and PostgreSQL suites (and their sync and async halves, and
the BaseStore suite) repeat many tests word for word.  Each such body lives
here once; every ported test keeps its own name, docstring and fixture and
calls the body with its store and namespace (upstream's ``("test",)``, or the
test's own ``root`` on a shared store).  Where the suites' checks differ, the
difference is a parameter, or only the shared part (the data, the ops, the
checks of a result) is here.  Sync and async tests cannot share calls, so they
share their data and the checks of what their calls returned.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine, Iterator, Sequence
from typing import Any

import pytest
from fake_embeddings import CharacterEmbeddings, pg_index, similarity
from langgraph.store.base import GetOp, Item, ListNamespacesOp, MatchCondition, Op, PutOp, SearchItem, SearchOp
from manual_clock import ManualClock
from store_support import shared_store

from mnem_langgraph import MnemosyneStore

Namespace = tuple[str, ...]


# ----------------------------------------------------------------- batches


def order_first_ops(root: str) -> list[Op]:
    """The first batch of upstream's test_batch_order / test_abatch_order."""
    return [
        GetOp((root, "foo"), "key1"),
        PutOp((root, "bar"), "key2", {"data": "value2"}),
        SearchOp((root,), filter={"data": "value1"}, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        GetOp((root,), "key3"),
    ]


def order_second_ops(root: str) -> list[Op]:
    """The second batch of upstream's test_batch_order / test_abatch_order."""
    return [
        SearchOp((root,), filter=None, limit=5, offset=0),
        GetOp((root, "bar"), "key2"),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
        PutOp((root,), "key3", {"data": "value3"}),
        GetOp((root, "foo"), "key1"),
    ]


def check_order_first_head(results: list[Any]) -> None:
    """The checks of the first batch's results that the suites share: the count, the get's item, the put's None."""
    assert len(results) == 5
    got = results[0]
    assert isinstance(got, Item) and isinstance(got.value, dict)
    assert (got.value, got.key) == ({"data": "value1"}, "key1")
    assert results[1] is None


def check_order_second(results: list[Any]) -> None:
    """The checks of the second batch's results (as the PostgreSQL sync and SQLite async suites make them)."""
    assert len(results) == 5
    assert isinstance(results[0], list) and len(results[0]) >= 2
    got = results[1]
    assert isinstance(got, Item) and (got.value, got.key) == ({"data": "value2"}, "key2")
    assert isinstance(results[2], list) and len(results[2]) > 0
    assert results[3] is None
    got = results[4]
    assert isinstance(got, Item) and (got.value, got.key) == ({"data": "value1"}, "key1")


async def alarge_batches_async(store: MnemosyneStore, root: str, n: int, m: int, tasks: bool) -> None:
    """Upstream's test_large_batches_async: ``m`` rounds of ``n`` keys, six calls each, all gathered at once.

    ``tasks``: the three reads are wrapped in ``asyncio.create_task`` (as the SQLite suite has it).
    """
    def read(call: Coroutine[Any, Any, Any]) -> Awaitable[Any]:
        return asyncio.create_task(call) if tasks else call

    calls: list[Awaitable[Any]] = []
    for round_ in range(m):
        ns = (root, "foo", "bar", "baz", str(round_ % 2))
        for i in range(n):
            calls += [
                store.aput(ns, f"key{i}", value={"foo": "bar" + str(i)}),
                read(store.aget(ns, f"key{i}")),
                read(store.alist_namespaces(prefix=None, max_depth=round_ + 1)),
                read(store.asearch((root,))),
                store.aput(ns, f"key{i}", value={"foo": "bar" + str(i)}),
                store.adelete(ns, f"key{i}"),
            ]
    results = await asyncio.gather(*calls)
    assert len(results) == m * n * 6


def check_batch_get_ops(results: list[Any]) -> None:
    """The checks of test_batch_get_ops' batch (three gets, the third of a key never written)."""
    assert len(results) == 3
    assert results[0] is not None and results[1] is not None and results[2] is None
    assert results[0].key == "key1" and results[1].key == "key2"


def batch_get_ops(store: MnemosyneStore, root: str) -> None:
    """Upstream's test_batch_get_ops (sync)."""
    store.put((root,), "key1", {"data": "value1"})
    store.put((root,), "key2", {"data": "value2"})
    check_batch_get_ops(store.batch([GetOp((root,), "key1"), GetOp((root,), "key2"), GetOp((root,), "key3")]))


async def abatch_get_ops(store: MnemosyneStore, root: str) -> None:
    """Upstream's test_batch_get_ops (async)."""
    await store.aput((root,), "key1", {"data": "value1"})
    await store.aput((root,), "key2", {"data": "value2"})
    check_batch_get_ops(
        await store.abatch([GetOp((root,), "key1"), GetOp((root,), "key2"), GetOp((root,), "key3")]))


def put_ops(root: str) -> list[Op]:
    """test_batch_put_ops' batch: two writes and a delete."""
    return [
        PutOp((root,), "key1", {"data": "value1"}),
        PutOp((root,), "key2", {"data": "value2"}),
        PutOp((root,), "key3", None),  # a delete
    ]


def batch_put_ops(store: MnemosyneStore, root: str) -> None:
    """Upstream's test_batch_put_ops (sync)."""
    results = store.batch(put_ops(root))
    assert results == [None, None, None]
    first, second, third = (store.get((root,), key) for key in ("key1", "key2", "key3"))
    assert first and first.value == {"data": "value1"}
    assert second and second.value == {"data": "value2"}
    assert third is None


async def abatch_put_ops(store: MnemosyneStore, root: str, prefix: Sequence[str]) -> None:
    """Upstream's test_batch_put_ops (async); ``prefix`` is the search's, a tuple or (as upstream) a list."""
    results = await store.abatch(put_ops(root))
    assert results == [None, None, None]
    assert len(await store.asearch(prefix, limit=10)) == 2  # type: ignore[arg-type]  # key3's None stored nothing


def batch_search_ops(store: MnemosyneStore, root: str) -> None:
    """Upstream's test_batch_search_ops (sync)."""
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


async def abatch_search(store: MnemosyneStore, root: str) -> list[Any]:
    """The writes and the batch of upstream's async test_batch_search_ops; its two results (checked by the caller)."""
    await store.aput((root, "foo"), "key1", {"data": "value1"})
    await store.aput((root, "bar"), "key2", {"data": "value2"})
    results = await store.abatch([
        SearchOp((root,), filter={"data": "value1"}, limit=10, offset=0),
        SearchOp((root,), filter=None, limit=5, offset=0),
    ])
    assert len(results) == 2
    return results


def batch_list_namespaces_ops(store: MnemosyneStore, public: str | tuple[str, ...]) -> None:
    """Upstream's sync test_batch_list_namespaces_ops; ``public``: the suffix condition's path, as each suite has it."""
    data = [
        (("test", "documents", "public"), "doc1", {"content": "public doc"}),
        (("test", "documents", "private"), "doc2", {"content": "private doc"}),
        (("test", "images", "public"), "img1", {"content": "public image"}),
        (("prod", "documents", "public"), "doc3", {"content": "prod doc"}),
    ]
    for ns, key, value in data:
        store.put(ns, key, value)
    results = store.batch([
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=2, limit=10, offset=0),
        ListNamespacesOp(match_conditions=(MatchCondition("suffix", public),),  # type: ignore[arg-type]
                         max_depth=None, limit=10, offset=0),
    ])
    assert len(results) == 3
    assert len(results[0]) == len(data)
    assert all(len(ns) <= 2 for ns in results[1])
    assert all(ns[-1] == "public" for ns in results[2])


async def alist_two_namespaces(store: MnemosyneStore) -> list[Any]:
    """The writes and the batch of upstream's async test_batch_list_namespaces_ops; its one result, unchecked."""
    await store.aput(("test", "namespace1"), "key1", {"data": "value1"})
    await store.aput(("test", "namespace2"), "key2", {"data": "value2"})
    results = await store.abatch([ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0)])
    assert len(results) == 1
    return results


# ----------------------------------------------------------------- plain store operations


def basic_store_ops(store: MnemosyneStore, root: str, clock: ManualClock, pause: float) -> None:
    """Upstream's test_basic_store_ops: put, get, update (``pause`` seconds later on the store's ``clock``), delete.

    The update's ``updated_at`` must be later than the first write's: the
    clock moved, so it is, however fast the machine.
    """
    ns, key = (root, "documents"), "doc1"
    value = {"title": "Test Document", "content": "Hello, World!"}
    store.put(ns, key, value)
    item = store.get(ns, key)
    assert item
    assert (item.namespace, item.key, item.value) == (ns, key, value)

    clock.advance(seconds=pause)
    updated = {"title": "Updated Document", "content": "Hello, Updated!"}
    store.put(ns, key, updated)
    again = store.get(ns, key)
    assert again.value == updated  # type: ignore[union-attr]
    assert again.updated_at > item.updated_at  # type: ignore[union-attr]
    assert store.get((root, "other_documents"), key) is None
    store.delete(ns, key)
    assert store.get(ns, key) is None


def list_namespaces(store: MnemosyneStore) -> None:
    """Upstream's test_list_namespaces (SqliteStore / PostgresStore), on a fresh store."""
    namespaces = [
        ("test", "documents", "public"), ("test", "documents", "private"),
        ("test", "images", "public"), ("test", "images", "private"),
        ("prod", "documents", "public"), ("prod", "documents", "private"),
    ]
    for ns in namespaces:
        store.put(ns, "dummy", {"content": "dummy"})
    assert len(store.list_namespaces()) == len(namespaces)
    under_test = store.list_namespaces(prefix=["test"])  # type: ignore[arg-type]  # a list, as upstream
    assert len(under_test) == 4 and all(ns[0] == "test" for ns in under_test)
    public = store.list_namespaces(suffix=["public"])  # type: ignore[arg-type]
    assert len(public) == 3 and all(ns[-1] == "public" for ns in public)
    assert all(len(ns) <= 2 for ns in store.list_namespaces(max_depth=2))
    assert len(store.list_namespaces(limit=3)) == 3
    for ns in namespaces:
        store.delete(ns, "dummy")


def search(store: MnemosyneStore, root: str) -> None:
    """Upstream's test_search (SqliteStore / PostgresStore)."""
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


def nested_namespaces(p: str) -> list[Namespace]:
    """The namespaces of upstream's test_list_namespaces_operations (sync) / test_list_namespaces (async)."""
    return [
        (p, "test", "documents", "public", p),
        (p, "test", "documents", "private", p),
        (p, "test", "images", "public", p),
        (p, "test", "images", "private", p),
        (p, "prod", "documents", "public", p),
        (p, "prod", "documents", "some", "nesting", "public", p),
        (p, "prod", "documents", "private", p),
    ]


def nested_queries(p: str) -> dict[str, dict[str, Any]]:
    """Those tests' list_namespaces calls, by name: the keyword arguments of each."""
    return {
        "test": {"prefix": (p, "test")},
        "test_documents": {"prefix": (p, "test", "documents")},
        "public": {"suffix": ("public", p)},
        "test_public": {"prefix": (p, "test"), "suffix": ("public", p)},
        "any_documents": {"prefix": (p, "*", "documents")},
        "any_public": {"suffix": ("*", "public", p)},
        "nested_public": {"suffix": ("some", "*", "public", p)},
        "depth_3": {"max_depth": 3},
        "depth_4_documents": {"max_depth": 4, "prefix": (p, "*", "documents")},
        "first_3": {"prefix": (p,), "limit": 3},
        "from_3": {"prefix": (p,), "offset": 3},
        "all": {"prefix": (p,)},
    }


def check_nested_listings(p: str, found: dict[str, list[Namespace]]) -> None:
    """Upstream's checks of the listings ``nested_queries`` names (their answers in ``found``)."""
    namespaces = nested_namespaces(p)
    listing = found["test"]
    assert len(listing) == 4 and all(ns[1] == "test" for ns in listing)
    listing = found["test_documents"]
    assert len(listing) == 2 and all(ns[1:3] == ("test", "documents") for ns in listing)
    listing = found["public"]
    assert len(listing) == 4 and all(ns[-2] == "public" for ns in listing)
    listing = found["test_public"]
    assert len(listing) == 2 and all(ns[1] == "test" and ns[-2] == "public" for ns in listing)
    listing = found["any_documents"]
    assert len(listing) == 5 and all(ns[2] == "documents" for ns in listing)
    listing = found["any_public"]
    assert len(listing) == 4 and all(ns[-2] == "public" for ns in listing)
    assert found["nested_public"] == [(p, "prod", "documents", "some", "nesting", "public", p)]
    assert all(len(ns) <= 3 for ns in found["depth_3"])
    listing = found["depth_4_documents"]
    assert len(set(listing)) == len(listing) == 5
    assert len(found["first_3"]) == 3
    assert len(found["from_3"]) == len(namespaces) - 3
    listing = found["all"]
    assert len(listing) == len(namespaces) and set(listing) == set(namespaces)


SEARCH_ITEMS_BASE = "test_search_items"
SEARCH_ITEMS = [
    ((SEARCH_ITEMS_BASE, "documents", "user1"), {"title": "Doc 1", "author": "John Doe", "tags": ["important"]}),
    ((SEARCH_ITEMS_BASE, "documents", "user2"), {"title": "Doc 2", "author": "Jane Smith", "tags": ["draft"]}),
    ((SEARCH_ITEMS_BASE, "reports", "department1"), {"title": "Report A", "author": "John Doe", "tags": ["final"]}),
    ((SEARCH_ITEMS_BASE, "reports", "department2"),
     {"title": "Report B", "author": "Alice Johnson", "tags": ["draft"]}),
]

#: upstream's test_search_items' searches, by name: the prefix and keyword arguments of each.
SEARCH_ITEMS_QUERIES: dict[str, tuple[Namespace, dict[str, Any]]] = {
    "docs": ((SEARCH_ITEMS_BASE, "documents"), {}),
    "reports": ((SEARCH_ITEMS_BASE, "reports"), {}),
    "first": ((SEARCH_ITEMS_BASE,), {"limit": 2, "offset": 0}),
    "second": ((SEARCH_ITEMS_BASE,), {"limit": 2, "offset": 2}),
    "all": ((SEARCH_ITEMS_BASE,), {}),
    "john": ((SEARCH_ITEMS_BASE,), {"filter": {"author": "John Doe"}}),
    "drafts": ((SEARCH_ITEMS_BASE,), {"filter": {"tags": ["draft"]}}),
}


def check_search_items(found: dict[str, list[SearchItem]]) -> None:
    """Upstream's search checks: by namespace, by page, by filter (a list value matches equal lists)."""
    docs = found["docs"]
    assert len(docs) == 2 and all(i.namespace[1] == "documents" for i in docs)
    reports = found["reports"]
    assert len(reports) == 2 and all(i.namespace[1] == "reports" for i in reports)
    first, second = found["first"], found["second"]
    assert len(first) == 2 and len(second) == 2
    assert {i.key for i in first}.isdisjoint({i.key for i in second})
    assert len(found["all"]) == 4
    john = found["john"]
    assert len(john) == 2 and all(i.value["author"] == "John Doe" for i in john)
    drafts = found["drafts"]
    assert len(drafts) == 2 and all("draft" in i.value["tags"] for i in drafts)


# ----------------------------------------------------------------- vector search (index=...)

AUTO_EMBED_DOCS = [
    ("doc1", {"text": "short text"}),
    ("doc2", {"text": "longer text document"}),
    ("doc3", {"text": "longest text document here"}),
    ("doc4", {"description": "text in description field"}),
    ("doc5", {"content": "text in content field"}),
    ("doc6", {"body": "text in body field"}),
]
FILTER_DOCS = [
    ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
    ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
    ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
    ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
]
#: The texts test_vector_update_with_embedding writes first, by key.
UPDATE_DOCS = [
    ("doc1", {"text": "zany zebra Xerxes"}),
    ("doc2", {"text": "something about dogs"}),
    ("doc3", {"text": "text about birds"}),
]


def check_auto_embedded(results: list[SearchItem]) -> None:
    """test_vector_insert_with_auto_embedding's checks of its search for "long text"."""
    keys = [r.key for r in results]
    assert keys
    assert "doc2" in keys and "doc3" in keys


def vector_insert_with_auto_embedding(store: MnemosyneStore, ns: Namespace) -> None:
    """Upstream's test_vector_insert_with_auto_embedding (sync), under ``ns``."""
    for key, value in AUTO_EMBED_DOCS:
        store.put(ns, key, value)
    check_auto_embedded(store.search(ns, query="long text"))


async def avector_insert_with_auto_embedding(store: MnemosyneStore, ns: Namespace) -> None:
    """Upstream's test_vector_insert_with_auto_embedding (async), under ``ns``."""
    for key, value in AUTO_EMBED_DOCS:
        await store.aput(ns, key, value)
    check_auto_embedded(await store.asearch(ns, query="long text"))


def first_score_of(before: list[SearchItem]) -> float:
    """test_vector_update_with_embedding's first check: doc1 ranks first for "Zany Xerxes"; its score."""
    assert before and before[0].key == "doc1"
    first_score = before[0].score
    assert first_score is not None
    return first_score


def doc1_score(results: list[SearchItem]) -> float | None:
    """doc1's score in ``results`` (0.0 when it is not there)."""
    return next((r.score for r in results if r.key == "doc1"), 0.0)


def check_updated_scores(first_score: float, after: float | None, again: list[SearchItem]) -> None:
    """After doc1 is rewritten: it matches its old text less, and its new text better."""
    assert after is not None and after < first_score
    for r in again:
        if r.key == "doc1":
            assert r.score is not None and r.score > after


def check_not_embedded(results: list[SearchItem]) -> None:
    """doc4, written with ``index=False``, is not among the top 3."""
    assert all(r.key != "doc4" for r in results)


def vector_update_with_embedding(store: MnemosyneStore, ns: Namespace) -> None:
    """Upstream's test_vector_update_with_embedding (sync), under ``ns``."""
    for key, value in UPDATE_DOCS:
        store.put(ns, key, value)
    first_score = first_score_of(store.search(ns, query="Zany Xerxes"))
    store.put(ns, "doc1", {"text": "new text about dogs"})
    after = doc1_score(store.search(ns, query="Zany Xerxes"))
    check_updated_scores(first_score, after, store.search(ns, query="new text about dogs"))
    store.put(ns, "doc4", {"text": "new text about dogs"}, index=False)  # stored, not embedded
    check_not_embedded(store.search(ns, query="new text about dogs", limit=3))


async def avector_update_with_embedding(store: MnemosyneStore, ns: Namespace) -> None:
    """Upstream's test_vector_update_with_embedding (async), under ``ns``."""
    for key, value in UPDATE_DOCS:
        await store.aput(ns, key, value)
    first_score = first_score_of(await store.asearch(ns, query="Zany Xerxes"))
    await store.aput(ns, "doc1", {"text": "new text about dogs"})
    after = doc1_score(await store.asearch(ns, query="Zany Xerxes"))
    check_updated_scores(first_score, after, await store.asearch(ns, query="new text about dogs"))
    await store.aput(ns, "doc4", {"text": "new text about dogs"}, index=False)
    check_not_embedded(await store.asearch(ns, query="new text about dogs", limit=3))


def check_pages(first: list[SearchItem], second: list[SearchItem]) -> None:
    """test_vector_search_pagination's checks of its two pages of two."""
    assert len(first) == 2 and len(second) == 2
    assert first[0].key != second[0].key


def put_numbered(store: MnemosyneStore, ns: Namespace) -> None:
    """test_vector_search_pagination's five documents (sync)."""
    for i in range(5):
        store.put(ns, f"doc{i}", {"text": f"test document number {i}"})


def vector_search_pagination(store: MnemosyneStore, ns: Namespace) -> None:
    """Upstream's test_vector_search_pagination (sync, as the BaseStore and PostgresStore suites have it)."""
    put_numbered(store, ns)
    check_pages(store.search(ns, query="test", limit=2), store.search(ns, query="test", limit=2, offset=2))
    assert len(store.search(ns, query="test", limit=10)) == 5


async def avector_search_pagination(store: MnemosyneStore, ns: Namespace) -> None:
    """Upstream's test_vector_search_pagination (async)."""
    for i in range(5):
        await store.aput(ns, f"doc{i}", {"text": f"test document number {i}"})
    check_pages(await store.asearch(ns, query="test", limit=2),
                await store.asearch(ns, query="test", limit=2, offset=2))
    assert len(await store.asearch(ns, query="test", limit=10)) == 5


#: test_vector_search_edge_cases' queries: empty, none, very long, punctuation.
EDGE_QUERIES = ["", None, "test " * 100, "test!@#$%^&*()"]


def vector_search_edge_cases(store: MnemosyneStore, ns: Namespace) -> None:
    """Upstream's test_vector_search_edge_cases (sync): every odd query finds the one document."""
    store.put(ns, "doc1", {"text": "test document"})
    for query in EDGE_QUERIES:
        assert len(store.search(ns, query=query)) == 1, query


async def avector_search_edge_cases(store: MnemosyneStore, ns: Namespace) -> None:
    """Upstream's test_vector_search_edge_cases (async, as the SQLite suite has it)."""
    await store.aput(ns, "doc1", {"text": "test document"})
    for query in EDGE_QUERIES:
        assert len(await store.asearch(ns, query=query)) == 1, query


#: pgvector's vector types and the distances upstream's PostgreSQL suites run each of them with.
PG_VECTOR_TYPES = ("vector", "halfvec")
PG_DISTANCES = ("l2", "inner_product", "cosine")
#: The async suite's ``vector_store`` variants: every type with every distance.
PG_VARIANTS = [(vector_type, distance) for vector_type in PG_VECTOR_TYPES for distance in PG_DISTANCES]
#: The TTL upstream's sync PostgreSQL suite opens its vector stores with (unless told not to).
PG_VECTOR_TTL = {"default_ttl": 2, "refresh_on_read": True}


def variant_id(variant: Sequence[object]) -> str:
    """A variant's test id, as upstream names them (``halfvec_l2``), with ``_no_ttl`` for a store without one."""
    return "_".join(str(part) for part in variant[:2]) + ("_no_ttl" if variant[2:] == (False,) else "")


#: PG_VARIANTS' test ids, for a ``parametrize`` over ``(vector_type, distance)``.
PG_VARIANT_IDS = [variant_id(variant) for variant in PG_VARIANTS]


def pg_vector_store(tmp_path_factory: pytest.TempPathFactory, vector_type: str, distance: str,
                    ttl: bool = False) -> Iterator[MnemosyneStore]:
    """One PostgreSQL-backed store embedding whole values with the toy model, shared by a module's vector tests.

    Opened with upstream's index config for ``vector_type`` and ``distance``, and, with ``ttl``, the sync
    fixture's 2-minute default TTL refreshed on read.  Upstream's is fresh per test and they write under
    ``("test",)``; here each writes under its own ``root``.
    """
    index = pg_index(CharacterEmbeddings(), vector_type, distance)
    yield from shared_store(tmp_path_factory, "postgresql", index=index, ttl=PG_VECTOR_TTL if ttl else None)


#: The store-level fields upstream's path tests embed, and test_embed_with_path's two documents
#: (doc1 has no key0: no error, and two vectors).
PATH_FIELDS = ["key0", "key1", "key3"]
PATH_DOCS = [
    ("doc1", {"key1": "xxx", "key2": "yyy", "key3": "zzz"}),
    ("doc2", {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"}),
]
#: test_embed_with_path_operation_config's two documents, each with the fields its put embeds.
PER_PUT_DOCS = [
    ("doc3", {"key0": "aaa", "key1": "bbb", "key2": "ccc", "key3": "ddd"}, ["key0", "key1"]),
    ("doc4", {"key0": "eee", "key1": "bbb", "key2": "fff", "key3": "ggg"}, ["key1", "key3"]),
]


async def asearch_by_path(store: MnemosyneStore) -> tuple[list[SearchItem], list[SearchItem], list[SearchItem]]:
    """The part the async SQLite and PostgreSQL suites' test_embed_with_path share; the three searches' results.

    Writes PATH_DOCS under ``("test",)``, searches "xxx" (both match exactly), "uuu" (only doc2 has it) and "www"
    (key2 is not embedded), and checks what both suites check of them; the callers check the scores.
    """
    for key, value in PATH_DOCS:
        await store.aput(("test",), key, value)
    exact = await store.asearch(("test",), query="xxx")
    assert len(exact) == 2 and exact[0].key != exact[1].key
    only_doc2 = await store.asearch(("test",), query="uuu")
    assert len(only_doc2) == 2 and only_doc2[0].key != only_doc2[1].key
    assert only_doc2[0].key == "doc2" and only_doc2[0].score > only_doc2[1].score  # type: ignore[operator]
    unembedded = await store.asearch(("test",), query="www")
    assert len(unembedded) == 2
    return exact, only_doc2, unembedded


#: The one item upstream's test_scores stores, with its index settings.
SCORED_DOC = {"key0": "aaa"}
#: test_scores' queries.
SCORED_QUERIES = ["aaa", "bbb", "ccc", "abcd", "poisson"]


def scored_store(tmp_path_factory: pytest.TempPathFactory, backend: str, index: dict[str, Any],
                 ttl: dict[str, Any] | None = None) -> Iterator[MnemosyneStore]:
    """A store on ``backend`` opened with ``index`` (whose fields are ``["key0"]``) and ``ttl``, holding only
    SCORED_DOC, for a module-scoped fixture shared by test_scores' queries."""
    yield from shared_store(tmp_path_factory, backend, index=index, ttl=ttl,
                            seed=lambda store: store.put(("test",), "doc", SCORED_DOC, index=["key0", "key1"]))


def scores(store: MnemosyneStore, embed: CharacterEmbeddings, query: str, distance: str = "cosine") -> None:
    """Upstream's test_scores: a search's score is the ``distance`` similarity of the query and the embedded field."""
    results = store.search((), query=query)
    expected = similarity(distance, embed.embed_query(query), embed.embed_query(SCORED_DOC["key0"]))
    assert len(results) == 1
    assert results[0].score == pytest.approx(expected, abs=1e-3)


NON_ASCII = {
    "1": "这是中文",  # Chinese
    "2": "これは日本語です",  # Japanese
    "3": "이건 한국어야",  # Korean
    "4": "Это русский",  # Russian
    "5": "यह रूसी है",  # Hindi
}


def non_ascii(store: MnemosyneStore, ns: Namespace) -> None:
    """Upstream's test_non_ascii: each text, searched for, ranks its own item first."""
    for key, text in NON_ASCII.items():
        store.put(ns, key, {"text": text})
    for key, text in NON_ASCII.items():
        assert store.search(ns, query=text)[0].key == key
