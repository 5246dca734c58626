"""What each latency device buys: the agent-path figure it exists for, with it and without it, in one run.

Issue #33 keeps a device only where it buys at least 10 % on a named
agent-path figure.  Each row pair is the same call on the same store, the
product as shipped next to a copy with that one device taken out, the two
taking turns after warm-up:

* ``run_inline`` (a bridge call on the event loop's own thread, its waits
  for the worker awaited there): mnem-mcp's tools over stdio, against the
  same server handing each bridge call to a worker thread
  (``anyio.to_thread.run_sync``), as an async server on a sync library would;
  and ``MnemosyneStore.aget`` against ``get`` on a worker thread, in one event loop;
* the worker's ``ParseCache`` (argparse asked once per shape of command
  line): ``MnemosyneStore.get`` against a worker that asks argparse every time;
* the garbage collector off during start-up, and frozen after it: a one-shot
  ``mnem`` command and mnem-mcp's cold start (spawn to its first answer),
  against the same code with the collector left as Python starts it.

Usage: ``python benchmarks/machinery.py [--calls N] [--starts N]``; writes
``benchmarks/results/machinery.md``.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import anyio
import anyio.to_thread
from agent_path_layers import WARMUP, interleaved
from benchlib import Samples, table, write_report
from rawmcp import RawClient

from mnem_langgraph import MnemosyneStore
from mnem_store.objects import MemoryNode
from mnem_store.repo import Repo

BIN = Path(sys.executable).parent
FACTS = 10

#: mnem-mcp with its tools' bridge calls on a worker thread instead of ``run_inline``.
ON_A_THREAD = """
import functools, sys
import anyio.to_thread
import mnem_bridge

async def on_a_thread(function, *args):
    return await anyio.to_thread.run_sync(functools.partial(function, *args))

mnem_bridge.run_inline = on_a_thread
from mnem_mcp.cli import main
sys.exit(main())
"""

#: ``mnem`` whose worker asks argparse for every request.
ARGPARSE_EVERY_TIME = """
import sys
from mnem_store.cli.commands import serve
from mnem_store.cli.dispatch import build_parser
from mnem_store.cli.commands.serve import StoreCache

serve.prepare = lambda: (build_parser(exclude=frozenset({"serve", "ui"})), StoreCache())
from mnem_store.process import main
sys.exit(main())
"""

#: ``mnem`` and mnem-mcp with the collector as Python starts it (``gc.disable``/``gc.freeze`` made no-ops).
COLLECTOR_UNTOUCHED = """
import gc, sys
gc.disable = gc.freeze = lambda: None
from {module} import main
sys.exit(main())
"""

def script(directory: Path, name: str, text: str) -> Path:
    """An executable Python script in ``directory`` run by this interpreter."""
    path = directory / name
    path.write_text(f"#!{sys.executable}\n{text}")
    path.chmod(0o755)
    return path


def inline_rows(directory: Path, calls: int, stack: ExitStack) -> dict[str, dict[str, Samples]]:
    """MCP read and write of one fact: mnem-mcp as shipped and with its bridge calls on a worker thread."""
    store = directory / "mcp-store"
    with Repo.init(store) as repo, repo.backend.write():
        repo.write([MemoryNode(f"fact-{i}", f"value {i}") for i in range(FACTS)], [], "facts", "bench", 1)
    threaded = script(directory, "threaded-mnem-mcp", ON_A_THREAD)
    servers = {"as shipped (run_inline)": [str(BIN / "mnem-mcp"), "--store", str(store)],
               "bridge calls on a worker thread": [str(threaded), "--store", str(store)]}
    clients = {}
    for label, argv in servers.items():
        clients[label] = client = RawClient(argv)
        stack.callback(client.close)
        client.initialize()
    read = {label: (lambda i, c=client: c.call("recall", {"id": f"fact-{i % FACTS}"}))
            for label, client in clients.items()}
    write = {label: (lambda i, c=client: c.call("remember", {"id": f"fact-{i % FACTS}", "content": f"v{i}",
                                                            "source": f"obs-{i}"}))
             for label, client in clients.items()}
    return {"MCP read one fact (recall), raw client over stdio": interleaved(read, calls),
            "MCP write one fact (remember), raw client over stdio": interleaved(write, calls)}


def aget_rows(directory: Path, calls: int, stack: ExitStack) -> dict[str, dict[str, Samples]]:
    """``MnemosyneStore.aget`` (``run_inline``) against ``get`` handed to a worker thread, in one event loop."""
    ns = ("users", "u1")
    store = MnemosyneStore(directory / "aget-store")
    stack.callback(store.close)
    for i in range(100):
        store.put(ns, f"k{i}", {"text": f"memory {i}", "n": i})
    ways: dict[str, Callable[[int], Awaitable[object]]] = {
        "as shipped (run_inline)": lambda i: store.aget(ns, f"k{i % 100}"),
        "get on a worker thread": lambda i: anyio.to_thread.run_sync(partial(store.get, ns, f"k{i % 100}")),
    }

    async def run() -> dict[str, Samples]:
        times = {name: Samples() for name in ways}
        names = list(ways)
        turns = random.Random(0)
        for i in range(WARMUP + calls):
            turns.shuffle(names)
            for name in names:
                start = time.perf_counter()
                await ways[name](i)
                if i >= WARMUP:
                    times[name].add(time.perf_counter() - start)
        return times

    return {"MnemosyneStore.aget, one item of 100, in an event loop": anyio.run(run)}


def parse_rows(directory: Path, calls: int, stack: ExitStack) -> dict[str, dict[str, Samples]]:
    """``MnemosyneStore.get`` with the worker's parse cache and with argparse every time."""
    plain = script(directory, "argparse-mnem", ARGPARSE_EVERY_TIME)
    ns = ("users", "u1")
    stores = {"as shipped (ParseCache)": MnemosyneStore(directory / "lg-store"),
              "argparse for every request": MnemosyneStore(directory / "lg-store", mnem=plain)}
    for store in stores.values():
        stack.callback(store.close)
    for i in range(100):
        stores["as shipped (ParseCache)"].put(ns, f"k{i}", {"text": f"memory {i}", "n": i})
    gets = {label: (lambda i, s=store: s.get(ns, f"k{i % 100}")) for label, store in stores.items()}
    return {"MnemosyneStore.get, one item of 100": interleaved(gets, calls)}


