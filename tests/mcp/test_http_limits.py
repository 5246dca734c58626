"""Every route of ``mnem-mcp --transport streamable-http`` holds a request's body to a limit (docs/mcp-http.md).

A real server (``--max-body 64K --max-pack 256K``, and with ``--auth jwt``
its metadata routes too) is sent bodies over each route's limit through a
raw socket, so the test controls every byte: a ``Content-Length`` over the
limit is answered ``413`` although no byte of the body was sent, and a
chunked body is answered ``413`` once its chunks pass the limit, while the
body is still open (a server that read on would wait for ever).  The ``413``
is JSON naming the limit and the option that raises it.  A push's pack is
spooled to a private temporary file that is gone once the push is answered;
a pack over ``--max-pack`` is refused by ``mnem push`` itself, before a
byte is sent, because the advertisement names the limit.
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from conftest import new_store, run_mnem, store_fingerprint
from http_support import HttpServer, Issuer, free_port
from mcp_support import MNEM_MCP
from mnem_history import ok, write

MAX_BODY = 64 << 10
MAX_PACK = 256 << 10
#: The sync upload route's fixed bound (``remote_sync.UPLOAD_LIMIT``).
UPLOAD_LIMIT = 12 << 20


class Hub:
    def __init__(self, server: HttpServer, store: Path, tmp: Path, issuer: Issuer) -> None:
        self.server, self.store, self.tmp, self.issuer = server, store, tmp, issuer

    @property
    def port(self) -> int:
        return self.server.port


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    root = tmp_path_factory.mktemp("limits")
    store = new_store(root / "store", "sqlite")
    tmp = root / "tmp"  # the server's TMPDIR: where it spools the packs
    tmp.mkdir()
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(audience)
    try:
        server = HttpServer(store, ["--auth", "jwt", "--issuer", issuer.url, "--audience", audience],
                            "--max-body", "64K", "--max-pack", "256K", port=port, env={"TMPDIR": str(tmp)})
        try:
            yield Hub(server, store, tmp, issuer)
        finally:
            server.stop()
    finally:
        issuer.close()


def exchange(port: int, head: str, body: bytes = b"") -> tuple[int, dict[str, Any]]:
    """Send a request's head and ``body`` (which may stop short of what the head announces); the answer.

    The socket stays open for writing, so a server that waits for the rest of the body never answers (the
    test's timeout ends it); one that refuses the body answers at once.
    """
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + body)
        received = b""
        while b"\r\n\r\n" not in received or len(received.split(b"\r\n\r\n", 1)[1]) < _length(received):
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    status_line, rest = received.split(b"\r\n", 1)
    payload = rest.split(b"\r\n\r\n", 1)[1]
    return int(status_line.split()[1]), json.loads(payload) if payload else {}


def _length(received: bytes) -> int:
    for line in received.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 1 << 62


def head(method: str, path: str, port: int, token: str | None, framing: str) -> str:
    auth = f"Authorization: Bearer {token}\n" if token else ""
    return (f"{method} {path} HTTP/1.1\nHost: 127.0.0.1:{port}\n{auth}Content-Type: application/json\n"
            f"Accept: application/json, text/event-stream\n{framing}\n")


#: Each route with a body limit: method, path, the limit and the option that raises it (None: fixed).
ROUTES = [
    ("POST", "/mcp", MAX_BODY, "--max-body"),
    ("POST", "/mcp/sync/receive?branch=main&old=&new=" + "ab" * 32 + "&force=0", MAX_PACK, "--max-pack"),
    ("POST", "/mcp/sync/upload", UPLOAD_LIMIT, None),
    ("GET", "/mcp/sync/refs", 0, None),
    ("GET", "/.well-known/oauth-protected-resource/mcp", 0, None),
    ("GET", "/.well-known/oauth-protected-resource", 0, None),
    ("GET", "/mcp", 0, None),
    ("DELETE", "/mcp", 0, None),
]


@pytest.mark.parametrize(("method", "path", "limit", "option"), ROUTES, ids=[f"{m} {p[:24]}" for m, p, _, _ in ROUTES])
def test_a_content_length_over_the_limit_is_refused_before_any_body_is_read(
        hub: Hub, method: str, path: str, limit: int, option: str | None) -> None:
    token = hub.issuer.mint(scope="mnem:read mnem:write")
    before = store_fingerprint(hub.store)
    status, doc = exchange(hub.port, head(method, path, hub.port, token, f"Content-Length: {limit + 1}\n"))
    assert status == 413, doc
    error = doc["error"]
    assert (error["code"], error["limit"], error["option"]) == ("usage", limit, option)
    if option is not None:
        assert option in error["message"] and str(limit) in error["message"]
    assert store_fingerprint(hub.store) == before


@pytest.mark.parametrize(("method", "path", "limit", "option"), ROUTES[:3], ids=["mcp", "receive", "upload"])
def test_a_chunked_body_is_cut_off_once_it_passes_the_limit_while_it_is_still_open(
        hub: Hub, method: str, path: str, limit: int, option: str | None) -> None:
    token = hub.issuer.mint(scope="mnem:read mnem:write")
    before = store_fingerprint(hub.store)
    chunk = b"x" * (16 << 10)
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(limit // len(chunk) + 1))
    # limit + 16 KiB sent, and the body never ended (no zero-length chunk): only a server that counts answers
    status, doc = exchange(hub.port, head(method, path, hub.port, token, "Transfer-Encoding: chunked\n"), chunks)
    assert status == 413 and doc["error"]["limit"] == limit and doc["error"]["option"] == option
    assert store_fingerprint(hub.store) == before
    assert list(hub.tmp.iterdir()) == []  # what a push spooled is gone


@pytest.mark.parametrize("path", ["/mcp", "/mcp/sync/upload"])
def test_a_request_without_a_token_is_refused_before_its_body_is_read(hub: Hub, path: str) -> None:
    """Under the limit, but no token: 401 while the body has barely begun, so no anonymous body is buffered."""
    status, doc = exchange(hub.port, head("POST", path, hub.port, None, f"Content-Length: {MAX_BODY}\n"), b"{" * 100)
    assert status == 401, doc


def test_a_get_may_not_send_a_chunked_body_either(hub: Hub) -> None:
    status, doc = exchange(hub.port, head("GET", "/mcp/sync/refs", hub.port, None, "Transfer-Encoding: chunked\n"))
    assert status == 413 and "takes no request body" in doc["error"]["message"]


def test_an_upload_names_at_most_ten_thousand_ids_in_each_list(hub: Hub) -> None:
    token = hub.issuer.mint(scope="mnem:read")
    body = json.dumps({"want": ["ab" * 32] * 10_001, "have": []}).encode()
    status, doc = exchange(hub.port, head("POST", "/mcp/sync/upload", hub.port, token,
                                          f"Content-Length: {len(body)}\n"), body)
    assert status == 400 and doc["error"]["code"] == "usage" and "at most 10000 wants" in doc["error"]["message"]


def test_a_push_spools_its_pack_privately_and_a_pack_over_max_pack_is_refused_before_it_is_sent(
        hub: Hub, tmp_path: Path) -> None:
    env = {"MNEM_TOKEN": hub.issuer.mint(scope="mnem:read mnem:write")}
    source = new_store(tmp_path / "source", "sqlite")
    write(source, "small", 1000, {"a": "1"})
    ok("remote", "add", "hub", hub.server.url, cwd=source)
    assert ok("--json", "push", "hub", "main", cwd=source, env=env).json["status"] == "created"
    assert list(hub.tmp.iterdir()) == []  # the spooled pack was removed once the push was answered
    advert = ok("--json", "upload-pack", "--advertise", cwd=hub.store).json
    assert advert["branches"]["main"] == ok("resolve", "main", cwd=source).out.strip()

    write(source, "large", 2000, {"big": "x" * MAX_PACK})
    before = store_fingerprint(hub.store)
    logged = hub.server.stderr()
    result = run_mnem("--json", "push", "hub", "main", cwd=source, env=env)
    error = json.loads(result.out)["error"]
    assert result.code != 0 and error["code"] == "usage"
    assert f"at most {MAX_PACK}" in error["message"] and "--max-pack" in error["message"]
    assert store_fingerprint(hub.store) == before
    assert hub.server.stderr()[len(logged):].count("refused a request body") == 0  # nothing was sent to refuse


def test_the_advertisement_names_the_largest_pack_a_push_may_send(hub: Hub) -> None:
    token = hub.issuer.mint(scope="mnem:read")
    status, doc = exchange(hub.port, head("GET", "/mcp/sync/refs", hub.port, token, ""))
    assert status == 200 and doc["max_pack"] == MAX_PACK


@pytest.mark.parametrize("argv", [["--max-pack", "1G"], ["--max-body", "16M"]])
def test_the_limits_are_options_of_the_http_transport_only(argv: list[str], tmp_path: Path) -> None:
    done = subprocess.run([MNEM_MCP, "--store", str(tmp_path / "s"), *argv], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 2 and argv[0] in done.stderr and "--transport streamable-http" in done.stderr


@pytest.mark.parametrize("value", ["0", "-1", "12X", "M", ""])
def test_a_limit_must_be_a_positive_size(value: str, tmp_path: Path) -> None:
    done = subprocess.run([MNEM_MCP, "--store", str(tmp_path / "s"), "--transport", "http", "--auth", "none",
                           "--max-pack", value], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 2 and "--max-pack" in done.stderr and "positive number of bytes" in done.stderr


class Slow(NamedTuple):
    server: HttpServer
    store: Path
    tmp: Path

    @property
    def port(self) -> int:
        return self.server.port


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Slow]:
    """A server whose request bodies must arrive within a second (``--body-timeout 1``), without tokens."""
    root = tmp_path_factory.mktemp("slow")
    store = new_store(root / "store", "sqlite")
    tmp = root / "tmp"
    tmp.mkdir()
    server = HttpServer(store, ["--auth", "none"], "--body-timeout", "1", env={"TMPDIR": str(tmp)})
    try:
        yield Slow(server, store, tmp)
    finally:
        server.stop()


@pytest.mark.parametrize(("method", "path"), [ROUTES[0][:2], ROUTES[1][:2], ROUTES[2][:2]],
                         ids=["mcp", "receive", "upload"])
def test_a_body_that_trickles_past_the_deadline_is_answered_408_and_nothing_is_kept(
        slow: Slow, method: str, path: str) -> None:
    """Ten bytes of a hundred announced, then nothing: the server's own deadline answers, not the test's clock.

    The socket stays open, so without the deadline the server would wait for the rest of the body for ever
    (``exchange`` would fail at its 60 s timeout).
    """
    before = store_fingerprint(slow.store)
    status, doc = exchange(slow.port, head(method, path, slow.port, None, "Content-Length: 100\n"), b"{" * 10)
    assert status == 408, doc
    error = doc["error"]
    assert (error["code"], error["option"]) == ("usage", "--body-timeout") and "--body-timeout" in error["message"]
    assert store_fingerprint(slow.store) == before
    assert list(slow.tmp.iterdir()) == []  # what a push had spooled is gone


def test_a_body_that_arrives_in_time_is_served_as_before(slow: Slow) -> None:
    body = b'{"want": [], "have": [3]}'
    status, doc = exchange(slow.port, head("POST", "/mcp/sync/upload", slow.port, None,
                                           f"Content-Length: {len(body)}\n"), body)
    assert status == 400 and doc["error"]["code"] == "usage"  # read whole, then refused for what it says


def test_one_request_more_than_max_requests_is_answered_503_before_its_body_is_read(tmp_path: Path) -> None:
    """With ``--max-requests 1``, a request holds the one place while its body is open; the next gets 503 busy.

    The first request asks ``Expect: 100-continue``, which the server answers when it starts reading the body,
    so the test knows from the server itself that the place is taken before it sends the second.
    """
    store = new_store(tmp_path / "store", "sqlite")
    server = HttpServer(store, ["--auth", "none"], "--max-requests", "1")
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=60) as held:
            held.sendall(head("POST", "/mcp", server.port, None,
                              "Content-Length: 100\nExpect: 100-continue\n").replace("\n", "\r\n").encode())
            assert held.recv(64).startswith(b"HTTP/1.1 100 ")  # the server is reading its body now
            status, doc = exchange(server.port, head("POST", "/mcp/sync/upload", server.port, None,
                                                     "Content-Length: 2\n"), b"{}")
            assert status == 503, doc
            assert (doc["error"]["code"], doc["error"]["option"]) == ("busy", "--max-requests")
        for _ in range(10_000):  # the held request has gone: its place is free once the server has seen it go
            status, doc = exchange(server.port, head("POST", "/mcp/sync/upload", server.port, None,
                                                     "Content-Length: 2\n"), b"{}")
            if status != 503:
                break
        assert status == 400 and doc["error"]["code"] == "usage"  # served: read, then refused for what it says
    finally:
        server.stop()
