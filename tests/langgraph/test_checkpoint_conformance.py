"""``MnemosyneSaver`` passes LangGraph's checkpointer conformance suite, every capability, on both backends.

``langgraph-checkpoint-conformance`` drives a saver through its async API
only.  The sync run hands the suite a subclass whose ``a*`` methods call
the sync ones directly, so the same spec checks ``put``, ``get_tuple``,
``list``, ... themselves, not just their async twins.  One store per backend
serves the module: every spec test makes its own threads (random ids), and
each capability gets a fresh saver, as the suite asks.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from conftest import BACKENDS, MNEM, new_store
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

from mnem_langgraph import MnemosyneSaver


class SyncDriven(MnemosyneSaver):
    """A saver whose async methods run the sync ones as they are, so the async-only suite checks those."""

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.get_tuple(config)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.copy_thread(source_thread_id, target_thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        self.delete_for_runs(run_ids)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self.prune(thread_ids, strategy=strategy)


@pytest.fixture(scope="module", params=BACKENDS)
def address(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    folder: Path = new_store(tmp_path_factory.mktemp("checkpoints") / "memory", request.param)
    return pg_stores.address(folder)


@pytest.mark.parametrize("saver_class", [MnemosyneSaver, SyncDriven], ids=["async", "sync"])
def test_every_capability_passes(address: str, saver_class: type[MnemosyneSaver]) -> None:
    @checkpointer_test(name=saver_class.__name__)
    async def savers() -> AsyncGenerator[MnemosyneSaver, None]:
        saver = saver_class(address, author="tester", mnem=MNEM)
        try:
            yield saver
        finally:
            saver.close()

    report = asyncio.run(validate(savers))
    results = {name: (result.detected, result.passed, result.tests_passed, result.failures)
               for name, result in report.results.items()}
    assert set(results) == {capability.value for capability in ALL_CAPABILITIES}
    assert [name for name, (detected, *_) in results.items() if not detected] == [], "a capability not declared"
    assert {name: failures for name, (_, passed, _, failures) in results.items() if not passed} == {}
    assert all(count > 0 for _, _, count, _ in results.values())
