"""Fixtures for the ported LangGraph store suites: MnemosyneStores where upstream had its own stores.

Test modules here load this module as a plugin (``pytest_plugins =
["ported_stores"]``), as tests/langgraph loads ``langgraph_fixtures``; the
fixture names differ from tests/conftest.py's (``store``, ``sqlite_store``)
so neither shadows the other.

* ``new_lite_store`` / ``new_pg_store``: a factory opening a fresh store (on
  SQLite, or on the tests' PostgreSQL server) with the given
  ``MnemosyneStore`` options (``index=...``, ``ttl=...``); every store it
  opened is closed at teardown, its TTL sweeper stopped first.
* ``lite_store`` / ``pg_store``: one fresh plain store, for the tests whose
  checks look at the whole store (every namespace, every item).
* ``shared_lite_store`` / ``shared_pg_store``: one plain store per module,
  for the tests whose checks stay inside their own namespaces; such a test
  takes ``root``, a first label no other test uses, in place of upstream's
  fixed ``"test"``.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_embeddings import DIMS, CharacterEmbeddings
from store_support import StoreFactory, open_store, shared_store, shut

from mnem_langgraph import MnemosyneStore

_numbers = itertools.count()


def _factory(tmp_path: Path, backend: str) -> Iterator[StoreFactory]:
    opened: list[MnemosyneStore] = []

    def make(**options: object) -> MnemosyneStore:
        store = open_store(tmp_path / f"{backend}-{next(_numbers)}", backend, **options)
        opened.append(store)
        return store

    yield make
    for store in reversed(opened):
        shut(store)


@pytest.fixture
def new_lite_store(tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens fresh SQLite-backed stores: ``new_lite_store(index=..., ttl=...)``."""
    yield from _factory(tmp_path, "sqlite")


@pytest.fixture
def new_pg_store(tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens fresh PostgreSQL-backed stores: ``new_pg_store(index=..., ttl=...)``."""
    yield from _factory(tmp_path, "postgresql")


@pytest.fixture
def lite_store(new_lite_store: StoreFactory) -> MnemosyneStore:
    """A fresh, plain SQLite-backed store."""
    return new_lite_store()


@pytest.fixture
def pg_store(new_pg_store: StoreFactory) -> MnemosyneStore:
    """A fresh, plain PostgreSQL-backed store."""
    return new_pg_store()


@pytest.fixture(scope="module")
def shared_lite_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MnemosyneStore]:
    """A plain SQLite-backed store shared by a module's tests (each in its own ``root``)."""
    yield from shared_store(tmp_path_factory, "sqlite")


@pytest.fixture(scope="module")
def shared_pg_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MnemosyneStore]:
    """A plain PostgreSQL-backed store shared by a module's tests (each in its own ``root``)."""
    yield from shared_store(tmp_path_factory, "postgresql")


@pytest.fixture
def root() -> str:
    """A first namespace label no other test uses, for a test on a shared store."""
    return f"t{uuid.uuid4().hex[:12]}"


@pytest.fixture
def fake_embeddings() -> CharacterEmbeddings:
    """The toy embedding model, at upstream's width (500)."""
    return CharacterEmbeddings(dims=DIMS)

