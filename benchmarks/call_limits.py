"""What one call may cost at the limits ``mnem`` holds new writes to (``mnem_store.limits``), and past them.

The defaults are chosen from what this measures.  Three questions:

* **Recall of the largest allowed value.**  A value is written once and
  recalled many times, by every reader: the engine (``mnem show --node
  --json``, one process), the bridge's worker (``Store.working_node``),
  mnem-mcp over stdio to a bare JSON-RPC client (``rawmcp``: the server
  alone), and to the MCP SDK's own ``Client`` (what an agent's runtime
  uses; it reads a line in time that grows with the square of its length).
  Each at the default value limit (1 MiB) and, with the limit lifted, at 4
  and 16 MiB, for two shapes of value: one string of text with escapes and
  non-ASCII (``big_value``'s block), and a message list (objects of 80
  characters of text).
* **The largest allowed write.**  ``remember_many`` of ``MNEM_MAX_WRITE_NODES``
  (10,000) small facts through the bridge: how long one call holds the
  store's write lock, against ``MNEM_BUSY_TIMEOUT_MS`` (10 s) other writers wait.
* **A hostile write refused.**  A 256 MiB ``write`` payload on a pipe, and a
  2 MiB value, each refused: how long the refusal takes, and how much the
  refusing process held (its peak RSS).

And what the saver's checkpoints weigh, which is why they are not held to
the limits: the largest value a LangGraph chat graph checkpoints after N
turns of messages of a given size.

Run: ``python benchmarks/call_limits.py [--quick]``; writes ``benchmarks/results/call_limits.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, compile_packages, table, timed, write_report
from big_value import BLOCK
from rawmcp import RawClient

import mnem_bridge
from mnem_bridge import agents

MNEM = str(Path(sys.executable).with_name("mnem"))
MNEM_MCP = str(Path(sys.executable).with_name("mnem-mcp"))
MiB = 1 << 20
LIFTED = {"MNEM_MAX_VALUE_BYTES": "0", "MNEM_MAX_WRITE_BYTES": "0"}


def string_value(size: int) -> str:
    """Text of at most ``size`` bytes of compact JSON (escapes and multi-byte UTF-8 included), within a block of it."""
    return BLOCK * ((size - 2) // (compact_size(BLOCK) - 2))


def message_list(size: int) -> list[dict[str, str]]:
    """A chat's messages, at most ``size`` bytes of compact JSON, within one message of it."""
    one = {"role": "user", "content": "m" * 80}
    return [one] * ((size - 1) // (compact_size(one) + 1))


def compact_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def sdk_recall(root: Path, node_id: str, repeat: int) -> Samples:
    """``recall`` through the MCP SDK's ``Client`` over stdio, as an agent's runtime makes it."""
    from mcp import Client, StdioServerParameters, stdio_client

    async def run() -> Samples:
        params = StdioServerParameters(command=MNEM_MCP, args=["--store", str(root)],
                                       env={"PATH": os.environ["PATH"], **LIFTED})
        samples = Samples()
        with open(os.devnull, "w") as quiet:
            async with Client(stdio_client(params, errlog=quiet), mode="auto") as client:
                await client.call_tool("recall", {"id": node_id})  # warm
                for _ in range(repeat):
                    start = time.perf_counter()
                    result = await client.call_tool("recall", {"id": node_id})
                    samples.add(time.perf_counter() - start)
                    assert not result.is_error
        return samples

    return asyncio.run(run())


def recall_rows(root: Path, sizes: list[int], repeat: int) -> list[list[str]]:
    """One row per shape and size: the value written once, then recalled by each reader."""
    rows = []
    with mnem_bridge.Mnem(MNEM) as client, mnem_bridge.open(root, client=client) as store:
        raw = RawClient([MNEM_MCP, "--store", str(root)], env={**os.environ, **LIFTED})
        raw.initialize()
        try:
            for shape, build in (("string", string_value), ("message list", message_list)):
                for size in sizes:
                    value = build(size)
                    node_id = f"{shape}-{size}"
                    agents.remember(store, node_id, value)
                    readers: list[Callable[[], object]] = [
                        partial(subprocess.run, [MNEM, "-C", str(root), "--json", "show", "--node", node_id],
                                check=True, capture_output=True),
                        partial(store.working_node, node_id),
                        partial(raw.call, "recall", {"id": node_id}),
                    ]
                    samples = [*(_warm_then_timed(reader, repeat) for reader in readers),
                               sdk_recall(root, node_id, repeat)]
                    limit = " (the limit)" if size == MiB else ""
                    rows.append([shape, f"{compact_size(value) / MiB:.2f} MiB{limit}",
                                 *(f"{s.p50:.0f} / {s.p90:.0f}" for s in samples)])
        finally:
            raw.close()
    return rows


def _warm_then_timed(action: Callable[[], object], repeat: int) -> Samples:
    action()
    return timed(action, repeat)


def write_rows(root: Path, repeat: int) -> list[list[str]]:
    """The largest allowed batch (10,000 facts), and a batch of 1,000, through the bridge's worker."""
    rows = []
    with mnem_bridge.Mnem(MNEM) as client, mnem_bridge.open(root, client=client) as store:
        for count in (1_000, 10_000):
            runs = Samples()
            for n in range(repeat):
                items = [{"id": f"fact-{n}-{i:05d}", "content": f"customer {i} is on the Enterprise plan",
                          "source": f"obs-{i}"} for i in range(count)]
                start = time.perf_counter()
                agents.remember_many(store, items)
                runs.add(time.perf_counter() - start)
            rows.append([f"`remember_many` of {count:,} facts", f"{runs.p50:.0f} / {runs.p90:.0f}"])
    return rows


def refusal_rows(root: Path) -> list[list[str]]:
    """Hostile writes refused: how long each refusal takes and the refusing process's own peak RSS."""
    rows = []
    two = "y" * (2 * MiB)
    for what, data, env in (
            ("a 256 MiB payload, on a pipe", json.dumps({"put": [{"id": "x", "content": "y" * (256 * MiB)}]}), {}),
            ("a 256 MiB payload, on a pipe, limits lifted",
             json.dumps({"put": [{"id": "x0", "content": "y" * (256 * MiB)}]}), LIFTED),
            ("one 2 MiB value", json.dumps({"put": [{"id": "x1", "content": two}]}), {}),
            ("one 2 MiB value, limit lifted", json.dumps({"put": [{"id": "x2", "content": two}]}), LIFTED)):
        answer, seconds, peak = _run_measured([MNEM, "-C", str(root), "--json", "write", "-m", "w"], data.encode(),
                                              {**os.environ, **env})
        code = answer["error"]["code"] if "error" in answer else "written"
        rows.append([f"`mnem write` of {what}", code, f"{seconds * 1000:,.0f}", f"{peak / 1024:,.0f} MiB"])
    return rows


def _run_measured(argv: list[str], data: bytes, env: dict[str, str]) -> tuple[Any, float, int]:
    """Run ``argv`` with ``data`` on a pipe: its JSON answer, seconds taken, and its own peak RSS in KiB.

    The peak comes from ``/usr/bin/time -f %M``: a small process forks and runs ``argv``, so the figure is
    ``argv``'s alone (a child forked from this process would count this process's pages, 256 MiB of payload).
    """
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], input=data, capture_output=True, env=env)
    seconds = time.perf_counter() - start
    return json.loads(done.stdout), seconds, int(done.stderr.decode().split()[-1])


