"""Opening and closing the ported suites' MnemosyneStores (used by ported_stores' fixtures and by test modules).

A plain module, not the fixture plugin: test modules import from it freely
(a module pytest loads as a plugin must not be imported before it is loaded).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from conftest import MNEM, new_store

from mnem_langgraph import MnemosyneStore

__all__ = ["StoreFactory", "open_store", "shared_store", "shut"]

#: Opens a fresh store with the given ``MnemosyneStore`` options (``index=...``, ``ttl=...``).
StoreFactory = Callable[..., MnemosyneStore]


def open_store(folder: Path, backend: str, **options: Any) -> MnemosyneStore:
    """A ``MnemosyneStore`` on a new, empty store on ``backend``; ``options`` go to the constructor as given."""
    new_store(folder, backend)
    return MnemosyneStore(pg_stores.address(folder), author="tester", mnem=MNEM, **options)


def shut(store: MnemosyneStore) -> None:
    """Stop the store's TTL sweeper, if it has one, then end its ``mnem`` worker."""
    try:
        stop = getattr(store, "stop_ttl_sweeper", None)
        if stop is not None:
            stop(5)
    finally:
        store.close()


def shared_store(tmp_path_factory: pytest.TempPathFactory, backend: str,
                 seed: Callable[[MnemosyneStore], object] | None = None, **options: Any) -> Iterator[MnemosyneStore]:
    """A store for a module-scoped fixture: opened, seeded, and its worker started before any test uses it.

    A worker a test's body started counts as that test's leftover (tests/conftest.py closes those), and the
    next test would have to start another; so the fixture reads once (or runs ``seed``) before yielding.
    """
    store = open_store(tmp_path_factory.mktemp("shared") / "store", backend, **options)
    try:
        store.list_namespaces()
        if seed is not None:
            seed(store)
        yield store
    finally:
        shut(store)
