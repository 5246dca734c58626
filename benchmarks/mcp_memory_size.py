"""MCP calls as memory grows: ``mnem-mcp`` next to the reference memory server at 1k and 10k facts.

Three questions of issue #16, each with both servers loaded with the same
facts (each a short sentence with a source):

* read one fact and write one fact at 1,000 and 10,000 facts: does a call
  stay at or under server-memory's as memory grows?
* beside both, a bare ``MCPServer`` making mnem-mcp's bridge calls for the
  one-fact calls: what the MCP SDK and the bridge cost without our server;
* read the whole memory at 10,000 facts: ``recall()`` (ADR-0016's whole
  current memory, issue #48's target) and ``recall`` with ``limit`` 10,000
  (one page holding everything) against server-memory's ``read_graph``.

Both servers are driven by the raw JSON-RPC client (``rawmcp``: the server
alone) and the whole-memory read also by the MCP SDK's ``Client``, which
checks every result against the tool's output schema (a real agent pays
that).  Servers alternate call by call after warm-up calls; samples are
fewer than ``mcp_calls.py``'s, so p90 is reported, not p99.  Durability
differs as there: a ``remember`` is a synced SQLite commit, server-memory
rewrites its JSONL file without syncing.

Usage: ``python benchmarks/mcp_memory_size.py [--calls N] [--reads N]``;
writes ``benchmarks/results/mcp_memory_size.md``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import orjson
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, write_report
from mcp_calls import BRIDGED, mnem_mcp, ok, on_mnem_mcp_stdio, server_memory
from rawmcp import RawClient

from mnem_mcp.server import build_server

BIN = Path(sys.executable).parent
SIZES = (1_000, 10_000)

#: A bare MCPServer whose one async tool answers a prebuilt copy of mnem-mcp's 10k-fact page over
#: mnem-mcp's stdio transport: the MCP SDK's own cost of sending that answer (its result checks and
#: serialization), with no store behind it.  Given a second file, it publishes that ``outputSchema``
#: (mnem-mcp's for ``recall``) as mnem-mcp does, from ``list_tools``, and the SDK's client then checks
#: the page against it, as it does mnem-mcp's.
BARE_PAGE = on_mnem_mcp_stdio("""
import sys
from pathlib import Path

import orjson
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

PAGE = Path(sys.argv[1]).read_bytes()
SCHEMA = orjson.loads(Path(sys.argv[2]).read_bytes()) if len(sys.argv) > 2 else None


async def recall(limit: int = 100) -> CallToolResult:
    \"\"\"The prebuilt page, as mnem-mcp answers it (compact text and the same JSON structured).\"\"\"
    return CallToolResult(content=[TextContent(type="text", text=PAGE.decode())], structured_content=orjson.loads(PAGE))


class Bare(MCPServer):
    async def list_tools(self):
        listed = await super().list_tools()
        for tool in listed:
            tool.output_schema = SCHEMA
        return listed