def _answer(chars: int, state: Any) -> dict[str, Any]:
    """A chat node's answer: one message of ``chars`` characters."""
    from langchain_core.messages import AIMessage

    return {"messages": [AIMessage(content="a" * chars)]}


def checkpoint_rows(turns_and_sizes: list[tuple[int, int]]) -> list[list[str]]:
    """The largest value and id a chat graph's checkpoints hold after ``turns`` turns of ``chars``-character
    messages (each turn a human message and an answer)."""
    from langchain_core.messages import HumanMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    from mnem_langgraph import MnemosyneSaver

    rows = []
    for turns, chars in turns_and_sizes:
        with tempfile.TemporaryDirectory() as tmp:
            graph = StateGraph(MessagesState)
            graph.add_node("bot", partial(_answer, chars))
            graph.add_edge(START, "bot")
            graph.add_edge("bot", END)
            with MnemosyneSaver(Path(tmp) / "store", mnem=MNEM) as saver:
                app = graph.compile(checkpointer=saver)
                for _ in range(turns):
                    app.invoke({"messages": [HumanMessage(content="q" * chars)]}, {"configurable": {"thread_id": "t"}})
            shown = subprocess.run([MNEM, "-C", str(Path(tmp) / "store"), "--json", "show"], check=True,
                                   capture_output=True).stdout
            memory = json.loads(shown)
            largest = max(compact_size(node["content"]) for node in memory.values())
            rows.append([f"{turns}", f"{2 * turns} x {chars:,}", f"{len(memory):,}", f"{largest / 1000:,.0f} KB",
                         f"{max(len(node_id.encode()) for node_id in memory)}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples and sizes")
    args = parser.parse_args()
    compile_packages()
    repeat = 3 if args.quick else 10
    sizes = [MiB, 4 * MiB] if args.quick else [MiB, 4 * MiB, 16 * MiB]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        subprocess.run([MNEM, "init", str(root)], check=True, capture_output=True)
        os.environ.update(LIFTED)  # the bridge's worker takes the sizes past the limit, to compare
        recalls = recall_rows(root, sizes, repeat)
        for name in LIFTED:
            del os.environ[name]
        writes = write_rows(root, 3 if args.quick else 5)
        refusals = refusal_rows(root)
    checkpoints = checkpoint_rows([(10, 500), (100, 500)] if args.quick else
                                  [(10, 500), (50, 500), (100, 500), (100, 2_000)])
    write_report("call_limits", "Limits on one call: what recall, a batch and a refusal cost at the limits", [
        "Defaults (`mnem_store.limits`, docs/cli-json.md \"Input limits\"): `MNEM_MAX_ID_BYTES` 1024, "
        "`MNEM_MAX_VALUE_BYTES` 1 MiB, `MNEM_MAX_WRITE_NODES` 10,000, `MNEM_MAX_WRITE_BYTES` 16 MiB; "
        "`0` lifts one. Sizes are the value as compact JSON.",
        "### Recall of one value (ms, p50 / p90)",
        f"{repeat} samples per cell after a warm-up; the 4 and 16 MiB values are written with the limit lifted. "
        "Engine: `mnem --json show --node` (a process each). Worker: `Store.working_node` through the bridge's "
        "`mnem serve` worker. mnem-mcp: `recall` over stdio, to a bare JSON-RPC client (the server alone) and "
        "to the MCP SDK's `Client` (an agent's runtime: its stdio reader's cost grows with the square of the "
        "line).",
        table(["value", "size", "engine one-shot", "bridge worker", "mnem-mcp, raw client", "mnem-mcp, SDK client"],
              recalls),
        "### The largest allowed write (ms, p50 / p90)",
        "Through the bridge's worker, one commit each (durable): how long one call holds the store's write lock; "
        "other writers wait up to `MNEM_BUSY_TIMEOUT_MS` (10,000 ms).",
        table(["call", "ms"], writes),
        "### Hostile writes refused",
        "Each one `mnem` process, the payload on a pipe; peak RSS is that process's high-water mark "
        "(`/usr/bin/time -f %M`).",
        table(["write", "answer", "ms", "peak RSS"], refusals),
        "### What the saver's checkpoints weigh",
        "A LangGraph chat graph (`MessagesState`, one node answering each message) checkpointed by "
        "`MnemosyneSaver`: the largest value is the message list's channel, which grows with the conversation. "
        "It is the graph's state, not one call's input, and no agent can write it: the saver's "
        "`--allow-reserved` writes are not held to the limits.",
        table(["turns", "messages x characters", "nodes", "largest value", "longest id (bytes)"], checkpoints),
    ])


if __name__ == "__main__":
    main()
