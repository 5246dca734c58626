"""What an HTTP remote we fetch from may cost us, and where our token may go (docs/remotes.md, "HTTP remotes").

Each remote here is a real HTTP server on a thread (``http.server``) that
behaves as a hostile one would, reached by the real ``mnem``:

* a pack larger than ``MNEM_MAX_PACK_BYTES`` is refused while it arrives
  (the server counts what it managed to send before ``mnem`` hung up), or
  before any of it arrives when its ``Content-Length`` says so, and an
  advertisement is refused once past the 16 MiB any JSON answer may hold;
* a remote that sends its answer a byte at a time is cut off at the total
  deadline ``MNEM_REMOTE_TIMEOUT_MS`` (set small here: the assertion is the
  typed error naming it, and nothing written, never how long it took);
* ``MNEM_TOKEN`` never reaches another origin: a redirect to another port is
  not followed (the second server records every request it gets), one
  within the origin is, for the advertisement only; and over plain http the
  token goes only to this machine unless ``MNEM_ALLOW_INSECURE_TOKEN=1``.

"Nothing written" is the receiving store's every row, before and after.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import new_store, run_mnem, store_fingerprint
from mnem_history import ok, write

#: A commit id the remotes advertise (no store here holds it).
TIP = "ab" * 32
ADVERT = json.dumps({"format": 1, "head": "ref: main", "branches": {"main": TIP}}).encode()
MiB = 1 << 20

Handler = Callable[[BaseHTTPRequestHandler], None]


class Remote:
    """An HTTP server on a free loopback port whose routes (``"GET /mcp/sync/refs"`` ...) the test scripts.

    ``requests`` records ``(method, path, headers)`` of every request; ``sent`` counts the body bytes a
    route's streaming answer managed to write before the client went away.
    """

    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.sent = 0
        remote = self

        class Handle(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self._route()

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._route()

            def _route(self) -> None:
                remote.requests.append((self.command, self.path, dict(self.headers.items())))
                handler = remote.routes.get(f"{self.command} {self.path.split('?', 1)[0]}")
                if handler is None:
                    answer(self, 404, b'{"error": "no such route"}')
                else:
                    handler(self)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the test reads ``requests``."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handle)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def stream(self, total: int, declared: int | None = None) -> Handler:
        """A 200 answer of ``total`` zero bytes (``Content-Length: declared`` if given), counted into ``sent``."""

        def handle(request: BaseHTTPRequestHandler) -> None:
            request.send_response(200)
            request.send_header("Content-Type", "application/cbor")
            if declared is not None:
                request.send_header("Content-Length", str(declared))
            request.send_header("Connection", "close")
            request.end_headers()
            chunk = bytes(64 << 10)
            try:
                while self.sent < total:
                    request.wfile.write(chunk)
                    self.sent += len(chunk)
            except OSError:
                pass  # the client hung up: what it took is counted

        return handle

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def answer(request: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
    request.send_response(status)
    every = {"Content-Type": "application/json", "Content-Length": str(len(body)), **(headers or {})}
    for name, value in every.items():
        request.send_header(name, value)
    request.end_headers()
    request.wfile.write(body)


def advertise(request: BaseHTTPRequestHandler) -> None:
    answer(request, 200, ADVERT)


def drip(what: str) -> Handler:
    """An answer sent a byte every 50 ms: its status line and headers (``head``), or its body (``body``)."""

    def handle(request: BaseHTTPRequestHandler) -> None:
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(ADVERT)}\r\n\r\n".encode()
        fast, slow = (b"", head + ADVERT) if what == "head" else (head, ADVERT)
        try:
            request.wfile.write(fast)
            request.wfile.flush()
            for byte in slow:
                time.sleep(0.05)
                request.wfile.write(bytes([byte]))
                request.wfile.flush()
        except OSError:
            pass  # the client hung up

    return handle


@pytest.fixture
def remotes() -> Iterator[Callable[[], Remote]]:
    made: list[Remote] = []

    def make() -> Remote:
        made.append(Remote())
        return made[-1]

    yield make
    for remote in made:
        remote.close()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store with one commit, which will fetch from the remote."""
    folder = new_store(tmp_path / "store", "sqlite")
    write(folder, "one", 1000, {"a": "1"})
    return folder


def error(store: Path, *args: str, env: dict[str, str]) -> dict[str, Any]:
    """Run ``mnem --json ARGS`` in ``store`` expecting a typed error; the error document."""
    result = run_mnem("--json", *args, cwd=store, env=env)
    assert result.code != 0 and "Traceback" not in result.err, (result.out, result.err)
    found: dict[str, Any] = json.loads(result.out)["error"]
    return found


@pytest.mark.parametrize("declared", [None, 1 << 40], ids=["as it arrives", "by its Content-Length"])
def test_a_pack_over_the_clients_limit_is_refused_and_nothing_is_written(
        remotes: Callable[[], Remote], store: Path, declared: int | None) -> None:
    remote = remotes()
    remote.routes.update({"GET /mcp/sync/refs": advertise, "POST /mcp/sync/upload": remote.stream(256 * MiB, declared)})
    ok("remote", "add", "hostile", remote.url, cwd=store)
    before = store_fingerprint(store)
    found = error(store, "fetch", "hostile", env={"MNEM_MAX_PACK_BYTES": str(MiB)})
    assert found["code"] == "store_io"
    assert "MNEM_MAX_PACK_BYTES" in found["message"] and str(MiB) in found["message"]
    assert store_fingerprint(store) == before
    # mnem hung up once past its limit (or at once): the server could send no more than that and what the two
    # sockets' buffers hold, nowhere near the 256 MB it had for it
    assert remote.sent < MiB + 32 * MiB