server = Bare("bare")
server.add_tool(recall, structured_output=False)
server.run("stdio")
""")
WARMUP = 10
#: Facts per loading call.
CHUNK = 500


def fact(i: int) -> str:
    return f"customer {i} is on the Enterprise plan since March, seats {i % 500}"


def load(kind: str, client: RawClient, size: int) -> None:
    """Put ``size`` facts into a server, in chunks."""
    for start in range(0, size, CHUNK):
        ids = range(start, min(size, start + CHUNK))
        if kind == "mnem":
            client.call("remember_many", {"items": [{"id": f"fact-{i:05d}", "content": fact(i), "source": f"obs-{i}"}
                                                    for i in ids]})
        else:
            client.call("create_entities", {"entities": [
                {"name": f"fact-{i:05d}", "entityType": "fact", "observations": [fact(i), f"source obs-{i}"]}
                for i in ids]})


#: operation -> {server kind: (tool, arguments for call i at memory size n)}.
OPERATIONS: dict[str, dict[str, tuple[str, Callable[[int, int], dict[str, Any]]]]] = {
    "read one fact": {
        "mnem": ("recall", lambda i, n: {"id": f"fact-{i * 7919 % n:05d}"}),
        "bridged": ("recall", lambda i, n: {"id": f"fact-{i * 7919 % n:05d}"}),
        "memory": ("open_nodes", lambda i, n: {"names": [f"fact-{i * 7919 % n:05d}"]}),
    },
    "write one fact": {
        "mnem": ("remember", lambda i, n: {"id": f"fact-{i * 7919 % n:05d}", "content": f"v{i}", "source": "bench"}),
        "bridged": ("remember", lambda i, n: {"id": f"fact-{i * 7919 % n:05d}", "content": f"v{i}",
                                              "source": "bench"}),
        "memory": ("create_entities", lambda i, n: {"entities": [
            {"name": f"new-{i}", "entityType": "fact", "observations": [f"v{i}", "source bench"]}]}),
    },
    "read the whole memory": {
        "mnem": ("recall", lambda i, n: {}),
        "paged": ("recall", lambda i, n: {"limit": n}),
        "bare": ("recall", lambda i, n: {"limit": n}),
        "memory": ("read_graph", lambda i, n: {}),
    },
}


def sample(clients: dict[str, tuple[str, RawClient]], op: str, size: int, count: int) -> dict[str, Samples]:
    """``count`` calls of ``op`` per server after warm-up, alternating servers call by call."""
    times = {name: Samples() for name in clients}
    names = list(clients)
    for i in range(WARMUP + count):
        for name in names if i % 2 else names[::-1]:
            kind, client = clients[name]
            tool, arguments = OPERATIONS[op][kind]
            start = time.perf_counter()
            client.call(tool, arguments(i, size))
            if i >= WARMUP:
                times[name].add(time.perf_counter() - start)
    return times


async def sdk_whole_reads(directory: Path, size: int, count: int) -> dict[str, Samples]:
    """The whole-memory read through the MCP SDK's ``Client`` (result checked against the output schema)."""
    store = directory / f"store-{size}"
    schema = directory / "recall-schema.json"
    schema.write_bytes(orjson.dumps(next(t for t in await build_server(store).list_tools()
                                         if t.name == "recall").output_schema))
    params = {"mnem-mcp": ("mnem", mnem_mcp(store, "worker")),
              PAGED_NAME: ("paged", mnem_mcp(store, "worker")),
              BARE_NAME: ("bare", StdioServerParameters(command=sys.executable, args=bare_argv(directory)[1:])),
              SCHEMA_NAME: ("bare", StdioServerParameters(command=sys.executable,
                                                          args=[*bare_argv(directory)[1:], str(schema)])),
              "server-memory": ("memory", server_memory(directory / f"memory-{size}.jsonl"))}
    times = {name: Samples() for name in params}
    async with AsyncExitStack() as stack:
        sdk = {name: (kind, await stack.enter_async_context(Client(server, cache=None)))
               for name, (kind, server) in params.items()}
        names = list(sdk)
        for i in range(WARMUP + count):
            for name in names if i % 2 else names[::-1]:
                kind, client = sdk[name]
                tool, arguments = OPERATIONS["read the whole memory"][kind]
                start = time.perf_counter()
                await ok(client, tool, arguments(i, size))
                if i >= WARMUP:
                    times[name].add(time.perf_counter() - start)
    return times


BARE_NAME = "bare MCPServer sending the same page, prebuilt"
#: mnem-mcp asked for one page holding the whole memory (``recall`` with ``limit``) instead of ``recall()``.
PAGED_NAME = "mnem-mcp, one page (limit 10,000)"
#: The same, publishing mnem-mcp's ``outputSchema`` for ``recall``: the SDK client's check of that exact schema.
SCHEMA_NAME = "bare MCPServer sending the same page under mnem-mcp's output schema"
#: The MCP SDK's floor plus the bridge, none of mnem-mcp's code (``mcp_calls.BRIDGED``), on mnem-mcp's store.
BRIDGED_NAME = "bare MCPServer making the same bridge call"


