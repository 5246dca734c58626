"""An MCP client drives ``mnem-mcp`` over stdio: remember, recall, and trace a misread belief.

A support agent reads ticket-4821 ("customer-4821 is on the Enterprise
plan"), then misreads billing note 8842 at step 31 and revises the belief to
"downgraded to Pro last month".  Through the server's tools alone, the client
recalls what the agent believes, asks ``why`` (the commit and provenance that
set it) and ``when_did`` (the first commit where it became true), and checks
that both point at the misread note.

Run it with the project installed:  python examples/mcp_client.py [STORE]
It starts ``mnem-mcp`` (as ``python -m mnem_mcp``) on a fresh store, a
temporary one unless a new folder STORE is given (keep it to look at the
memory afterwards: ``mnem ui --store STORE``), and exits non-zero if any
answer is not the expected one.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from typing import Any

from mcp import Client, StdioServerParameters

import mnem_bridge

CUSTOMER = "customer-4821"
ENTERPRISE = "on the Enterprise plan"
PRO = "downgraded to Pro last month"


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    """Call one tool and return its structured result, stopping on a tool error."""
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise SystemExit(f"{tool} failed: {result.content[0].text}")
    return result.structured_content


def short(commit: str) -> str:
    """A commit id as people read it."""
    return commit[:12]


def describe(node: dict[str, Any]) -> str:
    """A node as people read it: its content, then the provenance fields that are set."""
    labels = {"source": "source", "agent_step": "step", "observation": "observation", "tool_call": "tool call",
              "note": "note"}
    given = [f"{label} {node['provenance'][key]}" for key, label in labels.items() if node["provenance"][key]]
    return f"{json.dumps(node['content'])}  ({', '.join(given) or 'no provenance'})"


async def main(store: str) -> None:
    """Start the server on ``store``, drive it, print what happened, check every answer."""
    # The SDK gives the server a filtered environment: pass on what it needs to find `mnem`.
    env = {name: os.environ[name] for name in ("PATH", "MNEM_BIN") if name in os.environ}
    server = StdioServerParameters(command=sys.executable, args=["-m", "mnem_mcp", "--store", store], env=env)
    async with Client(server) as client:
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        print(f"mnem-mcp --store {store}")
        print(f"  protocol {client.protocol_version}; {len(tools)} tools: {', '.join(tools)}\n")

        print("1. The agent remembers what it reads: one commit per call")
        first = (await call(client, "remember", id=CUSTOMER, content=ENTERPRISE, source="ticket-4821",
                            summary="open the case"))["commit"]
        print(f"   {short(first)}  remember {CUSTOMER} = {json.dumps(ENTERPRISE)}  (source ticket-4821)")
        second = (await call(client, "revise", id=CUSTOMER, content=PRO, source="billing-note-8842", step="step-31",
                             summary="reconcile the plan tier"))["commit"]
        print(f"   {short(second)}  revise   {CUSTOMER} = {json.dumps(PRO)}  "
              "(source billing-note-8842, step step-31)\n")

        print("2. What does it believe now?  recall")
        memory = await call(client, "recall")
        for node_id, node in memory.items():
            print(f"   {node_id} = {describe(node)}")
        print()

        print(f"3. Why does it believe that?  why {CUSTOMER}")
        why = await call(client, "why", id=CUSTOMER)
        print(f"   commit {short(why['commit'])} set it: {describe(why['node'])}\n")

        print(f"4. Since when?  when_did {CUSTOMER} equals {json.dumps(PRO)}")
        found = await call(client, "when_did", id=CUSTOMER, equals=PRO)
        before = await call(client, "recall_at", commit=first, id=CUSTOMER)
        print(f"   first true at commit {short(found['commit'])}: {describe(found['blame']['node'])}")
        print(f"   before it, at {short(first)}: {describe(before)}\n")

        history = (await call(client, "history"))["result"]  # a list, structured as {"result": [...]}

    assert memory[CUSTOMER]["content"] == PRO, memory
    assert why["commit"] == second and why["node"]["provenance"]["source"] == "billing-note-8842", why
    assert why["node"]["provenance"]["agent_step"] == "step-31", why
    assert found["commit"] == second and found["blame"]["node"]["provenance"]["source"] == "billing-note-8842", found
    assert before["content"] == ENTERPRISE and before["provenance"]["source"] == "ticket-4821", before
    assert [c["id"] for c in history] == [second, first], history
    print("So the Pro belief was read from billing-note-8842 at step-31, replacing what ticket-4821 said:\n"
          "check that note, then `revise` or `forget` the belief.  All answers checked.")


if __name__ == "__main__":
    if len(sys.argv) > 1:  # a store to keep: a new (or empty) folder
        try:
            with mnem_bridge.init(sys.argv[1]):
                pass
        except mnem_bridge.MnemError as exc:
            sys.exit(f"error: {exc}\nGive a new or empty folder: the example tells its story to a fresh store "
                     f"(or open the one it made before with `mnem ui --store {sys.argv[1]}`).")
        asyncio.run(main(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory(prefix="mnem-mcp-example-") as directory:
            with mnem_bridge.init(directory):
                pass  # a fresh, empty store for the server to serve
            asyncio.run(main(directory))