def test_an_advertisement_longer_than_any_json_answer_needs_is_refused_as_it_arrives(
        remotes: Callable[[], Remote], store: Path) -> None:
    remote = remotes()
    remote.routes["GET /mcp/sync/refs"] = remote.stream(256 * MiB)
    ok("remote", "add", "hostile", remote.url, cwd=store)
    before = store_fingerprint(store)
    found = error(store, "fetch", "hostile", env={})
    assert found["code"] == "store_io" and f"more than {16 * MiB} bytes" in found["message"]
    assert store_fingerprint(store) == before
    assert remote.sent < 16 * MiB + 32 * MiB  # read no further than the limit (and what the buffers hold)


@pytest.mark.parametrize("what", ["head", "body"])
def test_a_remote_that_drips_its_answer_is_cut_at_the_total_deadline(
        remotes: Callable[[], Remote], store: Path, what: str) -> None:
    remote = remotes()
    remote.routes["GET /mcp/sync/refs"] = drip(what)
    ok("remote", "add", "slow", remote.url, cwd=store)
    before = store_fingerprint(store)
    found = error(store, "fetch", "slow", env={"MNEM_REMOTE_TIMEOUT_MS": "1000"})
    assert found["code"] == "store_io"
    assert "MNEM_REMOTE_TIMEOUT_MS=1000" in found["message"] and "nothing was written" in found["message"]
    assert store_fingerprint(store) == before


def test_a_redirect_to_another_origin_is_not_followed_and_the_token_stays(
        remotes: Callable[[], Remote], store: Path) -> None:
    elsewhere = remotes()
    elsewhere.routes["GET /mcp/sync/refs"] = advertise
    remote = remotes()
    remote.routes["GET /mcp/sync/refs"] = lambda request: answer(
        request, 307, b"", {"Location": f"{elsewhere.url}/sync/refs"})
    ok("remote", "add", "hub", remote.url, cwd=store)
    before = store_fingerprint(store)
    found = error(store, "fetch", "hub", env={"MNEM_TOKEN": "secret-token"})
    assert found["code"] == "store_io" and elsewhere.url in found["message"] and "another origin" in found["message"]
    assert [headers.get("Authorization") for _, _, headers in remote.requests] == ["Bearer secret-token"]
    assert elsewhere.requests == []  # never contacted, so never given the token
    assert store_fingerprint(store) == before


def test_a_redirect_within_the_origin_is_followed_for_the_advertisement_only(
        remotes: Callable[[], Remote], store: Path, tmp_path: Path) -> None:
    """The advertisement may move (a proxy's new path); the requests after it go there, with the token."""
    source = new_store(tmp_path / "source", "sqlite")
    write(source, "theirs", 2000, {"b": "2"})
    tip = ok("resolve", "main", cwd=source).out.strip()
    pack = ok("--json", "upload-pack", cwd=source, input=json.dumps({"want": [tip], "have": []})).json["pack"]
    remote = remotes()
    shown = {"main": tip}  # what the moved advertisement names
    remote.routes.update({
        "GET /mcp/sync/refs": lambda request: answer(request, 308, b"", {"Location": "/moved/sync/refs"}),
        "GET /moved/sync/refs": lambda request: answer(
            request, 200, json.dumps({"format": 1, "head": "ref: main", "branches": shown}).encode()),
        "POST /moved/sync/upload": lambda request: answer(request, 200, base64.b64decode(pack),
                                                          {"Content-Type": "application/cbor"}),
    })
    ok("remote", "add", "hub", remote.url, cwd=store)
    fetched = ok("--json", "fetch", "hub", cwd=store, env={"MNEM_TOKEN": "secret-token"}).json
    assert fetched["commits"] == 1
    assert [(method, path.split("?")[0], headers.get("Authorization")) for method, path, headers in remote.requests] \
        == [("GET", "/mcp/sync/refs", "Bearer secret-token"), ("GET", "/moved/sync/refs", "Bearer secret-token"),
            ("POST", "/moved/sync/upload", "Bearer secret-token")]

    # a later request is never redirected, even within the origin
    remote.routes["POST /moved/sync/upload"] = lambda request: answer(
        request, 307, b"", {"Location": "/elsewhere/sync/upload"})
    write(source, "more", 3000, {"c": "3"})
    shown["main"] = ok("resolve", "main", cwd=source).out.strip()
    before = store_fingerprint(store)
    found = error(store, "fetch", "hub", env={"MNEM_TOKEN": "secret-token"})
    assert found["code"] == "store_io" and "/elsewhere/sync/upload" in found["message"]
    assert store_fingerprint(store) == before
    assert all(not path.startswith("/elsewhere") for _, path, _ in remote.requests)


def test_a_token_goes_over_plain_http_only_to_this_machine_unless_the_user_allows_it(store: Path) -> None:
    # TEST-NET-1 (RFC 5737): no host answers there; the token is refused before anything is sent
    ok("remote", "add", "far", "http://192.0.2.1:9/mcp", cwd=store)
    found = error(store, "fetch", "far", env={"MNEM_TOKEN": "secret-token"})
    assert found["code"] == "usage"
    assert "MNEM_ALLOW_INSECURE_TOKEN=1" in found["message"] and "https://" in found["message"]
    # allowed, the request is made (and fails to connect, within the deadline); without a token it is made too
    for env in ({"MNEM_TOKEN": "secret-token", "MNEM_ALLOW_INSECURE_TOKEN": "1"}, {}):
        found = error(store, "fetch", "far", env={**env, "MNEM_REMOTE_TIMEOUT_MS": "2000"})
        assert found["code"] == "store_io", found