def bare_argv(directory: Path) -> list[str]:
    """The bare page server's command line (its script and the page it sends are in ``directory``)."""
    return [sys.executable, str(directory / "bare_page.py"), str(directory / "page.json")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="samples per one-fact operation, size and server")
    parser.add_argument("--reads", type=int, default=60, help="samples of the whole-memory read per server and client")
    args = parser.parse_args()
    rows: list[list[Any]] = []
    one_fact: dict[tuple[str, int], dict[str, Samples]] = {}
    page_reads: dict[str, dict[str, Samples]] = {}  # client -> the whole-memory read's times

    def report(op: str, size: int, client: str, times: dict[str, Samples]) -> None:
        ref = times["server-memory"].p50
        if BRIDGED_NAME in times:
            one_fact[op, size] = times
        if BARE_NAME in times:
            page_reads[client] = times
        for name, samples in times.items():
            rows.append([op, f"{size:,}", f"{name}, {client}", len(samples.seconds), f"{samples.p50:.2f}",
                         f"{samples.p90:.2f}", f"{samples.p50 / ref:.2f}x"])

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for size in SIZES:
            store, graph = directory / f"store-{size}", directory / f"memory-{size}.jsonl"
            subprocess.run([str(BIN / "mnem"), "init", str(store)], check=True, capture_output=True)
            mnem, memory = mnem_mcp(store, "worker"), server_memory(graph)
            (directory / "bridged.py").write_text(BRIDGED)
            clients = {"mnem-mcp": ("mnem", RawClient([mnem.command, *mnem.args], mnem.env)),
                       BRIDGED_NAME: ("bridged", RawClient([sys.executable, str(directory / "bridged.py"), str(store)],
                                                           mnem.env)),
                       "server-memory": ("memory", RawClient([memory.command, *memory.args], memory.env))}
            try:
                for kind, client in clients.values():
                    client.initialize()
                    if kind != "bridged":  # it serves mnem-mcp's store
                        load(kind, client, size)
                for op in ("read one fact", "write one fact"):
                    report(op, size, "raw client", sample(clients, op, size, args.calls))
                if size == max(SIZES):
                    page = subprocess.run([str(BIN / "mnem"), "-C", str(store), "--json", "show", f"--limit={size}"],
                                          check=True, capture_output=True).stdout
                    (directory / "page.json").write_bytes(page.rstrip(b"\n"))
                    (directory / "bare_page.py").write_text(BARE_PAGE)
                    bare = RawClient(bare_argv(directory))
                    bare.initialize()
                    try:
                        whole = {"mnem-mcp": clients["mnem-mcp"], PAGED_NAME: ("paged", clients["mnem-mcp"][1]),
                                 BARE_NAME: ("bare", bare),
                                 "server-memory": clients["server-memory"]}
                        report("read the whole memory", size, "raw client",
                               sample(whole, "read the whole memory", size, args.reads))
                    finally:
                        bare.close()
            finally:
                for _, client in clients.values():
                    client.close()
            if size == max(SIZES):
                report("read the whole memory", size, "SDK client", anyio.run(sdk_whole_reads, directory, size,
                                                                                args.reads))
    write_report("mcp_memory_size", "MCP calls as memory grows: mnem-mcp next to server-memory at 1k and 10k facts", [
        f"Both servers hold the same facts. One-fact calls: {args.calls} samples per server after {WARMUP} warm-up"
        f" calls; the whole-memory read: {args.reads}. Servers alternate call by call. Read one = `recall` of one "
        "id vs `open_nodes`; write one = `remember` (a synced commit) vs `create_entities` (rewrites the JSONL "
        "file, never synced); the whole memory = `recall()` (the ADR's whole memory) and `recall` with `limit` "
        "10,000 (one page) vs `read_graph`, beside a bare "
        "Python MCPServer whose tool sends the same page prebuilt (the MCP SDK's own cost of sending that answer,"
        " no store behind it; with the SDK client also one that publishes mnem-mcp's output schema, which the "
        "client then checks the page against). One-fact calls also go to a bare Python MCPServer whose async "
        "tools make mnem-mcp's bridge calls on the same store (the SDK's floor plus the bridge, none of mnem-"
        "mcp's tool code). Both bare servers use mnem-mcp's stdio transport (`mnem_mcp.stdio`), as mnem-mcp does."
        " The SDK client checks each result against the tool's output schema. Targets (issue #16): one-fact calls"
        " at or under server-memory at 1k and 10k facts; the whole-memory read ≤ 1.5x `read_graph` with both "
        "clients; issue #48: `recall()` ≤ 1x `read_graph`.",
        table(["operation", "facts", "server and client", "samples", "p50 ms", "p90 ms", "vs server-memory (p50)"],
              rows),
        [f"- **{op}, {size:,} facts**: mnem-mcp {t['mnem-mcp'].p50 / t['server-memory'].p50:.2f}x server-memory; "
         f"the SDK's floor plus the bridge alone {t[BRIDGED_NAME].p50 / t['server-memory'].p50:.2f}x, so mnem-mcp's "
         f"own code adds {round(t['mnem-mcp'].p50 - t[BRIDGED_NAME].p50, 2) + 0.0:+.2f} ms."  # never "-0.00"
         for (op, size), t in one_fact.items()],
        whole_bounds(page_reads),
    ])


def whole_bounds(whole: dict[str, dict[str, Samples]]) -> list[str]:
    """What bounds the whole-memory read with each client: the same page sent by a bare server."""
    lines = []
    for client, t in whole.items():
        ref = t["server-memory"].p50
        line = (f"- **read the whole memory, {client}** (targets ≤ 1.5x `read_graph`, #48: `recall()` ≤ 1x): "
                f"mnem-mcp's `recall()` {t['mnem-mcp'].p50 / ref:.2f}x, one page of it "
                f"{t[PAGED_NAME].p50 / ref:.2f}x; a bare MCPServer sending the same page prebuilt "
                f"{t[BARE_NAME].p50 / ref:.2f}x")
        if SCHEMA_NAME in t:
            line += (f", and under mnem-mcp's output schema {t[SCHEMA_NAME].p50 / ref:.2f}x: the client's check of "
                     f"that schema costs {t[SCHEMA_NAME].p50 - t[BARE_NAME].p50:.0f} ms, and mnem-mcp's whole read "
                     f"differs from merely sending that page under that schema by "
                     f"{round(t['mnem-mcp'].p50 - t[SCHEMA_NAME].p50) + 0:+.0f} ms.")
        else:
            line += (f"; mnem-mcp's whole read differs from merely sending that page by "
                     f"{round(t['mnem-mcp'].p50 - t[BARE_NAME].p50) + 0:+.0f} ms.")
        lines.append(line)
    return lines


if __name__ == "__main__":
    main()
