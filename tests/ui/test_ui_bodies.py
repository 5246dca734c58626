"""``mnem ui`` takes no request body, so nothing can make it buffer one (docs/ui.md).

A real ``mnem ui`` is sent requests through a raw socket that announce a
body (a ``Content-Length`` of a gigabyte, or a chunked body) and then send
none of it: the answer is ``413`` at once, so it was decided from the
headers alone, before any body was read.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from ui_support import build_story, serving


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    root = tmp_path_factory.mktemp("ui-bodies")
    store = build_story(root / "store")
    with serving(str(store), root / "ui.log") as url:
        yield urlsplit(url).port or 0


def ask(port: int, method: str, framing: str) -> tuple[int, bytes]:
    """Send a request's head alone (its socket left open for a body that never comes); the status and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(f"{method} /api/head HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{framing}\r\n".encode())
        received = b""
        while b"\r\n\r\n" not in received or not received.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    status_line, _, rest = received.partition(b"\r\n")
    return int(status_line.split()[1]), rest.split(b"\r\n\r\n", 1)[1]


@pytest.mark.parametrize(("method", "framing", "status", "says"), [
    ("GET", "Content-Length: 1000000000\r\n", 413, "takes no request body"),
    ("GET", "Transfer-Encoding: chunked\r\n", 413, "takes no request body"),
    ("POST", "Content-Length: 1000000000\r\n", 405, "read-only"),
    ("PUT", "Transfer-Encoding: chunked\r\n", 405, "read-only"),
])
def test_a_request_announcing_a_body_is_refused_from_its_headers(port: int, method: str, framing: str, status: int,
                                                                  says: str) -> None:
    answered, body = ask(port, method, framing)
    assert answered == status
    error = json.loads(body)["error"]
    assert error["code"] == "usage" and says in error["message"]


def test_a_get_without_a_body_is_answered(port: int) -> None:
    status, body = ask(port, "GET", "")
    assert status == 200 and "commit" in json.loads(body)
