"""``mnem-mcp --transport streamable-http``: options, both protocol eras, DNS rebinding, load and SIGTERM.

Every server here is a real ``mnem-mcp`` process on a free loopback port,
driven by the ``mcp`` client over Streamable HTTP (``--auth none``: the
tokens are ``test_http_auth``'s subject).  The load test counts the facts
in the store afterwards; the SIGTERM test stops a server in the middle of
writes and then asks ``mnem verify`` whether the store is whole.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from conftest import new_store, run_mnem
from held_writes import HANG, HeldWrite
from http_support import HttpServer, connect
from manual_clock import eventually
from mcp_support import MNEM_MCP, call, server_env

NO_AUTH = ("--auth", "none")
#: The load: this many clients at once, each making this many calls (half of them writes).
CLIENTS, CALLS = 16, 100


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, HttpServer]]:
    store = new_store(tmp_path_factory.mktemp("http") / "store", "sqlite")
    server = HttpServer(store, NO_AUTH)
    try:
        yield store, server
    finally:
        server.stop()


@pytest.mark.parametrize(("argv", "says"), [
    (["--transport", "streamable-http"], "needs --auth: --auth jwt --issuer URL --audience URI"),
    (["--transport", "streamable-http", "--auth", "none", "--host", "0.0.0.0"],
     "--auth none would let anyone who reaches 0.0.0.0 read and write this memory: use --auth jwt"),
    (["--transport", "streamable-http", "--auth", "jwt", "--issuer", "https://id.example.com"],
     "--auth jwt needs --audience"),
    (["--transport", "streamable-http", "--auth", "jwt", "--host", "0.0.0.0", "--issuer",
      "http://id.example.com", "--audience", "https://memory.example.com/mcp"], "--issuer must use https"),
    (["--transport", "streamable-http", "--auth", "jwt", "--issuer", "id.example.com", "--audience", "x"],
     "--issuer must be an absolute http(s) URL"),
    (["--transport", "streamable-http", "--auth", "none", "--issuer", "https://id.example.com"],
     "--issuer go with --auth jwt"),
    (["--transport", "streamable-http", "--auth", "none", "--path", "mcp"], "--path must start with '/'"),
    (["--auth", "none", "--port", "9000"], "--port, --auth apply to HTTP only: add --transport streamable-http"),
    (["--transport", "streamable-http", "--auth", "none", "--port", "70000"],
     "--port: must be 0 to 65535 (0: any free port), got 70000"),
    (["--transport", "http", "--auth", "jwt", "--issuer", "https://id.example.com", "--audience",
      "https://memory.example.com/mcp", "--author", "support-agent"],
     "with --auth jwt each token's subject is the author: drop --author"),
])
def test_inconsistent_options_are_usage_errors_that_name_the_fix(argv: list[str], says: str) -> None:
    done = subprocess.run([MNEM_MCP, *argv], capture_output=True, text=True, env=server_env(), timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_both_eras_serve_the_tools_and_cache_hints_follow_the_era(
        served: tuple[Path, HttpServer], era: str) -> None:
    _, server = served
    async with connect(server.url, era=era) as client:
        written = await call(client, "remember", id=f"era-{era}", content=era, source="test")
        assert (await call(client, "recall", id=f"era-{era}"))["content"] == era
        commits = await call(client, "history", limit=20)
        assert any(c["id"] == written["commit"] and c["author"] == "agent" for c in commits)  # nobody signed in
        read = await client.read_resource("mnem://log")
        if era == "modern":
            assert (read.ttl_ms, read.cache_scope) == (3000, "private")
        else:  # the handshake era has no cache hints
            assert "ttl_ms" not in read.model_fields_set


@pytest.mark.anyio
async def test_transport_http_is_streamable_http_and_author_names_unauthenticated_writes(tmp_path: Path) -> None:
    helped = subprocess.run([MNEM_MCP, "--help"], capture_output=True, text=True, env=server_env(), timeout=60)
    assert "{stdio,streamable-http,http}" in helped.stdout
    server = HttpServer(new_store(tmp_path / "store", "sqlite"), NO_AUTH, "--author", "night-shift", transport="http")
    try:
        async with connect(server.url) as client:
            await call(client, "remember", id="plan", content="pro")
            assert (await call(client, "why", id="plan"))["author"] == "night-shift"
    finally:
        server.stop()


@pytest.mark.parametrize(("header", "value", "status"), [
    ("host", "evil.example.com", 421),
    ("origin", "http://evil.example.com", 403),
])
def test_a_foreign_host_or_origin_is_refused(served: tuple[Path, HttpServer], header: str, value: str,
                                            status: int) -> None:
    _, server = served
    response = httpx2.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=10,
                           headers={header: value, "accept": "application/json, text/event-stream"})
    assert response.status_code == status


@pytest.mark.serial
@pytest.mark.anyio
async def test_sixteen_clients_times_a_hundred_calls_lose_nothing(served: tuple[Path, HttpServer]) -> None:
    store, server = served
    failures: list[str] = []

    async def client_run(number: int) -> None:
        async with connect(server.url) as client:
            for seq in range(CALLS // 2):
                node = f"load-{number}-{seq}"
                result = await client.call_tool("remember", {"id": node, "content": {"n": number, "seq": seq}})
                if result.is_error:
                    failures.append(result.content[0].text)
                found = await client.call_tool("recall", {"id": node})
                if found.is_error or (found.structured_content or {}).get("id") != node:
                    failures.append(f"{node} not read back")

    started = time.monotonic()
    async with anyio.create_task_group() as group:
        for number in range(CLIENTS):
            group.start_soon(client_run, number)
    print(f"http load: {CLIENTS} clients x {CALLS} calls in {time.monotonic() - started:.1f} s")
    assert failures == []
    memory = run_mnem("--json", "show", cwd=store)
    assert memory.code == 0, memory.err
    loaded = {key for key in memory.json if key.startswith("load-")}
    assert loaded == {f"load-{n}-{s}" for n in range(CLIENTS) for s in range(CALLS // 2)}


@pytest.mark.anyio
async def test_sigterm_during_writes_drains_and_leaves_the_store_whole(tmp_path: Path) -> None:
    """SIGTERM while eight writers' calls are in flight, one of them held inside its commit (``held_writes``).

    The server stops taking connections, lets the held call finish and answer, and exits; the store is whole,
    with every acknowledged write, and nothing else but what was in flight.  What is in flight when the signal
    lands is the program's state, not a moment: the test waits for the write to be held, signals, waits for
    the server to stop taking connections, and only then lets the write go on.
    """
    store = new_store(tmp_path / "store", "sqlite")
    held = HeldWrite(tmp_path, "w3-20")  # writer 3's 21st write
    server = HttpServer(store, NO_AUTH, "--grace", "60", "--mnem", str(held.binary))
    acknowledged: list[str] = []
    refused: list[str] = []

    async def writer(number: int) -> None:
        try:
            async with connect(server.url) as client:
                for seq in range(10_000):
                    node = f"w{number}-{seq}"
                    result = await client.call_tool("remember", {"id": node, "content": seq})
                    (refused if result.is_error else acknowledged).append(node)
        except Exception as exc:
            refused.append(f"{number}: {type(exc).__name__}")

    try:
        with anyio.fail_after(HANG):  # only a hang reaches it
            async with anyio.create_task_group() as group:
                for number in range(8):
                    group.start_soon(writer, number)
                await anyio.to_thread.run_sync(held.wait)
                server.signal(signal.SIGTERM)
                await anyio.to_thread.run_sync(eventually, lambda: not server.accepts(), "the shutdown began")
                held.release()
                status = await anyio.to_thread.run_sync(server.process.wait)
    finally:
        held.release()
        server.stop()
    print(f"sigterm: exited {status}; {len(acknowledged)} writes acknowledged, {len(refused)} refused or cut off")
    assert status in (0, -signal.SIGTERM), server.stderr()
    assert "Traceback" not in server.stderr()
    assert "w3-20" in acknowledged, "the call held mid-commit when the signal came was not answered"
    verify = run_mnem("verify", cwd=store)
    assert verify.code == 0, verify.out + verify.err
    memory = run_mnem("--json", "show", cwd=store).json
    assert set(acknowledged) <= set(memory)  # every acknowledged write is there
    assert len(set(memory) - set(acknowledged)) <= 8  # and beyond them at most the calls in flight
