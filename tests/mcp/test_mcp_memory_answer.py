"""The memory over a session: every fact reaches the client, and the SDK's passes over a result never walk it.

The SDK shapes each result by dumping it, validating that dump against the
protocol's result model and dumping it again; for a 10k-fact ``recall`` that
took longer than the rest of the server's work (BENCHMARKS.md).  A memory
answer (``recall`` / ``recall_at``, whole or a page) is checked there as an
empty stand-in of its shape, and ``answers.MemoryPastChecks`` puts the
memory into the shaped result.  These hold that the client still gets the
answer it got before, text and structured content, in every era and over a
real stdio process, and that the stand-in is what the SDK's check saw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pg_stores
import pytest
from mcp.server import runner
from mcp.types import CallToolResult, TextContent
from mcp_support import MODES, Mode, connect

import mnem_bridge
from mnem_bridge import reserved

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", MODES)
async def test_the_memory_reaches_the_client_whole_past_the_sdks_result_passes(
        store: Path, mode: Mode, monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[tuple[str, Any]] = []  # what the server's result passes got of each tool result (in process only)
    shape = runner._dump_result  # the first of them: the server's dump of the result the tool returned

    def spy(result: Any) -> Any:
        if isinstance(result, CallToolResult):
            text = result.content[0]
            assert isinstance(text, TextContent)
            checked.append((text.text, result.structured_content))
        return shape(result)

    monkeypatch.setattr(runner, "_dump_result", spy)
    with mnem_bridge.open(pg_stores.address(store)) as bridge:
        bridge.write([{"id": f"fact-{i:03d}", "content": {"n": i, "ratio": i / 7, "text": "café ✓"}, "source": f"s{i}"}
                      for i in range(120)] + [{"id": "ünï", "content": [1e-05, None]}], message="facts")
        bridge.write([{"id": f"{reserved.CHECKPOINT_PREFIX}t1:c1", "content": {"step": 0}}], message="a checkpoint",
                     allow_reserved=True)
        head = bridge.head_commit()
        built = {node_id: node.to_dict() for node_id, node in reserved.visible(bridge.working_memory()).items()}
    assert head is not None and len(built) == 121
    # the checkpoint's node sorts first and is taken off the page: 49 facts of 50 nodes
    page = {"memory": dict(list(built.items())[:49]), "next_cursor": "fact-048"}
    async with connect(mode, pg_stores.address(store)) as client:
        answers = [(await client.call_tool("recall", {}), built),
                   (await client.call_tool("recall_at", {"commit": head}), built),
                   (await client.call_tool("recall", {"limit": 50}), page),
                   (await client.call_tool("why", {"id": "fact-007"}), None)]
    for result, expected in answers[:3]:
        assert not result.is_error and len(result.content) == 1
        assert result.content[0].text == orjson.dumps(expected).decode()
        assert result.structured_content == expected
    why = answers[3][0]
    assert why.structured_content is not None and why.structured_content["node"] == built["fact-007"]
    if mode != "stdio":
        assert checked[:3] == [("", {})] * 3  # the stand-in, not the memory
        assert checked[3] == (why.content[0].text, why.structured_content)  # any other result is checked itself
