"""A hostile HTTP remote for the tests: a real HTTP server on a thread that speaks mnem-mcp's sync protocol.

``mnem`` reaches it exactly as it reaches ``mnem-mcp --transport
streamable-http`` (docs/remotes.md, "HTTP remotes"): ``GET URL/sync/refs``,
``POST URL/sync/upload`` and ``POST URL/sync/receive``, over a real socket.
What each route answers (status, reason phrase, content type, body, or a
raw status line) is whatever the test scripts, so a test can play a
remote that lies: one that advertises a commit and sends an empty pack,
or that puts escape sequences in its error messages.  A route's answer may
also be made from each request's path and body (a ``Reply``), for a remote
whose lies depend on what it is asked (``ranges``, a page of ``upload``), or
that forwards to a real server while the test reads what went by.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, NamedTuple

import cbor2

from mnem_store.layout import FORMAT_VERSION
from mnem_store.transfer import PACK_VERSION

__all__ = ["Answer", "HostileRemote", "Reply", "empty_pack", "error_answer"]


class Answer(NamedTuple):
    """One scripted answer: status, body and content type; ``reason`` replaces the status line's phrase,
    ``raw`` replaces the whole answer with bytes written as they are."""

    status: int = 200
    body: bytes = b""
    kind: str = "application/json"
    reason: str | None = None
    raw: bytes | None = None


#: An answer made from the request's path (with its query) and body.
Reply = Callable[[str, bytes], Answer]


def empty_pack() -> bytes:
    """A valid pack that carries nothing."""
    return bytes(cbor2.dumps({"pack": PACK_VERSION, "format": FORMAT_VERSION, "commits": [], "nodes": []}))


def error_answer(status: int, code: str, message: str) -> Answer:
    """A refusal as mnem-mcp words one: ``{"error": {"code", "message"}}``."""
    return Answer(status, json.dumps({"error": {"code": code, "message": message}}).encode())


class HostileRemote:
    """A sync server on a free loopback port whose answers the test sets per route (``refs``, ``upload``,
    ``receive``); unscripted routes answer 404.  ``requests`` records ``(method, path, body)`` of each."""

    def __init__(self) -> None:
        self.answers: dict[str, Answer | Reply] = {}
        self.requests: list[tuple[str, str, bytes]] = []
        remote = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self._answer()

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                remote.requests.append((self.command, self.path, body))
                route = self.path.split("?", 1)[0].removeprefix("/mcp/sync/")
                answer = remote.answers.get(route, Answer(404, b'{"error": "no such route"}'))
                if not isinstance(answer, Answer):
                    answer = answer(self.path, body)
                if answer.raw is not None:
                    self.wfile.write(answer.raw)
                    self.close_connection = True
                    return
                self.send_response(answer.status, answer.reason)
                self.send_header("Content-Type", answer.kind)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the test reads ``requests`` instead."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        """The endpoint's URL, as a remote names a mnem-mcp server."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/mcp"

    def advertise(self, branches: dict[str, bytes | str], head: str = "ref: main") -> None:
        """Answer ``refs`` with these branch tips (raw ids, or text sent as it is)."""
        doc = {"format": FORMAT_VERSION, "head": head,
               "branches": {name: tip.hex() if isinstance(tip, bytes) else tip for name, tip in branches.items()}}
        self.answers["refs"] = Answer(200, json.dumps(doc).encode())

    def send_pack(self, blob: bytes) -> None:
        """Answer ``upload`` with this pack."""
        self.answers["upload"] = Answer(200, blob, "application/cbor")

    def close(self) -> None:
        """Stop serving and wait for the thread."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def __enter__(self) -> HostileRemote:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
