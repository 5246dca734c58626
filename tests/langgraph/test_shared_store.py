"""Threads and asyncio tasks sharing one MnemosyneStore lose nothing: one commit per put, every value kept."""

from __future__ import annotations

import asyncio
import threading

from mnem_langgraph import MnemosyneStore

#: The ``store_root`` and ``mstore`` fixtures (tests/langgraph has no conftest.py: see that module).
pytest_plugins = ["langgraph_fixtures"]

THREADS, PUTS = 6, 10


def test_threads_sharing_one_store(mstore: MnemosyneStore) -> None:
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(PUTS):
                mstore.put(("threads", f"t{n}"), f"k{i}", {"n": n, "i": i})
                assert mstore.get(("threads", f"t{n}"), f"k{i}").value == {"n": n, "i": i}
        except BaseException as exc:  # reported below with the others
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert len(mstore.history(limit=1000)) == THREADS * PUTS
    for n in range(THREADS):
        found = mstore.search(("threads", f"t{n}"), limit=100)
        assert sorted(item.value["i"] for item in found) == list(range(PUTS))


def test_asyncio_tasks_sharing_one_store(mstore: MnemosyneStore) -> None:
    async def main() -> None:
        await asyncio.gather(*(mstore.aput(("tasks",), f"k{i}", {"i": i}) for i in range(20)))
        items = await asyncio.gather(*(mstore.aget(("tasks",), f"k{i}") for i in range(20)))
        assert [item.value["i"] for item in items] == list(range(20))

    asyncio.run(main())
    assert len(mstore.history(limit=1000)) == 20