def start_rows(directory: Path, starts: int) -> dict[str, dict[str, Samples]]:
    """Whole processes: one-shot ``mnem show --node`` and mnem-mcp spawn to its first answer."""
    store = directory / "start-store"
    with Repo.init(store) as repo, repo.backend.write():
        repo.write([MemoryNode(f"fact-{i}", f"value {i}") for i in range(FACTS)], [], "facts", "bench", 1)
    mnem = script(directory, "mnem-collector", COLLECTOR_UNTOUCHED.format(module="mnem_store.process"))
    mcp = script(directory, "mnem-mcp-collector", COLLECTOR_UNTOUCHED.format(module="mnem_mcp.cli"))
    show = ["-C", str(store), "show", "--node", "fact-3"]
    oneshot = {"as shipped (collector off, then frozen)": [str(BIN / "mnem"), *show],
               "collector as Python starts it": [str(mnem), *show]}

    def first_answer(argv: list[str]) -> None:
        client = RawClient(argv)
        try:
            client.initialize()
            client.call("recall", {"id": "fact-3"})
        finally:
            client.close()

    servers = {"as shipped (collector off, then frozen)": [str(BIN / "mnem-mcp"), "--store", str(store)],
               "collector as Python starts it": [str(mcp), "--store", str(store)]}
    return {
        "one-shot mnem show --node (whole process)": interleaved(
            {label: (lambda i, a=argv: subprocess.run(a, check=True, capture_output=True))
             for label, argv in oneshot.items()}, starts, warmup=3),
        "mnem-mcp cold start to its first answer": interleaved(
            {label: (lambda i, a=argv: first_answer(a)) for label, argv in servers.items()}, starts, warmup=3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per row (in-process reads and writes)")
    parser.add_argument("--starts", type=int, default=40, help="timed process starts per row")
    args = parser.parse_args()
    groups: dict[str, dict[str, Samples]] = {}
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        groups.update(inline_rows(Path(tmp), args.calls, stack))
        groups.update(aget_rows(Path(tmp), args.calls, stack))
        groups.update(parse_rows(Path(tmp), args.calls, stack))
        groups.update(start_rows(Path(tmp), args.starts))
    rows = []
    for figure, times in groups.items():
        shipped = next(iter(times.values())).p50
        for label, samples in times.items():
            rows.append([figure, label, f"{samples.p50:.3f}", f"{samples.p99:.3f}", f"{samples.p50 / shipped:.2f}x"])
    write_report("machinery", "What each latency device buys", [
        f"{args.calls} timed calls per row for the MCP and LangGraph calls, {args.starts} for the process starts, "
        "after warm-up, the two rows of a pair taking turns in a new (seeded) order each round. The ratio is "
        "against the product as shipped: above 1.10x, the device buys the 10 % issue #33 asks of it.",
        table(["figure", "how", "p50 ms", "p99 ms", "vs as shipped (p50)"], rows),
    ])


if __name__ == "__main__":
    main()
