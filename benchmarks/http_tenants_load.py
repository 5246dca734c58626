"""``mnem-mcp`` over HTTP with bearer tokens: 20 clients x 100 writes on one store, and on a store per tenant.

Every client is the MCP SDK's ``Client`` with a token of its own from the
development issuer (``mnem_mcp.dev_issuer``, signed ES256 and checked by
the server through OIDC discovery, as with a real issuer), all clients in
this process and at once; each makes its ``remember`` calls one after
another (one commit each, synced to disk).  Three set-ups, each on one
``mnem-mcp --transport http --auth jwt`` process:

* **one store**: ``--store DIR``, the one-store server: every call through
  its one ``mnem`` worker, run inline on the event loop;
* **one store, --store-per**: ``--store-per tenant`` with every token for
  the same tenant: the router's path (a binding per store, its calls on a
  thread) on one store, one worker;
* **a store per client, --store-per**: every token for its own tenant, so
  20 stores and 20 workers, served in parallel.

Afterwards every store is read back with ``mnem show``: the table's "lost"
is the number of acknowledged writes that are not in memory (it must be 0).
Throughput is all writes over the phase's wall time; p50/p95 are of one
call, request to answer, as the client sees it.

Usage: ``python benchmarks/http_tenants_load.py [--clients N] [--writes N]``;
writes ``benchmarks/results/http_tenants_load.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, write_report
from mcp_http_load import BIN, free_port, http_server

from mnem_mcp.dev_issuer import DevIssuer

#: set-up -> (serve one store per tenant, every client a tenant of its own)
SETUPS = {"one store": (False, False), "one store, --store-per": (True, False),
          "a store per client, --store-per": (True, True)}


async def measure(folder: Path, per_tenant: bool, own: bool, clients: int, writes: int,
                  ) -> tuple[float, Samples, int]:
    """One set-up's run: writes per second, each call's time, and how many acknowledged writes are missing."""
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    issuer = DevIssuer(audience)
    issuer.start()
    tenant = [f"t{number}" if own else "shared" for number in range(clients)]
    store = str(folder / ("{tenant}" if per_tenant else "shared"))
    options = ["--auth", "jwt", "--issuer", issuer.url, "--audience", audience,
               *(["--store-per", "tenant"] if per_tenant else [])]
    samples = Samples()
    try:
        async with AsyncExitStack() as stack:
            url = await stack.enter_async_context(http_server(store, *options, port=port))
            sessions = []
            for number in range(clients):
                token = issuer.sign({**issuer.claims(f"agent-{number}"), "tenant": tenant[number]})
                http = await stack.enter_async_context(httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(120.0)))
                sessions.append(await stack.enter_async_context(Client(streamable_http_client(url, http_client=http))))
            async with anyio.create_task_group() as group:  # warm-up: each store made, each connection open
                for client in sessions:
                    group.start_soon(client.call_tool, "recall", {"id": "warm-up"})

            async def writer(number: int, client: Client) -> None:
                for seq in range(writes):
                    start = time.perf_counter()
                    result = await client.call_tool("remember", {"id": f"c{number}-{seq}", "content": seq})
                    samples.add(time.perf_counter() - start)
                    if result.is_error:
                        raise RuntimeError(result.content[0].text)

            started = time.perf_counter()
            async with anyio.create_task_group() as group:
                for number, client in enumerate(sessions):
                    group.start_soon(writer, number, client)
            rate = clients * writes / (time.perf_counter() - started)
    finally:
        issuer.close()
    found: set[str] = set()
    for name in set(tenant) if per_tenant else {"shared"}:
        shown = subprocess.run([str(BIN / "mnem"), "--json", "show"], cwd=folder / name, capture_output=True,
                               check=True)
        found |= set(json.loads(shown.stdout))
    lost = {f"c{number}-{seq}" for number in range(clients) for seq in range(writes)} - found
    return rate, samples, len(lost)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20, help="clients writing at once")
    parser.add_argument("--writes", type=int, default=100, help="remember calls per client")
    args = parser.parse_args()
    rows = []
    load = os.getloadavg()[0]  # the machine may be shared: what else ran is part of the figures
    for setup, (per_tenant, own) in SETUPS.items():
        with tempfile.TemporaryDirectory() as directory:
            rate, samples, lost = anyio.run(measure, Path(directory), per_tenant, own, args.clients, args.writes)
        stores = args.clients if own else 1
        rows.append([setup, stores, args.clients, len(samples.seconds), lost, f"{rate:.0f}", f"{samples.p50:.1f}",
                     f"{samples.p95:.1f}"])
        print(f"{setup} done", file=sys.stderr, flush=True)
    write_report("http_tenants_load", "mnem-mcp over HTTP: many clients, one store or a store per tenant", [
        f"{args.clients} clients at once, each with its own bearer token (`--auth jwt`, ES256 tokens from the "
        f"development issuer), each making {args.writes} `remember` calls one after another (one commit synced "
        "to disk each), after one warm-up call. One `mnem-mcp --transport http` process; \"one store\" serves "
        "`--store DIR`; \"--store-per\" serves `--store DIR/{tenant}` with every token for one tenant, or each "
        "for its own. \"lost\" counts acknowledged writes missing from memory afterwards (`mnem show` of every "
        f"store). Clients, server, workers and issuer share the machine's cores (load average {load:.1f} when "
        "the run began).",
        table(["set-up", "stores", "clients", "writes", "lost", "writes/s", "p50 ms", "p95 ms"], rows),
        "One store serialises its commits through its one `mnem` worker whichever way it is served (inline on "
        "the event loop, or on the router's thread); a store per tenant gives each store its own worker and "
        "thread, so stores commit in parallel, as far as the cores allow.",
    ])


if __name__ == "__main__":
    main()
