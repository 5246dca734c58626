"""A raw JSON-RPC MCP client over stdio: no SDK on the client side, so a timing shows the server alone.

The MCP SDK's ``Client`` validates every result against the tool's output
schema, which for large answers costs more than the server's work; timing
through it mixes client cost into server cost.  This client writes one
request line and reads lines until the answer with its id, nothing more.
"""

from __future__ import annotations

import subprocess
from typing import Any

import orjson

__all__ = ["RawClient"]


class RawClient:
    """One MCP server process spoken to with bare JSON-RPC lines (protocol 2025-11-25, stdio).

    Args:
        argv: The server's command line.
        env: Its environment (None: this process's).
    """

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.argv = argv
        self._child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, env=env)
        self._next = 0

    def initialize(self) -> None:
        """The handshake: ``initialize``, then ``notifications/initialized``."""
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "0"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """``tools/call``; raises when the tool answers with an error."""
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"{tool} failed on {self.argv[0]}: {result}")
        return result

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request, and its result (a JSON-RPC error raises)."""
        self._next += 1
        number = self._next
        self._send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        assert self._child.stdout is not None
        while True:
            line = self._child.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.argv[0]} closed its output")
            doc = orjson.loads(line)  # a fast parser: a 5 MB answer must not time the client
            if doc.get("id") == number:
                if "result" not in doc:
                    raise RuntimeError(f"{method} failed on {self.argv[0]}: {doc}")
                result: dict[str, Any] = doc["result"]
                return result

    def _send(self, message: dict[str, Any]) -> None:
        assert self._child.stdin is not None
        self._child.stdin.write(orjson.dumps(message) + b"\n")
        self._child.stdin.flush()

    def close(self) -> None:
        """Close the server's input and wait for it to end."""
        if self._child.stdin is not None:
            self._child.stdin.close()
        self._child.wait()
