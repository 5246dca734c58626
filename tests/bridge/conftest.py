"""Fixtures for the bridge tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import MNEM

import mnem_bridge


@pytest.fixture
def bstore(tmp_path: Path) -> Iterator[mnem_bridge.Store]:
    """A fresh store opened through the bridge, on this project's ``mnem``."""
    with mnem_bridge.init(tmp_path / "store", client=mnem_bridge.Mnem(MNEM)) as store:
        yield store
