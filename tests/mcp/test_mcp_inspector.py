"""End to end with the official MCP Inspector CLI (npm ``@modelcontextprotocol/inspector``).

A client we did not write drives a real ``mnem-mcp`` over stdio on both
protocol eras.  ``bin/install-inspector`` puts the CLI (and the Node 22 it
needs) under ``.cache/npm/``; CI runs it before the tests, so a missing CLI
fails here instead of skipping.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from mcp_support import MNEM_MCP, server_env

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / ".cache" / "npm" / "bin" / "mcp-inspector"


#: The inspector's exit status when the tool answered ``isError: true`` (it still prints the result).
TOOL_IS_ERROR = 5


def inspect(store: Path, era: str, method: str, *options: str, status: int = 0) -> Any:
    """One inspector run against ``mnem-mcp --store store``; its JSON result."""
    if not INSPECTOR.exists():
        pytest.fail(f"the MCP Inspector CLI is not installed at {INSPECTOR}: run bin/install-inspector")
    argv = [str(INSPECTOR), "--cli", "-q", "--format", "json", "--protocol-era", era, "--method", method, *options,
            "--", MNEM_MCP, "--store", pg_stores.address(store)]
    done = subprocess.run(argv, capture_output=True, text=True, env=server_env(), timeout=120)
    assert done.returncode == status, done.stderr
    return json.loads(done.stdout)["result"]


def call_tool(store: Path, era: str, tool: str, status: int = 0, **arguments: Any) -> Any:
    """``tools/call`` through the inspector; the whole CallToolResult as JSON."""
    return inspect(store, era, "tools/call", "--tool-name", tool, "--tool-args-json", json.dumps(arguments),
                   status=status)


def test_the_inspector_lists_tools_and_traces_a_belief(store: Path) -> None:
    listed = inspect(store, "legacy", "tools/list")
    assert {tool["name"] for tool in listed["tools"]} == {
        "remember", "revise", "remember_many", "forget", "recall", "recall_at", "history", "why", "when_did",
        "whats_new"}
    assert all(tool["outputSchema"]["type"] == "object" for tool in listed["tools"]
               if tool["name"] not in ("recall", "recall_at"))  # a node, null or {id: node}: no one object schema

    remembered = call_tool(store, "modern", "remember", id="customer-4821", content="downgraded to Pro last month",
                           source="billing-note-8842", step="step-31")
    assert remembered["isError"] is False
    commit = remembered["structuredContent"]["commit"]
    assert remembered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mnem"

    recalled = call_tool(store, "legacy", "recall", id="customer-4821")
    assert recalled["structuredContent"]["content"] == "downgraded to Pro last month"
    assert json.loads(recalled["content"][0]["text"]) == recalled["structuredContent"]

    why = call_tool(store, "modern", "why", id="customer-4821")["structuredContent"]
    assert why["commit"] == commit
    assert why["node"]["provenance"]["source"] == "billing-note-8842"
    assert why["node"]["provenance"]["agent_step"] == "step-31"

    unknown = call_tool(store, "legacy", "why", status=TOOL_IS_ERROR, id="ghost")
    assert unknown["isError"] is True and unknown["content"][0]["text"].startswith("invalid_ref: ")
