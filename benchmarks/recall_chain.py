"""Where ``recall()`` of a 10k-fact memory spends its time: each stage of the chain timed alone, in one process.

MCP ``recall()`` with no id answers the whole memory (ADR-0016).  Its chain,
from the engine to the bytes of the JSON-RPC line, is timed stage by stage
on one real store of 10,000 facts (``remember_many``, as an agent writes
them):

* the ``mnem serve`` worker answering ``mnem show`` (the engine and the
  pipe), then the bridge's one decoding of that answer (``Store.whole_memory``);
* mnem-mcp: leaving out checkpoint nodes, the answer's text (the binary's
  bytes), the SDK's result passes over the empty stand-in, and
  ``MemoryPastChecks`` putting the memory into the shaped result;
* the SDK's stdio writer encoding the JSON-RPC line.

Beside them, on the same data, the work issue #48 took out of the chain:
building a ``MemoryNode`` per fact, writing each back with ``to_dict()``
and encoding the lot again, decoding that encoding as structured content,
and the SDK's two result passes (dump, validate and dump) over the whole
memory.  Stages are interleaved round by round after a warm-up round; each
row is the median.  The end-to-end comparison with server-memory's
``read_graph`` is ``mcp_memory_size.py``'s.

Usage: ``python benchmarks/recall_chain.py [--facts N] [--rounds N]``;
writes ``benchmarks/results/recall_chain.md``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from mcp.server.runner import _dump_result
from mcp.types import CallToolResult, JSONRPCResponse
from mcp_types import methods

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import table, write_report

import mnem_bridge
from mnem_bridge import agents, reserved
from mnem_mcp.answers import _STAND_IN, answer

VERSION = "2025-11-25"


def fact(i: int) -> str:
    return f"customer {i} is on the Enterprise plan since March, seats {i % 500}"


def stages(store: mnem_bridge.Store) -> tuple[dict[str, Callable[[], Any]], dict[str, Callable[[], Any]]]:
    """The chain's stages as it runs, and the work taken out of it, each a call over the same data."""
    client = store.client
    argv = [client.path, "-C", str(store.root), "--json", "show", "--"]
    answered = client.runner.run(argv, stdin=None, timeout=60).stdout
    document = orjson.loads(answered)
    whole = reserved.visible_whole(mnem_bridge.WholeMemory(answered, document))
    result = answer(whole)
    shaped = methods.serialize_server_result("tools/call", VERSION, _dump_result(_STAND_IN))
    text = result.content[0].text  # type: ignore[union-attr]
    line = {**shaped, "content": [{**shaped["content"][0], "text": text}], "structuredContent": document}
    nodes = mnem_bridge.models.nodes_by_id(document)
    encoded = orjson.dumps({node_id: node.to_dict() for node_id, node in nodes.items()})
    full = CallToolResult.model_validate({"content": [{"type": "text", "text": text}], "structuredContent": document})
    chain: dict[str, Callable[[], Any]] = {
        "worker: `mnem show` answered (engine and pipe)": lambda: client.runner.run(argv, stdin=None, timeout=60),
        "bridge: the answer decoded once (orjson)": lambda: orjson.loads(answered),
        "mnem-mcp: checkpoint nodes left out (a scan of the ids)": lambda: reserved.visible_whole(whole),
        "mnem-mcp: the result, its text the binary's bytes": lambda: answer(whole),
        "SDK: its result passes over the empty stand-in": lambda: methods.serialize_server_result(
            "tools/call", VERSION, _dump_result(_STAND_IN)),
        "mnem-mcp: MemoryPastChecks puts the memory in": lambda: {
            **shaped, "content": [{**shaped["content"][0], "text": text}], "structuredContent": document},
        "SDK: the JSON-RPC line encoded (stdio writer)": lambda: JSONRPCResponse(
            jsonrpc="2.0", id=1, result=line).model_dump_json(by_alias=True, exclude_unset=True),
    }
    removed: dict[str, Callable[[], Any]] = {
        "bridge: a MemoryNode built per fact": lambda: mnem_bridge.models.nodes_by_id(document),
        "mnem-mcp: each node's to_dict(), all encoded again (orjson)": lambda: orjson.dumps(
            {node_id: node.to_dict() for node_id, node in nodes.items()}),
        "mnem-mcp: that encoding decoded as structured content": lambda: orjson.loads(encoded),
        "SDK: its result passes over the whole memory (dump, validate, dump)": lambda: methods.serialize_server_result(
            "tools/call", VERSION, _dump_result(full)),
    }
    return chain, removed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000, help="facts in memory")
    parser.add_argument("--rounds", type=int, default=30, help="timed rounds (each times every stage once)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, mnem_bridge.open(Path(tmp) / "store", create=True) as store:
        for start in range(0, args.facts, 1000):
            agents.remember_many(store, [{"id": f"fact-{i:05d}", "content": fact(i), "source": f"obs-{i}"}
                                         for i in range(start, min(args.facts, start + 1000))])
        chain, removed = stages(store)
        times: dict[str, list[float]] = {name: [] for name in (*chain, *removed)}
        for round_ in range(1 + args.rounds):
            for name, call in (*chain.items(), *removed.items()):
                start = time.perf_counter()
                call()
                if round_:
                    times[name].append((time.perf_counter() - start) * 1000)
    p50 = {name: statistics.median(seconds) for name, seconds in times.items()}
    now, gone = sum(p50[name] for name in chain), sum(p50[name] for name in removed)
    write_report("recall_chain", f"Where recall() of {args.facts:,} facts spends its time, stage by stage", [
        f"One store of {args.facts:,} facts; {args.rounds} rounds after a warm-up, each timing every stage once; "
        "p50 per stage. The chain as it runs, then the work issue #48 took out of it, timed on the same data. "
        "In one process: no client, no pipe to one (`mcp_memory_size.py` compares the whole call with "
        "server-memory's `read_graph`).",
        table(["stage", "p50 ms"], [*([name, f"{p50[name]:.2f}"] for name in chain),
                                    ["**the chain now, in all**", f"**{now:.2f}**"],
                                    *([f"(taken out) {name}", f"{p50[name]:.2f}"] for name in removed),
                                    ["**taken out, in all**", f"**{gone:.2f}**"]]),
    ])


if __name__ == "__main__":
    main()
