"""Fixtures for the LangGraph adapter tests: a fresh store, opened through the bridge, and a count of ``mnem`` calls.

Test modules load this module as a plugin, ``pytest_plugins =
["langgraph_fixtures"]``, rather than import the fixtures by name (a
parameter named like an imported fixture redefines it).  They are not in a
``conftest.py`` because this directory has no ``__init__.py`` (one would
make the directory a package named ``langgraph`` and shadow the real one),
and two ``conftest`` modules without packages collide.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import MNEM

import mnem_bridge
from mnem_langgraph import MnemosyneStore


@pytest.fixture
def store_root(tmp_path: Path) -> Path:
    """An initialised, empty store's root directory."""
    root = tmp_path / "memory"
    with mnem_bridge.Mnem(MNEM) as client:
        mnem_bridge.init(root, client=client).close()
    return root


@pytest.fixture
def mstore(store_root: Path) -> Iterator[MnemosyneStore]:
    """A ``MnemosyneStore`` on a fresh store, writing as ``tester``: a query is ADR-0016's substring filter."""
    with MnemosyneStore(store_root, author="tester", mnem=MNEM) as store:
        yield store


@pytest.fixture
def ranked_store(store_root: Path) -> Iterator[MnemosyneStore]:
    """``mstore`` opened with ``query_mode="bm25"``: a query ranks, as langmem's questions need."""
    with MnemosyneStore(store_root, author="tester", mnem=MNEM, query_mode="bm25") as store:
        yield store


#: The ``mnem`` verbs the ``verbs`` fixture tells apart in the bridge's echo log.
VERBS = ("stamps", "write", "touch", "similar", "embed", "ls", "show", "expire", "log", "status", "blame", "search",
         "namespaces")


class Verbs(logging.Handler):
    """The ``mnem`` verb of each echoed command line (``seen``), and the lines themselves (``lines``)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[str] = []
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        words = record.getMessage().split()
        self.lines.append(record.getMessage())
        self.seen.append(next((word for word in words if word in VERBS), " ".join(words[:4])))


@pytest.fixture
def verbs() -> Iterator[Verbs]:
    """The verb of every ``mnem`` call made meanwhile, from the bridge's echo log (what ``MNEM_ECHO=1`` shows)."""
    handler, echo = Verbs(), logging.getLogger("mnem_bridge.echo")
    level = echo.level
    echo.setLevel(logging.DEBUG)
    echo.addHandler(handler)
    try:
        yield handler
    finally:
        echo.removeHandler(handler)
        echo.setLevel(level)
