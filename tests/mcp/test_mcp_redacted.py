"""The local secret test (issue #47): a secret an agent remembered over MCP is redacted, and gone.

A real ``mnem-mcp`` over stdio keeps the store open throughout (on SQLite,
so the WAL outlives each ``mnem`` call).  The agent remembers a secret,
revises another fact on top, and a branch is made; then ``mnem redact``
removes the secret's version.  Afterwards no file of the store holds the
secret or its stored bytes, every commit id is what it was, ``verify``
passes, and the same server's ``recall``, ``recall_at``, ``why`` and resources answer
the version's record (who, when, why) in place of the value: the result
shapes are the ADR's, with the ``redacted`` key added to the node.
"""

from __future__ import annotations

import json
from pathlib import Path

import pg_stores
import pytest
from mcp_support import call, connect
from mnem_history import ok
from redaction_support import files, stored

pytestmark = pytest.mark.anyio

SECRET = "ghp_4e7Qm2LrT9xZb1VcN8sKd3Hf6Jy0Wp5Ua7Go"


async def test_a_secret_remembered_over_mcp_is_redacted_from_history_and_every_id_stays(store: Path) -> None:
    async with connect("stdio", pg_stores.address(store), tools="all") as client:
        first = (await call(client, "remember", id="github-token", content={"token": SECRET},
                            source="chat-2291"))["commit"]
        await call(client, "remember", id="owner", content="dana")
        await call(client, "branch", name="before-rotation")
        history = [entry["id"] for entry in await call(client, "history")]
        raw = bytes.fromhex(ok("--json", "ls", "--objects", cwd=store).json["nodes"]["github-token"])
        packed = stored(store, raw)
        held = files(store)
        assert SECRET.encode() in held or packed in held  # the bytes are there: the check below can fail

        done = ok("--json", "--now", "1796000000000", "redact", "--node", "github-token", "--reason",
                  "token pasted into a chat", "--by", "security@acme", cwd=store).json
        assert [record["object"] for record in done["records"]] == [raw.hex()] and done["complete"]

        held = files(store)
        assert SECRET.encode() not in held and packed not in held
        assert [entry["id"] for entry in await call(client, "history")] == history
        marker = {"at": 1796000000000, "by": "security@acme", "reason": "token pasted into a chat"}
        for node in (await call(client, "recall", id="github-token"),
                     (await call(client, "recall_at", commit=first))["github-token"],
                     (await call(client, "why", id="github-token", at=first))["node"]):
            assert node["content"] is None and node["redacted"] == marker
            assert set(node) == {"id", "content", "content_kind", "provenance", "event_time", "redacted"}
        assert (await call(client, "recall", id="owner"))["content"] == "dana"
        for uri in ("mnem://memory/github-token", f"mnem://commit/{first}"):
            read = json.loads((await client.read_resource(uri)).contents[0].text)
            node = read if uri.startswith("mnem://memory/") else read["state"]["github-token"]
            assert node["content"] is None and node["redacted"] == marker and SECRET not in json.dumps(read)
    assert ok("--json", "verify", cwd=store).json["redacted"] == 1
    assert ok("--json", "show", "before-rotation", cwd=store).json["github-token"]["redacted"] == marker
