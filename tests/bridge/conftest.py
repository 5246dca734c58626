"""Fixtures for the bridge tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import MNEM

import mnem_bridge
from mnem_bridge.worker import WorkerRunner


@pytest.fixture
def bstore(tmp_path: Path) -> Iterator[mnem_bridge.Store]:
    """A fresh store opened through the bridge, on this project's ``mnem``; its client (and worker) closed after."""
    with mnem_bridge.Mnem(MNEM) as client, mnem_bridge.init(tmp_path / "store", client=client) as store:
        yield store


@pytest.fixture
def impatient_bstore(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[mnem_bridge.Store]:
    """Like ``bstore``, but its worker runs with ``MNEM_BUSY_TIMEOUT_MS=0``: a write on a locked store fails at once.

    The worker reads its environment when it starts, so the variable is set before the client exists; the
    worker's own environment is checked, so a test on this store cannot pass on the default 10 s wait.
    """
    monkeypatch.setenv("MNEM_BUSY_TIMEOUT_MS", "0")
    with mnem_bridge.Mnem(MNEM) as client, mnem_bridge.init(tmp_path / "store", client=client) as store:
        runner = client.runner
        assert isinstance(runner, WorkerRunner) and runner.pid is not None
        assert b"MNEM_BUSY_TIMEOUT_MS=0\0" in Path(f"/proc/{runner.pid}/environ").read_bytes()
        yield store
