"""Cold start of ``mnem-mcp``: spawn to the first tool answer, next to a bare Python ``MCPServer`` with one tool.

What a client that spawns the server per session (or, as
langchain-mcp-adapters does by default, per tool call) waits for: process
start, ``initialize``, ``notifications/initialized`` and one ``tools/call``
answered, over stdio with a raw JSON-RPC client (no SDK on the client
side).  The bare server is the same MCP SDK with one tool that answers at
once, so the difference is what ``mnem-mcp`` adds: its tools' schemas, and
the ``mnem`` worker its first call needs (``mnem-mcp`` starts it, and
checks the binary and the store, while the SDK loads).  The store served
exists and is empty; ``recall`` reads all of it.  Samples alternate
between the servers.  Target (issue #16): ≤ 1.1x the bare server.

``mnem-mcp`` starts with Python's garbage collector off and freezes what
start-up made (``mnem_mcp/cli.py``).  A third row gives the bare server the
same treatment, so what that alone is worth shows apart from our code.

Run: ``python benchmarks/mcp_startup.py [--samples N]``; writes ``benchmarks/results/mcp_startup.md``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, compile_packages, table, write_report
from rawmcp import RawClient

import mnem_bridge

BIN = Path(sys.executable).parent

BARE = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def recall(id: str | None = None) -> dict[str, object]:
    \"\"\"Recall nothing, at once.\"\"\"
    return {"memory": {}}


server.run("stdio")
"""

#: The same bare server, with the collector off while it starts and start-up's objects then frozen, as
#: mnem-mcp starts (mnem_mcp/cli.py): what that treatment alone is worth, apart from our own code.
BARE_FROZEN = "import gc\n\ngc.disable()\n" + BARE.replace(
    'server.run("stdio")', 'gc.freeze()\ngc.enable()\nserver.run("stdio")')


def first_answer(argv: list[str]) -> float:
    """Seconds from spawn to the first ``tools/call`` answer."""
    start = time.perf_counter()
    client = RawClient(argv)
    client.initialize()
    client.call("recall", {})
    took = time.perf_counter() - start
    client.close()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=60, help="samples per server")
    args = parser.parse_args()
    compile_packages()
    with tempfile.TemporaryDirectory() as tmp:
        bare, frozen = Path(tmp) / "bare.py", Path(tmp) / "bare_frozen.py"
        bare.write_text(BARE)
        frozen.write_text(BARE_FROZEN)
        mnem_bridge.init(Path(tmp) / "memory").close()
        servers = {
            "bare MCPServer, one tool": [sys.executable, str(bare)],
            "bare MCPServer, collector off at start-up": [sys.executable, str(frozen)],
            "mnem-mcp": [str(BIN / "mnem-mcp"), "--store", str(Path(tmp) / "memory")],
        }
        results = {name: Samples() for name in servers}
        for round_ in range(2 + args.samples):
            for name in servers if round_ % 2 else list(servers)[::-1]:
                took = first_answer(servers[name])
                if round_ >= 2:
                    results[name].add(took)
    ref = results["bare MCPServer, one tool"]
    rows = [[name, f"{got.p50:.0f}", f"{got.p90:.0f}", f"{got.p50 / ref.p50:.2f}x"]
            for name, got in results.items()]
    write_report("mcp_startup", "mnem-mcp cold start: spawn to the first tool answer", [
        f"{args.samples} samples per server after 2 warm-up rounds, alternating; a raw JSON-RPC client over stdio. "
        "p90 rather than p99: each sample is a process start, so a p99 would need thousands of them.",
        table(["server", "p50 ms", "p90 ms", "vs bare (p50)"], rows),
    ])


if __name__ == "__main__":
    main()
