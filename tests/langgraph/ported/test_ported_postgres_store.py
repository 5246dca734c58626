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
distance metric, with a 2-minute TTL but for the last) becomes one store per
variant and module, opened with upstream's ``index`` config
(``ann_index_config``'s ``vector_type``, ``distance_type``), each test
writing under its own ``root``; ``test_scores``' queries share one store per
variant holding its single item.  What was left out or changed, and why:
docs/langgraph-ported.md.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import shared_checks as shared
from fake_embeddings import CharacterEmbeddings, pg_index
from manual_clock import ManualClock, eventually
from store_support import StoreFactory

from mnem_langgraph import MnemosyneStore

pytest_plugins = ["ported_stores"]

#: Upstream's ``store`` fixture's TTL (6 s, in minutes); test_store_ttl moves the store's clock, never sleeping.
TTL_SECONDS = 6
TTL_MINUTES = TTL_SECONDS / 60

#: Upstream's ``vector_store`` variants: (vector type, distance, TTL), every type with every distance and a TTL,
#: then the last once more without one.
VECTOR_STORES = [(*variant, True) for variant in shared.PG_VARIANTS] + [("halfvec", "cosine", False)]
#: The variants upstream runs test_embed_with_path_sync, test_embed_with_path_operation_config and test_non_ascii in.
PATH_VARIANTS = [("vector", "cosine"), ("vector", "inner_product"), ("halfvec", "cosine"),
                 ("halfvec", "inner_product")]
#: The variants upstream runs test_scores in.
SCORE_VARIANTS = [("vector", "cosine"), ("vector", "inner_product"), ("halfvec", "l2")]


# ----------------------------------------------------------------- batches


def test_batch_order(pg_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_batch_order."""
    store = pg_store
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})

    results = store.batch(shared.order_first_ops("test"))
    shared.check_order_first_head(results)
    assert isinstance(results[2], list) and len(results[2]) == 1
    assert isinstance(results[3], list) and len(results[3]) > 0
    assert results[4] is None

    shared.check_order_second(store.batch(shared.order_second_ops("test")))


def test_batch_get_ops(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_batch_get_ops."""
    shared.batch_get_ops(shared_pg_store, root)


def test_batch_put_ops(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_batch_put_ops."""
    shared.batch_put_ops(shared_pg_store, root)


def test_batch_search_ops(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_batch_search_ops."""
    shared.batch_search_ops(shared_pg_store, root)


def test_batch_list_namespaces_ops(pg_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_batch_list_namespaces_ops."""
    # Upstream's path here is the bare string "public", not a tuple: kept as it is.
    shared.batch_list_namespaces_ops(pg_store, "public")


def test_basic_store_ops(new_pg_store: StoreFactory, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_basic_store_ops.

    Upstream updates at once; here the store's clock moves on 1 ms first, as
    item times are commit times in milliseconds (two commits in one
    millisecond share a time).
    """
    clock = ManualClock()
    shared.basic_store_ops(new_pg_store(clock=clock), root, clock, pause=0.001)


def test_list_namespaces(pg_store: MnemosyneStore) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_list_namespaces."""
    shared.list_namespaces(pg_store)


def test_search(shared_pg_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_search."""
    shared.search(shared_pg_store, root)


# ----------------------------------------------------------------- vector search (index=...)


@pytest.fixture(scope="module", params=VECTOR_STORES, ids=shared.variant_id)
def vector_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MnemosyneStore]:
    """The module's vector store of one variant: see shared_checks.pg_vector_store."""
    yield from shared.pg_vector_store(tmp_path_factory, *request.param)


def test_vector_store_initialization(vector_store: MnemosyneStore, fake_embeddings: CharacterEmbeddings) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_vector_store_initialization."""
    assert vector_store.index_config is not None  # type: ignore[attr-defined]
    assert vector_store.index_config["dims"] == fake_embeddings.dims  # type: ignore[attr-defined]
    assert vector_store.index_config["embed"] == fake_embeddings  # type: ignore[attr-defined]


def test_vector_insert_with_auto_embedding(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_vector_insert_with_auto_embedding."""
    shared.vector_insert_with_auto_embedding(vector_store, (root,))


def test_vector_update_with_embedding(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_vector_update_with_embedding."""
    shared.vector_update_with_embedding(vector_store, (root,))


@pytest.mark.parametrize("refresh_ttl", [True, False])
def test_vector_search_with_filters(vector_store: MnemosyneStore, root: str, refresh_ttl: bool) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_vector_search_with_filters."""
    store = vector_store
    for key, value in shared.FILTER_DOCS:
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
    shared.vector_search_pagination(vector_store, (root,))


def test_vector_search_edge_cases(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_vector_search_edge_cases."""
    shared.vector_search_edge_cases(vector_store, (root,))


@pytest.mark.parametrize(("vector_type", "distance"), PATH_VARIANTS, ids=map(shared.variant_id, PATH_VARIANTS))
def test_embed_with_path_sync(new_pg_store: StoreFactory, fake_embeddings: CharacterEmbeddings, vector_type: str,
                              distance: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_embed_with_path_sync."""
    store = new_pg_store(index=pg_index(fake_embeddings, vector_type, distance, shared.PATH_FIELDS),
                         ttl=shared.PG_VECTOR_TTL)
    for key, value in shared.PATH_DOCS:
        store.put(("test",), key, value)

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


@pytest.mark.parametrize(("vector_type", "distance"), PATH_VARIANTS, ids=map(shared.variant_id, PATH_VARIANTS))
def test_embed_with_path_operation_config(new_pg_store: StoreFactory, fake_embeddings: CharacterEmbeddings,
                                          vector_type: str, distance: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_embed_with_path_operation_config."""
    store = new_pg_store(index=pg_index(fake_embeddings, vector_type, distance, ["key17"]),
                         ttl=shared.PG_VECTOR_TTL)
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
    assert results[0].score == pytest.approx(results[1].score, abs=1e-3)

    results = store.search(("test",), query="ccc")
    assert len(results) == 2 and all(r.score < 0.9 for r in results)  # type: ignore[operator]

    store.put(("test",), "doc5", {"key0": "hhh", "key1": "iii"}, index=False)
    results = store.search(("test",))
    assert len(results) == 3
    assert all(r.score is None for r in results), f"{results}"
    assert any(r.key == "doc5" for r in results)


@pytest.fixture(scope="module", params=SCORE_VARIANTS, ids=shared.variant_id)
def scored_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MnemosyneStore]:
    """A store of one variant holding only shared_checks.SCORED_DOC, shared by test_scores' queries (each only
    searches)."""
    vector_type, distance = request.param
    yield from shared.scored_store(tmp_path_factory, "postgresql", pg_index(
        CharacterEmbeddings(), vector_type, distance, ["key0"]), shared.PG_VECTOR_TTL)


@pytest.mark.parametrize("query", shared.SCORED_QUERIES)
def test_scores(scored_store: MnemosyneStore, fake_embeddings: CharacterEmbeddings, query: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_scores.

    The score is the variant's similarity (cosine, inner product, minus the L2 distance) of the query and the one
    embedded field, within upstream's 1e-3, which also covers halfvec's rounding.
    """
    shared.scores(scored_store, fake_embeddings, query, scored_store.index_config["distance_type"])  # type: ignore[index]


def test_store_ttl(new_pg_store: StoreFactory) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_store_ttl.

    Reads with ``refresh_ttl=True`` keep an item alive; once nothing
    refreshes it, it is gone and the running sweeper removes it.  Where
    upstream sleeps, the store's clock moves on as far; the sweeper wakes by
    the real clock, so the test waits for its commit.
    """
    clock = ManualClock()
    store = new_pg_store(ttl={"default_ttl": TTL_MINUTES, "refresh_on_read": True,
                              "sweep_interval_minutes": TTL_MINUTES / 2}, clock=clock)
    store.start_ttl_sweeper()  # type: ignore[attr-defined]
    ns = ("foo",)
    store.put(ns, key="item1", value={"foo": "bar"}, ttl=TTL_MINUTES)
    clock.advance(seconds=TTL_SECONDS - 2)
    assert store.get(ns, key="item1", refresh_ttl=True) is not None
    clock.advance(seconds=TTL_SECONDS - 2)
    assert len(store.search(ns, query="foo", refresh_ttl=True)) == 1
    clock.advance(seconds=TTL_SECONDS - 2)
    assert store.get(ns, key="item1", refresh_ttl=False) is not None
    clock.advance(seconds=TTL_SECONDS - 1)  # since the last refresh: more than a TTL
    assert len(store.search(ns, query="bar", refresh_ttl=False)) == 0
    eventually(lambda: "expire foo:item1 (TTL ran out)" in [c.message for c in store.history(limit=1)],
               "the sweeper's commit")
    store.stop_ttl_sweeper()  # type: ignore[attr-defined]


@pytest.mark.parametrize("vector_store", [(*variant, True) for variant in PATH_VARIANTS], ids=shared.variant_id,
                         indirect=True)
def test_non_ascii(vector_store: MnemosyneStore, root: str) -> None:
    """Upstream: libs/checkpoint-postgres/tests/test_store.py::test_non_ascii.

    Upstream opens a fresh store of the variant (with the ``vector_store`` fixture's TTL); here the module's
    ``vector_store`` of that variant, under the test's own ``root``.
    """
    shared.non_ascii(vector_store, (root, "memories"))
