"""Helpers for the MCP server tests: the three ways a client reaches the server.

Every client comes from ``connect``: in process through the SDK's direct
dispatcher (the 2026-07-28 era), in process over the legacy JSON-RPC
``initialize`` handshake, or as a real ``mnem-mcp`` subprocess over stdio.
Clients are built without a response cache unless a test is about caching,
so a read always reaches the server.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.caching import CacheConfig

from mnem_mcp import build_server

#: The ``mnem-mcp`` console script installed beside this interpreter.
MNEM_MCP = str(Path(sys.executable).with_name("mnem-mcp"))

Mode = Literal["in-process", "legacy", "stdio"]
MODES: tuple[Mode, ...] = ("in-process", "legacy", "stdio")


def server_env(**extra: str) -> dict[str, str]:
    """What a spawned ``mnem-mcp`` needs beyond the SDK's filtered environment: PATH (to find ``mnem``)."""
    return {"PATH": os.environ["PATH"], **extra}


@asynccontextmanager
async def connect(
    mode: Mode,
    store: Path | str | None,
    *args: str,
    tools: Literal["core", "all"] = "core",
    mnem: Path | str | None = None,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
    cache: CacheConfig | None = None,
    errlog: TextIO | None = None,
) -> AsyncIterator[Client]:
    """A connected client for the server over ``store``, in the given mode.

    Args:
        mode: ``in-process`` (modern era, direct dispatch), ``legacy`` (JSON-RPC handshake) or ``stdio``.
        store: The store's path or URL: ``pg_stores.address(folder)`` for a ``store`` fixture's folder (``None``: no
            ``--store``, for the resolution tests; stdio only).
        *args: Extra ``mnem-mcp`` arguments (stdio only).
        tools: The tool set.
        mnem: A ``mnem`` binary to use instead of the real one.
        timeout: Seconds per ``mnem`` invocation.
        env: Extra environment for the subprocess (stdio only).
        cache: The client's response cache (default: none).
        errlog: Where the subprocess's standard error goes (stdio only; default: ours).

    Yields:
        The client.
    """
    if mode == "stdio":
        argv = [*([] if store is None else ["--store", str(store)]), "--tools", tools, *args]
        argv += [] if mnem is None else ["--mnem", str(mnem)]
        argv += [] if timeout is None else ["--timeout", str(timeout)]
        params = StdioServerParameters(command=MNEM_MCP, args=argv, env=server_env(**(env or {})))
        target: Any = stdio_client(params, errlog=errlog or sys.stderr)
    else:
        assert store is not None, "an in-process server needs its store"
        options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        target = build_server(store, tools=tools, mnem=mnem, **options)
    async with Client(target, mode="legacy" if mode == "legacy" else "auto", cache=cache) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    """Call a tool that must succeed; its result, the JSON of its text, checked against its structured content.

    As upstream's server answers (ADR-0016's shapes): an object is the
    structured content itself, a list is structured as ``{"result": [...]}``
    (MCP's structured content is an object), and ``null`` (``recall`` of an
    unknown id) has no structured content.
    """
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    value = json.loads(result.content[0].text)
    if isinstance(value, list):
        assert result.structured_content == {"result": value}
    elif value is None:
        assert result.structured_content is None
    else:
        assert result.structured_content == value
    return value


async def fail(client: Client, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail; the error text."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    assert result.structured_content is None
    return result.content[0].text


#: How long ``AnswerReader`` waits for an answer before it fails the test: only a hang reaches it.
DEADLINE = 60.0


@dataclass
class AnswerReader:
    """A raw stdio server's answers, one JSON-RPC message per line, each read waiting at most ``DEADLINE`` s.

    The wait ends when the answer arrives; the deadline only turns a dropped line into a failure.
    """

    fd: int
    buffer: bytes = b""

    def next(self) -> dict[str, Any]:
        deadline = time.monotonic() + DEADLINE
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no answer within {DEADLINE} s: the server dropped the line"
            chunk = os.read(self.fd, 1 << 16)
            assert chunk, "the server closed its output"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        assert message.get("jsonrpc") == "2.0" and ("result" in message) != ("error" in message), message
        return message
