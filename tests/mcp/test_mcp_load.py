"""Eight MCP clients of four ``mnem-mcp`` servers remember 2,000 facts on one store while readers watch.

Issue 8's load through the MCP layer: 4 server subprocesses over stdio,
two writing clients (250 ``remember`` calls each) and one reading client
(``recall``) per server, all at once.  The writers' last calls wait until
every reader has read ``MIN_READS`` states between the first write and the
last (``load_agents``), so the readers watch the writes however the cores
are shared.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import orjson
import pg_stores
import pytest
from load_agents import (
    HANG,
    MIN_READS,
    PER_WRITER,
    WRITERS,
    assert_every_write_landed_once,
    assert_readers_saw_only_whole_states,
    node_id,
    prefix_violation,
)
from mcp import Client
from mcp_support import connect

SERVERS = 4
MEMORY_URI = "mnem://memory"  # the memory resource
#: Seconds a reader rests between reads: ten whole-memory reads a second per server keep watch without starving the
#: writers of the two CPUs the suite runs on.
READ_PAUSE = 0.1


async def _mcp_writer(client: Client, number: int, gate: anyio.Event) -> None:
    """Remember ``PER_WRITER`` facts, the last once ``gate`` is set (the readers have watched enough writes)."""
    for seq in range(PER_WRITER):
        if seq == PER_WRITER - 1:
            await gate.wait()
        result = await client.call_tool("remember", {
            "id": node_id(number, seq), "content": {"writer": number, "seq": seq},
            "step": f"step {seq}", "source": f"writer {number}"})
        assert not result.is_error, result.content[0].text


async def _mcp_reader(client: Client, done: anyio.Event, report: dict[str, Any]) -> None:
    """Read the whole memory resource until the writers are done; note every state that is not whole.

    The resource, not the ``recall`` tool: the SDK client re-validates a tool's
    structured result against its output schema with ``jsonschema``, which for
    a 2,000-node memory costs the test process more CPU than the writers get.
    """
    largest = 0
    while not done.is_set():
        result = await client.read_resource(MEMORY_URI)
        memory = {key: node["content"] for key, node in orjson.loads(result.contents[0].text).items()}
        problem = prefix_violation(memory)
        if problem is not None or len(memory) < largest:
            report["errors"].append(problem or f"memory shrank from {largest} to {len(memory)} facts")
        largest = max(largest, len(memory))
        report["reads"] += 1
        report["between"] += 0 < len(memory) < WRITERS * PER_WRITER
        await anyio.sleep(READ_PAUSE)


@pytest.mark.anyio
async def test_eight_clients_of_four_mcp_servers_with_readers(store: Path) -> None:
    """Two writers and one reader per server; the servers are ``mnem-mcp`` subprocesses over stdio."""
    reports: list[dict[str, Any]] = [{"errors": [], "reads": 0, "between": 0} for _ in range(SERVERS)]
    done, gate = anyio.Event(), anyio.Event()
    address = pg_stores.address(store)
    async with connect("stdio", address) as c0, connect("stdio", address) as c1, \
            connect("stdio", address) as c2, connect("stdio", address) as c3:
        clients = [c0, c1, c2, c3]
        async with anyio.create_task_group() as readers:
            for client, report in zip(clients, reports, strict=True):
                readers.start_soon(_mcp_reader, client, done, report)
            started = time.monotonic()
            async with anyio.create_task_group() as writers:
                for number in range(WRITERS):
                    writers.start_soon(_mcp_writer, clients[number % SERVERS], number, gate)
                with anyio.fail_after(HANG):  # only a reader that never reads reaches it
                    while not all(report["between"] >= MIN_READS for report in reports):
                        await anyio.sleep(READ_PAUSE)
                gate.set()  # every reader read states between the first write and the last: the last writes go
            done.set()
    print(f"mcp load: {WRITERS}x{PER_WRITER} remembers over {SERVERS} servers in {time.monotonic() - started:.1f} s, "
          f"reads {[report['reads'] for report in reports]}")
    assert_readers_saw_only_whole_states(reports)
    assert_every_write_landed_once(store)
